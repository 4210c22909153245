"""VolumeRestrictions beyond the shared ``vol-*`` cases: upstream
``volume_restrictions_test.go`` (``TestGCEDiskConflicts``, ``TestAWSDiskConflicts``,
``TestRBDDiskConflicts``, ``TestISCSIDiskConflicts``, ``TestAccessModeConflicts``) rows the cases
do not carry, read-only mounts, and the PreFilterExtensions AddPod/RemovePod."""

from __future__ import annotations

from typing import Any

import pytest

from schedsim.api.core import Node, Pod
from schedsim.api.loading.loader import decode_objects
from schedsim.framework import (
    Code,
    CycleState,
    Framework,
    Handle,
    Profile,
    StorageListers,
    VolumeState,
)
from schedsim.snapshot import NodeInfo, PodInfo, PredicateSnapshot
from schedsim_plugins.volumerestrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
    PRE_FILTER_STATE_KEY,
    VolumeRestrictions,
)


def _pod(name: str, volumes: list[dict[str, Any]], node: str = "") -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}], "volumes": volumes}
    if node:
        spec["nodeName"] = node
    return Pod.from_manifest(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": spec,
        }
    )


def _vol(kind: str, **src: Any) -> dict[str, Any]:
    return {"name": "v", kind: src}


NODE = Node.from_manifest({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}})

GCE = _vol("gcePersistentDisk", pdName="foo")
GCE2 = _vol("gcePersistentDisk", pdName="bar")
GCE_RO = _vol("gcePersistentDisk", pdName="foo", readOnly=True)
AWS = _vol("awsElasticBlockStore", volumeID="foo")
AWS2 = _vol("awsElasticBlockStore", volumeID="bar")
AWS_RO = _vol("awsElasticBlockStore", volumeID="foo", readOnly=True)
RBD = _vol("rbd", monitors=["a", "b"], pool="foo", image="bar")
RBD_SHARED_MON = _vol("rbd", monitors=["b", "c"], pool="foo", image="bar")
ISCSI = _vol("iscsi", targetPortal="127.0.0.1:3260", iqn="iqn.2016-12.server:storage.target01")
ISCSI2 = _vol("iscsi", targetPortal="127.0.0.1:3260", iqn="iqn.2017-12.server:storage.target01")
ISCSI_RO = _vol(
    "iscsi", targetPortal="127.0.0.1:3260", iqn="iqn.2016-12.server:storage.target01", readOnly=True
)

DISK_CASES = {
    # (test, row): (new pod volume, existing pod volume, fits)
    "TestGCEDiskConflicts/nothing": (None, None, True),
    "TestGCEDiskConflicts/one state": (None, GCE, True),
    "TestGCEDiskConflicts/same state": (GCE, GCE, False),
    "TestGCEDiskConflicts/different state": (GCE2, GCE, True),
    "GCE both read-only": (GCE_RO, GCE_RO, True),
    "GCE one read-only": (GCE_RO, GCE, False),
    "TestAWSDiskConflicts/same state": (AWS, AWS, False),
    "TestAWSDiskConflicts/different state": (AWS2, AWS, True),
    "AWS both read-only still conflict": (AWS_RO, AWS_RO, False),
    "TestRBDDiskConflicts/same state": (RBD, RBD, False),
    "RBD shared monitor": (RBD_SHARED_MON, RBD, False),
    "TestISCSIDiskConflicts/different state": (ISCSI2, ISCSI, True),
    "ISCSI both read-only": (ISCSI_RO, ISCSI_RO, True),
}


@pytest.mark.parametrize("name", list(DISK_CASES))
def test_disk_conflicts(name: str) -> None:
    """Upstream Test*DiskConflicts: the same GCE PD / iSCSI IQN / RBD image (pool, image and
    a shared monitor) conflicts unless both mounts are read-only; the same EBS volume always
    conflicts; a pod without such volumes (and no ReadWriteOncePod claim) gets Skip."""
    new, existing, fits = DISK_CASES[name]
    ni = NodeInfo(NODE)
    if existing is not None:
        ni.add_pod_info(PodInfo(_pod("existing", [existing], "node-1")))
    pod = _pod("pod", [] if new is None else [new])
    handle = Handle()
    handle.volume_manager.delegate = VolumeState(StorageListers())
    plugin = VolumeRestrictions({}, handle)
    state = CycleState()
    pre = plugin.schedsim_pre_filter(state, pod, [ni])
    if new is None:
        assert pre is not None and pre.code is Code.Skip
        return
    assert pre is None
    st = plugin.schedsim_filter(state, pod, ni)
    if fits:
        assert st is None, st
    else:
        assert st is not None and st.code is Code.Unschedulable
        assert st.reasons == (ERR_REASON_DISK_CONFLICT,)


def _rwop_snapshot() -> tuple[VolumeRestrictions, PredicateSnapshot]:
    objs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}},
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-2"}},
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "claim-with-rwop-1", "namespace": "default"},
            "spec": {"accessModes": ["ReadWriteOncePod"]},
        },
    ]
    m = decode_objects(objs, "test")
    listers = StorageListers.from_objects(
        m.persistent_volumes, m.persistent_volume_claims, m.storage_classes
    )
    handle = Handle()
    snap = PredicateSnapshot(Framework(Profile(plugins={}), handle))
    user = _pod("pod-with-one-pvc", [_vol_pvc("claim-with-rwop-1")], "node-1")
    snap.set_cluster_state(m.nodes, [user], storage_listers=listers)
    return VolumeRestrictions({}, handle), snap


def _vol_pvc(claim: str) -> dict[str, Any]:
    return {"name": "v", "persistentVolumeClaim": {"claimName": claim}}


def test_access_mode_conflict_on_every_node_and_remove_pod() -> None:
    """Upstream TestAccessModeConflicts "access mode conflict, unschedulable": the count is
    cluster-wide, so every node fails; RemovePod of the pod using the claim (preemption's dry
    run) clears it and AddPod brings it back (PreFilterExtensions)."""
    plugin, snap = _rwop_snapshot()
    with snap.bound():
        pod = _pod("pod-with-one-conflict", [_vol_pvc("claim-with-rwop-1")])
        state = CycleState()
        nodes = snap.list_node_infos()
        assert plugin.schedsim_pre_filter(state, pod, nodes) is None
        for ni in nodes:
            st = plugin.schedsim_filter(state, pod, ni)
            assert st is not None and st.reasons == (ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,)
            assert st.code is Code.Unschedulable
        n1 = snap.get_node_info("node-1")
        user = n1.pods[0]
        assert plugin.schedsim_pre_filter_remove_pod(state, pod, user, n1) is None
        assert state[PRE_FILTER_STATE_KEY].conflicting_pvc_ref_count == 0
        assert plugin.schedsim_filter(state, pod, n1) is None
        assert plugin.schedsim_pre_filter_add_pod(state, pod, user, n1) is None
        assert plugin.schedsim_filter(state, pod, n1) is not None


def test_access_mode_missing_claim() -> None:
    """Upstream TestAccessModeConflicts "failed to get PVC": UnschedulableAndUnresolvable
    with the lister's NotFound message."""
    plugin, snap = _rwop_snapshot()
    with snap.bound():
        pod = _pod("p", [_vol_pvc("claim-with-rwop-2")])
        st = plugin.schedsim_pre_filter(CycleState(), pod, snap.list_node_infos())
        assert st is not None and st.code is Code.UnschedulableAndUnresolvable
        assert st.reasons == ('persistentvolumeclaim "claim-with-rwop-2" not found',)
