"""Scoring the feasible nodes (kube-scheduler's ``prioritizeNodes``, schedule_one.go).

The framework runs PreScore, Score, NormalizeScore and the weights
(`Framework.run_pre_score_plugins` / `Framework.run_score_plugins`); this module decides when
they run and what a profile without Score plugins gives (every node scores 1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from schedsim.api.core import Pod
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.interface import NodeInfo
from schedsim.framework.runtime import Framework
from schedsim.framework.scores import NodePluginScores
from schedsim.framework.status import Status
from schedsim.scheduler.cache import ScoreReuse
from schedsim.scheduler.scoring import ScoreColumns, score_totals

__all__ = ["prioritize_nodes", "prioritize_totals"]


def prioritize_nodes(
    framework: Framework,
    state: CycleState,
    pod: Pod,
    nodes: Sequence[NodeInfo],
    raw: dict[str, dict[str, int]] | None = None,
    reuse: ScoreReuse | None = None,
) -> tuple[list[NodePluginScores], Status | None]:
    """Score ``nodes`` (mirrors kube-scheduler 1.34 ``prioritizeNodes`` without extenders).

    Args:
        framework: the profile.
        state: the attempt's CycleState (after Filter).
        pod: the pod.
        nodes: the feasible nodes, in evaluation order (two or more).
        raw: filled plugin -> node -> raw score when given (``--explain``).
        reuse: raw scores of identical pods (`ResultCache.score_reuse`).

    Returns:
        ``(scores, None)`` with one `NodePluginScores` per node in ``nodes`` order; without
        Score plugins every node scores 1 (upstream: "all nodes will have a score of one").
        ``([], status)`` when PreScore or Score failed: the attempt fails with that Error,
        as upstream's ``AsError``.
    """
    if not framework.has_score_plugins:
        return [NodePluginScores(ni.node.name if ni.node else "", (), 1) for ni in nodes], None
    st = framework.run_pre_score_plugins(state, pod, nodes)
    if not st.is_success:
        return [], st
    # per-plugin records only when they are shown (--explain); selectHost needs the totals
    scores, st = framework.run_score_plugins(state, pod, nodes, raw, reuse, detail=raw is not None)
    if not st.is_success:
        return [], st
    return scores, None


def prioritize_totals(
    framework: Framework,
    state: CycleState,
    pod: Pod,
    nodes: Sequence[NodeInfo],
    positions: Sequence[int],
    names: Callable[[], Sequence[str]],
    columns: Callable[[CycleState], ScoreColumns],
) -> tuple[list[int], Status | None]:
    """The total scores `prioritize_nodes` would give ``nodes``, without per-node records
    (host selection without ``--explain``), with raw scores read from and written to
    ``columns`` (`ResultCache.score_columns`; ``positions`` index them).

    Args:
        framework: the profile (with Score plugins).
        state: the attempt's CycleState (after Filter).
        pod: the pod.
        nodes: the feasible nodes, in evaluation order (two or more).
        positions: each node's position in the node list the columns follow.
        names: returns the nodes' names, in ``nodes`` order (called only when a
            NormalizeScore runs).
        columns: called after PreScore with the state: the raw scores kept for the pod's
            class (`ScoreColumns`), for the plugins that run.

    Returns:
        ``(totals, None)`` in ``nodes`` order (up to a constant common to all nodes: the
        ranking is upstream's), or ``([], status)`` when PreScore or Score
        failed (the same Error `prioritize_nodes` returns).
    """
    st = framework.run_pre_score_plugins(state, pod, nodes)
    if not st.is_success:
        return [], st
    totals = score_totals(framework, state, pod, nodes, positions, columns(state), names)
    if totals is not None:
        return totals, None
    # something unusual: the framework's own run gives kube-scheduler's error, if any
    scores, st = framework.run_score_plugins(state, pod, nodes, detail=False)
    if not st.is_success:
        return [], st
    return [s.total_score for s in scores], None
