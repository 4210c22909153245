"""Snapshot costs over both stores, as ratios within one run: get/list, fork + revert, and a
CA-style what-if scheduling cycle."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import make_pods, make_snapshot

from schedsim.engine import STORES


@pytest.mark.benchmark(group="snapshot-access")
@pytest.mark.parametrize("nodes", [100, 1000])
@pytest.mark.parametrize("store", sorted(STORES))
def test_get_node_info(benchmark: Any, store: str, nodes: int) -> None:
    """get_node_info returns the stored object: O(1), no allocation."""
    snap = make_snapshot(nodes, 10, store)
    name = snap.list_node_infos()[nodes // 2].node.name  # type: ignore[union-attr]
    assert benchmark(snap.get_node_info, name) is snap.get_node_info(name)


@pytest.mark.benchmark(group="snapshot-access")
@pytest.mark.parametrize("nodes", [100, 1000])
@pytest.mark.parametrize("store", sorted(STORES))
def test_list_node_infos(benchmark: Any, store: str, nodes: int) -> None:
    """list_node_infos returns the cached stored list: O(1)."""
    snap = make_snapshot(nodes, 10, store)
    assert len(benchmark(snap.list_node_infos)) == nodes


@pytest.mark.benchmark(group="fork-revert")
@pytest.mark.parametrize("nodes", [100, 1000])
@pytest.mark.parametrize("store", sorted(STORES))
def test_fork_revert(benchmark: Any, store: str, nodes: int) -> None:
    """Clone store: fork copies every NodeInfo, O(nodes + pods); delta: O(1)."""
    snap = make_snapshot(nodes, 10, store)

    def run() -> None:
        snap.fork()
        snap.revert()

    benchmark(run)


@pytest.mark.benchmark(group="schedule")
@pytest.mark.parametrize("store", sorted(STORES))
def test_schedule_1000_pods_on_100_nodes_with_fork(benchmark: Any, store: str) -> None:
    """A CA-style what-if: fork, schedule 1000 pending pods, revert."""
    snap = make_snapshot(100, 10, store)
    pods = make_pods(1000, prefix="pending")

    def run() -> int:
        snap.fork()
        for p in pods:
            snap.schedule_pod_on_any_node_matching(p)
        n = sum(len(ni.pods) for ni in snap.list_node_infos())
        snap.revert()
        return n

    assert benchmark(run) == 100 * 10 + 1000
