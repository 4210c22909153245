"""Interleaved vs grouped pod classes (issue 29 item 3: the class cache independent of queue
order, interleaved <= 1.1x grouped).

N nodes of three shapes over three zones (one shape tainted for GPUs) and P pending pods of
ten shapes (requests from 100m/128Mi to 2/8Gi, some with a node selector, a toleration or an
extended resource), the same pods in two queue orders set by ``creationTimestamp`` (the
QueueSort order): grouped (all pods of one shape, then the next) and interleaved (round
robin over the shapes, as a real cluster's pending pods arrive). Times ``Engine.simulate``
on the decoded cluster (scheduling only, process time), the two orders alternated, min and
median of ``--repeat``, for both placement modes.

Run: ``python benchmarks/interleaved_classes.py [--nodes 2000] [--pods 5000] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from schedsim.engine import Cluster, Engine

_NODE_SHAPES = (("8", "32Gi", False), ("16", "64Gi", False), ("32", "128Gi", True))
_POD_SHAPES: tuple[dict[str, Any], ...] = (
    {"cpu": "100m", "memory": "128Mi"},
    {"cpu": "250m", "memory": "512Mi"},
    {"cpu": "500m", "memory": "1Gi"},
    {"cpu": "1", "memory": "2Gi"},
    {"cpu": "2", "memory": "8Gi"},
    {"cpu": "300m", "memory": "256Mi", "zone": "zone-b"},
    {"cpu": "700m", "memory": "3Gi", "zone": "zone-c"},
    {"cpu": "1500m", "memory": "4Gi", "gpu": True},
    {"cpu": "200m", "memory": "64Mi", "port": 8080},
    {"cpu": "1200m", "memory": "1536Mi", "tolerate": True},
)


def _node(i: int) -> dict[str, Any]:
    cpu, memory, gpu = _NODE_SHAPES[i % len(_NODE_SHAPES)]
    zone = ("zone-a", "zone-b", "zone-c")[i // len(_NODE_SHAPES) % 3]
    allocatable: dict[str, str] = {"cpu": cpu, "memory": memory, "pods": "110"}
    spec: dict[str, Any] = {}
    if gpu:
        allocatable["example.com/gpu"] = "4"
        spec["taints"] = [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": f"node-{i:05d}",
            "labels": {
                "kubernetes.io/hostname": f"node-{i:05d}",
                "topology.kubernetes.io/zone": zone,
            },
        },
        "spec": spec,
        "status": {"allocatable": allocatable, "capacity": allocatable},
    }


def _pod(i: int, shape: int, created: datetime) -> dict[str, Any]:
    s = _POD_SHAPES[shape]
    requests = {"cpu": s["cpu"], "memory": s["memory"]}
    spec: dict[str, Any] = {}
    container: dict[str, Any] = {"name": "c", "image": f"registry.example/app-{shape}:1"}
    if s.get("gpu"):
        requests["example.com/gpu"] = "1"
    if s.get("gpu") or s.get("tolerate"):
        spec["tolerations"] = [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
    if "zone" in s:
        spec["nodeSelector"] = {"topology.kubernetes.io/zone": s["zone"]}
    if "port" in s:
        container["ports"] = [{"containerPort": s["port"], "hostPort": s["port"]}]
    container["resources"] = {"requests": requests}
    if s.get("gpu"):  # an extended resource's limit must equal its request (API validation)
        container["resources"]["limits"] = {"example.com/gpu": "1"}
    spec["containers"] = [container]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"pod-{i:06d}",
            "namespace": "default",
            "labels": {"app": f"app-{shape}"},
            "creationTimestamp": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
        "spec": spec,
    }


def objects(nodes: int, pods: int, interleaved: bool) -> list[dict[str, Any]]:
    """The cluster: ``nodes`` Nodes, then ``pods`` pending Pods created in the queue order
    (interleaved: shape ``i % 10``; grouped: shape ``i * 10 // pods``)."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    n = len(_POD_SHAPES)
    out = [_node(i) for i in range(nodes)]
    for i in range(pods):
        shape = i % n if interleaved else i * n // pods
        out.append(_pod(i, shape, start + timedelta(seconds=i)))
    return out


def main(argv: list[str] | None = None) -> int:
    """Print grouped, interleaved and their ratio per placement mode."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=2000)
    ap.add_argument("--pods", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--placement", choices=("first-fit", "kube-scheduler"), action="append")
    args = ap.parse_args(argv)
    clusters = {
        order: Cluster.from_text(
            json.dumps({"kind": "List", "items": objects(args.nodes, args.pods, order)}),
            "<generated>",
        )
        for order in (False, True)
    }
    print(
        f"{args.nodes} nodes, {args.pods} pods of {len(_POD_SHAPES)} shapes, CPU s (min / median)"
    )
    print("| placement | grouped | interleaved | ratio (min) | ratio (median) |")
    print("|---|---|---|---|---|")
    for placement in args.placement or ("first-fit", "kube-scheduler"):
        times: dict[bool, list[float]] = {False: [], True: []}
        placed: dict[bool, int] = {}
        for _ in range(args.repeat):
            for order in (False, True):  # alternated
                engine = Engine()
                start = time.process_time()
                result = engine.simulate(clusters[order], placement=placement)
                times[order].append(time.process_time() - start)
                placed[order] = sum(1 for o in result.outcomes if o.node_name is not None)
        lo = {k: min(v) for k, v in times.items()}
        med = {k: statistics.median(v) for k, v in times.items()}
        print(
            f"| {placement} | {lo[False]:.2f} / {med[False]:.2f} s | {lo[True]:.2f} / "
            f"{med[True]:.2f} s | {lo[True] / lo[False]:.2f}x | {med[True] / med[False]:.2f}x |"
            f" placed {placed[False]} / {placed[True]}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
