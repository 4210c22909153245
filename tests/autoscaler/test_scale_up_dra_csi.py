"""The issue's expected outcomes with real DRA devices and CSINode volume limits, in both
stores.

DRA: GPUs and NICs are devices of ``dra.example.com`` in node-local ResourceSlices (pool =
node name), requested through ResourceClaimTemplates; running pods hold allocated pod-owned
claims; the DynamicResources plugin decides. Mirrors CA
``core/static_autoscaler_dra_test.go`` ``TestStaticAutoscalerDynamicResources``.

CSI: every node has a CSINode allowing 10 volumes of ``ebs.csi.aws.com``, runs a DaemonSet pod
with 2 PVC volumes, pending pods use 6; NodeVolumeLimits decides. Mirrors CA
``core/static_autoscaler_csi_test.go`` ``TestStaticAutoscalerCSI``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from sim_loaded import loaded

from schedsim.api.core import Node, Pod
from schedsim.api.resource import (
    DeviceClass,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from schedsim.api.storage import CSINode, PersistentVolumeClaim, StorageClass
from schedsim.autoscaler.nodegroups import NodeGroup, NodeTemplate
from schedsim.autoscaler.scaledown import UnremovableReason, scale_down
from schedsim.autoscaler.scaleup import scale_up
from schedsim.framework import FeatureGates, Framework, Handle, default_profile
from schedsim.framework.volume_listers import StorageListers
from schedsim.snapshot import ClusterSnapshotStore
from schedsim.snapshot.csi import CsiSnapshot
from schedsim.snapshot.dra import DraSnapshot

DRIVER = "dra.example.com"
# CA's request and device names (req1GpuA, gpuDevice-0) lower-cased: the API server
# requires DNS labels there, and schedsim checks that when decoding
GPU_A = ("req1-gpu-a", "gpuType", "gpuA")
NIC_A = ("req1-nic", "nicType", "nicA")


def fw() -> Framework:
    return Framework(default_profile(), Handle())


def node(name: str, group: str) -> Node:
    """CA ``BuildTestNode(name, 1000, 1000)``."""
    alloc = {"cpu": "1000m", "memory": "1000", "pods": "110"}
    return Node.from_manifest(
        {
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "group": group}},
            "status": {"allocatable": alloc, "capacity": alloc},
        }
    )


# --------------------------------------------------------------------------- DRA


DEFAULT_CLASS = DeviceClass.from_manifest(
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
     "metadata": {"name": "default-class"}, "spec": {}}
)  # fmt: skip


def slices(node_name: str, devices: Sequence[tuple[str, str, str]]) -> list[ResourceSlice]:
    """CA ``nodeTemplateResourceSlices``: one slice, pool = node name; ``devices`` as
    (name, attribute, value)."""
    return [
        ResourceSlice.from_manifest(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{DRIVER}-{node_name}-gen0-slice0"},
                "spec": {
                    "driver": DRIVER,
                    "nodeName": node_name,
                    "pool": {"name": node_name, "generation": 0, "resourceSliceCount": 1},
                    "devices": [
                        {"name": n, "attributes": {attr: {"string": v}}} for n, attr, v in devices
                    ],
                },
            }
        )
    ]


def _requests(reqs: Sequence[tuple[str, str, str]], count: int = 1) -> list[dict[str, Any]]:
    return [
        {
            "name": name,
            "exactly": {
                "deviceClassName": "default-class",
                "count": count,
                "selectors": [
                    {"cel": {"expression": f'device.attributes["{DRIVER}"].{attr} == "{value}"'}}
                ],
            },
        }
        for name, attr, value in reqs
    ]


def claim_template(name: str, reqs: Sequence[tuple[str, str, str]]) -> ResourceClaimTemplate:
    return ResourceClaimTemplate.from_manifest(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": _requests(reqs)}}},
        }
    )


def _pod(name: str, node_name: str, template: str, claim: str | None, cpu: str = "100m") -> Pod:
    status = {"resourceClaimStatuses": [{"name": "claim-ref-0", "resourceClaimName": claim}]}
    return Pod.from_manifest(
        {
            "metadata": {
                "name": name,
                "namespace": "default",
                "uid": name,
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                     "name": f"{name}-rs", "uid": f"{name}-rs",
                                     "controller": True}],
            },
            "spec": {
                "nodeName": node_name,
                "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu,
                                                                        "memory": "100"}}}],
                "resourceClaims": [{"name": "claim-ref-0", "resourceClaimTemplateName": template}],
            },
            "status": status if claim else {},
        }
    )  # fmt: skip


def unscheduled(prefix: str, n: int, template: str) -> list[Pod]:
    """CA ``unscheduledPods``: pods of one controller whose claim comes from ``template``."""
    pods = []
    for i in range(n):
        p = _pod(f"{prefix}-{i}", "", template, None)
        pods.append(
            Pod.from_manifest(
                {
                    "metadata": {
                        "name": p.name,
                        "namespace": "default",
                        "uid": p.name,
                        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                             "name": prefix, "uid": prefix,
                                             "controller": True}],
                    },
                    "spec": {
                        "containers": [{"name": "c", "resources": {
                            "requests": {"cpu": "100m", "memory": "100"}}}],
                        "resourceClaims": [{"name": "claim-ref-0",
                                            "resourceClaimTemplateName": template}],
                    },
                }
            )
        )  # fmt: skip
    return pods


def scheduled(
    name: str,
    node_name: str,
    reqs: Sequence[tuple[str, str, str]],
    devices: Sequence[Sequence[str]],
    template: str,
    cpu: str = "100m",
) -> tuple[Pod, ResourceClaim]:
    """CA ``scheduledPod``: a pod on ``node_name`` with its pod-owned claim allocated there
    (request i gets ``devices[i]``) and reserved for it."""
    claim_name = f"{name}-claim-0"
    pod = _pod(name, node_name, template, claim_name, cpu=cpu)
    results = [
        {"request": r[0], "driver": DRIVER, "pool": node_name, "device": dev}
        for r, devs in zip(reqs, devices, strict=True)
        for dev in devs
    ]
    claim = ResourceClaim.from_manifest(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {
                "name": claim_name,
                "namespace": "default",
                "uid": claim_name,
                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": name,
                                     "uid": name, "controller": True}],
            },
            "spec": {"devices": {"requests": _requests(reqs, count=max(map(len, devices)))}},
            "status": {
                "allocation": {
                    "devices": {"results": results},
                    "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]},
                },
                "reservedFor": [{"resource": "pods", "name": name, "uid": name}],
            },
        }
    )  # fmt: skip
    return pod, claim


def dra_group(name: str, devices: Sequence[tuple[str, str, str]]) -> NodeGroup:
    t = f"{name}-template"
    return NodeGroup(
        name, 0, 10, NodeTemplate(node(t, name), resource_slices=tuple(slices(t, devices))),
        {"group": name},
    )  # fmt: skip


def gpus(n: int) -> list[tuple[str, str, str]]:
    return [(f"gpu-device-{i}", "gpuType", "gpuA") for i in range(n)]


GPU_NIC = [("gpu-device-0", "gpuType", "gpuA"), ("nic-device-0", "nicType", "nicA")]


def _dra_scale_up(
    store: Callable[[], ClusterSnapshotStore],
    group: NodeGroup,
    existing: int,
    running: Sequence[tuple[Pod, ResourceClaim]],
    pending: Sequence[Pod],
    templates: Sequence[ResourceClaimTemplate],
) -> Any:
    devices = [(d.name, *next(iter(d.attributes.items()))) for d in
               group.template.resource_slices[0].devices]  # fmt: skip
    devs = [(n, a, v.value) for n, a, v in devices]
    nodes = [node(f"{group.name}-{i}", group.name) for i in range(existing)]
    all_slices = [s for n in nodes for s in slices(n.name, devs)]
    dra = DraSnapshot.from_objects([c for _, c in running], all_slices, [DEFAULT_CLASS])
    return scale_up(
        *loaded(nodes, [*(p for p, _ in running), *pending], fw(), store(), dra_snapshot=dra),
        [group],
        resource_claim_templates=templates,
    )


def test_dra_one_pod_per_node_one_device_per_node(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """CA "scale-up: one pod per node, one device per node": 1-GPU nodes, the existing node's
    GPU is used, 3 pending pods need one GPU each -> 3 nodes."""
    g = dra_group("node1GpuA1slice", gpus(1))
    running = [scheduled("scheduled-0", "node1GpuA1slice-0", [GPU_A], [["gpu-device-0"]], "t1")]
    r = _dra_scale_up(store, g, 1, running, unscheduled("unschedulable", 3, "t1"),
                      [claim_template("t1", [GPU_A])])  # fmt: skip
    assert not r.scheduled
    assert r.chosen_option is not None and r.chosen_option.node_count == 3
    assert len(r.chosen_option.pods) == 3


def test_dra_multiple_pods_per_node_one_device_each(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """CA "scale-up: multiple pods per node, pods requesting one device": 3-GPU nodes, the
    existing node has 2 GPUs used, 10 pending pods need one GPU: 1 fits, 9 need 3 nodes."""
    g = dra_group("node3GpuA1slice", gpus(3))
    running = [
        scheduled("scheduled-0", "node3GpuA1slice-0", [GPU_A], [["gpu-device-0"]], "t1"),
        scheduled("scheduled-1", "node3GpuA1slice-0", [GPU_A], [["gpu-device-1"]], "t1"),
    ]
    r = _dra_scale_up(store, g, 1, running, unscheduled("unschedulable", 10, "t1"),
                      [claim_template("t1", [GPU_A])])  # fmt: skip
    assert [p.node_name for p in r.scheduled] == ["node3GpuA1slice-0"]
    assert r.chosen_option is not None and r.chosen_option.node_count == 3
    assert len(r.chosen_option.pods) == 9
    per_node = sorted(r.chosen_option.pods_per_node.values())
    assert per_node == [3, 3, 3]


@pytest.mark.parametrize("existing", [1, 0], ids=["one-node", "from-zero"])
def test_dra_pods_requesting_different_devices(
    store: Callable[[], ClusterSnapshotStore], existing: int
) -> None:
    """CA "scale-up: one pod per node, pods requesting multiple different devices" and
    "scale-up: scale from 0 nodes in a node group": GPU+NIC nodes, 3 pods needing both."""
    g = dra_group("node1Gpu1Nic1slice", GPU_NIC)
    running = [
        scheduled("scheduled-0", "node1Gpu1Nic1slice-0", [GPU_A, NIC_A],
                  [["gpu-device-0"], ["nic-device-0"]], "t2")
    ][:existing]  # fmt: skip
    r = _dra_scale_up(store, g, existing, running, unscheduled("unschedulable", 3, "t2"),
                      [claim_template("t2", [GPU_A, NIC_A])])  # fmt: skip
    assert r.chosen_option is not None and r.chosen_option.node_count == 3


def test_dra_no_scale_up_when_devices_are_on_different_nodes(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """CA "no scale-up: pods requesting multiple different devices, but they're on different
    nodes": a GPU group and a NIC group; no scale-up. The GPU selector reads an attribute the
    NIC devices lack: a CEL runtime error, as upstream, which makes kube-scheduler fail the
    attempt (PodScheduled reason SchedulerError, never Unschedulable, so CA never scales up
    for the pod; CA's unit test treats the error as a rejection by that node). The pods are
    reported as plugin errors on the cluster's nodes, not as pods that "wouldn't fit"."""
    gpu = dra_group("node1GpuA1slice", gpus(1))
    nic = dra_group("node1Nic1slice", [("nic-device-0", "nicType", "nicA")])
    nodes = [
        node("node1GpuA1slice-0", "node1GpuA1slice"),
        node("node1Nic1slice-0", "node1Nic1slice"),
    ]
    nic_devices = [("nic-device-0", "nicType", "nicA")]
    all_slices = [*slices(nodes[0].name, gpus(1)), *slices(nodes[1].name, nic_devices)]
    dra = DraSnapshot.from_objects([], all_slices, [DEFAULT_CLASS])
    templates = [claim_template("t2", [GPU_A, NIC_A])]
    pending = unscheduled("unschedulable", 3, "t2")
    r = scale_up(
        *loaded(nodes, pending, fw(), store(), dra_snapshot=dra),
        [gpu, nic],
        resource_claim_templates=templates,
    )
    assert r.chosen is None and not r.scheduled and not r.unhelped
    assert [(e.pod.name, e.node_group) for e in r.errors] == [
        (f"unschedulable-{i}", "") for i in range(3)
    ]
    for e in r.errors:
        assert e.message.startswith('running "DynamicResources" filter plugin: ')
        assert e.message.endswith("CEL runtime error: no such key: gpuType")


def test_dra_template_pods_consuming_devices(store: Callable[[], ClusterSnapshotStore]) -> None:
    """CA "scale-up: scale from 0 nodes in a node group, with pods on the template nodes
    consuming DRA resources": each new 3-GPU node runs two DaemonSet pods holding a GPU each
    (their claims are copied per node, renamed with the pools), so a node takes one pending
    pod: 3 pending pods -> 3 nodes."""
    t = "node3GpuA1slice-template"
    ds = [scheduled(f"template-{i}", t, [GPU_A], [[f"gpu-device-{i}"]], "t1") for i in range(2)]
    template = NodeTemplate(
        node(t, "node3GpuA1slice"),
        pods=tuple(p for p, _ in ds),
        resource_slices=tuple(slices(t, gpus(3))),
        resource_claims=tuple(c for _, c in ds),
    )
    g = NodeGroup("node3GpuA1slice", 0, 10, template, {"group": "node3GpuA1slice"})
    r = scale_up(
        *loaded(
            [],
            unscheduled("unschedulable", 3, "t1"),
            fw(),
            store(),
            dra_snapshot=DraSnapshot.from_objects([], [], [DEFAULT_CLASS]),
        ),
        [g],
        resource_claim_templates=[claim_template("t1", [GPU_A])],
    )
    assert r.chosen_option is not None and r.chosen_option.node_count == 3
    assert dict(r.chosen_option.pods_per_node) == {f"{t}-e-{i}": 1 for i in range(3)}


def test_dra_scale_down_empty_single_device_nodes(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """CA "scale-down: empty single-device nodes": three 1-GPU nodes, a big pod using the GPU
    of node 1 -> nodes 0 and 2 removable, node 1 not underutilized (its GPU is 100% used)."""
    nodes = [node(f"node1GpuA1slice-{i}", "g") for i in range(3)]
    big, claim = scheduled("scheduled-0", "node1GpuA1slice-1", [GPU_A], [["gpu-device-0"]], "t1",
                           cpu="600m")  # fmt: skip
    dra = DraSnapshot.from_objects(
        [claim], [s for n in nodes for s in slices(n.name, gpus(1))], [DEFAULT_CLASS]
    )
    r = scale_down(*loaded(nodes, [big], fw(), store(), dra_snapshot=dra), threshold=0.7)
    assert r.removable == ("node1GpuA1slice-0", "node1GpuA1slice-2")
    v = r.verdicts[1]
    assert v.reason is UnremovableReason.NOT_UNDERUTILIZED
    assert v.utilization is not None and v.utilization.devices == 1.0


def test_dra_scale_down_single_device_nodes_with_drain(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """CA "scale-down: single-device nodes with drain": node 2's two 1-GPU pods move to the
    free GPUs of nodes 0 and 1 (new allocations there); nodes 0 and 1 have no place for a
    2-GPU pod."""
    nodes = [node(f"node3GpuA1slice-{i}", "g") for i in range(3)]
    req2 = ("req2-gpu-a", "gpuType", "gpuA")
    running = [
        scheduled("scheduled-0", nodes[0].name, [req2], [["gpu-device-0", "gpu-device-1"]], "t2"),
        scheduled("scheduled-1", nodes[1].name, [req2], [["gpu-device-0", "gpu-device-1"]], "t2"),
        scheduled("scheduled-2", nodes[2].name, [GPU_A], [["gpu-device-0"]], "t1"),
        scheduled("scheduled-3", nodes[2].name, [GPU_A], [["gpu-device-1"]], "t1"),
    ]
    dra = DraSnapshot.from_objects(
        [c for _, c in running], [s for n in nodes for s in slices(n.name, gpus(3))],
        [DEFAULT_CLASS],
    )  # fmt: skip
    r = scale_down(
        *loaded(nodes, [p for p, _ in running], fw(), store(), dra_snapshot=dra), threshold=0.7
    )
    no_place = UnremovableReason.NO_PLACE_TO_MOVE_PODS
    assert [v.reason for v in r.verdicts] == [no_place, no_place, None]
    assert sorted(p.node_name for p in r.verdicts[2].moved) == [nodes[0].name, nodes[1].name]


# --------------------------------------------------------------------------- CSI

CSI_DRIVER = "ebs.csi.aws.com"


def csi_node(name: str) -> CSINode:
    """CA ``csiNodeTemplate(driver, 10)``."""
    return CSINode.from_manifest(
        {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": name},
         "spec": {"drivers": [{"name": CSI_DRIVER, "nodeID": name,
                               "allocatable": {"count": 10}}]}}
    )  # fmt: skip


def csi_pod(name: str, volumes: int, node_name: str = "", ds: bool = False) -> Pod:
    """CA ``buildCSITestPod``: ``volumes`` PVCs ``<name>-pvc-<i>``."""
    controller = "ds" if ds else name
    kind = "DaemonSet" if ds else "ReplicaSet"
    owner = {"apiVersion": "apps/v1", "kind": kind, "name": controller, "uid": controller,
             "controller": True}  # fmt: skip
    return Pod.from_manifest(
        {
            "metadata": {"name": name, "namespace": "default", "uid": name,
                         "ownerReferences": [owner]},
            "spec": {
                "nodeName": node_name,
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "6m",
                                                                        "memory": "100"}}}],
                "volumes": [{"name": f"test-volume-{i}",
                             "persistentVolumeClaim": {"claimName": f"{name}-pvc-{i}"}}
                            for i in range(volumes)],
            },
        }
    )  # fmt: skip


def storage(pods: Sequence[Pod]) -> StorageListers:
    """CA ``pvcsForPods`` + the StorageClass ``sc-ebs`` provisioned by the driver."""
    sc = StorageClass.from_manifest(
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "sc-ebs"},
         "provisioner": CSI_DRIVER, "volumeBindingMode": "WaitForFirstConsumer"}
    )  # fmt: skip
    pvcs = [
        PersistentVolumeClaim.from_manifest(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": v.persistent_volume_claim, "namespace": "default"},
                "spec": {"storageClassName": "sc-ebs", "accessModes": ["ReadWriteOnce"]},
            }
        )
        for p in pods
        for v in p.volumes
        if v.persistent_volume_claim
    ]
    return StorageListers.from_objects([], pvcs, [sc], [])


@pytest.mark.parametrize(
    ("existing", "pending", "expected"),
    [(1, 3, 2), (0, 3, 3), (1, 1, 0)],
    ids=["1-node-3-pods", "from-zero-3-pods", "1-node-1-pod"],
)
def test_csi_volume_limit_blocks_packing(
    store: Callable[[], ClusterSnapshotStore], existing: int, pending: int, expected: int
) -> None:
    """CA ``TestStaticAutoscalerCSI``: "CSI volume limit blocks packing, requires 2 extra
    nodes", "scale-from-zero: ... requires >1 new nodes", "scale-from-1: existing node can
    support limits, no scaling needed". Every node (and the template) runs a DaemonSet pod with
    2 volumes; pending pods use 6 of the 10 allowed."""
    t = "node1CSINode-template"
    template = NodeTemplate(node(t, "csi"), pods=(csi_pod("template-ds", 2, t, ds=True),),
                            csi_node=csi_node(t))  # fmt: skip
    group = NodeGroup("node1CSINode", 0, 10, template, {"group": "csi"})
    nodes = [node(f"node1CSINode-{i}", "csi") for i in range(existing)]
    running = [csi_pod(f"ds-{i}", 2, n.name, ds=True) for i, n in enumerate(nodes)]
    pods = [csi_pod(f"pending-{i}", 6) for i in range(pending)]
    r = scale_up(
        *loaded(
            nodes,
            [*running, *pods],
            fw(),
            store(),
            csi_snapshot=CsiSnapshot(csi_node(n.name) for n in nodes),
            storage_listers=storage([*running, *pods, *template.pods]),
        ),
        [group],
    )
    if expected:
        assert r.chosen_option is not None and r.chosen_option.node_count == expected
        assert set(r.chosen_option.pods_per_node.values()) == {1}
    else:
        assert r.chosen is None and not r.unhelped
    assert len(r.scheduled) == min(existing, 1)


def test_csi_limit_reason(store: Callable[[], ClusterSnapshotStore]) -> None:
    """A pod needing more volumes than a template node allows is reported with
    NodeVolumeLimits' reason."""
    t = "csi-template"
    template = NodeTemplate(node(t, "csi"), pods=(csi_pod("template-ds", 2, t, ds=True),),
                            csi_node=csi_node(t))  # fmt: skip
    pods = [csi_pod("huge", 9)]
    r = scale_up(
        *loaded([], pods, fw(), store(), storage_listers=storage([*pods, *template.pods])),
        [NodeGroup("csi", 0, 3, template)],
    )
    [u] = r.unhelped
    assert u.reasons == {"csi": "wouldn't fit: node(s) exceed max volume count"}


def test_csi_scale_down_single_pod_left(store: Callable[[], ClusterSnapshotStore]) -> None:
    """CA "scale-down: single pod left with 6 volumes": the empty nodes go first."""
    nodes = [node(f"node1CSINode-{i}", "csi") for i in range(3)]
    pods = [csi_pod("scheduled-0", 6, nodes[0].name)]
    r = scale_down(
        *loaded(
            nodes,
            pods,
            fw(),
            store(),
            csi_snapshot=CsiSnapshot(csi_node(n.name) for n in nodes),
            storage_listers=storage(pods),
        ),
        threshold=0.7,
    )
    assert r.removable == ("node1CSINode-1", "node1CSINode-2")
    assert r.verdicts[0].reason is UnremovableReason.NO_PLACE_TO_MOVE_PODS


def test_dra_node_utilization_is_devices_only(store: Callable[[], ClusterSnapshotStore]) -> None:
    """CA ``simulator/utilization/info.go`` ``Calculate``: with DRA enabled and local
    ResourceSlices, utilization is ``HighestDynamicResourceUtilization`` alone (cpu and memory
    are not looked at): a node using 1 of 4 devices and 90% of its cpu is a candidate at 0.5
    (the regular threshold: DRA nodes are not GPU nodes, ``isNodeBelowUtilizationThreshold``).
    With DRA off it is cpu/memory again, and NotUnderutilized."""
    nodes = [node(f"n-{i}", "g") for i in range(2)]
    busy, claim = scheduled("busy", "n-0", [GPU_A], [["gpu-device-0"]], "t1", cpu="900m")

    def dra() -> DraSnapshot:
        return DraSnapshot.from_objects(
            [claim], [s for n in nodes for s in slices(n.name, gpus(4))], [DEFAULT_CLASS]
        )

    r = scale_down(*loaded(nodes, [busy], fw(), store(), dra_snapshot=dra()))
    v = r.verdicts[0]
    # a candidate; the empty n-1 went first (CA's empty-candidates sorting), so its pod has
    # no place left
    assert v.reason is UnremovableReason.NO_PLACE_TO_MOVE_PODS and v.utilization is not None
    assert (v.utilization.basis, v.utilization.value) == ("devices", 0.25)
    assert v.utilization.resource == f"{DRIVER}/n-0"
    assert v.utilization.cpu == pytest.approx(0.9)
    gates = FeatureGates().with_overrides({"DynamicResourceAllocation": False}, enforce_locks=False)
    no_dra = Framework(default_profile(), Handle(feature_gates=gates))
    r = scale_down(*loaded(nodes, [busy], no_dra, store(), dra_snapshot=dra()))
    v = r.verdicts[0]
    assert v.reason is UnremovableReason.NOT_UNDERUTILIZED and v.utilization is not None
    assert (v.utilization.basis, v.utilization.resource) == ("cpu/memory", "cpu")
