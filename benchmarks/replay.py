"""A simulated day: 10,000 pod arrivals over 24 simulated hours on a 100-node start with two
node groups, the Cluster Autoscaler in the loop (issue 18). Prints wall time, events per
second, simulated time / wall time, and the 5k / 10k ratio (linear in events: 2x).

Run: ``nice -n 10 python benchmarks/replay.py [PODS ...] [--repeat N] [--collector]``
(default: 5000 10000, once; with N the sizes alternate N times and the best wall time of
each counts); numbers in docs/performance.md, "Replay". The replay runs with the cyclic
garbage collector paused, as ``schedsim replay`` runs it (`gc_paused`); ``--collector``
leaves it on (what this benchmark measured before 2026-12-04).

The workload is deterministic (``random.Random(0)``): arrivals follow a day curve (quiet at
night, a peak in the afternoon), requests from a few classes (0.25 to 4 CPUs, 0.5 to 16 GiB),
durations exponential around 40 minutes, pods owned by 20 Jobs. Node groups: ``general``
(the 100 starting nodes, 8 CPU / 32 GiB, min 20, max 300, price 0.4) and ``highmem``
(16 CPU / 128 GiB, min 0, max 50, price 1.2).
"""

from __future__ import annotations

import math
import random
import sys
import time

from schedsim.api.core import Node, Pod
from schedsim.autoscaler.nodegroups import NodeGroup, NodeTemplate
from schedsim.engine import Cluster
from schedsim.replay import Replay, Trace, TracePod
from schedsim.scheduler.scheduling import gc_paused

DAY = 24 * 3600.0
CLASSES = (  # (cpu, memory, weight)
    ("250m", "512Mi", 30),
    ("500m", "1Gi", 25),
    ("1", "2Gi", 20),
    ("2", "8Gi", 15),
    ("4", "16Gi", 7),
    ("2", "48Gi", 3),
)


def _node(name: str, cpu: str, memory: str, pool: str) -> Node:
    return Node.from_manifest(
        {
            "metadata": {"name": name, "labels": {"pool": pool}},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}},
        }
    )


def _pod(i: int, cpu: str, memory: str) -> Pod:
    job = f"job-{i % 20}"
    return Pod.from_manifest(
        {
            "metadata": {
                "name": f"pod-{i:06d}",
                "ownerReferences": [
                    {"apiVersion": "batch/v1", "kind": "Job", "name": job, "uid": job,
                     "controller": True}
                ],
            },
            "spec": {
                "containers": [
                    {"name": "c", "resources": {"requests": {"cpu": cpu, "memory": memory}}}
                ]
            },
        }
    )  # fmt: skip


def workload(pods: int, seed: int = 0) -> tuple[Trace, list[NodeGroup]]:
    """The trace and node groups (see the module docstring)."""
    rng = random.Random(seed)
    nodes = [_node(f"general-{i:03d}", "8", "32Gi", "general") for i in range(100)]
    weights = [w for *_, w in CLASSES]
    # arrival times from a day curve: rate ~ 1 + 0.8 sin(...) peaking at 15:00
    times = []
    while len(times) < pods:
        t = rng.uniform(0, DAY)
        rate = 1 + 0.8 * math.sin((t / DAY - 0.375) * 2 * math.pi)
        if rng.uniform(0, 1.8) <= rate:
            times.append(t)
    times.sort()
    arrivals = []
    for i, t in enumerate(times):
        cpu, memory, _ = rng.choices(CLASSES, weights)[0]
        duration = min(rng.expovariate(1 / 2400.0), 6 * 3600.0)
        arrivals.append(TracePod(_pod(i, cpu, memory), round(t, 3), round(duration, 3)))
    groups = [
        NodeGroup("general", 20, 300, NodeTemplate(_node("general", "8", "32Gi", "general")),
                  {"pool": "general"}, price=0.4),
        NodeGroup("highmem", 0, 50, NodeTemplate(_node("highmem", "16", "128Gi", "highmem")),
                  {"pool": "highmem"}, price=1.2),
    ]  # fmt: skip
    return Trace(Cluster(nodes=nodes), (), tuple(arrivals)), groups


def run(pods: int, collector: bool = False) -> tuple[float, float, Replay]:
    """Replay the workload of ``pods`` pods: (wall seconds, CPU seconds of this process, the
    replay). CPU time moves less than wall time when other processes share the machine.
    ``collector``: leave the cyclic garbage collector on (the CLI pauses it)."""
    trace, groups = workload(pods)
    replay = Replay(trace, groups)
    start, cpu = time.perf_counter(), time.process_time()
    if collector:
        replay.run()
    else:
        with gc_paused():
            replay.run()
    return time.perf_counter() - start, time.process_time() - cpu, replay


def main() -> None:
    args = sys.argv[1:]
    repeat = 1
    if "--repeat" in args:
        i = args.index("--repeat")
        repeat = int(args[i + 1])
        del args[i : i + 2]
    collector = "--collector" in args
    if collector:
        args.remove("--collector")
    sizes = [int(a) for a in args] or [5000, 10000]
    walls: dict[int, float] = {}
    cpus: dict[int, float] = {}
    for _ in range(repeat):  # sizes alternate, so both see the same machine load
        for n in sizes:
            wall, cpu, r = run(n, collector)
            walls[n] = min(wall, walls.get(n, math.inf))
            cpus[n] = min(cpu, cpus.get(n, math.inf))
            m = r.metrics()
            s = m.summary()
            c = r.counters
            print(
                f"{n} pods: {wall:.1f} s wall ({cpu:.1f} s CPU) for {m.end / 3600:.1f} simulated h "
                f"({m.end / wall:,.0f}x real time); "
                f"{c['events']} events ({c['events'] / wall:,.0f}/s), "
                f"{c['attempts']} scheduling attempts, {c['loops']} autoscaler loops, "
                f"{r.autoscaler.plans} scale-down plans, {r.autoscaler.scale_up_runs} scale-up "
                f"simulations; nodes +{s['nodesAdded']} -{s['nodesRemoved']} peak "
                f"{s['peakNodes']}; latency p99 {m.latency_percentiles()['p99']:.0f} s",
                flush=True,
            )
    if len(walls) == 2:
        a, b = sorted(walls)
        print(
            f"{b} / {a}: {walls[b] / walls[a]:.2f}x wall, {cpus[b] / cpus[a]:.2f}x CPU, best of "
            f"{repeat} alternated runs (linear in events: {b / a:.1f}x)"
        )


if __name__ == "__main__":
    main()
