"""Sweeps (issue 19): what running scenarios in parallel buys and what it costs.

1. Speed-up of a 2-worker process pool over a 1-worker pool (and over a serial run), for
   scenarios of about a second each (``simulate`` of N nodes and 2N pending pods); pool start
   included.
2. Ray's overhead per scenario against the pool: tiny scenarios (a 2-node cluster), local Ray
   (``ray.init(num_cpus=2)``, its start timed apart) vs a 2-worker pool, as the slope between
   40 and 120 scenarios (fixed costs drop out).
3. Shipping the cluster to the workers once (the pool's initializer) vs with every scenario,
   on a large cluster with cheap scenarios; plus one pickle round trip of that cluster.

Run: ``nice -n 10 python benchmarks/sweep.py [--nodes 250] [--scenarios 8] [--repeat 3]
[--skip-ray] [--sections 123]``. Numbers are wall times on a shared machine: read the
ratios (pool(1) and pool(2) alternate which runs first in each pair).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import pickle
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from schedsim.engine import Cluster
from schedsim.sweep import PoolExecutor, SerialExecutor, load_clusters, load_spec, run_sweep
from schedsim.sweep.executors import Executor


def cluster_yaml(nodes: int, pods: int) -> str:
    """``nodes`` 8-core nodes and ``pods`` pending pods of 500m-2 cores (deterministic)."""
    docs = [
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: node-{i}, labels: {{zone: z{i % 3}}}}}\n"
        f'status: {{allocatable: {{cpu: "8", memory: 32Gi, pods: "110"}}}}\n'
        for i in range(nodes)
    ]
    docs += [
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p-{j}, namespace: default, "
        f"labels: {{app: a{j % 7}}}}}\nspec:\n  containers:\n  - name: c\n    image: x\n"
        f"    resources: {{requests: {{cpu: {500 * (1 + j % 4)}m, memory: 1Gi}}}}\n"
        for j in range(pods)
    ]
    return "---\n".join(docs)


def spec_dir(nodes: int, pods: int, scenarios: int) -> Path:
    """A spec of ``scenarios`` equal-sized simulate scenarios (featureGates variants that
    set nothing, so every scenario does the same work)."""
    d = Path(tempfile.mkdtemp(prefix="sweep-bench-"))
    (d / "cluster.yaml").write_text(cluster_yaml(nodes, pods))
    gates = ", ".join(f"v{i}: {{}}" for i in range(scenarios))
    (d / "sweep.yaml").write_text(
        f"cluster: [cluster.yaml]\ncommands: [simulate]\naxes: {{featureGates: {{{gates}}}}}\n"
    )
    return d


def timed(f: Callable[[], object]) -> float:
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def sweep_time(d: Path, executor: Executor) -> tuple[float, list[object]]:
    spec = load_spec(str(d / "sweep.yaml"))
    clusters = load_clusters(spec)
    out: list[object] = []
    t = timed(lambda: out.extend(r.metrics() for r in run_sweep(spec, executor, clusters=clusters)))
    return t, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=120)
    ap.add_argument("--scenarios", type=int, default=8)
    ap.add_argument("--skip-ray", action="store_true")
    ap.add_argument("--sections", default="123", help="which of 1, 2, 3 to run (default all)")
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="pool(1) / pool(2) pairs, alternating which runs first (ratios per pair)",
    )
    args = ap.parse_args()

    if "1" in args.sections:
        d = spec_dir(args.nodes, 2 * args.nodes, args.scenarios)
        serial, ref = sweep_time(d, SerialExecutor())
        print(
            f"1. {args.scenarios} scenarios of {serial / args.scenarios:.2f} s each "
            f"({args.nodes} nodes, {2 * args.nodes} pods); serial {serial:.2f} s"
        )
        sweep_time(spec_dir(2, 3, 2), PoolExecutor(2))  # starts the fork server (once per process)
        ratios = []
        for i in range(args.repeat):
            order = (1, 2) if i % 2 == 0 else (2, 1)
            times = {}
            for workers in order:
                times[workers], got = sweep_time(d, PoolExecutor(workers))
                assert got == ref
            ratios.append(times[1] / times[2])
            print(
                f"   pair {i + 1} ({order[0]} first): pool(1) {times[1]:.2f} s, pool(2) "
                f"{times[2]:.2f} s: speed-up {ratios[-1]:.2f}x, serial/pool(2) "
                f"{serial / times[2]:.2f}x (load average {os.getloadavg()[0]:.1f})"
            )
        ratios.sort()
        print(
            f"   pool(2)/pool(1) median {ratios[len(ratios) // 2]:.2f}x over {len(ratios)} pair(s)"
        )

    if "2" in args.sections:
        # per-scenario cost as a slope (40 vs 120 tiny scenarios), so fixed costs (pool start,
        # ray.init) drop out; each scenario builds its own Engine (a featureGates variant each)
        small, large = spec_dir(2, 3, 40), spec_dir(2, 3, 120)
        p40, ref40 = sweep_time(small, PoolExecutor(2))
        p120, ref120 = sweep_time(large, PoolExecutor(2))
        pool_per = (p120 - p40) / 80
        if args.skip_ray or importlib.util.find_spec("ray") is None:
            print("2. Ray: skipped (--skip-ray or ray not installed)")
        else:
            import ray

            from schedsim.sweep.ray import RayExecutor

            start = timed(
                lambda: ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
            )
            try:
                sweep_time(small, RayExecutor())  # workers start and import schedsim
                r40, got40 = sweep_time(small, RayExecutor())
                r120, got120 = sweep_time(large, RayExecutor())
            finally:
                ray.shutdown()
            assert got40 == ref40 and got120 == ref120
            ray_per = (r120 - r40) / 80
            print(
                f"2. tiny scenarios, 40 / 120: pool(2) {p40:.2f} / {p120:.2f} s (a new pool each "
                f"time), local Ray {r40:.2f} / {r120:.2f} s (warm workers; ray.init {start:.1f} s)"
            )
            print(
                f"   per scenario (slope): pool(2) {1000 * pool_per:.1f} ms, Ray "
                f"{1000 * ray_per:.1f} ms: Ray {1000 * (ray_per - pool_per):+.1f} ms per "
                f"scenario; fixed: pool start {p40 - 40 * pool_per:.2f} s, Ray (warm) "
                f"{r40 - 40 * ray_per:.2f} s"
            )

    if "3" in args.sections:
        big = spec_dir(10 * args.nodes, 10 * args.nodes, 16)
        (big / "sweep.yaml").write_text(
            (big / "sweep.yaml").read_text().replace("[simulate]", "[scale-down]")
        )
        cluster = Cluster.from_paths([str(big / "cluster.yaml")])
        data = pickle.dumps(cluster)
        rt = timed(lambda: pickle.loads(pickle.dumps(cluster)))
        once, a = sweep_time(big, PoolExecutor(2))
        each, b = sweep_time(big, PoolExecutor(2, ship_per_scenario=True))
        assert a == b
        print(
            f"3. cluster of {10 * args.nodes} nodes + {10 * args.nodes} pods: pickle "
            f"{len(data) / 1e6:.1f} MB, round trip {1000 * rt:.0f} ms; 16 scale-down "
            f"scenarios on pool(2): shipped once per worker {once:.2f} s, with every scenario "
            f"{each:.2f} s ({each / once:.2f}x)"
        )


if __name__ == "__main__":
    main()
