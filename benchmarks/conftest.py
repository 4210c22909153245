"""Shared cluster builders for the benchmarks (run: `pytest benchmarks --benchmark-enable`)."""

from __future__ import annotations

from schedsim.api.core import Node, Pod
from schedsim.engine import STORES
from schedsim.framework import Framework, Handle, default_profile
from schedsim.snapshot import PredicateSnapshot


def make_nodes(n: int) -> list[Node]:
    """``n`` nodes of 16 cores / 64Gi / 110 pods, one taint on every 10th."""
    return [
        Node.from_manifest(
            {
                "metadata": {"name": f"node-{i:05d}", "labels": {"zone": f"z{i % 3}"}},
                "spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}
                if i % 10 == 9
                else {},
                "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}},
            }
        )
        for i in range(n)
    ]


def make_pods(n: int, prefix: str = "p", node: str = "") -> list[Pod]:
    """``n`` pods of 100m / 128Mi (bound to ``node`` when given)."""
    return [
        Pod.from_manifest(
            {
                "metadata": {"name": f"{prefix}-{i:06d}"},
                "spec": {
                    "nodeName": node,
                    "containers": [
                        {"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}
                    ],
                },
            }
        )
        for i in range(n)
    ]


def make_snapshot(nodes: int, pods_per_node: int, store: str = "delta") -> PredicateSnapshot:
    """A default-profile snapshot with ``pods_per_node`` bound pods on each node."""
    snap = PredicateSnapshot(Framework(default_profile(), Handle()), STORES[store]())
    ns = make_nodes(nodes)
    pods = [p for n in ns for p in make_pods(pods_per_node, prefix=n.name, node=n.name)]
    snap.set_cluster_state(ns, pods)
    return snap
