"""Issue 29's "nothing O(cluster) per fork" targets, as CPU-time ratios within one run:

- fork + schedule_pod + revert (one pending pod onto a named node, default profile, delta
  store, one pod with required anti-affinity in the cluster so the affinity lists are not
  empty) at 1,000 and 20,000 nodes: target 20k / 1k <= 1.2x;
- scale-down with every node a candidate (`test_bench_autoscaling.remove_each`: per node
  fork, move its 2 pods, remove it, revert) at 1,000, 4,000 and 16,000 nodes: targets
  4k / 1k <= 4.5x and 16k / 4k <= 4.5x (linear is 4x). Building the cluster before
  (`scale_down_cluster`) is timed apart and printed beside it.

Each figure is the min and median of ``--repeat`` runs (CPU time, ``time.process_time``).
Run: ``python benchmarks/fork_growth.py [--repeat 3]`` (numbers in docs/performance.md).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from test_bench_autoscaling import remove_each, scale_down_cluster

from schedsim.api.core import Node, Pod
from schedsim.framework import Framework, Handle, default_profile
from schedsim.snapshot import DeltaSnapshotStore, PredicateSnapshot

HOST = "kubernetes.io/hostname"


def _node(i: int) -> Node:
    name = f"node-{i:05d}"
    return Node.from_manifest(
        {
            "metadata": {"name": name, "labels": {HOST: name, "zone": f"z{i % 3}"}},
            "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}},
        }
    )


def _pod(name: str, node: str = "", anti: bool = False) -> Pod:
    spec: dict[str, object] = {
        "nodeName": node,
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}],
    }
    if anti:
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": HOST}
                ]
            }
        }
    return Pod.from_manifest({"metadata": {"name": name}, "spec": spec})


def fork_schedule_revert(nodes: int, pods: int = 2000) -> float:
    """CPU seconds per fork + schedule_pod + revert at ``nodes`` nodes (2 bound pods each)."""
    ns = [_node(i) for i in range(nodes)]
    bound = [_pod(f"{n.name}-{k}", n.name) for n in ns for k in range(2)]
    bound.append(_pod("anti", ns[7].name, anti=True))
    snap = PredicateSnapshot(Framework(default_profile(), Handle()), DeltaSnapshotStore())
    snap.set_cluster_state(ns, bound)
    pending = [_pod(f"x-{i}") for i in range(pods)]
    targets = [ns[(i * 7919) % nodes].name for i in range(pods)]
    for p, t in zip(pending[:50], targets, strict=False):  # warm the per-class caches
        snap.fork()
        snap.schedule_pod(p, t)
        snap.revert()
    start = time.process_time()
    for p, t in zip(pending, targets, strict=True):
        snap.fork()
        snap.schedule_pod(p, t)
        snap.revert()
    return (time.process_time() - start) / pods


def scale_down(nodes: int) -> tuple[float, float]:
    """CPU seconds of the scale-down simulation with every node a candidate, and of building
    its cluster before (the snapshot's ``set_cluster_state``; the nodes and pods are decoded
    once per size and process, on the first call)."""
    start = time.process_time()
    ns, snap = scale_down_cluster("delta", nodes, 2)
    built = time.process_time()
    remove_each(snap, ns, 0.0)
    return time.process_time() - built, built - start


def _stats(xs: list[float]) -> tuple[float, float]:
    return min(xs), statistics.median(xs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    fsr: dict[int, list[float]] = {1000: [], 20000: []}
    sd: dict[int, list[float]] = {1000: [], 4000: [], 16000: []}
    build: dict[int, list[float]] = {n: [] for n in sd}
    for _ in range(args.repeat):
        for n in fsr:
            fsr[n].append(fork_schedule_revert(n))
        for n in sd:
            simulated, built = scale_down(n)
            sd[n].append(simulated)
            build[n].append(built)
    for n, xs in fsr.items():
        lo, med = _stats(xs)
        print(
            f"fork + schedule_pod + revert, {n} nodes: "
            f"min {lo * 1e6:.0f} us, median {med * 1e6:.0f} us"
        )
    print(f"  20k / 1k (min): {min(fsr[20000]) / min(fsr[1000]):.2f}x (target <= 1.2x)")
    for n, xs in sd.items():
        lo, med = _stats(xs)
        print(
            f"scale-down, every node a candidate, {n} nodes: min {lo:.2f} s, median {med:.2f} s "
            f"(building the cluster before: min {min(build[n]):.2f} s)"
        )
    print(f"  4k / 1k (min): {min(sd[4000]) / min(sd[1000]):.2f}x (target <= 4.5x)")
    print(f"  16k / 4k (min): {min(sd[16000]) / min(sd[4000]):.2f}x (target <= 4.5x)")


if __name__ == "__main__":
    main()
