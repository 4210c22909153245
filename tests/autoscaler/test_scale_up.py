"""Scale-up: the binpacking estimator and the whole decision, in both stores.

The expected outcomes are Cluster Autoscaler's own (each test names the CA test it mirrors).
Devices and CSI volume limits are expressed here as extended resources in node allocatable
(``nvidia.com/gpu``, ``example.com/nic``, ``example.com/attachments``): the same numbers,
checked by NodeResourcesFit, so the binpacking logic is exercised independently of DRA and
CSI. The DRA-device and CSINode versions are in test_scale_up_dra_csi.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest
from sim_loaded import loaded

from schedsim.api.core import Node, Pod
from schedsim.autoscaler.equivalence import group_equivalent_pods
from schedsim.autoscaler.nodegroups import NodeGroup, NodeTemplate
from schedsim.autoscaler.scaleup import (
    LIMIT_MAX_SIZE,
    GroupOption,
    at_max_size,
    choose_option,
    estimate,
    max_nodes_per_scale_up_reached,
    max_size_reached,
    scale_up,
)
from schedsim.framework import Framework, Handle, default_profile
from schedsim.snapshot import (
    ClusterSnapshotStore,
    NodeInfo,
    PredicateSnapshot,
)

GPU = "nvidia.com/gpu"
NIC = "example.com/nic"
ATTACH = "example.com/attachments"


def node(
    name: str,
    cpu: str = "1000m",
    memory: str = "1000",
    pods: int = 110,
    labels: Mapping[str, str] | None = None,
    extra: Mapping[str, str] | None = None,
) -> Node:
    """CA's ``BuildTestNode(name, cpu, mem)`` plus extended resources."""
    alloc = {"cpu": cpu, "memory": memory, "pods": str(pods), **(extra or {})}
    return Node.from_manifest(
        {
            "metadata": {
                "name": name,
                "labels": {"kubernetes.io/hostname": name, **(labels or {})},
            },
            "status": {"allocatable": alloc, "capacity": alloc},
        }
    )


def pod(
    name: str,
    cpu: str = "100m",
    memory: str = "100",
    node_name: str = "",
    extra: Mapping[str, str] | None = None,
    controller: str | None = "rs",
    controller_kind: str = "ReplicaSet",
    host_port: int = 0,
    priority: int = 0,
) -> Pod:
    """CA's ``BuildTestPod`` with a controller (pods of one controller and spec are
    equivalent, as ``makePodEquivalenceGroup`` makes them)."""
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if controller is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": controller_kind,
                "name": controller,
                "uid": f"uid-{controller}",
                "controller": True,
            }
        ]
    container: dict[str, Any] = {
        "name": "c",
        "resources": {"requests": {"cpu": cpu, "memory": memory, **(extra or {})}},
    }
    if extra:
        container["resources"]["limits"] = dict(extra)
    if host_port:
        container["ports"] = [{"containerPort": host_port, "hostPort": host_port}]
    return Pod.from_manifest(
        {
            "metadata": meta,
            "spec": {"nodeName": node_name, "priority": priority, "containers": [container]},
        }
    )


def framework() -> Framework:
    return Framework(default_profile(), Handle())


def group(
    name: str,
    template: Node,
    max_size: int = 10,
    min_size: int = 0,
    template_pods: Sequence[Pod] = (),
) -> NodeGroup:
    return NodeGroup(
        name=name,
        min_size=min_size,
        max_size=max_size,
        template=NodeTemplate(template, tuple(template_pods)),
        node_selector={"group": name},
    )


# --------------------------------------------------------------------------- estimator


def _old_node_snapshot(store: Callable[[], ClusterSnapshotStore]) -> PredicateSnapshot:
    snap = PredicateSnapshot(framework(), store())
    snap.set_cluster_state([node("oldnode", cpu="100m", memory="100Mi", pods=10)], [])
    return snap


def _pods(prefix: str, n: int, **kw: Any) -> list[Pod]:
    return [pod(f"{prefix}-{i}", controller=prefix, **kw) for i in range(n)]


@pytest.mark.parametrize(
    ("case", "cpu", "memory", "max_pods", "max_nodes", "groups", "nodes", "placed"),
    [
        ("simple resource-based binpacking", "1000m", "2000Mi", 10, None,
         [_pods("estimatee", 10, cpu="350m", memory="1000")], 5, 10),
        ("pods-per-node bound binpacking", "10000m", "20000Mi", 10, None,
         [_pods("estimatee", 20, cpu="10m", memory="100")], 2, 20),
        ("hostport conflict forces pod-per-node", "1000m", "5000Mi", 10, None,
         [_pods("estimatee", 8, cpu="200m", memory="1000", host_port=5555)], 8, 8),
        ("limiter cuts binpacking", "1000m", "5000Mi", 10, 5,
         [_pods("estimatee", 20, cpu="500m", memory="1000")], 5, 10),
    ],
)  # fmt: skip
def test_binpacking_estimate(
    store: Callable[[], ClusterSnapshotStore],
    case: str,
    cpu: str,
    memory: str,
    max_pods: int,
    max_nodes: int | None,
    groups: list[list[Pod]],
    nodes: int,
    placed: int,
) -> None:
    """CA ``estimator/binpacking_estimator_test.go`` ``TestBinpackingEstimate`` (the cases
    without topology spreading; the hostname-spread one is the next test but one)."""
    snap = _old_node_snapshot(store)
    before = [ni.node.name for ni in snap.list_node_infos() if ni.node]
    template = NodeInfo(node("template", cpu=cpu, memory=memory, pods=max_pods))
    est = estimate(snap, groups, template, max_nodes)
    assert (est.node_count, len(est.pods)) == (nodes, placed), case
    assert [ni.node.name for ni in snap.list_node_infos() if ni.node] == before  # reverted


def test_binpacking_decreasing_order(store: Callable[[], ClusterSnapshotStore]) -> None:
    """CA ``TestBinpackingEstimate`` "decreasing ordered pods are processed first": with a
    limit of 5 nodes the 500m pods are packed, the 50m ones are not."""
    snap = _old_node_snapshot(store)
    small = _pods("small", 10, cpu="50m", memory="1000")
    high = _pods("high", 10, cpu="500m", memory="1000")
    template = NodeInfo(node("template", memory="5000Mi", pods=10))
    est = estimate(snap, [small, high], template, 5)
    assert est.node_count == 5
    assert list(est.pods) == high


def _hostname_spread_pod(name: str) -> Pod:
    """CA ``BuildTestPod(name, 20, 100, WithNamespace("universe"), WithLabels(app=estimatee),
    WithMaxSkew(1, "kubernetes.io/hostname", 3))``."""
    return Pod.from_manifest(
        {
            "metadata": {"name": name, "namespace": "universe", "labels": {"app": "estimatee"}},
            "spec": {
                "containers": [
                    {"name": "c", "resources": {"requests": {"cpu": "20m", "memory": "100"}}}
                ],
                "topologySpreadConstraints": [
                    {
                        "maxSkew": 1,
                        "topologyKey": "kubernetes.io/hostname",
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": {"matchLabels": {"app": "estimatee"}},
                        "minDomains": 3,
                    }
                ],
            },
        }
    )


def test_binpacking_hostname_spread_schedules_pods_retroactively(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """CA 1.34 ``TestBinpackingEstimate`` "hostname topology spreading with maxSkew=1 with a
    large scaleup handles scheduling pods retroactively": 12 pods, template 1000m/5000Mi,
    expectNodeCount 3, expectPodCount 12. When the last copy fails a pod for the hostname
    spread, ``tryToScheduleOnNewNodes`` schedules it on any node but that copy (the cluster's
    ``oldnode`` included, 100m: room for 5), and ``newNodesWithPods`` counts every node that
    got a pod: 2 copies and oldnode, 4 pods each (the spread keeps them within 1)."""
    snap = _old_node_snapshot(store)
    pods = [_hostname_spread_pod(f"estimatee-{i}") for i in range(12)]
    template = NodeInfo(node("template", memory="5000Mi", pods=10))
    est = estimate(snap, [pods], template, None)
    assert (est.node_count, len(est.pods)) == (3, 12)
    assert dict(est.pods_per_node) == {"template-e-0": 4, "template-e-1": 4}
    assert dict(est.existing_nodes) == {"oldnode": 4}
    assert [ni.node.name for ni in snap.list_node_infos() if ni.node] == ["oldnode"]  # reverted
    assert not snap.get_node_info("oldnode").pods


def test_scale_up_capped_at_room_when_existing_nodes_count(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """The estimate above is 3 nodes (2 copies and oldnode); a group with room for 2 asks for
    2, not 3: CA's BalanceScaleUpBetweenGroups caps a request that "exceeds node group set
    capacity" at max size - current size."""
    nodes = [node("oldnode", cpu="100m", memory="100Mi", pods=10)]
    pods = [_hostname_spread_pod(f"estimatee-{i}") for i in range(12)]
    tmpl = NodeTemplate(node("template", memory="5000Mi", pods=10), ())
    ng = NodeGroup(name="g", min_size=0, max_size=2, template=tmpl, node_selector={})
    r = scale_up(*loaded(nodes, pods, framework(), store()), [ng])
    [opt] = r.options
    assert opt.node_count == 2  # 3 before the cap


@pytest.mark.parametrize(
    ("case", "groups", "per_node"),
    [
        ("pods from later groups go to the last node while it has room",
         [("big", 600, 2, 0), ("a", 150, 1, 0), ("b", 120, 1, 0), ("c", 100, 1, 0)],
         {"template-e-0": 1, "template-e-1": 4}),
        ("pods go to an earlier node when the last node is full",
         [("big", 600, 2, 0), ("medium", 400, 1, 0), ("small", 300, 1, 0)],
         {"template-e-0": 2, "template-e-1": 2}),
        ("pods go to an earlier node when the last node has a host port conflict",
         [("big", 600, 2, 0), ("hostport", 200, 2, 5555)],
         {"template-e-0": 2, "template-e-1": 2}),
    ],
)  # fmt: skip
def test_binpacking_placement_on_added_nodes(
    store: Callable[[], ClusterSnapshotStore],
    case: str,
    groups: list[tuple[str, int, int, int]],
    per_node: dict[str, int],
) -> None:
    """CA ``TestBinpackingEstimatePlacementOnAddedNodes`` (the cases without zonal
    anti-affinity or the fast path): which added node each later group's pods land on."""
    snap = _old_node_snapshot(store)
    pegs = [_pods(n, c, cpu=f"{m}m", host_port=hp) for n, m, c, hp in groups]
    est = estimate(snap, pegs, NodeInfo(node("template", pods=10)))
    assert dict(est.pods_per_node) == per_node, case
    assert est.node_count == len(per_node)


def test_estimate_does_not_count_empty_copies(store: Callable[[], ClusterSnapshotStore]) -> None:
    """A pod that fits no empty copy stops its group (the copy added for it stays, empty) and
    the next group fills that copy before adding more (CA: "empty last node is used when pods
    don't fit on any node with pods")."""
    snap = _old_node_snapshot(store)
    fits = _pods("fits", 3, cpu="400m")
    too_big = _pods("big", 2, cpu="2")
    est = estimate(snap, [too_big, fits], NodeInfo(node("template")), None)
    assert est.node_count == 2
    assert list(est.pods) == fits
    assert dict(est.pods_per_node) == {"template-e-0": 2, "template-e-1": 1}


# --------------------------------------------------------------------------- expected outcomes


def _cluster(
    existing: Sequence[Node], scheduled: Sequence[Pod], pending: Sequence[Pod]
) -> tuple[list[Node], list[Pod]]:
    return list(existing), [*scheduled, *pending]


def gpu_node(name: str, gpus: int, nics: int = 0, grp: str = "gpu") -> Node:
    extra = {GPU: str(gpus)}
    if nics:
        extra[NIC] = str(nics)
    return node(name, labels={"group": grp}, extra=extra)


def test_one_pod_per_node_one_device_per_node(store: Callable[[], ClusterSnapshotStore]) -> None:
    """CA ``TestStaticAutoscalerDynamicResources`` "scale-up: one pod per node, one device
    per node": 1-GPU nodes, one existing node whose GPU is used, 3 pending pods needing one
    GPU each -> 3 nodes."""
    template = gpu_node("node1Gpu-template", 1)
    nodes = [gpu_node("node1Gpu-0", 1)]
    pods = [
        pod("scheduled-0", node_name="node1Gpu-0", extra={GPU: "1"}, controller="s0"),
        *[pod(f"unschedulable-{i}", extra={GPU: "1"}, controller="u") for i in range(3)],
    ]
    r = scale_up(*loaded(nodes, pods, framework(), store()), [group("gpu", template)])
    assert r.chosen == "gpu"
    assert r.chosen_option is not None and r.chosen_option.node_count == 3
    assert not r.scheduled and not r.unhelped


def test_multiple_pods_per_node_one_device_each(store: Callable[[], ClusterSnapshotStore]) -> None:
    """CA "scale-up: multiple pods per node, pods requesting one device": 3-GPU nodes, one
    existing node with 2 GPUs used, 10 pending pods needing 1 GPU: 1 fits the existing
    node, 9 need 3 nodes."""
    template = gpu_node("node3Gpu-template", 3)
    nodes = [gpu_node("node3Gpu-0", 3)]
    pods = [
        pod("scheduled-0", node_name="node3Gpu-0", extra={GPU: "1"}, controller="s0"),
        pod("scheduled-1", node_name="node3Gpu-0", extra={GPU: "1"}, controller="s1"),
        *[pod(f"unschedulable-{i}", extra={GPU: "1"}, controller="u") for i in range(10)],
    ]
    r = scale_up(*loaded(nodes, pods, framework(), store()), [group("gpu", template)])
    assert [p.node_name for p in r.scheduled] == ["node3Gpu-0"]
    assert r.chosen_option is not None and r.chosen_option.node_count == 3
    assert len(r.chosen_option.pods) == 9


@pytest.mark.parametrize("existing", [1, 0])
def test_pods_requesting_different_devices(
    store: Callable[[], ClusterSnapshotStore], existing: int
) -> None:
    """CA "scale-up: one pod per node, pods requesting multiple different devices" (one
    existing node using its GPU and NIC) and "scale-up: scale from 0 nodes in a node group":
    3 pending pods needing a GPU and a NIC -> 3 nodes either way."""
    template = gpu_node("node1Gpu1Nic-template", 1, 1)
    nodes = [gpu_node(f"node1Gpu1Nic-{i}", 1, 1) for i in range(existing)]
    scheduled = [
        pod("scheduled-0", node_name="node1Gpu1Nic-0", extra={GPU: "1", NIC: "1"}, controller="s")
    ][:existing]
    pending = [
        pod(f"unschedulable-{i}", extra={GPU: "1", NIC: "1"}, controller="u") for i in range(3)
    ]
    r = scale_up(
        *loaded(nodes, [*scheduled, *pending], framework(), store()), [group("gpu", template)]
    )
    assert r.chosen_option is not None and r.chosen_option.node_count == 3
    assert r.chosen_option.current_size == existing


def test_no_scale_up_when_devices_are_on_different_groups(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """CA "no scale-up: pods requesting multiple different devices, but they're on different
    nodes": a GPU group and a NIC group, pods need both -> no group helps, and each group says
    what it lacks."""
    gpu_t = node("gpu-template", extra={GPU: "1"})
    nic_t = node("nic-template", extra={NIC: "1"})
    pods = [pod(f"unschedulable-{i}", extra={GPU: "1", NIC: "1"}, controller="u") for i in range(3)]
    r = scale_up(
        *loaded([], pods, framework(), store()), [group("gpu", gpu_t), group("nic", nic_t)]
    )
    assert r.chosen is None
    assert len(r.unhelped) == 3
    assert r.unhelped[0].reasons == {
        "gpu": f"wouldn't fit: Insufficient {NIC}",
        "nic": f"wouldn't fit: Insufficient {GPU}",
    }


def _attach_group(size: int) -> tuple[list[Node], list[Pod], NodeGroup]:
    template = node("node1CSINode-template", labels={"group": "csi"}, extra={ATTACH: "10"})
    ds = pod(
        "template-ds",
        memory="100",
        extra={ATTACH: "2"},
        controller="ds",
        controller_kind="DaemonSet",
    )
    nodes = [
        node(f"node1CSINode-{i}", labels={"group": "csi"}, extra={ATTACH: "10"})
        for i in range(size)
    ]
    running = [
        pod(
            f"ds-{i}",
            extra={ATTACH: "2"},
            node_name=n.name,
            controller="ds",
            controller_kind="DaemonSet",
        )
        for i, n in enumerate(nodes)
    ]
    return nodes, running, group("csi", template, template_pods=[ds])


@pytest.mark.parametrize(
    ("existing", "pending", "expected"),
    [(1, 3, 2), (0, 3, 3), (1, 1, 0)],
    ids=["1-node-3-pods", "from-zero-3-pods", "1-node-1-pod"],
)
def test_volume_limit_blocks_packing(
    store: Callable[[], ClusterSnapshotStore], existing: int, pending: int, expected: int
) -> None:
    """CA ``static_autoscaler_csi_test.go`` ``TestStaticAutoscalerCSI`` ("CSI volume limit
    blocks packing, requires 2 extra nodes", "scale-from-zero ... requires >1 new nodes",
    "scale-from-1: existing node can support limits, no scaling needed"), with the limit of
    10 volumes as an extended resource: every node runs a DaemonSet pod using 2, pending pods
    use 6 each, so a node holds one pending pod."""
    nodes, running, ng = _attach_group(existing)
    pods = [pod(f"pending-{i}", extra={ATTACH: "6"}, controller="p") for i in range(pending)]
    r = scale_up(*loaded(nodes, [*running, *pods], framework(), store()), [ng])
    if expected:
        assert r.chosen_option is not None and r.chosen_option.node_count == expected
    else:
        assert r.chosen is None and not r.unhelped
    assert len(r.scheduled) == min(existing, pending)


# --------------------------------------------------------------------------- reasons, expanders


def test_max_size_reached(store: Callable[[], ClusterSnapshotStore]) -> None:
    """A group at max size is skipped; one that reaches it mid-way takes what it can. The pod
    left over fits small's template, so it is not "helped by no group": CA's
    ``SchedulablePodGroups`` (``core/scaleup/orchestrator/orchestrator.go``) marks its
    equivalence group ``Schedulable`` and ``GetRemainingPods`` skips such groups (no
    NotTriggerScaleUp); it is left for a later scale-up, each group saying which limit."""
    full = group("full", node("full-t", extra={GPU: "1"}), max_size=1)
    small = group("small", node("small-t", extra={GPU: "1"}), max_size=2)
    nodes = [node("full-0", labels={"group": "full"}, extra={GPU: "1"})]
    pods = [
        pod("on-full", node_name="full-0", extra={GPU: "1"}, controller="x"),
        *[pod(f"p-{i}", extra={GPU: "1"}, controller="u") for i in range(3)],
    ]
    r = scale_up(*loaded(nodes, pods, framework(), store()), [full, small])
    by_name = {o.name: o for o in r.options}
    assert by_name["full"].skipped == at_max_size(1) == "already at max size 1"
    assert by_name["small"].node_count == 2 and by_name["small"].limit_reached
    assert by_name["small"].limit_kind == LIMIT_MAX_SIZE
    assert r.chosen == "small"
    assert r.unhelped == ()
    [left] = r.later
    assert left.reasons == {"full": at_max_size(1), "small": max_size_reached(2)}
    assert max_size_reached(2) == "the estimate reached the group's max size 2"


def test_max_nodes_per_scale_up(store: Callable[[], ClusterSnapshotStore]) -> None:
    """CA's ``--max-nodes-per-scaleup`` (default 1000): the binpacking estimator's
    ``thresholdBasedEstimationLimiter`` refuses another node once the estimate has that many,
    whatever the group's max size; the smaller of the two limits applies; 0 is no limit."""
    g = group("g", node("g-t", extra={GPU: "1"}), max_size=100_000)
    pods = [pod(f"p-{i}", extra={GPU: "1"}, controller="u") for i in range(30)]
    r = scale_up(*loaded([], pods, framework(), store()), [g], max_nodes_per_scale_up=10)
    [o] = r.options
    assert (o.node_count, len(o.pods), o.limit_reached) == (10, 10, True)
    assert o.limit == max_nodes_per_scale_up_reached(10)
    assert r.unhelped == () and len(r.later) == 20  # they fit g's template: a later loop's
    assert r.later[0].reasons == {"g": max_nodes_per_scale_up_reached(10)}
    assert r.max_nodes_per_scale_up == 10
    assert scale_up(*loaded([], pods, framework(), store()), [g]).options[0].node_count == 30
    small = group("g", node("g-t", extra={GPU: "1"}), max_size=5)
    [o] = scale_up(
        *loaded([], pods, framework(), store()), [small], max_nodes_per_scale_up=10
    ).options
    assert (o.node_count, o.limit) == (5, max_size_reached(5))
    [o] = scale_up(*loaded([], pods, framework(), store()), [g], max_nodes_per_scale_up=0).options
    assert (o.node_count, o.limit_reached) == (30, False)
    with pytest.raises(ValueError, match="must be >= 0"):
        scale_up(*loaded([], pods, framework(), store()), [g], max_nodes_per_scale_up=-1)


def test_pods_bound_to_unknown_nodes_are_reported(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """CA's snapshot skips a pod whose node is not among the nodes; the result lists it, so
    the command can warn as ``simulate`` does."""
    ghost = pod("b", node_name="ghost")
    r = scale_up(*loaded([node("n")], [ghost], framework(), store()), [group("g", node("t"))])
    assert r.skipped_pods == (ghost,)


def test_expanders(store: Callable[[], ClusterSnapshotStore]) -> None:
    """least-waste picks the group whose new nodes are used best (CA ``expander/waste``);
    most-pods the one helping most pods (CA ``expander/mostpods``)."""
    big = group("big", node("big-t", cpu="4", memory="4000"))
    tight = group("tight", node("tight-t", cpu="1", memory="1000", pods=2))
    pods = [pod(f"p-{i}", cpu="400m", memory="400", controller="u") for i in range(4)]
    lw = scale_up(*loaded([], pods, framework(), store()), [big, tight])
    assert {o.name: o.node_count for o in lw.options} == {"big": 1, "tight": 2}
    # big: 1.6 of 4 cpu and memory used -> waste 0.6 + 0.6; tight: 1.6 of 2 -> 0.2 + 0.2
    assert lw.chosen == "tight"
    mp = scale_up(*loaded([], pods, framework(), store()), [big, tight], expander="most-pods")
    assert mp.chosen == "big"  # both help 4 pods: the first wins the tie


def test_choose_option_ignores_groups_that_do_not_help() -> None:
    opts = [GroupOption("a", 0, 3), GroupOption("b", 0, 3, node_count=1, waste=1.5)]
    assert choose_option(opts, "least-waste") is opts[1]
    assert choose_option(opts[:1], "most-pods") is None
    with pytest.raises(ValueError, match="unknown expander"):
        choose_option(opts, "price")


def test_pending_pods_that_fit_existing_nodes_first(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """Filter-out-schedulable: higher-priority pods take the existing room first."""
    nodes = [node("n-0", cpu="1", labels={"group": "g"})]
    low = [pod(f"low-{i}", cpu="400m", controller="low") for i in range(2)]
    high = [pod(f"high-{i}", cpu="400m", controller="high", priority=10) for i in range(2)]
    r = scale_up(
        *loaded(nodes, [*low, *high], framework(), store()), [group("g", node("t", cpu="1"))]
    )
    assert sorted(p.pod.name for p in r.scheduled) == ["high-0", "high-1"]
    assert r.chosen_option is not None
    assert sorted(p.name for p in r.chosen_option.pods) == ["low-0", "low-1"]
    assert r.chosen_option.node_count == 1


def test_equivalent_pods_grouped() -> None:
    a = [pod(f"a-{i}", controller="a") for i in range(3)]
    b = pod("b-0", cpu="200m", controller="a")
    bare = [pod(f"bare-{i}", controller=None) for i in range(2)]
    groups = group_equivalent_pods([*a, b, *bare])
    assert [[p.name for p in g] for g in groups] == [
        ["a-0", "a-1", "a-2"],
        ["b-0"],
        ["bare-0"],
        ["bare-1"],
    ]


def test_estimate_with_pods_that_fit_no_copy(store: Callable[[], ClusterSnapshotStore]) -> None:
    """One copy is added for a pod that fits no template copy; it stays empty and is not
    counted (CA: "If the last node we've added is empty ... stop")."""
    snap = _old_node_snapshot(store)
    est = estimate(snap, [_pods("big", 3, cpu="2")], NodeInfo(node("template")), None)
    assert (est.node_count, est.pods, dict(est.pods_per_node)) == (0, (), {"template-e-0": 0})
