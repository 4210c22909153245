"""schedsim's own promises checked by the store conformance kit: get/list return the stored
objects, writes in a fork leave lower layers alone, insertion order, the round-robin any-node
search, ``clear``, and CSINodes that follow their nodes."""

from __future__ import annotations

from schedsim.api.storage import CSINode
from schedsim.snapshot import (
    NodeInfo,
    PodInfo,
    PredicateSnapshot,
    SchedulingError,
    SchedulingErrorType,
)
from schedsim.snapshot.csi import CsiSnapshot
from schedsim.testing.snapshot_conformance_objects import make_node, make_pod, new_snapshot
from schedsim.testing.snapshot_conformance_scenarios import (
    ANTI_AFFINITY_POD,
    EBS_POD_A,
    EBS_POD_B,
    OTHER_NODE,
    OTHER_POD,
    POD_EA,
    POD_EB,
    SPECIAL_CSI,
    SPECIAL_NODE,
    SPECIAL_POD,
    csi,
    ns,
)
from schedsim.testing.snapshot_conformance_state import (
    EMPTY,
    MI,
    StoreFactory,
    check_snapshot_consistency,
    expect_equal,
    expect_raises,
    expect_state,
    expect_true,
    node_names,
)
from schedsim.testing.snapshot_conformance_tables import pvc_used

# --------------------------------------------------------------------------- identity and isolation


def check_get_identity(make_store: StoreFactory) -> None:
    """get_node_info returns the stored object itself, every time, from every getter."""
    s = new_snapshot(make_store)
    s.set_cluster_state([make_node("n1"), make_node("n2")], [make_pod("p", node_name="n1")])
    for step in ("base", "fork"):
        a = s.get_node_info("n1")
        expect_true(f"{step}: get_node_info(n) is not get_node_info(n)", s.get_node_info("n1") is a)
        expect_true(
            f"{step}: node_infos().get(n) is not get_node_info(n)", s.node_infos().get("n1") is a
        )
        s.fork()
        s.force_add_pod(make_pod("q"), "n1")
    a = s.get_node_info("n1")
    expect_true(
        "after a write: get_node_info(n) is not get_node_info(n)", s.get_node_info("n1") is a
    )


def check_list_identity(make_store: StoreFactory) -> None:
    """Every listed NodeInfo is the one get_node_info returns; the list object is reused while
    nothing changes (reads, check_predicates, failed schedules and diagnose change nothing)."""
    s = new_snapshot(make_store)
    s.set_cluster_state([make_node(f"n{i}") for i in range(1, 4)], [make_pod("p", node_name="n1")])
    for step in ("base", "fork", "fork after writes"):
        if step == "fork":
            s.fork()
        elif step == "fork after writes":
            s.force_add_pod(make_pod("q"), "n2")
            s.remove_node_info("n3")
            s.add_node_info(NodeInfo(make_node("n4")))
        check_snapshot_consistency(s)  # listed objects are the ones get_node_info returns
        listed = s.list_node_infos()
        s.get_node_info("n1")
        s.storage_infos().is_pvc_used_by_pods("default/claim1")
        s.node_infos().have_pods_with_affinity_list()
        s.check_predicates(make_pod("r"), "n1")
        expect_raises(
            "schedule_pod of a too large pod",
            lambda: s.schedule_pod(make_pod("big", cpu="1000"), "n1"),
            SchedulingError,
        )
        s.diagnose(make_pod("big", cpu="1000"))
        expect_true(
            f"{step}: list_node_infos() changed without a write", s.list_node_infos() is listed
        )


def check_add_node_info_identity(make_store: StoreFactory) -> None:
    """add_node_info stores the caller's NodeInfo and PodInfo objects themselves."""
    s = new_snapshot(make_store)
    for step in ("base", "fork"):
        if step == "fork":
            s.fork()
        name = f"node-{step}"
        pi1, pi2 = PodInfo(make_pod(f"a-{step}")), PodInfo(make_pod(f"b-{step}"))
        ni = NodeInfo(make_node(name), pods=[pi1, pi2])
        s.add_node_info(ni)
        expect_true(f"{step}: get_node_info is not the added NodeInfo", s.get_node_info(name) is ni)
        expect_true(
            f"{step}: list_node_infos does not hold the added NodeInfo",
            any(x is ni for x in s.list_node_infos()),
        )
        got = s.get_node_info(name).pods
        expect_true(
            f"{step}: pods are not the added PodInfos",
            len(got) == 2 and got[0] is pi1 and got[1] is pi2,
        )


def check_pod_identity(make_store: StoreFactory) -> None:
    """force_add_pod / schedule_pod store the given Pod object (spec.nodeName untouched)."""
    s = new_snapshot(make_store)
    s.set_cluster_state([make_node("n1")], [])
    for step in ("base", "fork"):
        if step == "fork":
            s.fork()
        forced = make_pod(f"forced-{step}")
        scheduled = make_pod(f"scheduled-{step}")
        s.force_add_pod(forced, "n1")
        s.schedule_pod(scheduled, "n1")
        stored = {p.pod.name: p.pod for p in s.get_node_info("n1").pods}
        expect_true(f"{step}: force_add_pod stored a copy", stored[forced.name] is forced)
        expect_true(f"{step}: schedule_pod stored a copy", stored[scheduled.name] is scheduled)
        expect_equal(f"{step}: spec.nodeName of the scheduled pod", scheduled.node_name, "")


def check_fork_shares_objects(make_store: StoreFactory) -> None:
    """A fork shares the Node and PodInfo objects of the layer below (Snapshot semantics)."""
    s = new_snapshot(make_store)
    pi = PodInfo(make_pod("p"))
    node = make_node("n1")
    s.add_node_info(NodeInfo(node, pods=[pi]))
    s.fork()
    s.force_add_pod(make_pod("q"), "n1")
    ni = s.get_node_info("n1")
    expect_true("the fork's NodeInfo has another Node object", ni.node is node)
    expect_true("the fork's NodeInfo has another PodInfo object", any(p is pi for p in ni.pods))


def check_revert_restores_objects(make_store: StoreFactory) -> None:
    """After revert, get/list return the very objects of the layer below."""
    s = new_snapshot(make_store)
    s.set_cluster_state([make_node("n1"), make_node("n2")], [make_pod("p", node_name="n1")])
    before = {ni.node.name: ni for ni in s.list_node_infos() if ni.node is not None}
    s.fork()
    s.force_add_pod(make_pod("q"), "n1")
    s.force_remove_pod("default", "p", "n1")
    s.remove_node_info("n2")
    s.add_node_info(NodeInfo(make_node("n2")))
    s.revert()
    for name, ni in before.items():
        expect_true(
            f"{name}: revert did not restore the stored object", s.get_node_info(name) is ni
        )
    expect_true(
        "list_node_infos after revert does not hold the restored objects",
        sorted(map(id, s.list_node_infos())) == sorted(map(id, before.values())),
    )


def _node_view(ni: NodeInfo) -> tuple[object, ...]:
    return (
        tuple(id(p) for p in ni.pods),
        tuple(id(p) for p in ni.pods_with_affinity),
        tuple(id(p) for p in ni.pods_with_required_anti_affinity),
        ni.requested.milli_cpu,
        ni.requested.memory,
        ni.non_zero_requested.milli_cpu,
        ni.non_zero_requested.memory,
        len(ni.used_ports),
        dict(ni.pvc_ref_counts),
        ni.generation,
    )


def check_fork_isolation(make_store: StoreFactory) -> None:
    """Writes in a fork never change NodeInfo objects of a layer below (a caller holding one
    keeps seeing the old state), at any depth."""
    s = new_snapshot(make_store)
    port_pod = make_pod(
        "ports",
        node_name="n1",
        pvcs=["claim1"],
        spec={
            "containers": [
                {"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}]},
            ]
        },
    )
    s.set_cluster_state(
        [make_node("n1"), make_node("n2")], [port_pod, make_pod("p", node_name="n1")]
    )
    base = s.get_node_info("n1")
    base_view = _node_view(base)
    s.fork()
    s.force_add_pod(ANTI_AFFINITY_POD, "n1")
    s.force_remove_pod("default", "ports", "n1")
    s.schedule_pod(make_pod("q"), "n1")
    expect_equal("base NodeInfo changed by writes in a fork", _node_view(base), base_view)
    layer1 = s.get_node_info("n1")
    layer1_view = _node_view(layer1)
    s.fork()
    s.unschedule_pod("default", "q", "n1")
    s.force_add_pod(port_pod, "n1")
    expect_equal("fork-1 NodeInfo changed by writes in fork 2", _node_view(layer1), layer1_view)
    expect_equal("base NodeInfo changed by writes in fork 2", _node_view(base), base_view)
    s.commit()
    expect_equal("base NodeInfo changed by commit into fork 1", _node_view(base), base_view)
    s.revert()
    expect_true("revert did not restore the base NodeInfo", s.get_node_info("n1") is base)
    expect_equal("base NodeInfo changed after revert", _node_view(base), base_view)


# --------------------------------------------------------------------------- order and round robin


def check_list_order(make_store: StoreFactory) -> None:
    """NodeInfos are listed in insertion order: set_cluster_state's input order, then nodes
    added with add_node_info, also when added in a fork, and after commit."""
    s = new_snapshot(make_store)
    s.set_cluster_state([make_node(n) for n in ("c", "a", "d")], [])
    expect_equal("order after set_cluster_state", node_names(s.list_node_infos()), ["c", "a", "d"])
    s.add_node_info(NodeInfo(make_node("b")))
    expect_equal("order after add_node_info", node_names(s.list_node_infos()), ["c", "a", "d", "b"])
    s.fork()
    s.force_add_pod(make_pod("p"), "a")
    s.add_node_info(NodeInfo(make_node("e")))
    s.add_node_info(NodeInfo(make_node("0")))
    want = ["c", "a", "d", "b", "e", "0"]
    expect_equal("order in a fork", node_names(s.list_node_infos()), want)
    s.commit()
    expect_equal("order after commit", node_names(s.list_node_infos()), want)


def _schedule_many(s: PredicateSnapshot, n: int) -> list[str]:
    return [s.schedule_pod_on_any_node_matching(make_pod(f"rr-{i}")) for i in range(n)]


def check_round_robin(make_store: StoreFactory) -> None:
    """CA NewLastIndexOrderMapping(1): on n1..n4 the very first search starts at index 1, the
    next one after the node chosen last: n2, n3, n4, n1, n2, n3."""
    s = new_snapshot(make_store)
    s.set_cluster_state([make_node(f"n{i}") for i in range(1, 5)], [])
    expect_equal("chosen nodes", _schedule_many(s, 6), ["n2", "n3", "n4", "n1", "n2", "n3"])


def check_round_robin_cordoned(make_store: StoreFactory) -> None:
    """Cordoned (spec.unschedulable) nodes are skipped without running Filter."""
    s = new_snapshot(make_store)
    nodes = [make_node(f"n{i}", unschedulable=i == 3) for i in range(1, 5)]
    s.set_cluster_state(nodes, [])
    expect_equal("chosen nodes", _schedule_many(s, 5), ["n2", "n4", "n1", "n2", "n4"])


def check_round_robin_nodes_added_in_fork(make_store: StoreFactory) -> None:
    """Nodes added in a fork join the rotation in insertion order."""
    s = new_snapshot(make_store)
    s.set_cluster_state([make_node("n1"), make_node("n2")], [])
    s.fork()
    s.add_node_info(NodeInfo(make_node("n3")))
    s.add_node_info(NodeInfo(make_node("n4")))
    expect_equal("chosen nodes", _schedule_many(s, 5), ["n2", "n3", "n4", "n1", "n2"])


def check_round_robin_across_revert(make_store: StoreFactory) -> None:
    """The rotation belongs to the snapshot's plugin runner, not to a layer: it goes on
    after a revert."""
    s = new_snapshot(make_store)
    s.set_cluster_state([make_node(f"n{i}") for i in range(1, 5)], [])
    s.fork()
    got = _schedule_many(s, 2)
    s.revert()
    got += _schedule_many(s, 2)
    expect_equal("chosen nodes", got, ["n2", "n3", "n4", "n1"])
    expect_state(
        s,
        {
            "n1": ns(("default/rr-1", 100, 100 * MI)),
            "n2": EMPTY,
            "n3": EMPTY,
            "n4": ns(("default/rr-0", 100, 100 * MI)),
        },
        "after revert and two more pods",
    )


def check_clear(make_store: StoreFactory) -> None:
    """clear() empties the snapshot and drops all forks."""
    s = new_snapshot(make_store)
    s.set_cluster_state([make_node("n1")], [make_pod("p", node_name="n1", pvcs=["claim1"])])
    s.fork()
    s.add_node_info(NodeInfo(make_node("n2")))
    s.clear()
    expect_state(s, {}, "fork, add, clear")
    s.revert()
    expect_state(s, {}, "fork, add, clear, revert (no-op)")
    expect_true("claim1 used after clear", not pvc_used(s, "default/claim1"))
    s.add_node_info(NodeInfo(make_node("n1")))
    expect_state(s, {"n1": EMPTY}, "add after clear")


# --------------------------------------------------------------------------- CSI


def check_csi_set_cluster_state(make_store: StoreFactory) -> None:
    """set_cluster_state gives each NodeInfo the CSINode named like its node (None without
    one) and keeps the given CSI snapshot itself; a second call replaces it."""
    s = new_snapshot(make_store)
    csi = CsiSnapshot([CSINode("n1")])
    s.set_cluster_state([make_node("n1"), make_node("n2")], [], csi_snapshot=csi)
    expect_true("the given CSI snapshot is not used", s.csi_snapshot is csi)
    expect_true("n1's NodeInfo lacks its CSINode", s.get_node_info("n1").csi_node is csi.get("n1"))
    expect_true("n2 got a CSINode", s.get_node_info("n2").csi_node is None)
    expect_true("get_csi_node (the plugins' CSIManager)", s.get_csi_node("n1") is csi.get("n1"))
    s.set_cluster_state([make_node("n2")], [])
    expect_equal("CSINodes after a new state without any", list(s.list_csi_nodes()), [])


def check_csi_copies_keep_csi_node(make_store: StoreFactory) -> None:
    """NodeInfo.snapshot() and the store's copy-on-write copies keep the CSINode (a CA bug
    lost it on copies), through fork, commit and revert."""
    c = SPECIAL_CSI
    expect_true(
        "NodeInfo.snapshot() lost csi_node",
        NodeInfo(SPECIAL_NODE, csi_node=c).snapshot().csi_node is c,
    )
    s = new_snapshot(make_store)
    s.set_cluster_state([SPECIAL_NODE], [], csi_snapshot=CsiSnapshot([c]))
    base = s.get_node_info("special")
    s.fork()
    s.force_add_pod(SPECIAL_POD, "special")
    s.fork()
    s.force_add_pod(OTHER_POD, "special")
    copy = s.get_node_info("special")
    expect_true("the fork wrote into the base NodeInfo", copy is not base)
    expect_true("the copy in the fork lost the CSINode", copy.csi_node is c)
    s.commit()
    expect_true("the committed NodeInfo lost the CSINode", s.get_node_info("special").csi_node is c)
    s.revert()
    expect_true("the reverted NodeInfo lost the CSINode", s.get_node_info("special").csi_node is c)
    expect_state(s, {"special": csi(EMPTY)}, "fork, add, fork, add, commit, revert")


def check_csi_clear(make_store: StoreFactory) -> None:
    """clear and set_cluster_state([], []) drop the CSINodes, also when forked, for good."""
    s = new_snapshot(make_store)
    s.set_cluster_state([SPECIAL_NODE], [], csi_snapshot=CsiSnapshot([SPECIAL_CSI]))
    s.fork()
    s.add_node_info(NodeInfo(OTHER_NODE, csi_node=CSINode("other")))
    s.clear()
    s.revert()
    expect_equal("CSINodes after fork, add, clear, revert", list(s.list_csi_nodes()), [])
    s.set_cluster_state([SPECIAL_NODE], [], csi_snapshot=CsiSnapshot([SPECIAL_CSI]))
    s.fork()
    s.set_cluster_state([], [])
    s.revert()
    expect_equal("CSINodes after fork, clear by state, revert", list(s.list_csi_nodes()), [])
    s.add_node_info(NodeInfo(SPECIAL_NODE, csi_node=SPECIAL_CSI))
    expect_state(s, {"special": csi(EMPTY)}, "add after clear")


def check_csi_volume_limit_in_fork(make_store: StoreFactory) -> None:
    """The volume limit follows the CSI snapshot through forks: a node added in a fork with a
    CSINode limits volumes there; after revert the node and its CSINode are gone."""
    s = new_snapshot(make_store)
    s.set_cluster_state([], [])
    s.fork()
    s.add_node_info(NodeInfo(SPECIAL_NODE, csi_node=SPECIAL_CSI))
    s.schedule_pod(EBS_POD_A, "special")
    expect_raises(
        "second EBS volume over a limit of 1",
        lambda: s.schedule_pod(EBS_POD_B, "special"),
        SchedulingError,
        SchedulingErrorType.FAILING_PREDICATE,
    )
    s.revert()
    expect_equal("CSINodes after revert", list(s.list_csi_nodes()), [])
    s.add_node_info(NodeInfo(SPECIAL_NODE))  # no CSINode now: no limit
    s.schedule_pod(EBS_POD_A, "special")
    s.schedule_pod(EBS_POD_B, "special")
    expect_state(s, {"special": ns(POD_EA, POD_EB)}, "two EBS volumes without a CSINode")
