"""`Framework.run_score_plugins(reuse=...)`: raw scores of identical pods reused per NodeInfo
generation (the `ResultCache` rule), with NormalizeScore and weights still applied."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs

from schedsim.api.core import Pod
from schedsim.framework import (
    CycleState,
    Framework,
    Handle,
    NodeInfo,
    default_profile,
    discover_plugins,
)
from schedsim.snapshot import PredicateSnapshot
from schedsim.testing.snapshot_conformance import make_node, make_pod


class _Counting:
    """Score = free milli-CPU / 100; counts its Score calls."""

    name: ClassVar[str] = "Counting"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.calls = 0

    def schedsim_score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        self.calls += 1
        return (node_info.allocatable.milli_cpu - node_info.requested.milli_cpu) // 100

    def schedsim_normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> None:
        top = max(scores.values()) or 1
        for k, v in scores.items():
            scores[k] = v * 100 // top


def _setup() -> tuple[Framework, PredicateSnapshot, Sequence[NodeInfo]]:
    base = default_profile()
    plugins = dict(base.plugins)
    plugins["score"] = ("Counting",)
    profile = attrs.evolve(
        base, plugins=plugins, explicit=frozenset({"Counting"}), plugin_weights={"Counting": 3}
    )
    fw = Framework(profile, Handle(), discover_plugins(extra={"Counting": _Counting}))
    snap = PredicateSnapshot(fw)
    snap.set_cluster_state([make_node("a", cpu="2"), make_node("b", cpu="4")], [])
    return fw, snap, snap.list_node_infos()


def test_reused_raw_scores_skip_score_and_still_normalize_and_weigh() -> None:
    """Second identical pod: no Score call, the same normalized x weight result; after a pod
    lands on b, only b is scored again and normalization sees the new raw score."""
    fw, snap, nodes = _setup()
    plugin = fw.plugins["Counting"]
    reuse: dict[str, dict[Any, tuple[int, int]]] = {"Counting": {}}
    with snap.bound():
        first, st = fw.run_score_plugins(CycleState(), make_pod("p"), nodes, None, reuse)
        assert st.is_success and plugin.calls == 2
        again, _ = fw.run_score_plugins(CycleState(), make_pod("q"), nodes, None, reuse)
        assert plugin.calls == 2 and again == first
        # raw a 20, b 40 -> normalized 50, 100 -> x3
        assert [(n.name, n.total_score) for n in first] == [("a", 150), ("b", 300)]
    snap.force_add_pod(make_pod("big", cpu="3"), "b")
    nodes = snap.list_node_infos()
    with snap.bound():
        raw: dict[str, dict[str, int]] = {}
        after, _ = fw.run_score_plugins(CycleState(), make_pod("r"), nodes, raw, reuse)
    assert plugin.calls == 3  # b only
    assert raw == {"Counting": {"a": 20, "b": 10}}  # b: 4000m - 3000m requested
    # normalized against the new top (a, 20): a 100, b 50 -> x3
    assert [(n.name, n.total_score) for n in after] == [("a", 300), ("b", 150)]


def test_only_pure_in_tree_score_plugins_are_reused() -> None:
    """`ResultCache.score_reuse` offers the profile's Score plugins among
    `PURE_SCORE_PLUGINS` (in-tree ones), nothing for a third-party Score plugin."""
    from schedsim.scheduler import PURE_SCORE_PLUGINS, ResultCache

    fw, _, _ = _setup()
    assert ResultCache(fw).score_reuse(make_pod("p")) is None
    default = Framework(default_profile(), Handle())
    reuse = ResultCache(default).score_reuse(make_pod("p")) or {}
    assert set(reuse) == PURE_SCORE_PLUGINS & set(default.score_weights)
    assert "ImageLocality" not in reuse
