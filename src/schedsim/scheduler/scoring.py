"""Host ranking in bulk, for host selection without per-plugin records.

`score_totals` ranks the feasible nodes as `Framework.run_score_plugins` does for
``selectHost`` (each node's weighted sum of normalized scores, kube-scheduler's
``RunScorePlugins``), with column-wise C-level operations, and takes raw scores from
per-position columns (`ScoreColumns`) the caller keeps for plugins whose raw score depends
on the pod and the node alone (the scheduler's `schedsim.scheduler.ResultCache`).
NormalizeScore always runs over the nodes given (a normalized score depends on the whole
feasible set), so normalized scores are never reused.

Anything unusual (a Score returning something else than an int, raising (`PLUGIN_FAILURES`:
GeneratorExit and SystemExit included), a NormalizeScore failing or leaving a score out of
range) makes it return None: the caller then runs
`Framework.run_score_plugins`, which produces kube-scheduler's error for it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from operator import add, itemgetter
from typing import Any, cast

from schedsim.api.core import Pod
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.interface import NodeInfo
from schedsim.framework.plugin_results import PLUGIN_FAILURES
from schedsim.framework.runtime import Framework
from schedsim.framework.scores import MAX_NODE_SCORE, MIN_NODE_SCORE
from schedsim.framework.status import Status

__all__ = ["BulkScoreFn", "NodeScoreFactory", "ScoreColumns", "score_totals"]

_INT_ONLY = {int}

BulkScoreFn = Callable[[CycleState, Pod, Sequence[NodeInfo]], "list[int] | None"]
"""A plugin's Score over all the given nodes at once (``score_nodes(state, pod, nodes)``:
the list Score would give node by node, in order, or None: score them one by one)."""

NodeScoreFactory = Callable[[CycleState, Pod], Callable[[NodeInfo], int]]
"""A plugin's ``score_node_fn(state, pod)``: its Score for this attempt as a function of the
node alone (``fn(ni) == score(state, pod, ni)`` for every node, ``state`` read once)."""


class ScoreColumns:
    """Raw scores kept per position of a node list, for one class of identical pods.

    Attributes:
        summed: Score plugins without NormalizeScore whose weighted raw scores are kept
            summed in ``combined``.
        combined: per position, the sum over ``summed`` of weight x raw score (None: not
            known for the NodeInfo now at that position); None when ``summed`` is empty.
        node_part: ``(plugins, column)``, the plugins of ``summed`` whose raw score reads
            the Node object alone, and their weighted sum per position (kept longer than
            ``combined``: until the Node object changes); a miss in ``combined`` takes
            their part from it and calls only the other plugins. None: no such plugins.
        raw: plugin with NormalizeScore -> its raw score per position (None: not known).
        uniform: plugins of ``raw`` whose NormalizeScore gives nodes with equal raw scores
            equal scores within [0, 100] (kube-scheduler's ``DefaultNormalizeScore``): when
            all the feasible nodes' raw scores are equal, the plugin adds the same to every
            node and cannot change the ranking, so it is left out of the sum.
        bulk: plugin (not in ``raw`` nor ``summed``) -> its `BulkScoreFn`, which gives the
            raw scores of all the feasible nodes in one call.
        node_fns: plugin of ``summed`` -> its `NodeScoreFactory`: called once per attempt
            with a miss, it gives the plugin's Score as a function of the node alone.

    The caller vouches that every value present is the plugin's raw score for this pod
    class and the NodeInfo now at that position, and that a bulk function returns what
    the plugin's Score returns node by node.
    """

    __slots__ = ("bulk", "combined", "node_fns", "node_part", "raw", "summed", "uniform")

    def __init__(
        self,
        summed: frozenset[str],
        combined: list[int | None] | None,
        raw: dict[str, list[int | None]],
        uniform: frozenset[str],
        bulk: Mapping[str, BulkScoreFn] | None = None,
        node_part: tuple[frozenset[str], list[int | None]] | None = None,
        node_fns: Mapping[str, NodeScoreFactory] | None = None,
    ) -> None:
        self.summed = summed
        self.combined = combined
        self.node_part = node_part
        self.raw = raw
        self.uniform = uniform
        self.bulk: Mapping[str, BulkScoreFn] = bulk or {}
        self.node_fns: Mapping[str, NodeScoreFactory] = node_fns or {}


def score_totals(
    framework: Framework,
    state: CycleState,
    pod: Pod,
    nodes: Sequence[NodeInfo],
    positions: Sequence[int],
    columns: ScoreColumns,
    names: Callable[[], Sequence[str]],
) -> list[int] | None:
    """Each node's total score up to a constant common to all nodes (mirrors kube-scheduler
    1.34 ``RunScorePlugins`` followed by the sum ``prioritizeNodes`` takes: the highest
    total, and the first node having it, are the ones upstream's totals give), or None when
    a plugin did anything but return ints in range (the caller reruns
    `Framework.run_score_plugins` for the error).

    Args:
        framework: the profile.
        state: the attempt's CycleState after PreScore (plugins in
            ``state.skip_score_plugins`` do not run).
        pod: the pod.
        nodes: the feasible nodes, in evaluation order (two or more).
        positions: for each node, its position in the caller's node list (the index into
            the columns).
        columns: the raw scores kept for the pod's class (`ScoreColumns`); values computed
            here are written there.
        names: returns the nodes' names in ``nodes`` order (NormalizeScore takes a node
            name -> score map); called once, when the first NormalizeScore runs.

    Returns:
        totals in ``nodes`` order, or None.

    Time: O(nodes) C-level per plugin plus a Score call per node whose raw score is not
    known (one call for the nodes of a plugin in ``columns.bulk``); the NormalizeScore
    calls as upstream.
    """
    skip = state.skip_score_plugins
    links = [link for link in framework.score_links if link[0] not in skip]
    pick = cast(Callable[[Sequence[Any]], tuple[Any, ...]], itemgetter(*positions))
    totals: list[int] | None = None
    node_names: Sequence[str] | None = None
    summed = columns.summed
    try:
        combined = columns.combined
        if combined is not None:
            # one pass over the feasible positions per pod; the node-only part is read
            # (or computed) only where the sum is missing
            values = list(pick(combined))
            misses = values.count(None)
            if misses:
                node_group, node_column = columns.node_part or (frozenset(), None)
                factories = columns.node_fns
                adding = [
                    (
                        factories[name](state, pod)
                        if name in factories
                        else partial(score, state, pod),
                        weight,
                    )
                    for name, score, _normalize, weight in links
                    if name in summed and name not in node_group
                ]
                node_adding = [link for link in links if link[0] in node_group]
                k = 0
                for _ in range(misses):
                    k = values.index(None, k)
                    ni = nodes[k]
                    i = positions[k]
                    total = 0
                    for fn, weight in adding:
                        s = fn(ni)
                        if s.__class__ is not int or not MIN_NODE_SCORE <= s <= MAX_NODE_SCORE:
                            return None
                        total += s * weight
                    if node_column is not None:
                        part = node_column[i]
                        if part is None:
                            part = node_column[i] = _weighted(state, pod, ni, node_adding)
                        total += part
                    values[k] = combined[i] = total
                    k += 1
            totals = cast(list[int], values)
        for name, score, normalize, weight in links:
            if name in summed:
                continue
            column = columns.raw.get(name)
            if column is not None:
                picked = pick(column)
                first = picked[0]
                if (
                    first is not None
                    and name in columns.uniform
                    and picked.count(first) == len(picked)
                ):
                    continue  # known everywhere and the same: ranking unchanged (as below)
                values = list(picked)
                k = 0
                for _ in range(values.count(None)):
                    k = values.index(None, k)
                    s = score(state, pod, nodes[k])
                    if s.__class__ is not int:
                        return None
                    values[k] = column[positions[k]] = s
                    k += 1
                ints = cast(list[int], values)
                if name in columns.uniform and min(ints) == max(ints):
                    continue  # the same normalized score on every node: ranking unchanged
            else:
                bulk = columns.bulk.get(name)
                computed: Sequence[object] | None = (
                    None if bulk is None else bulk(state, pod, nodes)
                )
                if computed is None:
                    computed = [score(state, pod, ni) for ni in nodes]
                if set(map(type, computed)) - _INT_ONLY:
                    return None
                ints = cast(list[int], computed)
            if normalize is not None:
                if node_names is None:
                    node_names = names()
                by_node = dict(zip(node_names, ints, strict=True))
                st = normalize(state, pod, by_node)
                if st is not None and (st.__class__ is not Status or not st.is_success):
                    return None
                if len(by_node) != len(node_names) or set(map(type, by_node.values())) - _INT_ONLY:
                    return None
                ints = list(map(by_node.__getitem__, node_names))
            if min(ints) < MIN_NODE_SCORE or max(ints) > MAX_NODE_SCORE:
                return None
            if weight != 1:
                ints = list(map(weight.__mul__, ints))
            totals = ints if totals is None else list(map(add, totals, ints))
    except PLUGIN_FAILURES:  # GeneratorExit and SystemExit too: a plugin's, reported below
        return None
    return totals if totals is not None else [0] * len(nodes)


class _OutOfRange(Exception):
    """A Score plugin returned something but an int in [MIN_NODE_SCORE, MAX_NODE_SCORE]."""


def _weighted(
    state: CycleState, pod: Pod, ni: NodeInfo, links: Sequence[tuple[str, Any, Any, int]]
) -> int:
    """The sum of weight x raw score of ``links``' plugins on ``ni``.

    Raises:
        _OutOfRange: a raw score is not an int in range (`score_totals` gives None).
    """
    total = 0
    for _name, score, _normalize, weight in links:
        s = score(state, pod, ni)
        if s.__class__ is not int or not MIN_NODE_SCORE <= s <= MAX_NODE_SCORE:
            raise _OutOfRange
        total += s * weight
    return total
