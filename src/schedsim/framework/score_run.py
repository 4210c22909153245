"""RunScorePlugins: Score every feasible node with each Score plugin, NormalizeScore, check the
[0, 100] range, weight and sum. Split from the runtime because it is the longest extension
point; `Framework.run_score_plugins` is the public entry."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from schedsim.api.core import Pod
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.interface import NodeInfo
from schedsim.framework.plugin_results import PLUGIN_FAILURES, plugin_error
from schedsim.framework.plugin_results import describe_exception as _describe
from schedsim.framework.plugin_results import error_status as _error
from schedsim.framework.plugin_results import returned_problem as _returned
from schedsim.framework.scores import MAX_NODE_SCORE, MIN_NODE_SCORE, NodePluginScores, PluginScore
from schedsim.framework.status import SUCCESS, Code, Status

__all__ = ["NormalizeScoreFn", "ScoreFn", "ScoreLink", "run_score_links"]

ScoreFn = Callable[[CycleState, Pod, NodeInfo], "int | Status"]
NormalizeScoreFn = Callable[[CycleState, Pod, dict[str, int]], "Status | None"]
ScoreLink = tuple[str, ScoreFn, "NormalizeScoreFn | None", int]
"""One Score plugin in the chain: name, Score, NormalizeScore (None if absent), weight."""


def run_score_links(
    links: Sequence[ScoreLink],
    state: CycleState,
    pod: Pod,
    nodes: Sequence[NodeInfo],
    raw: dict[str, dict[str, int]] | None = None,
    reuse: Mapping[str, dict[NodeInfo, tuple[int, int]]] | None = None,
    detail: bool = True,
) -> tuple[list[NodePluginScores], Status]:
    """Run the Score chain ``links`` (already filtered by PreScore Skip) over ``nodes``.

    Arguments and result as `schedsim.framework.runtime.Framework.run_score_plugins`, which
    mirrors kube-scheduler's RunScorePlugins.
    """
    names = [ni.node.name if ni.node is not None else "" for ni in nodes]
    weighted: list[tuple[str, list[int]]] = []
    for name, score, normalize, weight in links:
        scores: dict[str, int] = {}
        kept = reuse.get(name) if reuse else None
        try:
            for node_name, ni in zip(names, nodes, strict=True):
                if kept is not None:
                    hit = kept.get(ni)
                    if hit is not None and hit[0] == ni.generation:
                        scores[node_name] = hit[1]
                        continue
                s = score(state, pod, ni)
                if s.__class__ is not int:
                    s = _score_value(s)
                scores[node_name] = s
                if kept is not None:
                    kept[ni] = (ni.generation, s)
        except PLUGIN_FAILURES as e:
            msg = e.args[0] if isinstance(e, _ScoreFailed) else _describe(e)
            return [], plugin_error("Score", name, msg)
        if raw is not None:
            raw[name] = dict(scores)
        if normalize is not None:
            try:
                st = normalize(state, pod, scores)
            except PLUGIN_FAILURES as e:
                st = Status(Code.Error, (_describe(e),))
            if st is not None and not isinstance(st, Status):
                st = Status(Code.Error, (_returned(st),))
            elif st is None or st.is_success:
                st = _normalized_ints(scores)
            if st is not None and not st.is_success:
                return [], plugin_error("NormalizeScore", name, st.message)
        try:
            values = [scores[n] for n in names]
        except KeyError as e:
            return [], plugin_error(
                "NormalizeScore", name, f"NormalizeScore removed node {e.args[0]}"
            )
        if values and (min(values) < MIN_NODE_SCORE or max(values) > MAX_NODE_SCORE):
            bad = next(v for v in values if not MIN_NODE_SCORE <= v <= MAX_NODE_SCORE)
            return [], _error(
                "applying score defaultWeights on Score plugins: "
                f'plugin "{name}" returns an invalid score {bad}, it should in the range '
                f"of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                name,
            )
        weighted.append((name, [v * weight for v in values]))
    columns = [w for _, w in weighted]
    totals = [sum(t) for t in zip(*columns, strict=True)] if columns else [0] * len(names)
    if not detail:
        return [NodePluginScores(n, (), t) for n, t in zip(names, totals, strict=True)], SUCCESS
    plugins = [name for name, _ in weighted]
    return [
        NodePluginScores(
            n,
            tuple(PluginScore(p, v) for p, v in zip(plugins, row, strict=True)),
            t,
        )
        for n, row, t in zip(names, zip(*columns, strict=True), totals, strict=True)
    ] if columns else [NodePluginScores(n, (), 0) for n in names], SUCCESS


def _normalized_ints(scores: Mapping[str, object]) -> Status | None:
    """None when NormalizeScore left every score an int; else an Error status naming the
    first node whose score it set to something else."""
    for node, v in scores.items():
        if v.__class__ is not int and (not isinstance(v, int) or isinstance(v, bool)):
            text = repr(v)
            if len(text) > 60:
                text = text[:57] + "..."
            return Status(
                Code.Error,
                (
                    f"NormalizeScore set node {node}'s score to {text} ({type(v).__name__}), "
                    "want an int",
                ),
            )
    return None


class _ScoreFailed(Exception):
    """A Score hook returned a failure Status or a non-int (message in args[0])."""


def _score_value(s: object) -> int:
    """A Score result that is not a plain int: an int subclass, or a Status (a Success one
    counts as 0, like Go's ``return 0, nil``); anything else fails the plugin."""
    if isinstance(s, Status):
        if s.code is Code.Success:
            return 0
        raise _ScoreFailed(s.message)
    if isinstance(s, int) and not isinstance(s, bool):
        return int(s)
    raise _ScoreFailed(_returned(s, "an int or a Status"))
