"""Scale-down (removal simulator), in both stores.

Expected outcomes are Cluster Autoscaler's (each test names the CA test it mirrors), with
devices and CSI volume limits as extended resources (the DRA and CSINode versions are in
test_scale_up_dra_csi.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest
from sim_loaded import loaded

from schedsim.api.core import Node, Pod
from schedsim.autoscaler.hinting import HintingSimulator, hint_key
from schedsim.autoscaler.nodegroups import NodeGroup, NodeTemplate
from schedsim.autoscaler.scaledown import (
    TO_BE_DELETED_TAINT,
    UnremovableReason,
    pods_to_move,
    scale_down,
    simulate_node_removal,
    utilization,
)
from schedsim.framework import Framework, Handle, default_profile
from schedsim.snapshot import (
    ClusterSnapshotStore,
    PredicateSnapshot,
)

GPU = "example.com/gpu"
"""Stands in for the DRA devices of CA's tests: not a GPU vendor resource, so utilization is
cpu/memory as CA computes it for a node without GPU or slices (``nvidia.com/gpu`` would make
these GPU nodes, with their own utilization rule and threshold)."""
ATTACH = "example.com/attachments"

SAFE = "cluster-autoscaler.kubernetes.io/safe-to-evict"
NOT_UNDERUTILIZED = UnremovableReason.NOT_UNDERUTILIZED
NO_PLACE = UnremovableReason.NO_PLACE_TO_MOVE_PODS


def node(
    name: str,
    extra: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> Node:
    alloc = {"cpu": "1000m", "memory": "1000", "pods": "110", **(extra or {})}
    return Node.from_manifest(
        {
            "metadata": {
                "name": name,
                "labels": {"kubernetes.io/hostname": name, **(labels or {})},
                "annotations": dict(annotations or {}),
            },
            "status": {"allocatable": alloc},
        }
    )


def pod(
    name: str,
    node_name: str,
    cpu: str = "100m",
    extra: Mapping[str, str] | None = None,
    kind: str | None = "ReplicaSet",
    namespace: str = "default",
    annotations: Mapping[str, str] | None = None,
    volumes: list[dict[str, Any]] | None = None,
) -> Pod:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "annotations": dict(annotations or {}),
    }
    if kind is not None:
        meta["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": kind, "name": f"{name}-c", "uid": f"{name}-c",
             "controller": True}
        ]  # fmt: skip
    requests = {"cpu": cpu, "memory": "100", **(extra or {})}
    return Pod.from_manifest(
        {
            "metadata": meta,
            "spec": {
                "nodeName": node_name,
                "volumes": volumes or [],
                "containers": [
                    {"name": "c", "resources": {"requests": requests, "limits": dict(extra or {})}}
                ],
            },
        }
    )


def fw() -> Framework:
    return Framework(default_profile(), Handle())


def reasons(result: Any) -> dict[str, UnremovableReason | None]:
    return {v.node: v.reason for v in result.verdicts}


def test_empty_single_device_nodes(store: Callable[[], ClusterSnapshotStore]) -> None:
    """CA ``TestStaticAutoscalerDynamicResources`` "scale-down: empty single-device nodes":
    three 1-GPU nodes, a big pod (600m) using the GPU of node 1 -> nodes 0 and 2 removable,
    node 1 not underutilized."""
    nodes = [node(f"node1Gpu-{i}", {GPU: "1"}) for i in range(3)]
    pods = [pod("scheduled-0", "node1Gpu-1", cpu="600m", extra={GPU: "1"})]
    r = scale_down(*loaded(nodes, pods, fw(), store()))
    assert r.removable == ("node1Gpu-0", "node1Gpu-2")
    assert reasons(r)["node1Gpu-1"] is NOT_UNDERUTILIZED
    v1 = r.verdicts[1]
    assert v1.utilization is not None and v1.utilization.cpu == pytest.approx(0.6)


def test_single_device_nodes_with_drain(store: Callable[[], ClusterSnapshotStore]) -> None:
    """CA "scale-down: single-device nodes with drain" (threshold 0.7): 3-GPU nodes; nodes 0
    and 1 run a pod using 2 GPUs, node 2 two pods using 1 GPU each. Node 2's pods move to the
    free GPU of nodes 0 and 1; nodes 0 and 1 have no place for a 2-GPU pod."""
    nodes = [node(f"node3Gpu-{i}", {GPU: "3"}) for i in range(3)]
    pods = [
        pod("scheduled-0", "node3Gpu-0", extra={GPU: "2"}),
        pod("scheduled-1", "node3Gpu-1", extra={GPU: "2"}),
        pod("scheduled-2", "node3Gpu-2", extra={GPU: "1"}),
        pod("scheduled-3", "node3Gpu-2", extra={GPU: "1"}),
    ]
    r = scale_down(*loaded(nodes, pods, fw(), store()), threshold=0.7)
    assert reasons(r) == {"node3Gpu-0": NO_PLACE, "node3Gpu-1": NO_PLACE, "node3Gpu-2": None}
    assert sorted(p.node_name for p in r.verdicts[2].moved) == ["node3Gpu-0", "node3Gpu-1"]
    assert r.verdicts[0].pod is not None and r.verdicts[0].pod.name == "scheduled-0"


def test_no_place_to_reschedule(store: Callable[[], ClusterSnapshotStore]) -> None:
    """CA "no scale-down: no place to reschedule" (threshold 0.7)."""
    nodes = [node(f"node3Gpu-{i}", {GPU: "3"}) for i in range(3)]
    pods = [
        pod("scheduled-0", "node3Gpu-0", cpu="600m", extra={GPU: "2"}),
        pod("scheduled-1", "node3Gpu-1", cpu="600m", extra={GPU: "2"}),
        pod("scheduled-2", "node3Gpu-1", cpu="600m", extra={GPU: "1"}),
        pod("scheduled-3", "node3Gpu-2", extra={GPU: "1"}),
        pod("scheduled-4", "node3Gpu-2", extra={GPU: "1"}),
    ]
    r = scale_down(*loaded(nodes, pods, fw(), store()), threshold=0.7)
    assert reasons(r) == {
        "node3Gpu-0": NO_PLACE,
        "node3Gpu-1": NOT_UNDERUTILIZED,
        "node3Gpu-2": NO_PLACE,
    }


def test_single_pod_left_with_volumes(store: Callable[[], ClusterSnapshotStore]) -> None:
    """CA ``TestStaticAutoscalerCSI`` "scale-down: single pod left with 6 volumes": the two
    empty nodes go first and are removable; the pod then has nowhere to go."""
    nodes = [node(f"node1CSINode-{i}", {ATTACH: "10"}) for i in range(3)]
    pods = [pod("scheduled-0", "node1CSINode-0", cpu="6m", extra={ATTACH: "6"})]
    r = scale_down(*loaded(nodes, pods, fw(), store()), threshold=0.7)
    assert r.removable == ("node1CSINode-1", "node1CSINode-2")
    assert reasons(r)["node1CSINode-0"] is NO_PLACE


def test_daemonset_and_mirror_pods_stay_and_blocking_pods(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """DaemonSet and mirror pods are not moved; CA's default drain rules block the rest."""
    nodes = [node(f"n-{i}") for i in range(6)]
    pods = [
        pod("ds", "n-0", kind="DaemonSet"),
        pod("mirror", "n-0", kind=None, annotations={"kubernetes.io/config.mirror": "x"}),
        pod("bare", "n-1", kind=None),
        pod("sys", "n-2", namespace="kube-system"),
        pod("local", "n-3", volumes=[{"name": "v", "emptyDir": {}}]),
        pod("pinned", "n-4", annotations={SAFE: "false"}),
        pod("ok-local", "n-5", volumes=[{"name": "v", "emptyDir": {}}], annotations={SAFE: "true"}),
    ]  # fmt: skip
    r = scale_down(*loaded(nodes, pods, fw(), store()))
    got = {v.node: (v.reason, v.detail) for v in r.verdicts}
    assert got["n-0"] == (None, "")
    blocked = UnremovableReason.BLOCKED_BY_POD
    assert got["n-1"] == (blocked, "pod default/bare: NotReplicated")
    assert got["n-2"] == (blocked, "pod kube-system/sys: UnmovableKubeSystemPod")
    assert got["n-3"] == (blocked, "pod default/local: LocalStorageRequested")
    assert got["n-4"] == (blocked, "pod default/pinned: NotSafeToEvictAnnotation")
    assert got["n-5"][0] is None
    assert [p.pod.name for p in r.verdicts[5].moved] == ["ok-local"]


def test_node_groups_min_size_and_not_autoscaled(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """With node groups: nodes outside every group are NotAutoscaled, and a group does not go
    below its min size (removals are committed one by one, so the second empty node of a
    group at min+1 is refused)."""
    nodes = [
        node("a-0", labels={"group": "a"}),
        node("a-1", labels={"group": "a"}),
        node("other"),
        node("keep", labels={"group": "a"}, annotations={
            "cluster-autoscaler.kubernetes.io/scale-down-disabled": "true"}),
    ]  # fmt: skip
    group = NodeGroup("a", 2, 5, NodeTemplate(node("t")), {"group": "a"})
    r = scale_down(*loaded(nodes, [], fw(), store()), node_groups=[group])
    assert reasons(r) == {
        "a-0": None,
        "a-1": UnremovableReason.NODE_GROUP_MIN_SIZE_REACHED,
        "other": UnremovableReason.NOT_AUTOSCALED,
        "keep": UnremovableReason.SCALE_DOWN_DISABLED_ANNOTATION,
    }


def test_utilization_is_computed_before_any_removal(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """CA's planner (``categorizeNodes``) computes every candidate's utilization once, in
    ``eligibility.FilterOutUnremovable``, before ``SimulateNodeRemoval`` runs for each: n2 is
    a candidate at 0.5 although n1's pod would move onto it; its own simulation then finds no
    place (n1 is gone), and its reported utilization is the one it was judged by."""
    nodes = [node("n1"), node("n2")]
    pods = [pod("a", "n1", cpu="500m"), pod("b", "n2", cpu="500m")]
    r = scale_down(*loaded(nodes, pods, fw(), store()), threshold=0.6)
    assert reasons(r) == {"n1": None, "n2": NO_PLACE}
    assert [v.utilization.cpu if v.utilization else None for v in r.verdicts] == [0.5, 0.5]
    assert [(m.pod.name, m.node_name) for m in r.verdicts[0].moved] == [("a", "n2")]


def test_pods_bound_to_unknown_nodes_are_reported(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    ghost = pod("b", "ghost")
    r = scale_down(*loaded([node("n1")], [ghost], fw(), store()))
    assert r.skipped_pods == (ghost,) and reasons(r) == {"n1": None}


def test_threshold_is_checked() -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        scale_down(*loaded([], [], fw()), threshold=1.5)


def test_removal_in_fork_uses_tainted_ghost(store: Callable[[], ClusterSnapshotStore]) -> None:
    """While pods are rescheduled the node is an empty copy tainted
    ToBeDeletedByClusterAutoscaler:NoSchedule; a failed removal leaves the snapshot as it was,
    a successful one is committed and the node is gone."""
    snap = PredicateSnapshot(fw(), store())
    snap.set_cluster_state(
        [node("a"), node("b", {GPU: "1"})],
        [pod("p", "a"), pod("g", "b", extra={GPU: "1"})],
    )
    seen: list[tuple[str, ...]] = []

    class Spy(HintingSimulator):
        def try_schedule_pods(self, snapshot: Any, pods: Any, *a: Any, **kw: Any) -> Any:
            ghost = snapshot.get_node_info("b").node
            seen.append(tuple(t.key for t in ghost.taints))
            assert not snapshot.get_node_info("b").pods
            return super().try_schedule_pods(snapshot, pods, *a, **kw)

    movable, _ = pods_to_move(snap.get_node_info("b"))
    placed, failed = simulate_node_removal(snap, "b", movable, Spy())
    assert seen == [(TO_BE_DELETED_TAINT,)]
    assert placed == () and failed is not None and failed.name == "g"
    assert [p.pod.name for p in snap.get_node_info("b").pods] == ["g"]  # reverted
    movable, _ = pods_to_move(snap.get_node_info("a"))
    placed, failed = simulate_node_removal(snap, "a", movable, HintingSimulator())
    assert failed is None and [(p.pod.name, p.node_name) for p in placed] == [("p", "b")]
    assert [ni.node.name for ni in snap.list_node_infos() if ni.node] == ["b"]


def test_removal_simulator_hints_carry_across_plans(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """CA's planner keeps one ``RemovalSimulator`` for its lifetime (planner.go ``NewPlanner``)
    and its ``HintingSimulator`` tries a pod first on the node its hint names
    (hinting_simulator.go ``findNodeWithHints``), dropping only the older generation after
    each ``UpdateClusterState`` (``p.rs.DropOldHints()``): a removal simulator passed in keeps
    its hints from one plan to the next. a's pod goes where first-fit puts it with fresh
    hints; hinted to the other node (one generation dropped since), it goes there, and the
    hint is refreshed."""
    nodes = [node("a"), node("b"), node("c")]
    pods = [pod("p", "a"), pod("x", "b", cpu="600m"), pod("y", "c", cpu="600m")]
    fresh = scale_down(*loaded(nodes, pods, fw(), store()), threshold=0.2)
    [first] = fresh.verdicts[0].moved
    other = "c" if first.node_name == "b" else "b"
    sim = HintingSimulator()
    key = hint_key(first.pod)
    sim.hints.set(key, other)
    sim.hints.drop_old()  # the previous plan's hints are the old generation now
    r = scale_down(*loaded(nodes, pods, fw(), store()), threshold=0.2, removal_simulator=sim)
    assert [(m.pod.name, m.node_name) for m in r.verdicts[0].moved] == [("p", other)]
    assert sim.hints.get(key) == other
    sim.hints.drop_old()
    sim.hints.drop_old()  # two updates later the hint is gone (CA Hints.DropOld)
    assert sim.hints.get(key) is None


def test_utilization_counts_every_pod() -> None:
    snap = PredicateSnapshot(fw())
    snap.set_cluster_state(
        [node("a")], [pod("p", "a", cpu="250m"), pod("d", "a", kind="DaemonSet")]
    )
    u = utilization(snap.get_node_info("a"))
    assert (u.cpu, u.memory, u.devices, u.resource) == (0.35, 0.2, 0.0, "cpu")


def unbound(name: str, cpu: str, kind: str | None = "ReplicaSet") -> Pod:
    return pod(name, "", cpu=cpu, kind=kind)


def test_pending_pods_are_placed_before_planning(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """CA's ``RunOnce`` runs the pod list processor before ``scaleDown``; its
    filter-out-schedulable (``core/podlistprocessor/filter_out_schedulable.go``
    ``filterOutSchedulableByPacking``) places pending pods with ``TrySchedulePods`` in
    ``ClusterSnapshot`` itself (no fork), and the planner works on that snapshot: the pending
    pods count in utilization and must be moved like the others. Placement is round robin
    (CA's ``SchedulePodOnAnyNodeMatching``): n-1 gets the 600m pod (not underutilized), n-2 the
    300m one, which moves to n-1 (removable), n-0 the bare pod (no controller), which blocks
    it, as CA's drain rules would; the 2-CPU pod fits nowhere and is reported unplaced."""
    nodes = [node("n-0"), node("n-1"), node("n-2")]
    pods = [
        unbound("a", "600m"),
        unbound("b", "300m"),
        unbound("bare", "200m", kind=None),
        unbound("huge", "2000m"),
    ]
    r = scale_down(*loaded(nodes, pods, fw(), store()))
    assert [(p.pod.name, p.node_name) for p in r.pending_placed] == [
        ("a", "n-1"), ("b", "n-2"), ("bare", "n-0")
    ]  # fmt: skip
    assert [p.name for p in r.pending_unplaced] == ["huge"]
    assert reasons(r) == {
        "n-0": UnremovableReason.BLOCKED_BY_POD,
        "n-1": NOT_UNDERUTILIZED,
        "n-2": None,
    }
    assert [(m.pod.name, m.node_name) for m in r.verdicts[2].moved] == [("b", "n-1")]
    assert r.verdicts[1].utilization is not None and r.verdicts[1].utilization.cpu == 0.6


def test_gpu_nodes_use_gpu_utilization_and_threshold(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """CA ``utilization.Calculate``: a node the cloud provider reports a GPU for
    (``GetNodeGpuConfig``; ``utils/gpu`` ``NodeHasGpu``: non-zero allocatable of a GPU vendor
    resource) is measured by its GPU requests only, cpu and memory skipped, and compared with
    ``--scale-down-gpu-utilization-threshold``
    (``eligibility.isNodeAtOrBelowUtilizationThreshold``).
    g-0: 1 of 4 GPUs but 90% cpu -> 0.25, a candidate; g-1: 3 of 4 GPUs -> 0.75, not at 0.5, a
    candidate at a GPU threshold of 0.8 (the regular threshold does not apply to it)."""
    nvidia = "nvidia.com/gpu"
    nodes = [node("g-0", {nvidia: "4"}), node("g-1", {nvidia: "4"}), node("c", {})]
    pods = [
        pod("p0", "g-0", cpu="900m", extra={nvidia: "1"}),
        pod("p1", "g-1", cpu="100m", extra={nvidia: "3"}),
    ]
    r = scale_down(*loaded(nodes, pods, fw(), store()))
    u0, u1 = (v.utilization for v in r.verdicts[:2])
    assert u0 is not None and (u0.basis, u0.resource, u0.value) == ("gpu", nvidia, 0.25)
    assert u0.cpu == pytest.approx(0.9)
    assert reasons(r)["g-1"] is NOT_UNDERUTILIZED
    assert r.verdicts[1].detail == f"{nvidia} utilization 0.75 > GPU threshold 0.5"
    assert u1 is not None and u1.value == 0.75
    r = scale_down(*loaded(nodes, pods, fw(), store()), threshold=0.0, gpu_threshold=0.8)
    assert reasons(r)["g-1"] is not NOT_UNDERUTILIZED
    # c at 0, threshold 0: at the threshold is underutilized (CA 1.34
    # isNodeAtOrBelowUtilizationThreshold, ca-eligibility/013); empty, so removable
    assert reasons(r)["c"] is None
    with pytest.raises(ValueError, match="GPU utilization threshold"):
        scale_down(*loaded(nodes, pods, fw()), gpu_threshold=2)
