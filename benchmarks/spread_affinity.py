"""Zone spread + hostname anti-affinity at scale vs the same pods without constraints.

Run: ``python benchmarks/spread_affinity.py [--nodes 1000] [--pods 10000] [--replica-sets 1000]``

The cluster: ``--nodes`` nodes in 3 zones (``topology.kubernetes.io/zone``), 16 cores each;
``--pods`` pending pods of 100m in ``--replica-sets`` ReplicaSets. Constrained pods carry a
zone topology spread constraint (maxSkew 1, DoNotSchedule) and a required hostname
anti-affinity to their siblings (same ``app`` label); the baseline pods carry neither. Both
runs go through `schedsim.engine.Engine.simulate` (the whole scheduling run: snapshot
build, queue, PreFilter/Filter over the default profile, first fit), and we report the
ratio, the cost per pod, and the cost per pod of the first and the last tenth of the pods
scheduled through the snapshot directly (it must not grow with the pods already placed).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from schedsim.api.core import Node, Pod
from schedsim.engine import Cluster, Engine
from schedsim.framework.object_listers import ObjectListers

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def nodes(n: int) -> list[Node]:
    """``n`` nodes, zone ``z{i % 3}``, 16 cores / 64Gi / 110 pods."""
    return [
        Node.from_manifest(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": f"node-{i:05d}",
                    "labels": {ZONE: f"z{i % 3}", HOST: f"node-{i:05d}"},
                },
                "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}},
            }
        )
        for i in range(n)
    ]


def pods(n: int, replica_sets: int, constrained: bool) -> list[Pod]:
    """``n`` pending pods spread over ``replica_sets`` ReplicaSets (round robin)."""
    out = []
    for i in range(n):
        rs = f"rs-{i % replica_sets:04d}"
        spec: dict[str, Any] = {
            "containers": [
                {"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}
            ]
        }
        if constrained:
            sel = {"matchLabels": {"app": rs}}
            spec["topologySpreadConstraints"] = [
                {
                    "maxSkew": 1,
                    "topologyKey": ZONE,
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": sel,
                }
            ]
            spec["affinity"] = {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"topologyKey": HOST, "labelSelector": sel}
                    ]
                }
            }
        out.append(
            Pod.from_manifest(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": f"{rs}-{i:06d}", "labels": {"app": rs}},
                    "spec": spec,
                }
            )
        )
    return out


def run(n_nodes: int, n_pods: int, replica_sets: int, constrained: bool) -> tuple[float, int]:
    """Seconds of `Engine.simulate` and how many pods it placed."""
    cluster = Cluster(nodes=nodes(n_nodes), pods=pods(n_pods, replica_sets, constrained))
    engine = Engine()
    t = time.perf_counter()
    result = engine.simulate(cluster)
    elapsed = time.perf_counter() - t
    placed = sum(1 for o in result.outcomes if o.node_name)
    return elapsed, placed


def growth(n_nodes: int, n_pods: int, replica_sets: int) -> tuple[float, float]:
    """Microseconds per constrained pod for the first and the last tenth of the pods, first
    fit through the snapshot."""
    cluster = Cluster(nodes=nodes(n_nodes), pods=[])
    engine = Engine()
    engine.framework.handle.object_listers = ObjectListers()
    snap, _ = engine.snapshot(cluster)
    ps = pods(n_pods, replica_sets, True)
    tenth = max(1, n_pods // 10)
    times = []
    for chunk in (ps[:tenth], ps[tenth:-tenth], ps[-tenth:]):
        t = time.perf_counter()
        for p in chunk:
            snap.schedule_pod_on_any_node_matching(p)
        times.append((time.perf_counter() - t) / max(1, len(chunk)) * 1e6)
    return times[0], times[2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--nodes", type=int, nargs="+", default=[1000])
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--replica-sets", type=int, default=1000)
    args = ap.parse_args()
    for n in args.nodes:
        base, placed_b = run(n, args.pods, args.replica_sets, False)
        cons, placed_c = run(n, args.pods, args.replica_sets, True)
        first, last = growth(n, args.pods, args.replica_sets)
        print(
            f"{n} nodes, {args.pods} pods in {args.replica_sets} ReplicaSets: "
            f"baseline {base:.2f} s ({base / args.pods * 1e6:.0f} us/pod, {placed_b} placed), "
            f"spread+anti-affinity {cons:.2f} s ({cons / args.pods * 1e6:.0f} us/pod, "
            f"{placed_c} placed), ratio {cons / base:.2f}x; "
            f"first tenth {first:.0f} us/pod, last tenth {last:.0f} us/pod"
        )


if __name__ == "__main__":
    main()
