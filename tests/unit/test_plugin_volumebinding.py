"""VolumeBinding beyond the shared ``vol-*`` cases: upstream ``binder_test.go`` tables
(``TestFindPodVolumesWithoutProvisioning``, ``TestFindPodVolumesWithProvisioning``,
``TestCapacity``, ``TestAssumePodVolumes``, ``TestRevertAssumedPodVolumes``) with their fixtures
(``unboundPVC`` 1G and ``unboundPVC2`` 5G of ``waitClass``; ``pvNode1a`` 5G and ``pvNode1b`` 10G
pinned to node1 by ``nodeKey``; ``waitClassWithProvisioner`` allowed on ``nodeKey`` in [node1,
reference-value]; ``topoMismatchClass`` only on reference-value), run through the plugin's
PreFilter and Filter for node1 as ``findPodVolumes`` in that file does, and
``volume_binding_test.go`` (``TestVolumeBinding``) rows the shared cases do not carry.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from schedsim.api.core import Node, Pod
from schedsim.api.loading.loader import decode_objects
from schedsim.api.storage import (
    SELECTED_NODE_ANNOTATION,
    CSIDriver,
    CSIStorageCapacity,
    PersistentVolume,
)
from schedsim.framework import (
    Code,
    CycleState,
    Handle,
    PreFilterResult,
    Status,
    StorageListers,
    VolumeState,
)
from schedsim.snapshot import NodeInfo
from schedsim_plugins.volumebinding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    STATE_KEY,
    VolumeBinding,
    find_matching_volume,
    local_pv_node_names,
)

NS = "testns"
PROVISIONER = "test-provisioner"

CLASSES: list[dict[str, Any]] = [
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "waitClassWithProvisioner"},
        "provisioner": PROVISIONER,
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowedTopologies": [
            {"matchLabelExpressions": [{"key": "nodeKey", "values": ["node1", "reference-value"]}]}
        ],
    },
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "immediateClass"},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "Immediate",
    },
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "waitClass"},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer",
    },
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "topoMismatchClass"},
        "provisioner": PROVISIONER,
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowedTopologies": [
            {"matchLabelExpressions": [{"key": "nodeKey", "values": ["reference-value"]}]}
        ],
    },
]


def _pvc(
    name: str,
    size: str,
    cls: str,
    *,
    volume_name: str = "",
    bound: bool = False,
    selected_node: str = "",
) -> dict[str, Any]:
    """``makeTestPVC``: pvcBound sets the bind-completed annotation, pvcPrebound only
    ``volumeName``, pvcSelectedNode the selected-node annotation."""
    ann = {}
    if bound:
        ann["pv.kubernetes.io/bind-completed"] = "yes"
    if selected_node:
        ann[SELECTED_NODE_ANNOTATION] = selected_node
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}", "annotations": ann},
        "spec": {
            "storageClassName": cls,
            "volumeName": volume_name,
            "resources": {"requests": {"storage": size}},
        },
    }


def _pv(name: str, node: str, size: str, cls: str, bound_to: str = "") -> dict[str, Any]:
    """``makeTestPV``: node affinity ``nodeKey In [node]``; bound to a claim: claimRef and
    phase Bound, else phase Available."""
    spec: dict[str, Any] = {
        "capacity": {"storage": size},
        "storageClassName": cls,
        "csi": {"driver": "csi.example.com", "volumeHandle": name},
    }
    if node:
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "nodeKey", "operator": "In", "values": [node]}]}
                ]
            }
        }
    if bound_to:
        spec["claimRef"] = {"namespace": NS, "name": bound_to, "uid": f"uid-{bound_to}"}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": spec,
        "status": {"phase": "Bound" if bound_to else "Available"},
    }


PVCS = {
    "unboundPVC": _pvc("unbound-pvc", "1G", "waitClass"),
    "unboundPVC2": _pvc("unbound-pvc2", "5G", "waitClass"),
    "preboundPVC": _pvc("prebound-pvc", "1G", "waitClass", volume_name="pv-node1a"),
    "boundPVC": _pvc("bound-pvc", "1G", "waitClass", volume_name="pv-bound", bound=True),
    "immediateUnboundPVC": _pvc("immediate-unbound-pvc", "1G", "immediateClass"),
    "immediateBoundPVC": _pvc(
        "immediate-bound-pvc", "1G", "immediateClass", volume_name="pv-bound-immediate", bound=True
    ),
    "provisionedPVC": _pvc("provisioned-pvc", "1Gi", "waitClassWithProvisioner"),
    "noProvisionerPVC": _pvc("no-provisioner-pvc", "1Gi", "waitClass"),
    "topoMismatchPVC": _pvc("topo-mismatch-pvc", "1Gi", "topoMismatchClass"),
    "selectedNodePVC": _pvc(
        "provisioned-pvc", "1Gi", "waitClassWithProvisioner", selected_node="node1"
    ),
}
PVS = {
    "pvNode1a": _pv("pv-node1a", "node1", "5G", "waitClass"),
    "pvNode1b": _pv("pv-node1b", "node1", "10G", "waitClass"),
    "pvNode2": _pv("pv-node2", "node2", "1G", "waitClass"),
    "pvBound": _pv("pv-bound", "node1", "1G", "waitClass", "bound-pvc"),
    "pvNode1aBound": _pv("pv-node1a", "node1", "5G", "waitClass", "unbound-pvc"),
    "pvBoundImmediate": _pv(
        "pv-bound-immediate", "node1", "1G", "immediateClass", "immediate-bound-pvc"
    ),
    "pvBoundImmediateNode2": _pv(
        "pv-bound-immediate", "node2", "1G", "immediateClass", "immediate-bound-pvc"
    ),
}
NODE1: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "node1", "labels": {"nodeKey": "node1"}},
}


def _csi_driver(capacity: bool) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": PROVISIONER},
        "spec": {"storageCapacity": capacity},
    }


def _capacity(name: str, node: str | None, size: str, max_size: str = "") -> dict[str, Any]:
    """``makeCapacity``: nodeTopology selects ``nodeKey: <node>``; None: network-attached
    storage reachable from no node (no nodeTopology)."""
    obj: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIStorageCapacity",
        "metadata": {"name": name, "namespace": "kube-system"},
        "storageClassName": "waitClassWithProvisioner",
        "capacity": size,
    }
    if node is not None:
        obj["nodeTopology"] = {"matchLabels": {"nodeKey": node}}
    if max_size:
        obj["maximumVolumeSize"] = max_size
    return obj


def _setup(
    pvcs: list[str], pvs: list[str], extra: Sequence[dict[str, Any]] = ()
) -> tuple[VolumeBinding, Pod, NodeInfo, Handle]:
    objs = [*CLASSES, NODE1, *(PVCS[p] for p in pvcs), *(PVS[p] for p in pvs), *extra]
    pod_raw = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "test-pod", "namespace": NS},
        "spec": {
            "containers": [{"name": "c", "image": "x"}],
            "volumes": [
                {
                    "name": f"v{i}",
                    "persistentVolumeClaim": {"claimName": PVCS[p]["metadata"]["name"]},
                }
                for i, p in enumerate(pvcs)
            ],
        },
    }
    csi = [o for o in objs if o["kind"] in ("CSIDriver", "CSIStorageCapacity")]
    m = decode_objects([*(o for o in objs if o not in csi), pod_raw], "test", api_rules=False)
    listers = StorageListers.from_objects(
        m.persistent_volumes,
        m.persistent_volume_claims,
        m.storage_classes,
        csi_drivers=[CSIDriver.from_manifest(o) for o in csi if o["kind"] == "CSIDriver"],
        csi_storage_capacities=[
            CSIStorageCapacity.from_manifest(o) for o in csi if o["kind"] == "CSIStorageCapacity"
        ],
    )
    handle = Handle()
    handle.storage_listers.delegate = listers
    handle.volume_manager.delegate = VolumeState(listers)  # unforked PV/PVC state
    node: Node = m.nodes[0]
    return VolumeBinding({}, handle), m.pods[0], NodeInfo(node), handle


def _find(
    pvcs: list[str], pvs: list[str], extra: Sequence[dict[str, Any]] = ()
) -> tuple[Status | PreFilterResult | None, Status | None, CycleState]:
    plugin, pod, ni, _ = _setup(pvcs, pvs, extra)
    state = CycleState()
    pre = plugin.schedsim_pre_filter(state, pod, [ni])
    if isinstance(pre, Status):
        return pre, None, state
    return pre, plugin.schedsim_filter(state, pod, ni), state


def _bindings(state: CycleState) -> list[tuple[str, str]]:
    s = state[STATE_KEY]
    pv = s.pod_volumes_by_node["node1"]
    return [(b.name, c.name) for b, c in pv.static_bindings]


def _provisions(state: CycleState) -> list[str]:
    return [c.name for c in state[STATE_KEY].pod_volumes_by_node["node1"].dynamic_provisions]


# TestFindPodVolumesWithoutProvisioning: name -> (pod PVCs, PVs, reasons, bindings, fails)
WITHOUT_PROVISIONING = {
    "bound-pvc": (["boundPVC"], ["pvBound"], [], [], False),
    "bound-pvc,pv-not-exists": (["boundPVC"], [], [ERR_REASON_PV_NOT_EXIST], None, False),
    "prebound-pvc": (["preboundPVC"], ["pvNode1aBound"], [], None, True),
    "unbound-pvc,pv-same-node": (
        ["unboundPVC"],
        ["pvNode2", "pvNode1a", "pvNode1b"],
        [],
        [("pv-node1a", "unbound-pvc")],
        False,
    ),
    "unbound-pvc,pv-different-node": (
        ["unboundPVC"],
        ["pvNode2"],
        [ERR_REASON_BIND_CONFLICT],
        None,
        False,
    ),
    "two-unbound-pvcs": (
        ["unboundPVC", "unboundPVC2"],
        ["pvNode1a", "pvNode1b"],
        [],
        [("pv-node1a", "unbound-pvc"), ("pv-node1b", "unbound-pvc2")],
        False,
    ),
    "two-unbound-pvcs,order-by-size": (
        ["unboundPVC2", "unboundPVC"],
        ["pvNode1a", "pvNode1b"],
        [],
        [("pv-node1a", "unbound-pvc"), ("pv-node1b", "unbound-pvc2")],
        False,
    ),
    "two-unbound-pvcs,partial-match": (
        ["unboundPVC", "unboundPVC2"],
        ["pvNode1a"],
        [ERR_REASON_BIND_CONFLICT],
        None,
        False,
    ),
    "one-bound,one-unbound": (
        ["unboundPVC", "boundPVC"],
        ["pvBound", "pvNode1a"],
        [],
        [("pv-node1a", "unbound-pvc")],
        False,
    ),
    "one-bound,one-unbound,no-match": (
        ["unboundPVC", "boundPVC"],
        ["pvBound", "pvNode2"],
        [ERR_REASON_BIND_CONFLICT],
        None,
        False,
    ),
    "one-prebound,one-unbound": (
        ["unboundPVC", "preboundPVC"],
        ["pvNode1a", "pvNode1b"],
        [],
        None,
        True,
    ),
    "immediate-bound-pvc": (["immediateBoundPVC"], ["pvBoundImmediate"], [], [], False),
    "immediate-bound-pvc-wrong-node": (
        ["immediateBoundPVC"],
        ["pvBoundImmediateNode2"],
        [ERR_REASON_NODE_CONFLICT],
        None,
        False,
    ),
    "immediate-unbound-pvc": (["immediateUnboundPVC"], [], [], None, True),
    "immediate-unbound-pvc,delayed-mode-bound": (
        ["immediateUnboundPVC", "boundPVC"],
        ["pvBound"],
        [],
        None,
        True,
    ),
    "immediate-unbound-pvc,delayed-mode-unbound": (
        ["immediateUnboundPVC", "unboundPVC"],
        [],
        [],
        None,
        True,
    ),
}


@pytest.mark.parametrize("capacity", [None, True, False], ids=["no-csidriver", "cap", "nocap"])
@pytest.mark.parametrize("name", list(WITHOUT_PROVISIONING))
def test_find_pod_volumes_without_provisioning(name: str, capacity: bool | None) -> None:
    """Upstream ``TestFindPodVolumesWithoutProvisioning`` (each scenario with no CSIDriver,
    one with and one without capacity tracking: static binding ignores them). A failing
    ``findPodVolumes`` is PreFilter's ``pod has unbound immediate PersistentVolumeClaims``
    (prebound claims count as unbound immediate ones); the reasons are Filter's."""
    pvcs, pvs, reasons, bindings, fails = WITHOUT_PROVISIONING[name]
    extra = [] if capacity is None else [_csi_driver(capacity)]
    pre, st, state = _find(pvcs, pvs, extra)
    if fails:
        assert isinstance(pre, Status) and pre.code is Code.UnschedulableAndUnresolvable
        assert pre.reasons == ("pod has unbound immediate PersistentVolumeClaims",)
        return
    assert not isinstance(pre, Status), pre
    if reasons:
        assert st is not None and st.code is Code.UnschedulableAndUnresolvable
        assert list(st.reasons) == reasons
    else:
        assert st is None, st
        assert _bindings(state) == bindings


# TestFindPodVolumesWithProvisioning: name -> (PVCs, PVs, reasons, bindings, provisions,
# needs capacity)
WITH_PROVISIONING = {
    "one-provisioned": (["provisionedPVC"], [], [], [], ["provisioned-pvc"], True),
    "two-unbound-pvcs,one-matched,one-provisioned": (
        ["unboundPVC", "provisionedPVC"],
        ["pvNode1a"],
        [],
        [("pv-node1a", "unbound-pvc")],
        ["provisioned-pvc"],
        True,
    ),
    "one-bound,one-provisioned": (
        ["boundPVC", "provisionedPVC"],
        ["pvBound"],
        [],
        [],
        ["provisioned-pvc"],
        True,
    ),
    "one-binding,one-selected-node": (
        ["boundPVC", "selectedNodePVC"],
        ["pvBound"],
        [],
        [],
        ["provisioned-pvc"],
        True,
    ),
    "one-immediate-bound,one-provisioned": (
        ["immediateBoundPVC", "provisionedPVC"],
        ["pvBoundImmediate"],
        [],
        [],
        ["provisioned-pvc"],
        True,
    ),
    "invalid-provisioner": (["noProvisionerPVC"], [], [ERR_REASON_BIND_CONFLICT], [], [], False),
    "volume-topology-unsatisfied": (
        ["topoMismatchPVC"],
        [],
        [ERR_REASON_BIND_CONFLICT],
        [],
        [],
        False,
    ),
}


@pytest.mark.parametrize("capacity", [None, True, False], ids=["no-csidriver", "cap", "nocap"])
@pytest.mark.parametrize("name", list(WITH_PROVISIONING))
def test_find_pod_volumes_with_provisioning(name: str, capacity: bool | None) -> None:
    """Upstream ``TestFindPodVolumesWithProvisioning``: with a CSIDriver that tracks capacity
    and no CSIStorageCapacity, provisioning is blocked (``node(s) did not have enough free
    storage`` appended, no provisions)."""
    pvcs, pvs, reasons, bindings, provisions, needs_capacity = WITH_PROVISIONING[name]
    extra = [] if capacity is None else [_csi_driver(capacity)]
    pre, st, state = _find(pvcs, pvs, extra)
    assert not isinstance(pre, Status), pre
    want = list(reasons)
    if needs_capacity and capacity:
        want.append(ERR_REASON_NOT_ENOUGH_SPACE)
    if want:
        assert st is not None and list(st.reasons) == want, st
    else:
        assert st is None, st
        assert _bindings(state) == bindings
        assert _provisions(state) == provisions


CAPACITY_CASES = {
    # upstream TestCapacity: name -> (capacities, fits)
    "network-attached": ([_capacity("net", None, "1Gi")], False),
    "local-storage": ([_capacity("net", "node1", "1Gi")], True),
    "multiple": (
        [
            _capacity("a", None, "1Gi"),
            _capacity("b", "node2", "1Gi"),
            _capacity("c", "node1", "1Gi"),
        ],
        True,
    ),
    "no-storage": ([], False),
    "wrong-node": ([_capacity("net", "node2", "1Gi")], False),
    "wrong-storage-class": (
        [{**_capacity("net", "node1", "1Gi"), "storageClassName": "waitClass"}],
        False,
    ),
    "insufficient-storage": ([_capacity("net", "node1", "1Mi")], False),
    "insufficient-volume-size": ([_capacity("net", "node1", "1Gi", "1Mi")], False),
    "zero-storage": ([_capacity("net", "node1", "0")], False),
}


@pytest.mark.parametrize("name", list(CAPACITY_CASES))
def test_capacity(name: str) -> None:
    """Upstream ``TestCapacity`` (provisionedPVC, a CSIDriver with capacity tracking):
    CSIStorageCapacity objects must be of the claim's class, reachable from the node
    (``nodeTopology``) and large enough (``maximumVolumeSize`` first, else ``capacity``)."""
    caps, fits = CAPACITY_CASES[name]
    pre, st, state = _find(["provisionedPVC"], [], [_csi_driver(True), *caps])
    assert not isinstance(pre, Status), pre
    if fits:
        assert st is None, st
        assert _provisions(state) == ["provisioned-pvc"]
    else:
        assert st is not None and list(st.reasons) == [ERR_REASON_NOT_ENOUGH_SPACE]


def test_selected_node_other_node_fails_fast() -> None:
    """``FindPodVolumes``: a claim whose provisioning node was selected (the
    ``volume.kubernetes.io/selected-node`` annotation) only fits that node; elsewhere the
    bind conflict reason (binder.go's fast path for ``AnnSelectedNode != node.Name``)."""
    pvc = _pvc("p", "1Gi", "waitClassWithProvisioner", selected_node="node2")
    plugin, pod, ni, _ = _setup([], [], [pvc])
    pod = Pod.from_manifest(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "x", "namespace": NS},
            "spec": {
                "containers": [{"name": "c", "image": "x"}],
                "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "p"}}],
            },
        }
    )
    state = CycleState()
    assert plugin.schedsim_pre_filter(state, pod, [ni]) is None
    st = plugin.schedsim_filter(state, pod, ni)
    assert st is not None and st.reasons == (ERR_REASON_BIND_CONFLICT,)


def test_assume_and_revert_pod_volumes() -> None:
    """Upstream ``TestAssumePodVolumes`` ("one-binding", "one-provisioned") and
    ``TestRevertAssumedPodVolumes``: Reserve gives the PV the claim's claimRef (and the
    bound-by-controller annotation) and a claim to provision the selected-node annotation;
    Unreserve restores both."""
    plugin, pod, ni, handle = _setup(["unboundPVC", "provisionedPVC"], ["pvNode1a"])
    state = CycleState()
    assert plugin.schedsim_pre_filter(state, pod, [ni]) is None
    assert plugin.schedsim_filter(state, pod, ni) is None
    assert plugin.schedsim_reserve(state, pod, "node1") is None
    volumes = handle.volume_manager
    pv = volumes.get_persistent_volume("pv-node1a")
    assert pv is not None and pv.claim_ref is not None
    assert (pv.claim_ref.namespace, pv.claim_ref.name) == (NS, "unbound-pvc")
    assert pv.annotations["pv.kubernetes.io/bound-by-controller"] == "yes"
    pvc = volumes.get_persistent_volume_claim(NS, "provisioned-pvc")
    assert pvc is not None and pvc.annotations[SELECTED_NODE_ANNOTATION] == "node1"
    assert plugin.schedsim_pre_bind_pre_flight(state, pod, "node1") is None
    plugin.schedsim_unreserve(state, pod, "node1")
    assert volumes.get_persistent_volume("pv-node1a") is handle.storage_listers.persistent_volume(
        "pv-node1a"
    )
    pvc = volumes.get_persistent_volume_claim(NS, "provisioned-pvc")
    assert pvc is not None and SELECTED_NODE_ANNOTATION not in pvc.annotations
    plugin.schedsim_unreserve(state, pod, "node1")  # idempotent


def test_all_bound_reserve_and_prebind_skip() -> None:
    """Upstream ``TestAssumePodVolumes`` "all-bound": nothing to assume; PreBindPreFlight
    then returns Skip (``TestVolumeBinding`` expects Skip for all-bound pods)."""
    plugin, pod, ni, _ = _setup(["boundPVC"], ["pvBound"])
    state = CycleState()
    pre = plugin.schedsim_pre_filter(state, pod, [ni])
    assert not isinstance(pre, Status)
    assert plugin.schedsim_filter(state, pod, ni) is None
    assert plugin.schedsim_reserve(state, pod, "node1") is None
    st = plugin.schedsim_pre_bind_pre_flight(state, pod, "node1")
    assert st is not None and st.code is Code.Skip


def test_prebind_completes_binding() -> None:
    """``BindPodVolumes`` + the PV controller: after PreBind the claim is fully bound
    (``spec.volumeName``, ``pv.kubernetes.io/bind-completed``), so a later pod using it is
    all-bound and pinned by the PV's node affinity."""
    plugin, pod, ni, handle = _setup(["unboundPVC"], ["pvNode1a"])
    state = CycleState()
    plugin.schedsim_pre_filter(state, pod, [ni])
    assert plugin.schedsim_filter(state, pod, ni) is None
    assert plugin.schedsim_reserve(state, pod, "node1") is None
    assert plugin.schedsim_pre_bind(state, pod, "node1") is None
    pvc = handle.volume_manager.get_persistent_volume_claim(NS, "unbound-pvc")
    assert pvc is not None and pvc.is_fully_bound and pvc.volume_name == "pv-node1a"
    state2 = CycleState()
    got = plugin.schedsim_pre_filter(state2, pod, [ni])
    assert not isinstance(got, Status)
    assert plugin.schedsim_filter(state2, pod, ni) is None
    assert plugin.schedsim_reserve(state2, pod, "node1") is None
    assert state2[STATE_KEY].all_bound


def _pv_obj(raw: dict[str, Any]) -> PersistentVolume:
    return PersistentVolume.from_manifest(raw)


def test_find_matching_volume_rules() -> None:
    """component-helpers ``TestFindMatchingVolume`` rules: the smallest fitting PV; access
    modes, volume mode, selector and phase Available filter; a PV pre-bound to the claim wins
    (``FindMatchingVolume``)."""
    node = Node.from_manifest(NODE1)
    pvc = decode_objects([_pvc("c", "2G", "waitClass")], "t").persistent_volume_claims[0]
    small = _pv_obj(_pv("small", "node1", "1G", "waitClass"))
    mid = _pv_obj(_pv("mid", "node1", "3G", "waitClass"))
    big = _pv_obj(_pv("big", "node1", "9G", "waitClass"))
    assert find_matching_volume(pvc, [big, small, mid], node, set()) is mid
    assert find_matching_volume(pvc, [big, small, mid], node, {"mid"}) is big
    pending = _pv_obj({**_pv("p", "node1", "3G", "waitClass"), "status": {"phase": "Pending"}})
    assert find_matching_volume(pvc, [pending], node, set()) is None
    block_raw = _pv("b", "node1", "3G", "waitClass")
    block_raw["spec"]["volumeMode"] = "Block"
    assert find_matching_volume(pvc, [_pv_obj(block_raw)], node, set()) is None
    rwx_raw = _pv("rwx", "node1", "3G", "waitClass")
    rwx_raw["spec"]["accessModes"] = ["ReadWriteMany"]
    rwo_pvc_raw = _pvc("c", "2G", "waitClass")
    rwo_pvc_raw["spec"]["accessModes"] = ["ReadWriteOnce"]
    rwo_pvc = decode_objects([rwo_pvc_raw], "t").persistent_volume_claims[0]
    assert find_matching_volume(rwo_pvc, [_pv_obj(rwx_raw)], node, set()) is None
    sel_pvc_raw = _pvc("c", "2G", "waitClass")
    sel_pvc_raw["spec"]["selector"] = {"matchLabels": {"tier": "fast"}}
    sel_pvc = decode_objects([sel_pvc_raw], "t").persistent_volume_claims[0]
    assert find_matching_volume(sel_pvc, [mid], node, set()) is None
    prebound = _pv_obj(_pv("pre", "node1", "9G", "waitClass", "c"))
    assert find_matching_volume(pvc, [mid, prebound], node, set()) is prebound
    other_node = _pv_obj(_pv("pre", "node2", "9G", "waitClass", "c"))
    assert find_matching_volume(pvc, [mid, other_node], node, set()) is None


def test_local_pv_node_names() -> None:
    """``GetLocalPersistentVolumeNodeNames`` (volume_binding_test "all bound with local
    volumes"): hostname In values, intersected within a term, unioned over terms."""
    raw = _pv("x", "", "1G", "waitClass")
    raw["spec"]["nodeAffinity"] = {
        "required": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["a", "b"]},
                        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["b", "c"]},
                    ]
                },
                {
                    "matchExpressions": [
                        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["d"]}
                    ]
                },
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z"]}]},
            ]
        }
    }
    assert local_pv_node_names(_pv_obj(raw)) == {"b", "d"}


def test_missing_claims_messages() -> None:
    """``podHasPVCs`` messages (TestVolumeBinding "PVC does not exist" and the generic
    ephemeral volume rows of TestFindPodVolumesWithoutProvisioning)."""
    plugin, _, ni, _ = _setup([], [])
    pod = Pod.from_manifest(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "test-pod", "namespace": NS},
            "spec": {
                "containers": [{"name": "c", "image": "x"}],
                "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "pvc-a"}}],
            },
        }
    )
    st = plugin.schedsim_pre_filter(CycleState(), pod, [ni])
    assert isinstance(st, Status) and st.code is Code.UnschedulableAndUnresolvable
    assert st.reasons == ('persistentvolumeclaim "pvc-a" not found',)
    eph = Pod.from_manifest(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "test-pod", "namespace": NS},
            "spec": {
                "containers": [{"name": "c", "image": "x"}],
                "volumes": [{"name": "no-such-pvc", "ephemeral": {"volumeClaimTemplate": {}}}],
            },
        }
    )
    st = plugin.schedsim_pre_filter(CycleState(), eph, [ni])
    assert isinstance(st, Status)
    assert st.reasons == (
        "waiting for ephemeral volume controller to create the persistentvolumeclaim "
        '"test-pod-no-such-pvc"',
    )


def test_args() -> None:
    """VolumeBindingArgs validation: bindTimeoutSeconds must be >= 0; shape needs the
    StorageCapacityScoring gate (not emulated)."""
    VolumeBinding({"bindTimeoutSeconds": 10}, Handle())
    with pytest.raises(ValueError, match="bindTimeoutSeconds"):
        VolumeBinding({"bindTimeoutSeconds": -1}, Handle())
    with pytest.raises(ValueError, match="shape"):
        VolumeBinding({"shape": []}, Handle())


def test_bound_claims_without_node_affinity_pass_every_node() -> None:
    """``checkBoundClaims`` (binder.go): a bound PV without node affinity admits every node,
    so PreFilter settles Filter's answer once; a PV pinned by node affinity still rejects the
    other nodes with ``node(s) had volume node affinity conflict`` (``TestVolumeBinding``
    "PVC was bound to a PV with node affinity conflict"), and a missing PV still gives
    ``node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)``."""
    free_pv = _pv("pv-bound", "", "1G", "waitClass", "bound-pvc")
    plugin, pod, ni, _ = _setup(["boundPVC"], [], [free_pv])
    other = NodeInfo(Node.from_manifest({**NODE1, "metadata": {"name": "node2"}}))
    state = CycleState()
    assert not isinstance(plugin.schedsim_pre_filter(state, pod, [ni, other]), Status)
    assert plugin.schedsim_filter(state, pod, ni) is None
    assert plugin.schedsim_filter(state, pod, other) is None
    found = state[STATE_KEY].pod_volumes_by_node
    assert sorted(found) == ["node1", "node2"]
    assert all(not v.static_bindings and not v.dynamic_provisions for v in found.values())
    assert plugin.schedsim_reserve(state, pod, "node2") is None and state[STATE_KEY].all_bound

    plugin, pod, ni, _ = _setup(["boundPVC"], ["pvBound"])  # pinned to nodeKey=node1
    state = CycleState()
    assert not isinstance(plugin.schedsim_pre_filter(state, pod, [ni, other]), Status)
    assert plugin.schedsim_filter(state, pod, ni) is None
    st = plugin.schedsim_filter(state, pod, other)
    assert st is not None and st.reasons == (ERR_REASON_NODE_CONFLICT,)

    plugin, pod, ni, _ = _setup(["boundPVC"], [])
    state = CycleState()
    assert not isinstance(plugin.schedsim_pre_filter(state, pod, [ni]), Status)
    st = plugin.schedsim_filter(state, pod, ni)
    assert st is not None and st.reasons == (ERR_REASON_PV_NOT_EXIST,)
