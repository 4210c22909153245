"""Snapshot costs, as ratios within one run: fork of the clone-based BasicSnapshotStore vs.
a plain get (the baseline the delta store of issue #3 must approach), and a scheduling cycle.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import make_pods, make_snapshot


@pytest.mark.benchmark(group="snapshot-access")
@pytest.mark.parametrize("nodes", [100, 1000])
def test_get_node_info(benchmark: Any, nodes: int) -> None:
    """get_node_info returns the stored object: O(1), no allocation."""
    snap = make_snapshot(nodes, 10)
    name = snap.list_node_infos()[nodes // 2].node.name  # type: ignore[union-attr]
    assert benchmark(snap.get_node_info, name) is snap.get_node_info(name)


@pytest.mark.benchmark(group="snapshot-access")
@pytest.mark.parametrize("nodes", [100, 1000])
def test_list_node_infos(benchmark: Any, nodes: int) -> None:
    """list_node_infos returns the cached stored list: O(1)."""
    snap = make_snapshot(nodes, 10)
    assert len(benchmark(snap.list_node_infos)) == nodes


@pytest.mark.benchmark(group="fork-revert")
@pytest.mark.parametrize("nodes", [100, 1000])
def test_basic_store_fork_revert(benchmark: Any, nodes: int) -> None:
    """Clone store: fork copies every NodeInfo, O(nodes + pods)."""
    snap = make_snapshot(nodes, 10)

    def run() -> None:
        snap.fork()
        snap.revert()

    benchmark(run)


@pytest.mark.benchmark(group="schedule")
def test_schedule_1000_pods_on_100_nodes_with_fork(benchmark: Any) -> None:
    """A CA-style what-if: fork, schedule 1000 pending pods, revert."""
    snap = make_snapshot(100, 10)
    pods = make_pods(1000, prefix="pending")

    def run() -> int:
        snap.fork()
        for p in pods:
            snap.schedule_pod_on_any_node_matching(p)
        n = sum(len(ni.pods) for ni in snap.list_node_infos())
        snap.revert()
        return n

    assert benchmark(run) == 100 * 10 + 1000
