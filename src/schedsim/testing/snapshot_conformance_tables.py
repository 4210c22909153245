"""The table checks of the store conformance kit: ``set_cluster_state``
(CA ``TestSetClusterState``), missing and existing nodes (``TestNode404``,
``TestNodeAlreadyExists``) and PVC usage (``TestPVCUsedByPods``, ``TestPVCClearAndFork``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from schedsim.api.core import Pod
from schedsim.snapshot import (
    NodeAlreadyExistsError,
    NodeInfo,
    NodeNotFoundError,
    PodInfo,
    PredicateSnapshot,
    SchedulingError,
    SchedulingErrorType,
)
from schedsim.testing.snapshot_conformance_forks import with_extra
from schedsim.testing.snapshot_conformance_objects import make_node, make_pod, new_snapshot
from schedsim.testing.snapshot_conformance_scenarios import EXTRA_NODE, ns
from schedsim.testing.snapshot_conformance_state import (
    EMPTY,
    MI,
    NodeState,
    StoreFactory,
    expect_equal,
    expect_raises,
    expect_state,
    expect_true,
)

# --------------------------------------------------------------------------- set_cluster_state


def check_set_cluster_state_targets(make_store: StoreFactory) -> None:
    """Pods go to spec.nodeName, else status.nominatedNodeName (CA PR #9607); nodeName wins."""
    s = new_snapshot(make_store)
    a = make_pod("a", node_name="n1")
    b = make_pod("b", nominated_node_name="n2")
    c = make_pod("c", node_name="n1", nominated_node_name="n2")
    skipped = s.set_cluster_state([make_node("n1"), make_node("n2")], [a, b, c])
    expect_equal("skipped pods", skipped, [])
    a_, b_, c_ = (("default/" + n, 100, 100 * MI) for n in "abc")
    expect_state(s, {"n1": ns(a_, c_), "n2": ns(b_)}, "after set_cluster_state")


def check_set_cluster_state_skips_unknown(make_store: StoreFactory) -> None:
    """Pods whose node is not in the snapshot are skipped and returned, in input order."""
    s = new_snapshot(make_store)
    x = make_pod("x", node_name="ghost")
    y = make_pod("y")
    z = make_pod("z", nominated_node_name="ghost")
    ok = make_pod("ok", node_name="n1")
    skipped = s.set_cluster_state([make_node("n1")], [x, ok, y, z])
    expect_true(
        "set_cluster_state returns the skipped pods themselves, in input order",
        len(skipped) == 3 and all(p is q for p, q in zip(skipped, [x, y, z], strict=True)),
    )
    expect_state(s, {"n1": ns(("default/ok", 100, 100 * MI))}, "after set_cluster_state")


def check_set_cluster_state_drops_forks(make_store: StoreFactory) -> None:
    """set_cluster_state resets to an unforked state: revert and commit are no-ops after it."""
    s = new_snapshot(make_store)
    s.set_cluster_state([make_node("old")], [make_pod("p", node_name="old")])
    s.fork()
    s.add_node_info(NodeInfo(make_node("forked")))
    s.fork()
    s.force_add_pod(make_pod("q"), "old")
    new = {"n1": ns(("default/r", 100, 100 * MI)), "n2": EMPTY}
    s.set_cluster_state([make_node("n1"), make_node("n2")], [make_pod("r", node_name="n1")])
    expect_state(s, new, "fork, fork, set_cluster_state")
    s.revert()
    expect_state(s, new, "fork, fork, set_cluster_state, revert (no-op)")
    s.commit()
    s.revert()
    expect_state(s, new, "..., commit, revert (no-ops)")
    s.fork()
    s.add_node_info(NodeInfo(EXTRA_NODE))
    expect_state(s, with_extra(new), "..., fork, add extra node")
    s.revert()
    expect_state(s, new, "..., fork, add extra node, revert")


def check_set_cluster_state_clears(make_store: StoreFactory) -> None:
    """``set_cluster_state([], [])`` clears, in the base and in a fork (CA "clear base",
    "clear fork")."""
    s = new_snapshot(make_store)
    s.set_cluster_state([make_node("n1")], [make_pod("p", node_name="n1", pvcs=["claim1"])])
    s.set_cluster_state([], [])
    expect_state(s, {}, "clear base")
    expect_true("claim1 still used after clear", not pvc_used(s, "default/claim1"))
    s.set_cluster_state([make_node("n1")], [make_pod("p", node_name="n1", pvcs=["claim1"])])
    s.fork()
    s.add_node_info(NodeInfo(make_node("n2"), pods=[s.new_pod_info(make_pod("q"))]))
    s.set_cluster_state([], [])
    expect_state(s, {}, "fork, add, clear")
    s.revert()
    expect_state(s, {}, "fork, add, clear, revert")
    expect_true("claim1 still used after clear", not pvc_used(s, "default/claim1"))


def check_set_cluster_state_replaces(make_store: StoreFactory) -> None:
    """A second set_cluster_state replaces everything (CA "clear base ... and set a new
    state")."""
    s = new_snapshot(make_store)
    s.set_cluster_state(
        [make_node("a1"), make_node("a2")], [make_pod("p", node_name="a1", pvcs=["claim1"])]
    )
    s.set_cluster_state([make_node("b1")], [make_pod("q", node_name="b1", pvcs=["claim2"])])
    expect_state(s, {"b1": ns(("default/q", 100, 100 * MI))}, "after the second state")
    expect_true("claim1 of the old state still used", not pvc_used(s, "default/claim1"))
    expect_true("claim2 of the new state not used", pvc_used(s, "default/claim2"))


def check_set_cluster_state_order_and_identity(make_store: StoreFactory) -> None:
    """Within a node, pods keep input order; the Pod objects are stored as given."""
    s = new_snapshot(make_store)
    pods = [make_pod(f"p{i}", node_name="n1" if i % 2 else "n2") for i in range(8)]
    s.set_cluster_state([make_node("n1"), make_node("n2")], pods)
    for name, want in (("n1", pods[1::2]), ("n2", pods[0::2])):
        got = [p.pod for p in s.get_node_info(name).pods]
        expect_true(
            f"{name}: stored pods are not the input Pod objects in input order",
            len(got) == len(want) and all(a is b for a, b in zip(got, want, strict=True)),
        )


def check_set_cluster_state_duplicate_node(make_store: StoreFactory) -> None:
    """Two nodes with one name: NodeAlreadyExistsError."""
    s = new_snapshot(make_store)
    expect_raises(
        "set_cluster_state with a duplicate node",
        lambda: s.set_cluster_state([make_node("n1"), make_node("n1")], []),
        NodeAlreadyExistsError,
    )


def check_set_cluster_state_many(make_store: StoreFactory) -> None:
    """CA ``TestSetClusterState`` with fixed sizes: 37 nodes, 401 pods round robin; fork, 5
    extra nodes and 53 extra pods, clear in the fork, revert."""
    s = new_snapshot(make_store)
    nodes = [make_node(f"n-{i}") for i in range(37)]
    pods = [make_pod(f"p-{i}", cpu="1m", memory="1", node_name=f"n-{i % 37}") for i in range(401)]
    s.set_cluster_state(nodes, pods)
    want = _round_robin_state([n.name for n in nodes], [(p.key, p.node_name) for p in pods], 1, 1)
    expect_state(s, want, "after set_cluster_state")
    s.fork()
    extra_nodes = [make_node(f"extra-{i}") for i in range(5)]
    names = [n.name for n in nodes + extra_nodes]
    extra_pods = [
        make_pod(f"extra-{i}", cpu="1m", memory="1", node_name=names[i % len(names)])
        for i in range(53)
    ]
    for n in extra_nodes:
        s.add_node_info(NodeInfo(n))
    for p in extra_pods:
        s.force_add_pod(p, p.node_name)
    all_pods = [(p.key, p.node_name) for p in pods + extra_pods]
    expect_state(s, _round_robin_state(names, all_pods, 1, 1), "fork, add extra")
    s.set_cluster_state([], [])
    expect_state(s, {}, "fork, add extra, clear")
    s.revert()
    expect_state(s, {}, "fork, add extra, clear, revert")


def _round_robin_state(
    node_names: Sequence[str], pods: Sequence[tuple[str, str]], milli_cpu: int, memory: int
) -> dict[str, NodeState]:
    by_node: dict[str, list[tuple[str, int, int]]] = {n: [] for n in node_names}
    for key, node in pods:
        by_node[node].append((key, milli_cpu, memory))
    return {n: ns(*ps) for n, ps in by_node.items()}


# --------------------------------------------------------------------------- missing/existing nodes

NODE_404_OPS: dict[
    str, tuple[Callable[[PredicateSnapshot], object], type[Exception], SchedulingErrorType | None]
] = {
    "force_add_pod": (lambda s: s.force_add_pod(make_pod("p1"), "node"), NodeNotFoundError, None),
    "force_remove_pod": (
        lambda s: s.force_remove_pod("default", "p1", "node"),
        NodeNotFoundError,
        None,
    ),
    "schedule_pod": (
        lambda s: s.schedule_pod(make_pod("p1"), "node"),
        SchedulingError,
        SchedulingErrorType.INTERNAL_ERROR,
    ),
    "check_predicates": (
        lambda s: s.check_predicates(make_pod("p1"), "node"),
        SchedulingError,
        SchedulingErrorType.INTERNAL_ERROR,
    ),
    "unschedule_pod": (
        lambda s: s.unschedule_pod("default", "p1", "node"),
        NodeNotFoundError,
        None,
    ),
    "node_infos().get": (lambda s: s.node_infos().get("node"), NodeNotFoundError, None),
    "get_node_info": (lambda s: s.get_node_info("node"), NodeNotFoundError, None),
    "remove_node_info": (lambda s: s.remove_node_info("node"), NodeNotFoundError, None),
    "store.store_pod_info": (
        lambda s: s.store.store_pod_info(PodInfo(make_pod("p1")), "node"),
        NodeNotFoundError,
        None,
    ),
    "store.remove_pod_info": (
        lambda s: s.store.remove_pod_info("default", "p1", "node"),
        NodeNotFoundError,
        None,
    ),
    "store.remove_node_info": (lambda s: s.store.remove_node_info("node"), NodeNotFoundError, None),
}
"""CA ``TestNode404``: everything that must fail for a missing node, and how."""


def _node_404_empty(s: PredicateSnapshot, check: Callable[[str], None]) -> None:
    check("empty snapshot")
    expect_state(s, {}, "empty snapshot, after the failed op")


def _node_404_removed_in_fork(s: PredicateSnapshot, check: Callable[[str], None]) -> None:
    s.add_node_info(NodeInfo(make_node("node")))
    s.fork()
    s.remove_node_info("node")
    check("removed in a fork")
    s.commit()
    check("removed in a fork, committed")
    expect_state(s, {}, "after the failed ops")


def _node_404_removed_in_fork_until_revert(
    s: PredicateSnapshot, check: Callable[[str], None]
) -> None:
    s.add_node_info(NodeInfo(make_node("node"), pods=[s.new_pod_info(make_pod("p"))]))
    s.fork()
    s.remove_node_info("node")
    check("removed in a fork")
    s.fork()
    check("removed in a fork, touched again in a nested fork")
    s.revert()
    check("removed in a fork, after reverting the nested fork")
    s.revert()
    expect_state(s, {"node": ns(("default/p", 100, 100 * MI))}, "back after the revert")


def _node_404_removed_in_base(s: PredicateSnapshot, check: Callable[[str], None]) -> None:
    s.add_node_info(NodeInfo(make_node("node")))
    s.remove_node_info("node")
    check("removed in the base")
    expect_state(s, {}, "after the failed op")


def _node_404_added_in_fork_reverted(s: PredicateSnapshot, check: Callable[[str], None]) -> None:
    s.add_node_info(NodeInfo(make_node("other")))
    s.fork()
    s.add_node_info(NodeInfo(make_node("node")))
    s.revert()
    check("added in a fork, reverted")
    expect_state(s, {"other": EMPTY}, "after the failed op")


NODE_404_SITUATIONS: dict[str, Callable[[PredicateSnapshot, Callable[[str], None]], None]] = {
    "empty": _node_404_empty,
    "removed in a fork (then committed)": _node_404_removed_in_fork,
    "removed in a fork, gone until reverted": _node_404_removed_in_fork_until_revert,
    "removed in the base": _node_404_removed_in_base,
    "extra: added in a fork, reverted": _node_404_added_in_fork_reverted,
}


def check_node_404(op_name: str, situation: str, make_store: StoreFactory) -> None:
    op, exc, sched_type = NODE_404_OPS[op_name]
    s = new_snapshot(make_store)

    def check(step: str) -> None:
        expect_raises(f"{op_name} ({step})", lambda: op(s), exc, sched_type)

    NODE_404_SITUATIONS[situation](s, check)


_EXISTING_CLAIM = "default/claim-of-rejected"
_REJECTED_POD = make_pod("rejected", node_name="node", pvcs=["claim-of-rejected"])

NODE_EXISTS_OPS: dict[str, Callable[[PredicateSnapshot], object]] = {
    "store.store_node_info": lambda s: s.store.store_node_info(NodeInfo(make_node("node"))),
    "add_node_info (with pods)": lambda s: s.add_node_info(
        NodeInfo(make_node("node"), pods=[s.new_pod_info(_REJECTED_POD)])
    ),
}
"""CA ``TestNodeAlreadyExists``: adding a node that is there raises NodeAlreadyExistsError."""


def _node_exists_base(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(make_node("node")))


def _node_exists_base_forked(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(make_node("node")))
    s.fork()


def _node_exists_fork(s: PredicateSnapshot) -> None:
    s.fork()
    s.add_node_info(NodeInfo(make_node("node")))


def _node_exists_committed(s: PredicateSnapshot) -> None:
    s.fork()
    s.add_node_info(NodeInfo(make_node("node")))
    s.commit()


def _node_exists_reverted_removal(s: PredicateSnapshot) -> None:
    s.add_node_info(NodeInfo(make_node("node")))
    s.fork()
    s.remove_node_info("node")
    s.revert()


NODE_EXISTS_SITUATIONS: dict[str, Callable[[PredicateSnapshot], None]] = {
    "base": _node_exists_base,
    "base, forked": _node_exists_base_forked,
    "fork": _node_exists_fork,
    "committed": _node_exists_committed,
    "extra: removal reverted": _node_exists_reverted_removal,
}


def check_node_exists(op_name: str, situation: str, make_store: StoreFactory) -> None:
    s = new_snapshot(make_store)
    NODE_EXISTS_SITUATIONS[situation](s)
    before = s.get_node_info("node")
    op = NODE_EXISTS_OPS[op_name]
    expect_raises(f"{op_name} ({situation})", lambda: op(s), NodeAlreadyExistsError)
    expect_state(s, {"node": EMPTY}, "after the failed op")
    expect_true("the stored NodeInfo was replaced", s.get_node_info("node") is before)
    expect_true(
        "a rejected NodeInfo's pods registered their PVCs", not pvc_used(s, _EXISTING_CLAIM)
    )


# --------------------------------------------------------------------------- PVC usage


def pvc_used(s: PredicateSnapshot, key: str) -> bool:
    return s.storage_infos().is_pvc_used_by_pods(key)


_PVC_NODE = make_node("node")
_PVC_POD1 = make_pod("pod1", node_name="node", pvcs=["claim1"])
_PVC_POD2 = make_pod("pod2", node_name="node", pvcs=["claim1", "claim2"])
_NON_PVC_POD = make_pod(
    "pod3", node_name="node", other_volumes=[{"name": "v1", "nfs": {"server": "s", "path": "/"}}]
)

PVC_TABLE: dict[str, tuple[tuple[Pod, ...], str, bool, str, bool]] = {
    # desc: (pods, claim, exists, pod to remove, exists after removal)
    "pvc new pod with volume fetch": ((_PVC_POD1,), "claim1", True, "", False),
    "pvc new pod with incorrect volume fetch": ((_PVC_POD1,), "incorrect-claim", False, "", False),
    "new pod with non-pvc volume fetch": ((_NON_PVC_POD,), "incorrect-claim", False, "", False),
    "pvc new pod with delete volume fetch": ((_PVC_POD1,), "claim1", True, "pod1", False),
    "pvc two pods with duplicated volume, delete one pod, fetch": (
        (_PVC_POD1, _PVC_POD2),
        "claim1",
        True,
        "pod1",
        True,
    ),
    "pvc and non-pvc pods, fetch and delete non-pvc pod": (
        (_PVC_POD1, _NON_PVC_POD),
        "claim1",
        True,
        "pod3",
        True,
    ),
    "pvc and non-pvc pods, delete pvc pod and fetch": (
        (_PVC_POD1, _NON_PVC_POD),
        "claim1",
        True,
        "pod1",
        False,
    ),
}
"""CA ``TestPVCUsedByPods``."""


def check_pvc_table(desc: str, make_store: StoreFactory) -> None:
    pods, claim, exists, remove, exists_after = PVC_TABLE[desc]
    s = new_snapshot(make_store)
    s.add_node_info(NodeInfo(_PVC_NODE, pods=[s.new_pod_info(p) for p in pods]))
    key = f"default/{claim}"
    expect_equal(f"is_pvc_used_by_pods({key!r})", pvc_used(s, key), exists)
    if remove:
        s.force_remove_pod("default", remove, "node")
        expect_equal(
            f"is_pvc_used_by_pods({key!r}) after removing {remove}", pvc_used(s, key), exists_after
        )


def check_pvc_fork_revert(make_store: StoreFactory) -> None:
    """CA ``TestPVCClearAndFork`` "fork and revert", plus commit."""
    s = new_snapshot(make_store)
    s.add_node_info(NodeInfo(_PVC_NODE, pods=[s.new_pod_info(_PVC_POD1)]))
    expect_true("claim1 unused in the base", pvc_used(s, "default/claim1"))
    s.fork()
    expect_true("claim1 unused after fork", pvc_used(s, "default/claim1"))
    s.force_add_pod(_PVC_POD2, "node")
    expect_true("claim2 unused after adding pod2 in the fork", pvc_used(s, "default/claim2"))
    s.revert()
    expect_true("claim2 still used after revert", not pvc_used(s, "default/claim2"))
    expect_true("claim1 unused after revert", pvc_used(s, "default/claim1"))
    s.fork()
    s.force_add_pod(_PVC_POD2, "node")
    s.force_remove_pod("default", "pod1", "node")
    s.commit()
    expect_true("claim2 unused after commit", pvc_used(s, "default/claim2"))
    expect_true("claim1 unused after commit (pod2 uses it)", pvc_used(s, "default/claim1"))
    s.force_remove_pod("default", "pod2", "node")
    expect_true("claim1 used by nobody", not pvc_used(s, "default/claim1"))


def check_pvc_set_cluster_state(make_store: StoreFactory) -> None:
    """CA ``TestPVCClearAndFork`` "clear snapshot", plus pods loaded by set_cluster_state."""
    s = new_snapshot(make_store)
    s.add_node_info(NodeInfo(_PVC_NODE, pods=[s.new_pod_info(_PVC_POD1)]))
    s.set_cluster_state([], [])
    expect_true("claim1 used after clear", not pvc_used(s, "default/claim1"))
    s.set_cluster_state([_PVC_NODE], [_PVC_POD2])
    expect_true("claim2 unused after set_cluster_state", pvc_used(s, "default/claim2"))
    s.fork()
    s.set_cluster_state([_PVC_NODE], [_PVC_POD1])
    s.revert()
    expect_true(
        "claim2 used after a new state (revert is a no-op)", not pvc_used(s, "default/claim2")
    )
    expect_true("claim1 unused after a new state", pvc_used(s, "default/claim1"))


def check_pvc_node_removal(make_store: StoreFactory) -> None:
    """Removing a node drops its pods' claims; reverting the removal brings them back;
    a claim used on two nodes stays used until both pods are gone."""
    s = new_snapshot(make_store)
    other = make_pod("pod1b", node_name="node2", pvcs=["claim1"])
    s.set_cluster_state([_PVC_NODE, make_node("node2")], [_PVC_POD1, other])
    s.fork()
    s.remove_node_info("node")
    expect_true("claim1 unused while pod1b still uses it", pvc_used(s, "default/claim1"))
    s.remove_node_info("node2")
    expect_true("claim1 used after removing both nodes", not pvc_used(s, "default/claim1"))
    s.revert()
    expect_true("claim1 unused after reverting the removals", pvc_used(s, "default/claim1"))
    s.unschedule_pod("default", "pod1", "node")
    s.unschedule_pod("default", "pod1b", "node2")
    expect_true("claim1 used after unscheduling both pods", not pvc_used(s, "default/claim1"))


def check_pvc_namespaced(make_store: StoreFactory) -> None:
    """Keys are ``namespace/claim`` of the pod's namespace."""
    s = new_snapshot(make_store)
    pod = make_pod("p", namespace="team", node_name="node", pvcs=["claim1"])
    s.set_cluster_state([_PVC_NODE], [pod])
    expect_true("team/claim1 unused", pvc_used(s, "team/claim1"))
    expect_true("default/claim1 used", not pvc_used(s, "default/claim1"))
    expect_true("bare claim1 used", not pvc_used(s, "claim1"))


def check_pvc_ephemeral(make_store: StoreFactory) -> None:
    """Generic ephemeral volumes are not counted: kube-scheduler's NodeInfo.PVCRefCounts and
    CA's stores count ``persistentVolumeClaim`` volumes only."""
    s = new_snapshot(make_store)
    pod = make_pod("web-0", node_name="node", ephemeral_volumes=["scratch"])
    s.set_cluster_state([_PVC_NODE], [])
    s.force_add_pod(pod, "node")
    expect_true("default/web-0-scratch used", not pvc_used(s, "default/web-0-scratch"))
    expect_true("default/scratch used", not pvc_used(s, "default/scratch"))
