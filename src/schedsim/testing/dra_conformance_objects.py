"""The cluster the DRA scenarios run on: the GPU device class, nodes with their node-local
slices, pods with pod-owned and shared claims, the claims (pending and allocated), and the
node and claim states they dump to.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from schedsim.api.core import Node, Pod
from schedsim.api.resource import DeviceClass, ResourceClaim, ResourceSlice
from schedsim.testing.dra_conformance_state import ClaimState
from schedsim.testing.snapshot_conformance import NodeState, make_node, make_pod

# --------------------------------------------------------------------------- objects

DRIVER = "gpu.example.com"
GPU_CLASS = DeviceClass.from_manifest(
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]},
    }
)


def _node(name: str) -> Node:
    # room for 300 small pods: the max-reservations scenario puts 256 on one node
    return make_node(name, cpu="8", memory="16Gi", pods=300)


N1 = _node("dra-node-1")
N2 = _node("dra-node-2")
PLAIN = _node("plain-node")
"""A node without slices."""
EXTRA = _node("dra-extra")
"""Added with its own slice in the inner fork by the nested fork modes."""


def _slice(node: Node, gpus: int = 2) -> ResourceSlice:
    """The node's slice in the dra-example-driver's shape: pool = node name, ``gpu-<i>``."""
    return ResourceSlice.from_manifest(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{node.name}-gpus"},
            "spec": {
                "driver": DRIVER,
                "nodeName": node.name,
                "pool": {"name": node.name, "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": f"gpu-{i}"} for i in range(gpus)],
            },
        }
    )


S1, S2, S_EXTRA = _slice(N1), _slice(N2), _slice(EXTRA)


def make_dra_pod(name: str, *, owned: int = 0, shared: Sequence[str] = (), node: str = "") -> Pod:
    """A pod (10m CPU, 10Mi) with ``owned`` claims from the template ``one-gpu`` (named
    ``<name>-gpu-<i>`` in ``status.resourceClaimStatuses``, as the resource-claim controller
    names them) and the ``shared`` claims by name; ``node``: its ``spec.nodeName``."""
    refs: list[dict[str, str]] = [
        {"name": f"gpu-{i}", "resourceClaimTemplateName": "one-gpu"} for i in range(owned)
    ]
    refs += [{"name": f"shared-{i}", "resourceClaimName": c} for i, c in enumerate(shared)]
    pod = make_pod(name, cpu="10m", memory="10Mi", node_name=node, spec={"resourceClaims": refs})
    statuses = {f"gpu-{i}": f"{name}-gpu-{i}" for i in range(owned)}
    return attrs.evolve(pod, resource_claim_statuses=statuses)


def make_gpu_claim(
    name: str,
    *,
    owner: Pod | None = None,
    count: int = 1,
    node: Node | None = None,
    devices: Sequence[str] = (),
    reserved_for: Sequence[Pod] = (),
) -> ResourceClaim:
    """A claim for ``count`` GPUs; owned by ``owner`` (a controller ownerReference, what
    the resource-claim controller sets); allocated on ``node`` with ``devices`` of its slice;
    reserved for ``reserved_for``."""
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-claim-{name}"}
    if owner is not None:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": owner.name, "uid": owner.uid,
             "controller": True, "blockOwnerDeletion": True}
        ]  # fmt: skip
    raw: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {
            "devices": {
                "requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": GPU_CLASS.name, "count": count}}
                ]
            }
        },
    }
    if node is not None:
        meta["finalizers"] = ["resource.kubernetes.io/delete-protection"]
        raw["status"] = {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "gpu", "driver": DRIVER, "pool": node.name, "device": d}
                        for d in devices
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [node.name]}
                            ]
                        }
                    ]
                },
            },
            "reservedFor": [
                {"resource": "pods", "name": p.name, "uid": p.uid} for p in reserved_for
            ],
        }
    return ResourceClaim.from_manifest(raw)


def alloc_state(node: Node, *devices: str, reserved_for: Sequence[str] = ()) -> ClaimState:
    """The `ClaimState` of a claim allocated on ``node`` with ``devices`` of its slice and
    reserved for the pods named ``reserved_for``."""
    return ClaimState(
        tuple(f"{node.name}/{d}" for d in devices), node.name, tuple(reserved_for), True
    )


def on_node(pod: Pod, node: Node) -> Pod:
    """``pod`` bound to ``node`` (``spec.nodeName`` set)."""
    return attrs.evolve(pod, node_name=node.name)


# P1 owns one GPU claim and uses the shared claim; P2 uses the shared claim only; P3 owns one.
P1 = make_dra_pod("p1", owned=1, shared=["shared"])
P2 = make_dra_pod("p2", shared=["shared"])
P3 = make_dra_pod("p3", owned=1)
BIG = make_dra_pod("big", owned=1)
"""Owns a claim for 3 GPUs: no node has that many."""

P1_GPU = make_gpu_claim("p1-gpu-0", owner=P1)
P3_GPU = make_gpu_claim("p3-gpu-0", owner=P3)
BIG_GPU = make_gpu_claim("big-gpu-0", owner=BIG, count=3)
SHARED = make_gpu_claim("shared")

# allocated versions, as a cluster where p1 (and p2) run on dra-node-1 has them
P1_GPU_ON_N1 = make_gpu_claim("p1-gpu-0", owner=P1, node=N1, devices=["gpu-0"], reserved_for=[P1])
SHARED_ON_N1_P1 = make_gpu_claim("shared", node=N1, devices=["gpu-1"], reserved_for=[P1])
SHARED_ON_N1_P1_P2 = make_gpu_claim("shared", node=N1, devices=["gpu-1"], reserved_for=[P1, P2])
SHARED_ON_N1_P2 = make_gpu_claim("shared", node=N1, devices=["gpu-1"], reserved_for=[P2])

_POD_STATE_CPU, _POD_STATE_MEM = 10, 10 * 1024**2


def node_state(*pods: Pod) -> NodeState:
    """The node dump of a node running ``pods`` (10m CPU and 10Mi each)."""
    return NodeState(
        tuple(sorted(p.key for p in pods)),
        _POD_STATE_CPU * len(pods),
        _POD_STATE_MEM * len(pods),
        len(pods),
    )


EMPTY = NodeState()
SLICES_1_2 = {N1.name: (S1.name,), N2.name: (S2.name,)}

# 256 pods sharing one claim on dra-node-1: the claim is fully reserved
USERS = tuple(make_dra_pod(f"user-{i:03d}", shared=["crowded"], node=N1.name) for i in range(256))
CROWDED = make_gpu_claim("crowded", node=N1, devices=["gpu-0"], reserved_for=USERS)
LATECOMER = make_dra_pod("latecomer", shared=["crowded"])
CROWDED_STATE = alloc_state(N1, "gpu-0", reserved_for=[p.name for p in USERS])
