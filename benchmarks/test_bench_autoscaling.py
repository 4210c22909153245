"""What-if autoscaling benchmarks, both stores: the two workloads the DRA snapshot design was
reviewed against (CA ``BenchmarkRunOnceScaleUp``/``ScaleDown``, DRA ``BenchmarkScheduleRevert``).

- Scale-up: an initial cluster (``nodes`` existing nodes with 10 pods each, full enough that
  no pending pod fits); ``groups`` node groups; ``pending`` pods. `scale_up` runs
  filter-out-schedulable, then per group forks, adds template copies one by one, schedules the
  next pending pods on them and reverts. ``pods_per_node`` pending pods fit a template node;
  ``claims`` per pending pod (0, or 1 pod-owned claim for one of the template node's GPUs,
  published in a ResourceSlice).
- Scale-down: ``nodes`` nodes with ``pods_per_node`` movable pods each; per node: fork, move
  its pods elsewhere, remove it, then commit (``commit_ratio`` of the nodes) or revert.

Run: ``pytest benchmarks/test_bench_autoscaling.py --benchmark-enable``; time and memory
ratios for docs/performance.md: ``python benchmarks/test_bench_autoscaling.py``.
"""

from __future__ import annotations

import functools
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from schedsim.api.core import Node, Pod
from schedsim.api.resource import DeviceClass, ResourceClaimTemplate, ResourceSlice
from schedsim.autoscaler.equivalence import group_equivalent_pods
from schedsim.autoscaler.estimator import estimate
from schedsim.autoscaler.hinting import HintingSimulator
from schedsim.autoscaler.nodegroups import NodeGroup, NodeTemplate
from schedsim.autoscaler.sanitize import template_node_info
from schedsim.autoscaler.scaledown import pods_to_move, simulate_node_removal
from schedsim.autoscaler.scaleup import scale_up
from schedsim.dra.claim_controller import create_template_claims
from schedsim.engine import STORES, Cluster
from schedsim.framework import Framework, Handle, default_profile
from schedsim.snapshot import (
    ClusterSnapshotStore,
    PredicateSnapshot,
)
from schedsim.snapshot.dra import DraSnapshot

DRIVER = "gpu.example.com"


def loaded(
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    framework: Framework,
    store: ClusterSnapshotStore | None = None,
    **state: Any,
) -> tuple[PredicateSnapshot, Sequence[Pod]]:
    """The simulations' first two arguments, built through `Cluster` (``state``: per-run
    state a caller made, as `Cluster.snapshot` takes it)."""
    cluster = Cluster(nodes=nodes, pods=pods)
    return cluster.snapshot(framework, store, **state)[0], cluster.pods


def _node(name: str, cpu: str, labels: dict[str, str] | None = None) -> Node:
    return Node.from_manifest(
        {
            "metadata": {
                "name": name,
                "labels": {"kubernetes.io/hostname": name, **(labels or {})},
            },
            "status": {"allocatable": {"cpu": cpu, "memory": "64Gi", "pods": "110"}},
        }
    )


def _pod(name: str, cpu: str, node: str = "", owner: str = "rs", claim: bool = False) -> Pod:
    spec: dict[str, Any] = {
        "nodeName": node,
        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
    }
    if claim:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
    return Pod.from_manifest(
        {
            "metadata": {
                "name": name,
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                     "name": owner, "uid": owner, "controller": True}],
            },
            "spec": spec,
        }
    )  # fmt: skip


def _gpu_slice(node: str, gpus: int) -> ResourceSlice:
    return ResourceSlice.from_manifest(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{node}-gpus"},
            "spec": {
                "driver": DRIVER,
                "nodeName": node,
                "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": f"gpu-{i}"} for i in range(gpus)],
            },
        }
    )


GPU_CLASS = DeviceClass.from_manifest(
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
     "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}
)  # fmt: skip
ONE_GPU = ResourceClaimTemplate.from_manifest(
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
     "metadata": {"name": "one-gpu", "namespace": "default"},
     "spec": {"spec": {"devices": {"requests": [{"name": "gpu",
                                                 "exactly": {"deviceClassName": "gpu"}}]}}}}
)  # fmt: skip


@functools.cache
def _scale_up_inputs(
    nodes: int, groups: int, pending: int, pods_per_node: int, claims: int
) -> tuple[list[Node], list[Pod], list[NodeGroup]]:
    # existing nodes: 1 cpu, full with 10 pods of 100m: no pending pod fits
    existing = [_node(f"node-{i}", "1") for i in range(nodes)]
    bound = [_pod(f"b-{i}-{j}", "100m", n.name, owner=f"b-{i}") for i, n in enumerate(existing)
             for j in range(10)]  # fmt: skip
    # pending: 10 controllers; a template node takes pods_per_node of them (cpu-bound)
    pods = [_pod(f"p-{i}", "500m", owner=f"p-{i % 10}", claim=claims > 0) for i in range(pending)]
    ngs = []
    for g in range(groups):
        t = f"group-{g}-template"
        cpu = f"{pods_per_node * 500 + 250}m"  # fits pods_per_node pods, not one more
        slices = (_gpu_slice(t, pods_per_node),) if claims else ()
        ngs.append(
            NodeGroup(f"group-{g}", 0, 1000, NodeTemplate(_node(t, cpu), resource_slices=slices))
        )
    return existing, [*bound, *pods], ngs


def run_scale_up(store: str, nodes: int, groups: int, pending: int, pods_per_node: int,
                 claims: int) -> int:  # fmt: skip
    """One scale-up decision; returns the chosen group's node count."""
    existing, pods, ngs = _scale_up_inputs(nodes, groups, pending, pods_per_node, claims)
    dra = DraSnapshot.from_objects([], [], [GPU_CLASS]) if claims else None
    r = scale_up(
        *loaded(
            existing,
            pods,
            Framework(default_profile(), Handle()),
            STORES[store](),
            dra_snapshot=dra,
        ),
        ngs,
        resource_claim_templates=[ONE_GPU],
    )
    assert r.chosen_option is not None
    return r.chosen_option.node_count


def estimation_setup(
    store: str, nodes: int, groups: int, pending: int, pods_per_node: int, claims: int
) -> Callable[[], int]:
    """The binpacking part alone: the cluster loaded once; the returned function runs the
    estimator for every group (fork, add copies one by one, schedule, revert) and returns
    the nodes estimated in all."""
    existing, pods, ngs = _scale_up_inputs(nodes, groups, pending, pods_per_node, claims)
    dra = DraSnapshot.from_objects([], [], [GPU_CLASS])
    bound = [p for p in pods if p.node_name]
    made = create_template_claims([p for p in pods if not p.node_name], [ONE_GPU])
    dra.add_claims(made.claims)
    snap = PredicateSnapshot(Framework(default_profile(), Handle()), STORES[store]())
    snap.set_cluster_state(existing, bound, dra)
    pegs = group_equivalent_pods(made.pods)
    templates = [template_node_info(g.template) for g in ngs]

    def run() -> int:
        return sum(estimate(snap, pegs, t, 1000).node_count for t in templates)

    return run


@pytest.mark.benchmark(group="Estimate")
@pytest.mark.parametrize("claims", [0, 1])
@pytest.mark.parametrize("nodes", [100, 1000])
@pytest.mark.parametrize("store", sorted(STORES))
def test_estimate(benchmark: Any, store: str, nodes: int, claims: int) -> None:
    """Binpacking only: 10 groups x 100 pending pods on a loaded cluster."""
    run = estimation_setup(store, nodes, 10, 100, 10, claims)
    assert benchmark.pedantic(run, rounds=3, warmup_rounds=1) == 100


@pytest.mark.benchmark(group="ScaleUp")
@pytest.mark.parametrize("claims", [0, 1])
@pytest.mark.parametrize("nodes", [100, 1000])
@pytest.mark.parametrize("store", sorted(STORES))
def test_scale_up(benchmark: Any, store: str, nodes: int, claims: int) -> None:
    """10 node groups x 100 pending pods, 10 pods per template node -> 10 nodes each."""
    count = benchmark.pedantic(
        run_scale_up, args=(store, nodes, 10, 100, 10, claims), rounds=3, warmup_rounds=1
    )
    assert count == 10


@functools.cache
def _scale_down_inputs(nodes: int, pods_per_node: int) -> tuple[list[Node], list[Pod]]:
    ns = [_node(f"node-{i}", "16") for i in range(nodes)]
    pods = [_pod(f"p-{i}-{j}", "100m", n.name, owner=f"rs-{i}") for i, n in enumerate(ns)
            for j in range(pods_per_node)]  # fmt: skip
    return ns, pods


def scale_down_cluster(
    store: str, nodes: int, pods_per_node: int
) -> tuple[list[Node], PredicateSnapshot]:
    """The scale-down benchmark's cluster: ``nodes`` 16-CPU nodes, each running
    ``pods_per_node`` 100m pods of its own ReplicaSet, in a ready snapshot."""
    ns, pods = _scale_down_inputs(nodes, pods_per_node)
    snap = PredicateSnapshot(Framework(default_profile(), Handle()), STORES[store]())
    snap.set_cluster_state(ns, pods)
    return ns, snap


def remove_each(snap: PredicateSnapshot, ns: list[Node], commit_ratio: float) -> int:
    """Per node: fork, move its pods, remove it, commit (every ``1/commit_ratio``-th node) or
    revert. Returns the nodes left."""
    hinting = HintingSimulator()
    committed = 0.0
    for i, n in enumerate(ns):
        persist = committed < commit_ratio * (i + 1)
        movable, _ = pods_to_move(snap.get_node_info(n.name))
        _, failed = simulate_node_removal(snap, n.name, movable, hinting, persist=persist)
        assert failed is None
        committed += persist
    return len(snap.list_node_infos())


def run_scale_down(store: str, nodes: int, pods_per_node: int, commit_ratio: float) -> int:
    """`scale_down_cluster`, then `remove_each`. Returns the nodes left."""
    ns, snap = scale_down_cluster(store, nodes, pods_per_node)
    return remove_each(snap, ns, commit_ratio)


@pytest.mark.benchmark(group="ScaleDown")
@pytest.mark.parametrize("commit_ratio", [0.0, 0.5])
@pytest.mark.parametrize("nodes", [100, 500])
@pytest.mark.parametrize("store", sorted(STORES))
def test_scale_down(benchmark: Any, store: str, nodes: int, commit_ratio: float) -> None:
    left = benchmark.pedantic(
        run_scale_down, args=(store, nodes, 10, commit_ratio), rounds=3, warmup_rounds=0
    )
    assert left == nodes - round(nodes * commit_ratio)


def _measure(fn: Callable[[], Any]) -> tuple[float, int]:
    """Median wall time of 3 runs, and the tracemalloc peak of one more."""
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return sorted(times)[1], peak


def main() -> None:  # pragma: no cover - prints the tables of docs/performance.md
    """Print time and peak traced memory per store, and basic/delta ratios."""
    rows: list[tuple[str, Callable[[str], Any]]] = []
    for nodes in (100, 1000):
        for claims in (0, 1):
            runs = {st: estimation_setup(st, nodes, 10, 100, 10, claims) for st in STORES}
            rows.append((f"estimate only, {nodes} nodes, 10 groups x 100 pods, claims {claims}",
                         lambda st, runs=runs: runs[st]()))  # fmt: skip
    for nodes in (100, 1000):
        for claims in (0, 1):
            rows.append((f"scale-up {nodes} nodes, 10 groups x 100 pods, claims {claims}",
                         functools.partial(lambda s, n, c: run_scale_up(s, n, 10, 100, 10, c),
                                           n=nodes, c=claims)))  # fmt: skip
    for nodes in (100, 500):
        for ratio in (0.0, 0.5):
            rows.append((f"scale-down {nodes} nodes x 10 pods, commit {ratio}",
                         functools.partial(lambda s, n, r: run_scale_down(s, n, 10, r),
                                           n=nodes, r=ratio)))  # fmt: skip
    for label, fn in rows:
        fn("delta")  # warm caches (CEL, inputs)
        bt, bm = _measure(lambda fn=fn: fn("basic"))
        dt, dm = _measure(lambda fn=fn: fn("delta"))
        print(
            f"| {label} | {bt * 1e3:.0f} ms / {bm / 2**20:.1f} MiB | "
            f"{dt * 1e3:.0f} ms / {dm / 2**20:.1f} MiB | {bt / dt:.2f}x / {bm / dm:.2f}x |"
        )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
