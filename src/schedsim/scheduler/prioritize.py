"""Scoring the feasible nodes (kube-scheduler's ``prioritizeNodes``, schedule_one.go).

The framework runs PreScore, Score, NormalizeScore and the weights
(``Framework.run_pre_score_plugins`` / ``run_score_plugins``); this module decides when they
run and what a profile without Score plugins gives (every node scores 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, cast

import attrs

from schedsim.api.core import Pod
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.interface import NodeInfo
from schedsim.framework.runtime import Framework
from schedsim.framework.status import Status

__all__ = ["NodeScores", "PluginScoreLike", "ScoringFramework", "prioritize_nodes"]


class PluginScoreLike(Protocol):
    """One plugin's final score on a node (``framework.PluginScore``); a Protocol."""

    @property
    def name(self) -> str:
        """The plugin."""
        ...

    @property
    def score(self) -> int:
        """Its normalized score times its weight."""
        ...


class NodeScores(Protocol):
    """A node's scores (``framework.NodePluginScores``); a Protocol."""

    @property
    def name(self) -> str:
        """The node."""
        ...

    @property
    def scores(self) -> Sequence[PluginScoreLike]:
        """Per plugin, in profile order."""
        ...

    @property
    def total_score(self) -> int:
        """The sum of ``scores``."""
        ...


class ScoringFramework(Protocol):
    """The scoring part of `schedsim.framework.Framework`; a Protocol."""

    @property
    def has_score_plugins(self) -> bool:
        """Whether any Score plugin is enabled."""
        ...

    def run_pre_score_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status:
        """RunPreScorePlugins."""
        ...

    def run_score_plugins(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        raw: dict[str, dict[str, int]] | None = None,
    ) -> tuple[Sequence[NodeScores], Status]:
        """RunScorePlugins."""
        ...


@attrs.frozen
class _Unscored:
    """A node of a profile without Score plugins: total 1, as upstream."""

    name: str
    scores: tuple[PluginScoreLike, ...] = ()
    total_score: int = 1


def scoring_of(framework: Framework) -> ScoringFramework | None:
    """The framework's scoring methods, or None when it has none (a runtime from before
    scoring: every node then scores 1)."""
    if not hasattr(framework, "run_score_plugins"):
        return None
    return cast(ScoringFramework, framework)


def prioritize_nodes(
    framework: Framework,
    state: CycleState,
    pod: Pod,
    nodes: Sequence[NodeInfo],
    raw: dict[str, dict[str, int]] | None = None,
) -> tuple[Sequence[NodeScores], Status | None]:
    """Score ``nodes`` (mirrors kube-scheduler 1.34 ``prioritizeNodes`` without extenders).

    Args:
        nodes: the feasible nodes, in evaluation order (two or more).
        raw: filled plugin -> node -> raw score when given (``--explain``).

    Returns:
        ``(scores, None)`` with one entry per node in ``nodes`` order; without Score plugins
        every node scores 1. ``([], status)`` when PreScore or Score failed (the attempt
        fails with that error, as upstream's ``AsError``).
    """
    scoring = scoring_of(framework)
    if scoring is None or not scoring.has_score_plugins:
        return [_Unscored(ni.node.name if ni.node else "") for ni in nodes], None
    st = scoring.run_pre_score_plugins(state, pod, nodes)
    if not st.is_success:
        return [], st
    scores, st = scoring.run_score_plugins(state, pod, nodes, raw)
    if not st.is_success:
        return [], st
    return scores, None
