"""A pod whose extended resource is backed by DRA (``DRAExtendedResource``) through the
snapshot's lifecycle, both stores: scheduling allocates its special claim and reserves it;
unscheduling deallocates it (it is pod-owned, CA's UnreservePodClaims); scheduling again
allocates it afresh; removing the node removes it (RemovePodOwnedClaims)."""

from __future__ import annotations

from schedsim.api.loading.loader import decode_objects
from schedsim.dra.extended import extended_resource_claim_name
from schedsim.framework import FeatureGates, Framework, Handle, default_profile
from schedsim.snapshot import PredicateSnapshot
from schedsim.snapshot.dra import DraSnapshot
from schedsim.testing import StoreFactory

OBJECTS = [
    {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "worker"},
        "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "32"}},
    },
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu"},
        "spec": {"extendedResourceName": "example.com/gpu"},
    },
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "worker",
            "pool": {"name": "worker", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0"}],
        },
    },
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "uid": "uid-p"},
        "spec": {"containers": [{"name": "c", "resources": {"limits": {"example.com/gpu": "1"}}}]},
    },
]


def test_special_claim_follows_the_pod(store: StoreFactory) -> None:
    m = decode_objects(OBJECTS, "t")
    gates = FeatureGates().with_overrides({"DRAExtendedResource": True})
    snap = PredicateSnapshot(Framework(default_profile(), Handle(feature_gates=gates)), store())
    dra = DraSnapshot.from_objects(m.resource_claims, m.resource_slices, m.device_classes)
    snap.set_cluster_state(m.nodes, [], dra)
    (pod,) = m.pods
    name = extended_resource_claim_name(pod)

    def claim_state() -> tuple[str | None, tuple[str, ...]]:
        c = snap.get_resource_claim("default", name)
        assert c is not None
        alloc = c.status.allocation
        return (
            alloc.results[0].device if alloc else None,
            tuple(r.name for r in c.status.reserved_for),
        )

    snap.schedule_pod(pod, "worker")
    assert claim_state() == ("gpu-0", ("p",))
    (pi,) = snap.get_node_info("worker").pods
    assert [c.name for c in pi.needed_resource_claims] == [name]

    snap.unschedule_pod("default", "p", "worker")
    assert claim_state() == (None, ())

    snap.fork()
    snap.schedule_pod(pod, "worker")
    assert claim_state() == ("gpu-0", ("p",))
    snap.revert()
    assert claim_state() == (None, ())

    snap.schedule_pod(pod, "worker")
    snap.remove_node_info("worker")
    assert snap.get_resource_claim("default", name) is None
