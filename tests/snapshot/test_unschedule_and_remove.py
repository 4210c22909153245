"""`PredicateSnapshot.unschedule_pods_and_remove_node` (the first step of a removal
simulation, CA ``RemovalSimulator.findPlaceFor``: ``UnschedulePod`` per pod, then the node
goes) ends where `unschedule_pod` per pod followed by `remove_node_info` ends, both stores,
with a DRA-backed pod (its pod-owned claim is deallocated by the unschedule and stays, as
CA's ``UnreservePodClaims``; a claim of a pod left on the node goes with the node,
``RemovePodOwnedClaims``), a pod with a PersistentVolumeClaim and a plain pod; and raises
what the one-by-one path raises first."""

from __future__ import annotations

import pytest

from schedsim.api.loading.loader import decode_objects
from schedsim.framework import FeatureGates, Framework, Handle, default_profile
from schedsim.snapshot import PredicateSnapshot
from schedsim.snapshot.dra import DraSnapshot
from schedsim.snapshot.errors import NodeNotFoundError, PodNotFoundError
from schedsim.testing import StoreFactory


def _node(name: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "32"}},
    }


def _pod(name: str, spec: dict[str, object]) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "uid": f"uid-{name}"},
        "spec": spec,
    }


GPU_CONTAINER = {"name": "c", "resources": {"limits": {"example.com/gpu": "1"}}}
OBJECTS = [
    _node("worker"),
    _node("other"),
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
            "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}],
        },
    },
    _pod("gpu", {"containers": [GPU_CONTAINER]}),
    _pod("stay", {"containers": [GPU_CONTAINER]}),
    _pod(
        "pvc",
        {
            "containers": [{"name": "c"}],
            "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}],
        },
    ),
    _pod("plain", {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}),
]


def _cluster(store: StoreFactory) -> tuple[PredicateSnapshot, dict[str, object]]:
    m = decode_objects(OBJECTS, "t")
    gates = FeatureGates().with_overrides({"DRAExtendedResource": True})
    snap = PredicateSnapshot(Framework(default_profile(), Handle(feature_gates=gates)), store())
    dra = DraSnapshot.from_objects(m.resource_claims, m.resource_slices, m.device_classes)
    snap.set_cluster_state(m.nodes, [], dra)
    pods = {p.name: p for p in m.pods}
    for name in ("gpu", "stay"):
        snap.schedule_pod(pods[name], "worker")  # their claims allocated and reserved
    for name in ("pvc", "plain"):
        snap.force_add_pod(pods[name], "worker")  # the claim "data" is not modelled here
    return snap, pods


def _state(snap: PredicateSnapshot) -> tuple[object, ...]:
    claims = sorted(
        (
            c.key,
            c.status.allocation is not None,
            tuple(r.name for r in c.status.reserved_for),
        )
        for c in snap.dra_snapshot.list_resource_claims()
    )
    nodes = [(ni.node.name, sorted(p.pod.name for p in ni.pods)) for ni in snap.list_node_infos()]
    return (
        nodes,
        claims,
        snap.storage_infos().is_pvc_used_by_pods("default/data"),
        len(snap.dra_snapshot.list_resource_slices()),
    )


def test_same_end_state_as_one_by_one(store: StoreFactory) -> None:
    moving = ["gpu", "pvc", "plain"]  # "stay" (a claim) goes with the node
    one_by_one, pods = _cluster(store)
    for name in moving:
        one_by_one.unschedule_pod("default", name, "worker")
    one_by_one.remove_node_info("worker")
    at_once, pods = _cluster(store)
    at_once.unschedule_pods_and_remove_node("worker", [pods[n] for n in moving])
    assert _state(at_once) == _state(one_by_one)
    # the moved pod's claim is deallocated and kept; the one left on the node is gone
    nodes, claims, pvc_used, slices = _state(at_once)
    assert nodes == [("other", [])]
    assert [(key.split("-")[0], allocated, reserved) for key, allocated, reserved in claims] == [  # type: ignore[attr-defined]
        ("default/gpu", False, ())
    ]
    assert pvc_used is False and slices == 0


@pytest.mark.parametrize(
    ("node", "names", "error"),
    [
        ("worker", ["plain", "missing", "gpu"], PodNotFoundError),
        ("worker", ["plain", "plain"], PodNotFoundError),  # the second is no longer there
        ("gone", ["plain"], NodeNotFoundError),
        ("gone", [], NodeNotFoundError),
    ],
)
def test_same_first_error(
    store: StoreFactory, node: str, names: list[str], error: type[Exception]
) -> None:
    def run(at_once: bool) -> str:
        snap, pods = _cluster(store)
        objs = [
            pods.get(n) or decode_objects([_pod(n, {"containers": [{"name": "c"}]})], "t").pods[0]
            for n in names
        ]
        snap.fork()
        with pytest.raises(error) as e:
            if at_once:
                snap.unschedule_pods_and_remove_node(node, objs)  # type: ignore[arg-type]
            else:
                for p in objs:
                    snap.unschedule_pod(p.namespace, p.name, node)  # type: ignore[attr-defined]
                snap.remove_node_info(node)
        return str(e.value)

    assert run(True) == run(False)
