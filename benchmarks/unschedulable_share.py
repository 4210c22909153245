"""What 1% unschedulable pods add to a 5,000-node run (issue 17 item 3: at most 1.5x).

5,000 nodes of node-default (4 cpu, 32Gi, 110 pods) and P pending pods of pod-default
(100m / 500Mi); the candidate replaces every 100th pod with one asking for 8 cpu, which fits
nowhere. Times ``Engine.simulate`` on the decoded cluster (scheduling only, process time),
baseline and candidate alternated, best of ``--repeat``, for both placement modes.

Run: ``python benchmarks/unschedulable_share.py [--nodes 5000] [--pods 5000] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from schedsim.engine import Cluster, Engine


def _objects(nodes: int, pods: int, unschedulable: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"node-{i}"},
            "status": {"capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"}},
        }
        for i in range(nodes)
    ]
    for i in range(pods):
        cpu = "8" if unschedulable and i % 100 == 99 else "100m"
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"pod-{i}", "namespace": "default"},
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "image": "registry.k8s.io/pause:3.10.1",
                            "resources": {"requests": {"cpu": cpu, "memory": "500Mi"}},
                        }
                    ]
                },
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    """Print baseline, candidate and their ratio per placement mode."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    import json

    clusters = {
        share: Cluster.from_text(
            json.dumps({"kind": "List", "items": _objects(args.nodes, args.pods, share)}),
            "<generated>",
        )
        for share in (False, True)
    }
    print("| placement | all schedulable | 1% unschedulable | ratio |")
    print("|---|---|---|---|")
    for placement in ("first-fit", "kube-scheduler"):
        best = {False: float("inf"), True: float("inf")}
        for _ in range(args.repeat):
            for share in (False, True):  # alternated
                engine = Engine()
                start = time.process_time()
                result = engine.simulate(clusters[share], placement=placement)
                best[share] = min(best[share], time.process_time() - start)
                failed = sum(1 for o in result.outcomes if o.node_name is None)
                assert failed == (args.pods // 100 if share else 0), failed
        ratio = best[True] / best[False]
        print(f"| {placement} | {best[False]:.2f} s | {best[True]:.2f} s | {ratio:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
