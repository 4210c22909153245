"""Reusing Filter results and raw Score values between identical pods (kube-scheduler has no
such cache; schedsim's scheduling cycle places thousands of pods of a few shapes onto nodes
that mostly do not change).

**The rule.** A Filter status is reused only when it cannot differ from running the plugins
again:

- every Filter plugin that will run for the pod (the profile's Filter plugins minus those its
  PreFilter skipped) is one whose result depends on the pod and that node's NodeInfo alone,
  plus the plugin's args: NodeUnschedulable, NodeName, TaintToleration, NodeAffinity,
  NodePorts and NodeResourcesFit, the in-tree ones (a ``--plugin`` replacing one of them
  turns the cache off for it). NodeResourcesFit does not count when DRAExtendedResource is on
  and the pod requests extended resources (then it reads DRA state). NodeVolumeLimits,
  PodTopologySpread, InterPodAffinity and third-party plugins read other nodes or cluster
  objects: a pod for which any of them runs is never served from the cache, except
  PodTopologySpread and InterPodAffinity when they are the last Filter plugins that run:
  their verdict is a function of the node's values of some topology keys (the
  constraints', the terms' and the existing anti-affinity counts') and the pod's PreFilter
  state, so the table holds the other plugins' results and the walk runs them once per
  distinct value tuple (``filter_topology_keys(state)``; `ResultCache.filter_cache`'s
  ``keyed``; past 16 distinct values, e.g. a hostname key, only for the values met along
  the walk). An in-tree
  plugin that reads more than the node may take part by declaring what else its result
  depends on: ``filter_reuse_key(state)`` (hashable, added to the pod's class; None: no
  reuse for this attempt) and ``filter_reuse_refresh(state, table, names)`` (marks stale,
  ``table.mark_stale(i)``, the positions whose result may have changed for another reason
  than their NodeInfo since the plugin last saw ``table``, ``names``: node name -> position;
  False: it forgot the table (``resize``), this attempt walks without it; a bare
  ``gens[i] = -1`` would not do: the walk following the store's node journal re-checks
  only the nodes the journal names and the marked positions).
  DynamicResources declares it (key: the claim specs; refreshed: the nodes whose pools'
  devices in use changed, `schedsim.dra.filter_cache`);
- the pods are identical in everything those plugins read (labels, node selector, affinity,
  tolerations, containers, init containers, overhead, pod-level resources);
- the node is unchanged: the entry carries the NodeInfo object and ``generation`` it was
  computed at, and every mutation of a NodeInfo (a pod added or removed, a new Node) gives
  it a new generation (a copy-on-write layer a new object). Where only the node's pods
  changed (the entry's ``Node`` object is the node's), the plugins that read the Node
  object alone (`NODE_ONLY_FILTER_PLUGINS`) keep their verdict: a rejection by one of the
  first of them to run stands, and after their success only the plugins after them run
  again (`FilterTable.node_only`).

Raw scores follow the same rule with `PURE_SCORE_PLUGINS` (each plugin on its own: a pod's
other plugins do not matter, its PreScore state is built from the pod alone; those of
`NODE_ONLY_SCORE_PLUGINS` are kept until the node's Node object changes);
NormalizeScore and the weights always run. An in-tree Score plugin whose raw score also
depends on something cluster-wide may declare it with a ``score_reuse_token(state)`` method
(ImageLocality: the spread of the pod's images over the cluster, from its PreScore state):
its raw scores are reused only while that token compares equal. Raw scores live in the
pod class's `FilterTable` (``scores``, one column per plugin, aligned with the node list)
when the Filter walk used it: every position the walk finds changed is cleared there, so
scoring reads the columns at the feasible positions with C-level look-ups
(`schedsim.scheduler.scoring.score_totals`). An in-tree Score plugin that can score all
the feasible nodes in one call declares ``score_nodes(state, pod, nodes)`` (PodTopologySpread:
once per distinct topology value); nothing of it is kept between pods.

When a table is keyed by more than the pod class (a plugin's ``filter_reuse_key``:
DynamicResources' claim specs), the raw scores are kept once per pod class instead
(`ClassScores`, shared by the tables of the class: pods whose claims differ score alike
with the pure plugins), with their own validity per position: the NodeInfo object and
generation (and ``Node`` object for the node-only columns) each was computed for, checked
at the feasible positions of each pod (O(feasible) C-level comparisons).

Error statuses are never stored. Explained pods use the cache too: their explanation is
derived from the same statuses, which are exact by the rule above. A revert brings back
NodeInfos with their old generations and their old contents, so entries stay valid.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import compress
from operator import attrgetter, is_not, ne
from typing import Any, NamedTuple

from schedsim.api.core import Pod
from schedsim.api.parts_memo import parts_memo
from schedsim.dra.extended import has_extended_resource_requests
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.interface import NodeInfo
from schedsim.framework.runtime import Framework
from schedsim.scheduler.scoring import BulkScoreFn, NodeScoreFactory, ScoreColumns
from schedsim.snapshot.plugin_runner import FilterTable

__all__ = [
    "NODE_ONLY_FILTER_PLUGINS",
    "NODE_ONLY_SCORE_PLUGINS",
    "PURE_FILTER_PLUGINS",
    "PURE_SCORE_PLUGINS",
    "UNIFORM_NORMALIZE",
    "ClassScores",
    "FailingClasses",
    "KeyedFilter",
    "ResultCache",
    "ScoreReuse",
]

PURE_FILTER_PLUGINS = frozenset(
    {
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
    }
)
"""In-tree Filter plugins whose status depends on the pod and one NodeInfo only."""

NODE_ONLY_FILTER_PLUGINS = frozenset(
    {"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity"}
)
"""The `PURE_FILTER_PLUGINS` whose status depends on the pod and the node's ``Node`` object
alone (its unschedulable flag, name, taints, labels), not on the pods on the node: a change
that only adds or removes pods cannot change their verdict (`FilterTable.node_only`).
NodePorts and NodeResourcesFit read the pods."""

PURE_SCORE_PLUGINS = frozenset(
    {"NodeResourcesFit", "NodeResourcesBalancedAllocation", "TaintToleration", "NodeAffinity"}
)
"""In-tree Score plugins whose raw score depends on the pod (through a PreScore state built
from the pod alone) and one NodeInfo only. Not ImageLocality: its score counts the nodes
that have each image across the cluster."""

NODE_ONLY_SCORE_PLUGINS = frozenset({"TaintToleration", "NodeAffinity", "ImageLocality"})
"""In-tree Score plugins whose raw score depends on the pod (and, for ImageLocality, its
``score_reuse_token``) and the node's ``Node`` object alone (taints, labels,
``status.images``), not on the pods on the node: kept in `FilterTable.node_scores`, cleared
only where the Node object changed. NodeResourcesFit and BalancedAllocation read the pods'
requests."""

UNIFORM_NORMALIZE = frozenset({"TaintToleration", "NodeAffinity"})
"""In-tree Score plugins whose NormalizeScore is kube-scheduler's ``DefaultNormalizeScore``
(nodes with equal raw scores get equal scores in [0, 100]; `ScoreColumns.uniform`)."""

KeyedFilter = tuple[str, tuple[str, ...]]
"""A Filter plugin evaluated once per distinct value of some node labels: (name, label keys)."""

ScoreReuse = dict[str, dict[NodeInfo, tuple[int, int]]]
"""Plugin -> NodeInfo -> (generation, raw score), for one class of identical pods."""

_IN_TREE_MODULE = "schedsim_plugins."
_GENERATION = attrgetter("generation")


class NodeJournal(NamedTuple):
    """The snapshot's node list and its change journal (`PredicateSnapshot.
    node_changes_since`), for `ResultCache.score_columns`."""

    nodes: Sequence[NodeInfo]
    changes_since: Callable[[object], tuple[object, list[str] | None]]


_KEY = "schedsim.scheduler.cache.key"


def _class_key(pod: Pod) -> str:
    """What the pure plugins read of a pod, as one string: computed once per pod object and
    distinct set of those parts' objects (pods of one template share them, `parts_memo`)."""
    parts = (
        pod.labels,
        pod.node_selector,
        pod.affinity,
        pod.tolerations,
        pod.containers,
        pod.init_containers,
        pod.overhead,
        pod.resources,
    )
    return parts_memo(pod, _KEY, parts, lambda: _class_key_text(pod))


def _class_key_text(pod: Pod) -> str:
    return repr(
        (
            sorted(pod.labels.items()),
            sorted(pod.node_selector.items()),
            pod.affinity,
            pod.tolerations,
            pod.containers,
            pod.init_containers,
            sorted(pod.overhead.items()),
            sorted(pod.resources.items()),
        )
    )


class ResultCache:
    """Filter statuses per class of identical pods, per node, for one profile.

    Args:
        framework: the profile; its plugins decide which results may be shared.

    Time: O(1) per look-up; memory O(pod classes x nodes evaluated).
    """

    def __init__(self, framework: Framework) -> None:
        plugins: dict[str, Any] = framework.plugins
        self._filter_plugins = framework.filter_plugin_names
        self._pure = frozenset(
            name
            for name in self._filter_plugins
            if name in PURE_FILTER_PLUGINS
            and type(plugins[name]).__module__.startswith(_IN_TREE_MODULE)
        )
        self._all_pure = len(self._pure) == len(self._filter_plugins)
        self._node_only = self._pure & NODE_ONLY_FILTER_PLUGINS
        self._declared = {
            name: plugins[name]
            for name in self._filter_plugins
            if name not in self._pure
            and type(plugins[name]).__module__.startswith(_IN_TREE_MODULE)
            and hasattr(plugins[name], "filter_reuse_key")
        }
        # in-tree plugins whose verdict is a function of some node label values
        # (``filter_topology_keys``; see `filter_cache`)
        self._keyed = {
            name: plugins[name].filter_topology_keys
            for name in self._filter_plugins
            if name not in self._pure
            and type(plugins[name]).__module__.startswith(_IN_TREE_MODULE)
            and hasattr(plugins[name], "filter_topology_keys")
        }
        self._dra_extended = framework.handle.feature_gates.enabled("DRAExtendedResource")
        self._filters: dict[object, FilterTable] = {}
        self._class_scores: dict[str, ClassScores] = {}
        self._last_table: dict[str, FilterTable] = {}
        self._pure_score = tuple(
            name
            for name in framework.score_weights
            if name in PURE_SCORE_PLUGINS
            and type(plugins[name]).__module__.startswith(_IN_TREE_MODULE)
        )
        self._scores: dict[str, ScoreReuse] = {}
        columns: list[tuple[str, Any, bool, bool]] = []
        normalizing = set(framework.normalize_score_plugin_names)
        for name in framework.score_weights:
            plugin = plugins[name]
            if not type(plugin).__module__.startswith(_IN_TREE_MODULE):
                continue
            token = getattr(plugin, "score_reuse_token", None)
            if name in PURE_SCORE_PLUGINS or token is not None:
                columns.append((name, token, name in normalizing, name in NODE_ONLY_SCORE_PLUGINS))
        self._columns = tuple(columns)
        # in-tree plugins giving their Score as a function of the node for one attempt
        # (`ScoreColumns.node_fns`)
        self._node_fns: dict[str, NodeScoreFactory] = {
            name: plugins[name].score_node_fn
            for name, *_ in columns
            if hasattr(plugins[name], "score_node_fn") and not framework.timed
        }
        # in-tree plugins scoring every feasible node in one call (`ScoreColumns.bulk`)
        self._bulk: dict[str, BulkScoreFn] = {
            name: plugins[name].score_nodes
            for name in framework.score_weights
            if type(plugins[name]).__module__.startswith(_IN_TREE_MODULE)
            and hasattr(plugins[name], "score_nodes")
        }

    def filter_cache(
        self, pod: Pod, state: CycleState, keyed: list[KeyedFilter] | None = None
    ) -> FilterTable | None:
        """The shared Filter results for ``pod``'s class, or None when the rule above does not
        allow sharing them for this attempt (``state`` says which plugins PreFilter skipped).

        With ``keyed`` (a list the caller passes empty), an in-tree plugin whose verdict
        depends only on the node's values of some labels and the pod's own state
        (``filter_topology_keys(state)``: PodTopologySpread, InterPodAffinity) does not stop
        the sharing when it runs after every other Filter plugin that runs: it is appended
        to ``keyed`` with
        its label keys, the table holds the other plugins' results, and the caller
        evaluates it once per distinct label value (`SchedulerPluginRunner.walk_rotating`).
        """
        declared: list[Any] = []
        before: list[str] = []  # the pure plugins that run before the first declared one
        if not self._all_pure:
            skip = state.skip_filter_plugins
            for n in self._filter_plugins:
                if n in skip:
                    continue
                if n in self._pure:
                    if keyed:  # a plugin the table holds runs after a keyed one
                        return None
                    if not declared:
                        before.append(n)
                    continue
                keys_fn = self._keyed.get(n) if keyed is not None else None
                if keys_fn is not None:
                    keys = keys_fn(state)
                    if keys is None:
                        return None
                    assert keyed is not None
                    keyed.append((n, keys))
                    continue
                plugin = self._declared.get(n)
                if plugin is None or keyed:
                    return None
                declared.append(plugin)
        if self._dra_extended and has_extended_resource_requests(pod):
            return None
        key: object = _class_key(pod)
        if declared:
            extra = [plugin.filter_reuse_key(state) for plugin in declared]
            if any(k is None for k in extra):
                return None
            key = (key, *extra)
        table = self._filters.get(key)
        if table is None:
            table = self._filters[key] = FilterTable(self._node_only)
            if declared:  # raw scores per pod class (the module docstring)
                class_key = _class_key(pod)
                shared = self._class_scores.get(class_key)
                if shared is None:
                    shared = self._class_scores[class_key] = ClassScores()
                table.class_scores = shared
                table.seed_prefix = frozenset(before)
        if declared:
            # node name -> position: the walk's own map when it keeps one (the delta store's
            # journal walk; a name it lacks is a node added since, whose position the walk
            # finds stale anyway), not one built over every node for every pod
            names = table.positions or dict(zip(table.names, range(len(table.names)), strict=True))
            for plugin in declared:
                if not plugin.filter_reuse_refresh(state, table, names):
                    return None
            # seeded by the class's table walked last (`FilterTable.seed`): the plugins
            # before the declared ones read only what the pod class names
            class_key = _class_key(pod)
            last = self._last_table.get(class_key)
            table.seed = last if last is not table else None
            self._last_table[class_key] = table
        return table

    def score_reuse(self, pod: Pod) -> ScoreReuse | None:
        """Raw scores of ``pod``'s class for the pure in-tree Score plugins of the profile
        (`PURE_SCORE_PLUGINS`; for `Framework.run_score_plugins`'s ``reuse``), or None when
        there are none or NodeResourcesFit would read DRA state (DRAExtendedResource)."""
        if not self._pure_score:
            return None
        if self._dra_extended and has_extended_resource_requests(pod):
            return None
        key = _class_key(pod)
        reuse = self._scores.get(key)
        if reuse is None:
            reuse = self._scores[key] = {name: {} for name in self._pure_score}
        return reuse

    def score_columns(
        self,
        pod: Pod,
        state: CycleState,
        table: FilterTable,
        feasible: Sequence[NodeInfo] | None = None,
        positions: Sequence[int] | None = None,
        journal: NodeJournal | None = None,
    ) -> ScoreColumns:
        """Raw score columns in ``table`` (``pod``'s class, just revalidated by the Filter
        walk over the whole node list) for the cacheable Score plugins that run for this
        attempt (after PreScore: ``state`` says which were skipped): those without
        NormalizeScore summed in one column, the others one column each. Nothing is kept
        when NodeResourcesFit would read DRA state (DRAExtendedResource). When the table
        keeps its scores per pod class (`ClassScores`), ``feasible`` and ``positions``
        (the nodes to score and their positions) are revalidated there first, from the
        snapshot's change journal when ``journal`` is given (the table was walked over the
        snapshot's node list, `FilterTable.journal`)."""
        if self._dra_extended and has_extended_resource_requests(pod):
            return ScoreColumns(frozenset(), None, {}, frozenset(), self._bulk)
        n = len(table.objs)
        skip = state.skip_score_plugins
        scores, node_scores, tokens = table.scores, table.node_scores, table.tokens
        shared = table.class_scores
        if isinstance(shared, ClassScores):
            if feasible is None or positions is None:
                return ScoreColumns(frozenset(), None, {}, frozenset(), self._bulk)
            if journal is not None and table.journal is not None:
                shared.revalidate_from(journal, table.positions, n)
            else:
                shared.revalidate(feasible, positions, n)
            scores, node_scores, tokens = shared.scores, shared.node_scores, shared.tokens
        # without NormalizeScore: summed, one sum for the plugins reading the node's pods and
        # one for those reading its Node object alone (kept until the Node object changes)
        summed: tuple[list[str], list[str]] = ([], [])
        summed_tokens: tuple[list[object], list[object]] = ([], [])
        raw: dict[str, list[int | None]] = {}
        for name, token_fn, normalizes, node_only in self._columns:
            if name in skip:
                continue
            token = None
            if token_fn is not None:
                token = token_fn(state)
                if token is None:
                    continue
            if not normalizes:
                summed[node_only].append(name)
                summed_tokens[node_only].append(token)
                continue
            stored = node_scores if node_only else scores
            raw[name] = _column(stored, tokens, name, token, n)
        # the whole sum in ``scores`` (one pass per pod; cleared where anything changed),
        # the node-only plugins' part also in ``node_scores`` (kept while the Node object is)
        every = summed[0] + summed[1]
        combined = None
        if every:
            key, token = "+".join(every), (*summed_tokens[0], *summed_tokens[1])
            combined = _column(scores, tokens, key, token, n)
        node_part = None
        if summed[1]:
            key, token = "+".join(summed[1]), tuple(summed_tokens[1])
            node_part = (frozenset(summed[1]), _column(node_scores, tokens, key, token, n))
        return ScoreColumns(
            frozenset(every),
            combined,
            raw,
            UNIFORM_NORMALIZE,
            self._bulk,
            node_part,
            self._node_fns,
        )

    def clear(self) -> None:
        """Forget everything (frees the memory; results stay valid otherwise)."""
        self._filters.clear()
        self._scores.clear()
        self._class_scores.clear()
        self._last_table.clear()


class ClassScores:
    """Raw score columns of one pod class shared by its `FilterTable` objects (the module
    docstring), position by position over the node list, with what each position's
    values were computed for: the NodeInfo object and generation (``scores``) and the
    ``Node`` object (``node_scores``, the node-only plugins')."""

    __slots__ = ("gens", "journal", "node_scores", "nodes", "objs", "scores", "tokens")

    def __init__(self) -> None:
        # the snapshot's change-journal token every position is valid for (None: only the
        # positions `revalidate` was last given are)
        self.journal: object = None
        self.objs: list[NodeInfo | None] = []
        self.gens: list[int] = []
        self.nodes: list[object] = []
        self.scores: dict[str, list[int | None]] = {}
        self.node_scores: dict[str, list[int | None]] = {}
        self.tokens: dict[str, object] = {}

    def revalidate(self, feasible: Sequence[NodeInfo], positions: Sequence[int], n: int) -> None:
        """Empty the values at the ``positions`` whose node (``feasible``, in the same
        order) is not the one they were computed for; ``n``: the node list's length.
        Time: O(len(feasible)) C-level comparisons + O(changed positions x columns)."""
        self.journal = None  # positions outside ``positions`` are not checked
        self._size(n)
        self._check(feasible, positions)

    def revalidate_from(self, journal: NodeJournal, index: Mapping[str, int], n: int) -> None:
        """`revalidate` for every position of the snapshot's node list (``journal.nodes``,
        ``n`` long; ``index``: node name -> position), from the change journal: the
        positions of the nodes changed since the last call, every position when that is
        not known. Time: O(changed nodes), or O(n) C-level comparisons."""
        nodes = journal.nodes
        token, written = journal.changes_since(self.journal)
        if written is None or len(self.objs) != n:
            self._size(n)
            self._check(nodes, range(n))
        else:
            changed = sorted({index[name] for name in written if name in index})
            self._check([nodes[i] for i in changed], changed)
        self.journal = token

    def _size(self, n: int) -> None:
        """Hold ``n`` positions, all empty, unless it does already."""
        if len(self.objs) != n:
            self.objs, self.gens, self.nodes = [None] * n, [-1] * n, [None] * n
            self.scores, self.node_scores, self.tokens = {}, {}, {}

    def _check(self, feasible: Sequence[NodeInfo], positions: Sequence[int]) -> None:
        objs, gens = self.objs, self.gens
        m = len(positions)
        stale = set(compress(range(m), map(is_not, map(objs.__getitem__, positions), feasible)))
        stale.update(
            compress(
                range(m), map(ne, map(gens.__getitem__, positions), map(_GENERATION, feasible))
            )
        )
        if not stale:
            return
        columns = list(self.scores.values())
        node_columns = list(self.node_scores.values())
        nodes = self.nodes
        for k in stale:
            i = positions[k]
            ni = feasible[k]
            for column in columns:
                column[i] = None
            if nodes[i] is not ni.node:
                for column in node_columns:
                    column[i] = None
                nodes[i] = ni.node
            objs[i], gens[i] = ni, ni.generation


def _column(
    stored: dict[str, list[int | None]], tokens: dict[str, object], key: str, token: object, n: int
) -> list[int | None]:
    """The column ``key`` of a `FilterTable` of ``n`` positions, emptied when its token
    changed or its length is not ``n``."""
    column = stored.get(key)
    if column is not None and (len(column) != n or tokens.get(key) != token):
        column = None
    if column is None:
        column = stored[key] = [None] * n
        tokens[key] = token
    return column


class FailingClasses:
    """First fit's rejection path made cheap (issue 17 item 3): a pod whose class (the
    `ResultCache` rule) already fitted nowhere is filtered through the class's `FilterTable`
    (earlier statuses reused on unchanged nodes, the same walk from the same start), so a
    run of unschedulable pods costs O(changed nodes) Filter calls each instead of one per
    node. Classes that never failed keep the plain walk (which stops at the first fitting
    node). Implements `schedsim.snapshot.plugin_runner.FailingClasses`.

    Args:
        cache: the profile's `ResultCache` (its sharing rule and tables).
    """

    def __init__(self, cache: ResultCache) -> None:
        self._cache = cache
        self._failed: set[str] = set()

    def table(self, pod: Pod, state: CycleState) -> FilterTable | None:
        """The class's table if the class failed before and may share results."""
        if _class_key(pod) not in self._failed:
            return None
        return self._cache.filter_cache(pod, state)

    def failed(self, pod: Pod, state: CycleState) -> None:
        """Remember that ``pod``'s class fitted nowhere (if it may share results)."""
        if self._cache.filter_cache(pod, state) is not None:
            self._failed.add(_class_key(pod))
