"""Volume bindings in the snapshot, for both stores and through every fork/commit/revert
sequence: a differential test against a plain model of what kube-scheduler's VolumeBinding
would leave in its assume caches.

Cluster: node-a and node-b (``kubernetes.io/hostname``); WaitForFirstConsumer class ``local``
without provisioner with PVs pv-a1 (5Gi) and pv-a2 (10Gi) on node-a and pv-b (5Gi) on node-b;
class ``dyn`` with a provisioner allowed on node-b only. Pods p1 and p2 use claims c1 and c2
(1Gi, ``local``), p3 uses claim d3 (``dyn``), p4 shares claim c1 with p1.

The model (binder.go ``FindPodVolumes`` / ``AssumePodVolumes``): a claim whose PV already names
it in ``claimRef`` fits only that PV's node; otherwise it takes the smallest free PV of its
class on the node; a ``dyn`` claim fits a node its class allows and, once provisioning chose a
node (``volume.kubernetes.io/selected-node``), only that node.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

from schedsim.api.loading.loader import decode_objects
from schedsim.api.storage import SELECTED_NODE_ANNOTATION
from schedsim.framework import Framework, Handle, StorageListers, default_profile
from schedsim.snapshot import (
    ClusterSnapshotStore,
    PredicateSnapshot,
    SchedulingError,
)


def _node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "110"}},
    }


def _pv(name: str, node: str, size: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": size},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "local",
            "local": {"path": f"/mnt/{name}"},
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": "kubernetes.io/hostname",
                                    "operator": "In",
                                    "values": [node],
                                }
                            ]
                        }
                    ]
                }
            },
        },
        "status": {"phase": "Available"},
    }


def _pvc(name: str, cls: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": cls,
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }


def _pod(name: str, claim: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [{"name": "c", "image": "x"}],
            "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}],
        },
    }


OBJECTS = [
    _node("node-a"),
    _node("node-b"),
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "local"},
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer",
    },
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "dyn"},
        "provisioner": "csi.example.com",
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowedTopologies": [
            {"matchLabelExpressions": [{"key": "kubernetes.io/hostname", "values": ["node-b"]}]}
        ],
    },
    _pv("pv-a1", "node-a", "5Gi"),
    _pv("pv-a2", "node-a", "10Gi"),
    _pv("pv-b", "node-b", "5Gi"),
    _pvc("c1", "local"),
    _pvc("c2", "local"),
    _pvc("d3", "dyn"),
    _pod("p1", "c1"),
    _pod("p2", "c2"),
    _pod("p3", "d3"),
    _pod("p4", "c1"),
]
M = decode_objects(OBJECTS, "cluster.yaml")
PODS = {p.name: p for p in M.pods}
CLAIM = {"p1": "c1", "p2": "c2", "p3": "d3", "p4": "c1"}
PV_NODE = {"pv-a1": "node-a", "pv-a2": "node-a", "pv-b": "node-b"}
PV_ORDER = ("pv-a1", "pv-a2", "pv-b")  # by size, then input order

Model = dict[str, Any]  # {"pvs": {pv: claim|None}, "selected": {claim: node}, "placed": set}


def _model_schedule(model: Model, pod: str, node: str) -> bool:
    """What the binder decides for ``pod`` on ``node``; updates ``model`` when it fits."""
    claim = CLAIM[pod]
    if claim == "d3":
        selected = model["selected"].get(claim)
        if (selected is not None and selected != node) or node != "node-b":
            return False
        model["selected"][claim] = node
        model["placed"].add(pod)
        return True
    taken = [pv for pv, c in model["pvs"].items() if c == claim]
    if taken:  # pre-bound to this claim by an earlier pod's binding
        if PV_NODE[taken[0]] != node:
            return False
        model["placed"].add(pod)
        return True
    for pv in PV_ORDER:
        if PV_NODE[pv] == node and model["pvs"][pv] is None:
            model["pvs"][pv] = claim
            model["placed"].add(pod)
            return True
    return False


def _observed(snap: PredicateSnapshot) -> Model:
    pvs = {}
    for name in PV_ORDER:
        pv = snap.volume_snapshot.get_persistent_volume(name)
        assert pv is not None
        pvs[name] = None if pv.claim_ref is None else pv.claim_ref.name
    pvc = snap.volume_snapshot.get_persistent_volume_claim("default", "d3")
    assert pvc is not None
    selected = {}
    if SELECTED_NODE_ANNOTATION in pvc.annotations:
        selected["d3"] = pvc.annotations[SELECTED_NODE_ANNOTATION]
    placed = {pi.pod.name for ni in snap.list_node_infos() for pi in ni.pods}
    return {"pvs": pvs, "selected": selected, "placed": placed}


def _copy(model: Model) -> Model:
    return {
        "pvs": dict(model["pvs"]),
        "selected": dict(model["selected"]),
        "placed": set(model["placed"]),
    }


OPS = ("fork", "commit", "revert", "p1@node-a", "p2@node-a", "p3@node-b", "p3@node-a", "p4@node-b")


def _sequences() -> list[tuple[str, ...]]:
    return [seq for n in (1, 2, 3) for seq in itertools.product(OPS, repeat=n)] + [
        ("fork", "p1@node-a", "fork", "p2@node-a", "revert", "p4@node-b", "commit"),
        ("fork", "p1@node-a", "p2@node-a", "p2@node-a", "commit", "p4@node-b"),
        ("fork", "fork", "p1@node-a", "commit", "revert", "p1@node-a"),
        ("p3@node-b", "fork", "p3@node-b", "revert", "fork", "p3@node-a", "commit"),
    ]


@pytest.fixture(scope="module")
def snapshot(store: Callable[[], ClusterSnapshotStore]) -> PredicateSnapshot:
    return PredicateSnapshot(Framework(default_profile(), Handle()), store())


@pytest.mark.parametrize("seq", _sequences(), ids=lambda s: ",".join(s))
def test_bindings_follow_fork_commit_revert(
    snapshot: PredicateSnapshot, seq: tuple[str, ...]
) -> None:
    """After every operation the snapshot's PVs (claimRef) and the provisioned claim's
    selected node equal the model's, and a pod fits exactly where the model says (a PV taken in
    a layer that was reverted is free again; one taken in a committed layer stays taken)."""
    snap = snapshot
    listers = StorageListers.from_objects(
        M.persistent_volumes, M.persistent_volume_claims, M.storage_classes
    )
    snap.set_cluster_state(M.nodes, [], storage_listers=listers)
    stack: list[Model] = [{"pvs": dict.fromkeys(PV_ORDER), "selected": {}, "placed": set()}]
    for op in seq:
        if op == "fork":
            snap.fork()
            stack.append(_copy(stack[-1]))
        elif op == "commit":
            snap.commit()
            if len(stack) > 1:
                top = stack.pop()
                stack[-1] = top
        elif op == "revert":
            snap.revert()
            if len(stack) > 1:
                stack.pop()
        else:
            pod, node = op.split("@")
            if pod in stack[-1]["placed"]:
                continue  # the same pod is never scheduled twice
            want = _model_schedule(stack[-1], pod, node)
            try:
                snap.schedule_pod(PODS[pod], node)
            except SchedulingError as e:
                assert not want, f"{op}: rejected: {e}"
            else:
                assert want, f"{op}: accepted"
        assert _observed(snap) == stack[-1], op
