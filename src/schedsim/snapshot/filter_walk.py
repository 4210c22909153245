"""The data of a filter walk over the nodes: its result (`FilterWalk`: the feasible nodes,
why the others failed, the FitError kube-scheduler reports), the order nodes are tried in
(`NodeOrderMapping`, CA's round robin `LastIndexOrderMapping`) and the Filter results of a
class of identical pods kept across pods (`FilterTable`, `FailingClasses`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from schedsim.api.core import Node, Pod
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.fit_error import Diagnosis, FitError
from schedsim.framework.status import Code, Status
from schedsim.snapshot.infos import NodeInfo

__all__ = [
    "FailingClasses",
    "FilterTable",
    "FilterWalk",
    "LastIndexOrderMapping",
    "NodeOrderMapping",
    "absent_nodes_status",
]


class FilterTable:
    """Filter results of one class of identical pods over a node list, position by position:
    the NodeInfo object, its generation and the status each result was computed for.

    `SchedulerPluginRunner.walk_rotating` revalidates it in bulk (C-level comparisons of
    objects and generations), re-runs Filter only where something changed, and finds the
    feasible nodes with C-level slicing; entries count only while object and generation
    match.

    ``node_only`` (set by whoever creates the table) names the Filter plugins whose status
    depends on the pod and the node's ``Node`` object alone, not on its pods (e.g.
    TaintToleration). ``nodes`` keeps, per position, the ``Node`` object the status was
    computed with (None: unknown): when only the node's pods changed, a rejection by such a
    plugin stands, and otherwise only the plugins after them are run again.

    ``scores`` holds, per Score plugin the scheduler declared cacheable, a raw score per
    position (None: not computed for the current NodeInfo); every position the walk finds
    changed is set to None in each of them, so a value present is one computed for the
    NodeInfo object and generation the position holds now. ``node_scores`` holds the
    same for Score plugins whose raw score depends on the pod and the ``Node`` object alone
    (e.g. TaintToleration): those are set to None only where the ``Node`` object changed.
    ``seed`` (set by whoever hands the table out, with ``seed_prefix``) is a table of the
    same pod class whose pods differ only in what the plugins after ``seed_prefix`` read
    (DynamicResources' claim specs): where the walk would filter a position again and the
    seed holds a result for the node's current NodeInfo object and generation, a rejection
    by a ``seed_prefix`` plugin is taken from it, and after their success only the plugins
    after them run (a new claim spec's first walk then runs DynamicResources alone on most
    nodes).

    ``tokens`` is the scheduler's (what else a column's scores were computed for, e.g. the
    cluster's image spread). ``refreshed`` is the Filter plugins' that mark positions stale
    themselves (``filter_reuse_refresh``: e.g. the DRA state they last marked up to); `resize`
    keeps it: after a resize every position is stale, so what a plugin marked stays true.
    Such a plugin marks a position with `mark_stale`, which also lists it in ``marked``:
    the walk that takes the store's change journal (which names only the nodes whose
    NodeInfo changed) re-checks those positions too, and empties the list.

    Args:
        node_only: the Filter plugins whose status depends on the pod and the ``Node``
            object alone (see above; empty: every change re-runs every plugin).
    """

    __slots__ = (
        "class_scores",
        "gens",
        "journal",
        "marked",
        "names",
        "node_only",
        "node_scores",
        "nodeless",
        "nodes",
        "objs",
        "ok",
        "positions",
        "refreshed",
        "scores",
        "seed",
        "seed_prefix",
        "statuses",
        "tokens",
        "value_ids",
        "value_keys",
        "values",
    )

    def __init__(self, node_only: frozenset[str] = frozenset()) -> None:
        self.node_only = node_only
        # the scheduler's raw scores kept per pod class instead of in ``scores`` (when the
        # table is keyed by more than the pod class: `schedsim.scheduler.cache.ClassScores`)
        self.class_scores: object = None
        # the store's change-journal token this table is up to date with (None: compare
        # everything next time) and node name -> position as of that comparison
        self.journal: object = None
        self.positions: dict[str, int] = {}
        # positions `mark_stale` marked since the last walk (the journal does not name them)
        self.marked: list[int] = []
        self.objs: list[NodeInfo | None] = []
        self.gens: list[int] = []
        self.ok: list[bool] = []
        self.statuses: list[Status | None] = []
        self.names: list[str] = []
        self.nodes: list[Node | None] = []
        self.nodeless = False
        self.scores: dict[str, list[int | None]] = {}
        self.node_scores: dict[str, list[int | None]] = {}
        self.tokens: dict[str, object] = {}
        self.refreshed: dict[str, object] = {}
        # another table of the same pod class (keyed by more than the class: pods whose
        # claims differ) and the Filter plugins whose status both share (see above)
        self.seed: FilterTable | None = None
        self.seed_prefix: frozenset[str] = frozenset()
        # for keyed Filter plugins (`walk_rotating`'s ``keyed``): the label keys, per
        # position the id of the node's values of them (-1: not computed), and id -> values
        self.value_keys: tuple[str, ...] | None = None
        self.value_ids: list[int] = []
        self.values: dict[tuple[str | None, ...], int] = {}

    def value_id(self, i: int, ni: NodeInfo) -> int:
        """Record and return the id of the node's values of `value_keys` at position ``i``."""
        node = ni.node
        labels = node.labels if node is not None else {}
        value = tuple(labels.get(k) for k in self.value_keys or ())
        vid = self.values.get(value)
        if vid is None:
            vid = self.values[value] = len(self.values)
        self.value_ids[i] = vid
        return vid

    def mark_stale(self, i: int) -> None:
        """Make position ``i`` be filtered again by the next walk: its result may have
        changed for another reason than its NodeInfo (a plugin's ``filter_reuse_refresh``).
        Time: O(1)."""
        self.gens[i] = -1
        self.marked.append(i)

    def resize(self, n: int) -> None:
        """Forget every result and hold ``n`` positions, all stale (``refreshed`` is kept)."""
        self.objs = [None] * n
        self.gens = [-1] * n
        self.ok = [False] * n
        self.statuses = [None] * n
        self.names = [""] * n
        self.nodes = [None] * n
        self.nodeless = False
        self.scores = {}
        self.node_scores = {}
        self.tokens = {}
        self.journal = None
        self.positions = {}
        self.marked = []
        self.value_keys = None
        self.value_ids = [-1] * n
        self.values = {}


def absent_nodes_status(plugins: Iterable[str]) -> Status:
    """The status of nodes a PreFilterResult left out (``findNodesThatFitPod``:
    ``node(s) didn't satisfy plugin(s) [A B]``, the plugins sorted)."""
    return Status(
        Code.UnschedulableAndUnresolvable,
        (f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}]",),
    )


class FilterWalk:
    """What one `SchedulerPluginRunner.walk_filters` found.

    Attributes:
        feasible: NodeInfos that passed, in trial order.
        indices: their indices in the walked sequence.
        node_to_status: node name -> the first rejecting status (when recorded).
        absent: nodes passed over because a PreFilterResult left them out.
        error: the Error status that ended the walk, or None.
    """

    __slots__ = ("absent", "error", "feasible", "indices", "node_to_status", "rejected")

    def __init__(
        self,
        feasible: list[NodeInfo],
        indices: list[int],
        node_to_status: dict[str, Status],
        absent: int,
        error: Status | None,
        rejected: int | None = None,
    ) -> None:
        self.feasible = feasible
        self.indices = indices
        self.node_to_status = node_to_status
        self.absent = absent
        self.error = error
        self.rejected = len(node_to_status) if rejected is None else rejected

    @property
    def processed(self) -> int:
        """Nodes whose Filter result was taken (run or cached): feasible + rejected, what
        kube-scheduler advances ``nextStartNodeIndex`` by."""
        return len(self.feasible) + self.rejected

    def fit_error(self, num_all_nodes: int, narrowing: Sequence[str] | None) -> FitError:
        """The FitError for a walk that found nothing; ``narrowing`` names the plugins whose
        PreFilterResult left nodes out (None: no narrowing)."""
        return FitError(
            num_all_nodes,
            Diagnosis(
                node_to_status=self.node_to_status,
                absent_nodes_status=None if narrowing is None else absent_nodes_status(narrowing),
                absent_nodes=self.absent,
            ),
        )


class NodeOrderMapping(Protocol):
    """The order in which nodes are tried (CA ``NodeOrderMapping``)."""

    def reset(self, nodes: Sequence[NodeInfo]) -> None:
        """Called at the start of every search."""
        ...

    def at(self, i: int) -> int:
        """Node index for step ``i``; -1 stops the search."""
        ...

    def mark_match(self, index: int) -> None:
        """Called with the chosen node's index."""
        ...


class LastIndexOrderMapping:
    """Round robin: step ``i`` tries node ``(i + offset + last) % n`` where ``last`` is the
    index chosen last (CA ``NewLastIndexOrderMapping``; the runner's default uses offset 1, so
    the search for the next pod starts after the node chosen for the previous one)."""

    __slots__ = ("_last", "_n", "_offset")

    def __init__(self, offset: int = 1) -> None:
        self._offset = offset
        self._last = 0
        self._n = 0

    def reset(self, nodes: Sequence[NodeInfo]) -> None:
        """Remember the node count."""
        self._n = len(nodes)

    def at(self, i: int) -> int:
        """The node index for step ``i`` (-1 for an empty list)."""
        if self._n == 0:
            return -1
        return (i + self._offset + self._last) % self._n

    def mark_match(self, index: int) -> None:
        """Start after ``index`` next time."""
        self._last = index


class FailingClasses(Protocol):
    """Filter tables for pods of classes that failed before (first fit's rejection path,
    `SchedulerPluginRunner.find_node`); the scheduler's `schedsim.scheduler.FailingClasses`
    decides which pods share results. A Protocol: implementations don't inherit from it."""

    def table(self, pod: Pod, state: CycleState) -> FilterTable | None:
        """The shared table of ``pod``'s class if that class failed before (after
        PreFilter: ``state``), else None."""
        ...

    def failed(self, pod: Pod, state: CycleState) -> None:
        """``pod`` fitted nowhere: later pods of its class use a table."""
        ...
