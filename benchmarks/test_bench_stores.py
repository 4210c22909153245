"""Store benchmarks, table-driven over both stores, mirroring Cluster Autoscaler's
``predicate_snapshot_benchmark_test.go`` and ``delta_benchmark_test.go``.

Run: ``pytest benchmarks/test_bench_stores.py --benchmark-enable``. Sizes of 100,000 nodes
for AddNodeInfo/ListNodeInfos and 15,000 for AddPods run only with ``SCHEDSIM_BENCH_HUGE=1``.
Compare within one run: delta vs. basic at the same size, and delta across sizes.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import pytest

from schedsim.api.core import Node, Pod
from schedsim.engine import STORES
from schedsim.framework import Framework, Handle, default_profile
from schedsim.snapshot import (
    NodeInfo,
    PodInfo,
    PredicateSnapshot,
)

HUGE = os.environ.get("SCHEDSIM_BENCH_HUGE") == "1"
SIZES = [1, 10, 100, 1000, 5000, 15000] + ([100_000] if HUGE else [])
POD_SIZES = [1, 10, 100, 1000, 5000] + ([15000] if HUGE else [])


def _node(name: str) -> Node:
    return Node(name=name, allocatable={"cpu": 2000, "memory": 2_000_000, "pods": 110})  # type: ignore[dict-item]


@functools.cache
def _nodes(n: int) -> tuple[Node, ...]:
    return tuple(_node(f"node-{i}") for i in range(n))


@functools.cache
def _pod_infos(k: int) -> tuple[PodInfo, ...]:
    # Shared across nodes: the stores only hold references, so this measures the store.
    return tuple(
        PodInfo(Pod.from_manifest({"metadata": {"name": f"p-{i}"}, "spec": {"containers": []}}))
        for i in range(k)
    )


@functools.cache
def _framework() -> Framework:
    return Framework(default_profile(), Handle())


def _snapshot(store: str, nodes: int, pods_per_node: int = 0) -> PredicateSnapshot:
    snap = PredicateSnapshot(_framework(), STORES[store]())
    snap.set_cluster_state([], [])
    pis = _pod_infos(pods_per_node)
    for node in _nodes(nodes):
        ni = NodeInfo(node)
        for pi in pis:
            ni.add_pod_info(pi)
        snap.add_node_info(ni)
    return snap


@pytest.mark.benchmark(group="AddNodeInfo")
@pytest.mark.parametrize("nodes", SIZES)
@pytest.mark.parametrize("store", sorted(STORES))
def test_add_node_info(benchmark: Any, store: str, nodes: int) -> None:
    """BenchmarkAddNodeInfo: clear, then add_node_info for every node."""
    snap = PredicateSnapshot(_framework(), STORES[store]())
    infos: list[NodeInfo] = []

    def setup() -> None:
        snap.set_cluster_state([], [])
        infos[:] = [NodeInfo(n) for n in _nodes(nodes)]

    def run() -> None:
        for ni in infos:
            snap.add_node_info(ni)

    benchmark.pedantic(run, setup=setup, rounds=5 if nodes >= 15000 else 20)
    assert len(snap.list_node_infos()) == nodes


@pytest.mark.benchmark(group="ListNodeInfos")
@pytest.mark.parametrize("nodes", SIZES)
@pytest.mark.parametrize("store", sorted(STORES))
def test_list_node_infos(benchmark: Any, store: str, nodes: int) -> None:
    """BenchmarkListNodeInfos: list on an unchanged snapshot (cached)."""
    snap = _snapshot(store, nodes)
    assert len(benchmark(snap.list_node_infos)) == nodes


@pytest.mark.benchmark(group="AddPods")
@pytest.mark.parametrize("nodes", POD_SIZES)
@pytest.mark.parametrize("store", sorted(STORES))
def test_add_pods(benchmark: Any, store: str, nodes: int) -> None:
    """BenchmarkAddPods: force_add_pod of 30 pods per node after set_cluster_state."""
    snap = PredicateSnapshot(_framework(), STORES[store]())
    pods = [
        Pod.from_manifest({"metadata": {"name": f"p-{n.name}-{i}"}, "spec": {"containers": []}})
        for n in _nodes(nodes)
        for i in range(30)
    ]

    def setup() -> None:
        snap.set_cluster_state(_nodes(nodes), [])

    def run() -> None:
        for i, pod in enumerate(pods):
            snap.force_add_pod(pod, f"node-{i // 30}")

    benchmark.pedantic(run, setup=setup, rounds=3 if nodes >= 5000 else 10)
    assert sum(len(ni.pods) for ni in snap.list_node_infos()) == 30 * nodes


FORK_SIZES = [1000, 10_000, 100_000]


@pytest.mark.benchmark(group="ForkAddRevert")
@pytest.mark.parametrize("pods_per_node", [0, 1, 30])
@pytest.mark.parametrize("nodes", FORK_SIZES)
@pytest.mark.parametrize("store", sorted(STORES))
def test_fork_add_revert(benchmark: Any, store: str, nodes: int, pods_per_node: int) -> None:
    """BenchmarkForkAddRevert: fork, add node, fork, add node, revert, revert."""
    snap = _snapshot(store, nodes, pods_per_node)
    tmp1, tmp2 = _node("tmp-1"), _node("tmp-2")

    def run() -> None:
        snap.fork()
        snap.add_node_info(NodeInfo(tmp1))
        snap.fork()
        snap.add_node_info(NodeInfo(tmp2))
        snap.revert()
        snap.revert()

    if store == "basic" and nodes >= 10_000:
        benchmark.pedantic(run, rounds=3, warmup_rounds=0)
    else:
        benchmark(run)
    assert len(snap.list_node_infos()) == nodes


@pytest.mark.benchmark(group="BuildNodeInfoList")
@pytest.mark.parametrize("nodes", [1000, 5000, 15000, 100_000])
@pytest.mark.parametrize("store", sorted(STORES))
def test_build_node_list_after_fork_add_1000(benchmark: Any, store: str, nodes: int) -> None:
    """BenchmarkBuildNodeInfoList "fork add 1000 to N": the first list after a fork that
    added 1000 nodes."""
    snap = _snapshot(store, nodes)
    extra = [_node(f"extra-{i}") for i in range(1000)]

    def setup() -> None:
        snap.revert()
        snap.fork()
        for n in extra:
            snap.add_node_info(NodeInfo(n))

    benchmark.pedantic(snap.list_node_infos, setup=setup, rounds=5 if nodes >= 15000 else 20)
    assert len(snap.list_node_infos()) == nodes + 1000
