"""Filter dispatch: the compiled chain of bound methods vs. the pluggy hook call, same run.

The ratio is what matters: docs/performance.md records it.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import make_pods, make_snapshot

from schedsim.framework import CycleState

NODES = 100


@pytest.fixture(scope="module")
def setup() -> Any:
    snap = make_snapshot(NODES, 10)
    pod = make_pods(1, prefix="pending")[0]
    state = CycleState()
    fw = snap.framework
    fw.run_pre_filter_plugins(state, pod, snap.list_node_infos())
    return fw, state, pod, snap.list_node_infos()


@pytest.mark.benchmark(group="filter-dispatch")
def test_filter_all_nodes_compiled_chain(benchmark: Any, setup: Any) -> None:
    """Filter on 100 nodes through the runtime's tuple of bound methods (the hot path)."""
    fw, state, pod, nodes = setup

    def run() -> int:
        return sum(1 for ni in nodes if fw.run_filter_plugins(state, pod, ni).is_success)

    assert benchmark(run) == 90  # every 10th node is tainted


@pytest.mark.benchmark(group="filter-dispatch")
def test_filter_all_nodes_pluggy_hook(benchmark: Any, setup: Any) -> None:
    """The same through pluggy's hook call (baseline; calls every plugin, no early exit)."""
    fw, state, pod, nodes = setup
    hook = fw.pm.hook.schedsim_filter
    skip = state.skip_filter_plugins

    def run() -> int:
        ok = 0
        for ni in nodes:
            results = hook(state=state, pod=pod, node_info=ni)
            # pluggy calls every plugin: ignore those whose PreFilter said Skip
            if all(r is None or r.is_success or r.plugin in skip for r in results):
                ok += 1
        return ok

    assert benchmark(run) == 90
