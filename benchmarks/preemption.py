"""Preemption cost: N nodes full of low-priority pods, 100 high-priority pending pods that
each must preempt (issue 14). Prints the CPU time of the scheduling run (kube-scheduler
placement, delta store), the cost per preemption, and the growth from 1,000 to 5,000 nodes.

Each node has 4 cpu and runs four 1-cpu pods of priority 0; each pending pod asks 1 cpu at
priority 1000, so it fits nowhere, DefaultPreemption dry-runs candidate nodes (at least
minCandidateNodesAbsolute = 100, or 10% of the potential nodes), evicts one victim and the
pod is placed on its next attempt. Upstream's cost is O(nodes tried x victims per node).

Run: ``python benchmarks/preemption.py [NODES ...]`` (default 1000 5000; numbers in
docs/performance.md, "Preemption").
"""

from __future__ import annotations

import gc
import sys
import time
from fractions import Fraction

from schedsim.api.core import Container, Node, Pod
from schedsim.api.quantity import parse_quantity
from schedsim.engine import Cluster, Engine, EngineConfig

PODS_PER_NODE = 4
PREEMPTORS = 100


def _cpu(value: str, memory: str = "1Gi") -> dict[str, Fraction]:
    return {"cpu": parse_quantity(value), "memory": parse_quantity(memory)}


def cluster(nodes: int) -> Cluster:
    """``nodes`` full nodes and ``PREEMPTORS`` pending high-priority pods."""
    node_objs = [
        Node(name=f"n{i:05}", allocatable={**_cpu("4", "8Gi"), "pods": parse_quantity("110")})
        for i in range(nodes)
    ]
    pods = [
        Pod(
            name=f"low-{i:05}-{j}",
            uid=f"low-{i}-{j}",
            node_name=f"n{i:05}",
            priority=0,
            containers=(Container(name="c", requests=_cpu("1")),),
        )
        for i in range(nodes)
        for j in range(PODS_PER_NODE)
    ]
    pods += [
        Pod(
            name=f"high-{k:03}",
            uid=f"high-{k}",
            priority=1000,
            containers=(Container(name="c", requests=_cpu("1")),),
        )
        for k in range(PREEMPTORS)
    ]
    return Cluster(nodes=node_objs, pods=pods)


def run(nodes: int) -> float:
    """CPU seconds of one simulate run over ``cluster(nodes)`` (loading excluded)."""
    c = cluster(nodes)
    engine = Engine(EngineConfig(store="delta"))
    engine.check(c)
    gc.collect()
    start = time.process_time()
    result = engine.simulate(c)
    elapsed = time.process_time() - start
    assert result.scheduled == PREEMPTORS and result.preempted == PREEMPTORS, (
        result.scheduled,
        result.preempted,
    )
    return elapsed


def main(argv: list[str]) -> None:
    sizes = [int(a) for a in argv] or [1000, 5000]
    times = {}
    for n in sizes:
        times[n] = run(n)
        print(
            f"{n} nodes: {times[n]:.2f} s CPU for {PREEMPTORS} preemptions, "
            f"{times[n] / PREEMPTORS * 1000:.1f} ms per preemption",
            flush=True,
        )
    if len(sizes) > 1:
        a, b = sizes[0], sizes[-1]
        print(f"{b} / {a} nodes: {times[b] / times[a]:.1f}x (nodes: {b / a:.0f}x)")


if __name__ == "__main__":
    main(sys.argv[1:])
