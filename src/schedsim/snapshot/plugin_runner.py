"""Runs the framework's plugins against the snapshot's NodeInfos.

Mirrors CA ``predicate/plugin_runner.go`` (RunFiltersOnNode, RunFiltersUntilPassingNode,
RunReserveOnNode) with parallelism 1: the result is the first passing node in iteration
order. `diagnose` adds what kube-scheduler's ``findNodesThatFitPod`` records for a pod that
fits nowhere (every node's first failing status), which CA discards. A walk's result, the
node orderings and the per-class Filter tables are in `schedsim.snapshot.filter_walk`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from itertools import chain, compress, islice
from operator import and_, attrgetter, itemgetter
from typing import Protocol

from schedsim.api.core import Pod
from schedsim.api.positions import differences
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.fit_error import Diagnosis, FitError
from schedsim.framework.hookspec import PreFilterResult
from schedsim.framework.runtime import Framework, PluginError
from schedsim.framework.status import Code, Status
from schedsim.snapshot.errors import NodeNotFoundError, SchedulingError
from schedsim.snapshot.filter_walk import (
    FailingClasses,
    FilterTable,
    FilterWalk,
    LastIndexOrderMapping,
    NodeOrderMapping,
    absent_nodes_status,
)
from schedsim.snapshot.infos import NodeInfo

__all__ = [
    "RESERVE_REJECTED",
    "FailingClasses",
    "FilterTable",
    "FilterWalk",
    "LastIndexOrderMapping",
    "NodeOrderMapping",
    "SchedulerPluginRunner",
    "absent_nodes_status",
]

RESERVE_REJECTED = "Reserve rejected the pod"
"""``SchedulingError.unexpected_error`` when a Reserve plugin rejected the chosen node."""


_GENERATION = attrgetter("generation")
_EAGER_KEYED_VALUES = 16
"""Up to this many distinct keyed label values, `walk_rotating` runs the keyed plugins once
per value over the whole table; past it, lazily along the walk (`_walk_keyed_lazily`)."""


class _Lister(Protocol):
    def get_node_info(self, node_name: str) -> NodeInfo: ...

    def list_node_infos(self) -> Sequence[NodeInfo]: ...

    def node_changes_since(self, token: object) -> tuple[object, list[str] | None]: ...


class SchedulerPluginRunner:
    """Runs PreFilter/Filter/Reserve of ``framework`` over the NodeInfos of ``snapshot``.

    Args:
        framework: the profile's runtime.
        snapshot: where NodeInfos come from (the `PredicateSnapshot`).
        node_ordering: default ordering for any-node searches (round robin after the last
            chosen node).
        skip_unschedulable_nodes: any-node searches skip cordoned nodes without running
            Filter, as CA does; False leaves them to the NodeUnschedulable plugin, as
            kube-scheduler does (pods tolerating the unschedulable taint, e.g. DaemonSet
            pods, can then land there).
    """

    def __init__(
        self,
        framework: Framework,
        snapshot: _Lister,
        node_ordering: NodeOrderMapping | None = None,
        skip_unschedulable_nodes: bool = True,
    ) -> None:
        self.framework = framework
        self._filter_names = framework.filter_plugin_names
        self._snapshot = snapshot
        # the store's change journal (`ClusterSnapshotStore.changes_since`)
        self._changes_since = snapshot.node_changes_since
        self._ordering = node_ordering or LastIndexOrderMapping(1)
        self._skip_unschedulable = skip_unschedulable_nodes
        self.failing_classes: FailingClasses | None = None
        """Set by a scheduling loop to make pods that fit nowhere cheap in `find_node`."""

    def _pre_filter(
        self, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[CycleState, frozenset[str] | None, tuple[str, ...]]:
        """Run PreFilter; returns the state, the allowed node names (None = all) and the
        plugins that narrowed them. The outcomes that depend on the pod alone come from an
        earlier attempt of the pod (`Framework.run_pre_filter_plugins_reusing`): CA's
        simulations place the same pods again and again."""
        state = CycleState()
        result, status, plugins = self.framework.run_pre_filter_plugins_reusing(state, pod, nodes)
        if not status.is_success:
            name = status.plugin or ", ".join(plugins)
            raise SchedulingError.failing_predicate(
                pod, name, status.reasons, unexpected_error="PreFilter failed"
            )
        return state, None if result is None else result.node_names, plugins

    def _filter_error(self, pod: Pod, node: NodeInfo, status: Status) -> SchedulingError:
        unexpected = "" if status.is_rejected else f'unexpected filter status "{status.code.value}"'
        name = node.node.name if node.node else ""
        debug = f'nodeName: "{name}"'
        if status.plugin == "TaintToleration" and node.node is not None:
            debug += f", nodeTaints: {list(node.node.taints)!r}"
        return SchedulingError.failing_predicate(
            pod, status.plugin, status.reasons, unexpected_error=unexpected, debug_info=debug
        )

    def run_filters_on_node(self, pod: Pod, node_name: str) -> tuple[NodeInfo, CycleState]:
        """PreFilter then Filter on one node (RunFiltersOnNode).

        Returns:
            the NodeInfo and the CycleState to pass to `run_reserve_on_node`.

        Raises:
            SchedulingError: INTERNAL_ERROR for a missing node; FAILING_PREDICATE naming the
                plugin and its reasons when PreFilter or a Filter rejects (a node left out by
                a PreFilterResult fails named after the narrowing plugins, with
                kube-scheduler's reason ``node(s) didn't satisfy plugin(s) [A B]``).
        """
        try:
            node_info = self._snapshot.get_node_info(node_name)
        except NodeNotFoundError as e:
            raise SchedulingError.internal(
                pod, f'error obtaining NodeInfo for name "{node_name}": {e}'
            ) from None
        state, allowed, plugins = self._pre_filter(pod, self._snapshot.list_node_infos())
        if allowed is not None and node_name not in allowed:
            # CA names the plugins that narrowed the node set (strings.Join(..., ", ")) and
            # gives no reason ("PreFilter filtered the Node out"); schedsim gives
            # kube-scheduler's reason for such a node, so simulate, schedule_pod and scale-up
            # word it the same way.
            raise SchedulingError.failing_predicate(
                pod, ", ".join(plugins), absent_nodes_status(plugins).reasons
            )
        status = self.framework.run_filter_plugins(state, pod, node_info)
        if not status.is_success:
            raise self._filter_error(pod, node_info, status)
        return node_info, state

    def walk_filters(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        order: Iterable[int],
        num_to_find: int,
        *,
        allowed: frozenset[str] | None = None,
        is_node_acceptable: Callable[[NodeInfo], bool] | None = None,
        skip_unschedulable: bool = False,
        record: bool = True,
        stop_on_error: bool = True,
        run_filter: Callable[[CycleState, Pod, NodeInfo], Status] | None = None,
    ) -> FilterWalk:
        """The one filter walk: Filter node by node in ``order`` until ``num_to_find`` nodes
        pass (kube-scheduler ``findNodesThatPassFilters`` with parallelism 1, CA
        ``RunFiltersUntilPassingNode`` with ``num_to_find`` 1, a diagnosis with ``len(nodes)``).

        Args:
            state: the CycleState PreFilter filled.
            nodes: the candidate NodeInfos.
            order: indices into ``nodes``, in trial order; a negative index stops the walk
                (CA's `NodeOrderMapping`).
            num_to_find: stop once this many nodes passed.
            allowed: node names a PreFilterResult kept (None = all); others are passed over
                without running Filter and without a status (``absent`` counts them).
            is_node_acceptable: nodes it refuses are passed over (CA's predicate).
            skip_unschedulable: pass over cordoned nodes without running Filter (CA).
            record: keep each rejected node's status (kube-scheduler's Diagnosis).
            stop_on_error: an Error status ends the walk (kube-scheduler aborts the attempt);
                False treats it as a rejection (CA's runner, a diagnosis).
            run_filter: the Filter run per node (default: ``framework.run_filter_plugins``;
                the scheduler passes ``run_filter_plugins_with_nominated_pods`` while pods
                are nominated).

        Returns:
            the `FilterWalk`; with ``stop_on_error`` it ends at the first Error status (in
            ``error``).

        Time: O(nodes tried) Filter chains.
        """
        feasible: list[NodeInfo] = []
        indices: list[int] = []
        statuses: dict[str, Status] = {}
        if run_filter is None:
            run_filter = self.framework.run_filter_plugins
        absent = 0
        success = Code.Success
        for idx in order:
            if idx < 0:
                break
            ni = nodes[idx]
            node = ni.node
            if node is None or (skip_unschedulable and node.unschedulable):
                continue
            name = node.name
            if allowed is not None and name not in allowed:
                absent += 1
                continue
            if is_node_acceptable is not None and not is_node_acceptable(ni):
                continue
            st = run_filter(state, pod, ni)
            if st.code is success:
                feasible.append(ni)
                indices.append(idx)
                if len(feasible) >= num_to_find:
                    break
            elif stop_on_error and st.code is Code.Error:
                return FilterWalk(feasible, indices, statuses, absent, st)
            elif record:
                statuses[name] = st
        return FilterWalk(feasible, indices, statuses, absent, None)

    def walk_rotating(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        start: int,
        num_to_find: int,
        table: FilterTable,
        *,
        record: bool = False,
        keyed: Sequence[tuple[str, tuple[str, ...]]] = (),
    ) -> FilterWalk:
        """kube-scheduler's walk (`walk_filters` over ``nodes`` from ``start`` round the list,
        stopping at the first Error) with the results of earlier identical pods in ``table``:
        the same result, computed in bulk.

        Every position whose NodeInfo object or generation changed since ``table`` saw it is
        filtered again (also outside the window kube-scheduler would walk: O(changes));
        where the ``Node`` object is the one the table's result was computed with (only the
        pods changed), the first plugins to run that are in ``table.node_only`` keep their
        verdict: their rejection stands without a call, and after their success only the
        plugins after them run (the Filter chain stops at the first rejection, so the
        status is the one the whole chain gives); the
        feasible nodes are then the first ``num_to_find`` passing positions in rotation order
        (``compress``/``islice`` over the table), and the nodes processed those up to the last
        of them. An Error status counts only if kube-scheduler's walk would have reached it.

        Args:
            record: fill ``node_to_status`` for the rejected nodes of the window (always
                done when no node passes: the FitError needs them).
            keyed: Filter plugins (name, label keys), the last ones to run, whose verdict
                depends only on the node's values of those labels (and ``state``): the
                table holds the other plugins' results, and each keyed plugin runs once
                per distinct value tuple (on one node holding it) instead of per node
                (`schedsim.scheduler.cache.ResultCache.filter_cache`); past
                `_EAGER_KEYED_VALUES` values, only for the values met along the walk.

        The changed positions come from the store's change journal (`DeltaSnapshotStore.
        changes_since`) when ``nodes`` is the snapshot's own list and the table is up to date
        with an earlier token of the same store, with the positions a plugin marked
        (`FilterTable.mark_stale`: the journal names only nodes whose NodeInfo changed);
        otherwise every position is compared.

        Time: O(changed nodes) look-ups with the journal, else O(nodes) C-level comparisons;
        + O(changed nodes) Filter chains + O(nodes) C-level slicing for the rotation.
        """
        n = len(nodes)
        if n == 0:
            return FilterWalk([], [], {}, 0, None)
        # what changed since the table was last brought up to date: from the store's change
        # journal when ``nodes`` is the snapshot's list (O(changes)), else by comparing every
        # position's object and generation (C-level, O(nodes))
        token, written = (
            self._changes_since(table.journal)
            if nodes is self._snapshot.list_node_infos()
            else (None, None)
        )
        stale: Iterable[int]
        if written is not None and len(table.objs) == n:
            positions = table.positions
            found_stale = {positions[name] for name in written if name in positions}
            # and the positions a plugin marked (`FilterTable.mark_stale`: e.g. the devices
            # in use of a node's pool changed while its NodeInfo did not), which the
            # journal does not name
            found_stale.update(table.marked)
            stale = sorted(found_stale)
        else:
            cur = list(map(_GENERATION, nodes))
            if len(table.objs) != n:
                table.resize(n)
                stale = range(n)
            else:
                changed: list[int] = []
                differences(cur, table.gens, 0, n, changed)
                differences(list(nodes), table.objs, 0, n, changed)
                stale = sorted(set(changed))
            if token is not None:
                table.positions = {
                    ni.node.name: i for i, ni in enumerate(nodes) if ni.node is not None
                }
        table.journal = token
        table.marked = []  # all in ``stale`` (the comparison sees their generation -1)
        objs, gens, ok, statuses, names = (
            table.objs,
            table.gens,
            table.ok,
            table.statuses,
            table.names,
        )
        errors: list[int] = []
        columns = list(table.scores.values())
        node_columns = list(table.node_scores.values())
        skip = state.skip_filter_plugins
        keyed_names = {name for name, _ in keyed} - skip
        keys = tuple(k for _, ks in keyed for k in ks)
        if keyed and table.value_keys != keys:
            table.value_keys, table.values, table.value_ids = keys, {}, [-1] * n
            for i in range(n):
                table.value_id(i, nodes[i])
        skip.update(keyed_names)  # the table holds the other plugins' results
        # the first plugins to run whose status reads the Node object alone: where only the
        # node's pods changed, their rejection stands and, after their success, only the
        # plugins after them run again
        prefix: set[str] = set()
        if table.node_only:
            node_only = table.node_only
            for name in self._filter_names:
                if name in skip:
                    continue
                if name not in node_only:
                    break
                prefix.add(name)
        tnodes = table.nodes
        pods_changed: list[int] = []
        refilter: list[int] = []
        # a table of the same pod class (`FilterTable.seed`): where it holds a result for
        # the node's NodeInfo, its ``seed_prefix`` plugins' verdict is this table's too
        seed = table.seed
        seed_prefix: frozenset[str] = frozenset()
        if seed is not None and len(seed.objs) == n:
            seed_prefix = table.seed_prefix - skip
        if not seed_prefix:
            seed = None
        seeded: list[int] = []
        try:
            for i in stale:
                for column in columns:
                    column[i] = None
                ni = nodes[i]
                node = ni.node
                if prefix and node is tnodes[i] and node is not None:
                    # only the pods changed
                    if statuses[i].plugin in prefix:  # type: ignore[union-attr]
                        objs[i], gens[i] = ni, ni.generation  # the same rejection
                    elif seed is None or not (k := _seeded(seed, seed_prefix, table, i, ni)):
                        pods_changed.append(i)
                    elif k == _RUN_REST:
                        seeded.append(i)
                    continue
                for column in node_columns:
                    column[i] = None
                if table.value_keys is not None:
                    table.value_id(i, ni)
                tnodes[i] = node
                if node is None:  # never feasible, never recorded (as in walk_filters)
                    objs[i], gens[i], ok[i], statuses[i] = ni, ni.generation, False, None
                    table.nodeless = True
                    continue
                names[i] = node.name
                if seed is None or not (k := _seeded(seed, seed_prefix, table, i, ni)):
                    refilter.append(i)
                elif k == _RUN_REST:
                    seeded.append(i)
            if refilter:
                self._refilter(state, pod, nodes, refilter, table, errors)
            if pods_changed:
                skip.update(prefix)  # they passed on this Node object
                self._refilter(state, pod, nodes, pods_changed, table, errors)
            if seeded:
                skip.update(seed_prefix)  # they passed on this NodeInfo (the seed's result)
                self._refilter(state, pod, nodes, seeded, table, errors)
        finally:
            skip.difference_update(keyed_names)
            skip.difference_update(prefix)
            skip.difference_update(seed_prefix)
        if keyed_names and len(table.values) > _EAGER_KEYED_VALUES:
            return self._walk_keyed_lazily(
                state, pod, nodes, table, keyed_names, start, num_to_find, errors, record
            )
        passing: list[bool] = ok
        verdicts: list[Status | None] = []
        keyed_errors: dict[int, Status] = {}
        if keyed_names:
            passing, verdicts = self._keyed_verdicts(state, pod, nodes, table, keyed_names)
            bad = {v for v, st in enumerate(verdicts) if st is not None and st.code is Code.Error}
            if bad:  # where the sequential walk would have run the keyed plugin and failed
                vids = table.value_ids
                for i in range(n):
                    if ok[i] and vids[i] in bad:
                        errors.append(i)
                        keyed_errors[i] = verdicts[vids[i]]  # type: ignore[assignment]
        # the passing positions in rotation order, without copying ``passing`` rotated
        rotation = chain(
            compress(range(start, n), islice(passing, start, None)),
            compress(range(start), passing),
        )
        found = list(islice(rotation, num_to_find))
        processed = n if len(found) < num_to_find else (found[-1] - start) % n + 1
        if errors:
            first = min((i - start) % n for i in errors)
            if first < processed:  # the sequential walk stops there
                at = (first + start) % n
                return FilterWalk([], [], {}, 0, keyed_errors.get(at) or statuses[at])
        return _window(nodes, table, start, found, processed, record, passing, verdicts)

    def _refilter(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        positions: list[int],
        table: FilterTable,
        errors: list[int],
    ) -> None:
        """Run Filter (`Framework.filter_chain`: the skipped plugins read once) on the nodes
        at ``positions`` of ``table`` and store the results; an Error status is not stored
        (``errors`` gets the position: filtered again next time)."""
        run = self.framework.filter_chain(state, pod)
        objs, gens, ok, statuses = table.objs, table.gens, table.ok, table.statuses
        success, error = Code.Success, Code.Error
        for i in positions:
            ni = nodes[i]
            st = statuses[i] = run(ni)
            code = st.code
            if code is not error:
                ok[i] = code is success
                objs[i] = ni
                gens[i] = ni.generation
            else:
                ok[i] = False
                errors.append(i)
                objs[i], gens[i], table.nodes[i] = None, -1, None
                table.journal = None  # the journal will not name it again

    def _walk_keyed_lazily(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        table: FilterTable,
        keyed_names: set[str],
        start: int,
        num_to_find: int,
        errors: list[int],
        record: bool,
    ) -> FilterWalk:
        """The end of `walk_rotating` when the keyed plugins' label values are many (a
        hostname key: one per node): the keyed plugins run (alone, in profile order) on the
        positions the table passes, in rotation order, once per value id, until
        ``num_to_find`` pass or one gives an Error, as the sequential walk meets them;
        evaluating every value id would cost a call per node.

        Time: O(positions walked) look-ups + a keyed call per distinct value among them."""
        n = len(nodes)
        ok, vids, statuses = table.ok, table.value_ids, table.statuses
        skip = state.skip_filter_plugins
        others = set(self.framework.filter_plugin_names) - keyed_names - skip
        run = self.framework.run_filter_plugins
        success, error = Code.Success, Code.Error
        verdicts: dict[int, Status] = {}
        found: list[int] = []
        keyed_error: int | None = None
        rotation = chain(
            compress(range(start, n), islice(ok, start, None)), compress(range(start), ok)
        )
        skip.update(others)
        try:
            for i in rotation:
                v = vids[i]
                st = verdicts.get(v)
                if st is None:
                    st = verdicts[v] = run(state, pod, nodes[i])
                if st.code is success:
                    found.append(i)
                    if len(found) >= num_to_find:
                        break
                elif st.code is error:
                    keyed_error = i
                    break
        finally:
            skip.difference_update(others)
        processed = n if len(found) < num_to_find else (found[-1] - start) % n + 1
        stops = [(i - start) % n for i in errors]
        if keyed_error is not None:
            stops.append((keyed_error - start) % n)
        if stops and min(stops) < processed:  # the sequential walk stops at that Error
            at = (min(stops) + start) % n
            st_at = verdicts[vids[at]] if at == keyed_error else statuses[at]
            return FilterWalk([], [], {}, 0, st_at)
        passed = set(found)
        return _window(nodes, table, start, found, processed, record, passed, verdicts)

    def _keyed_verdicts(
        self,
        state: CycleState,
        pod: Pod,
        nodes: Sequence[NodeInfo],
        table: FilterTable,
        keyed_names: set[str],
    ) -> tuple[list[bool], list[Status | None]]:
        """The keyed plugins' status per value id (run alone, in profile order, on one node
        holding the values; None: no position holds them), and per position whether the
        table's result and the keyed verdict both pass. Time: O(value ids) Filter calls +
        O(value ids x nodes) C-level searches, + O(nodes) C-level when some value fails."""
        vids = table.value_ids
        skip = state.skip_filter_plugins
        others = set(self.framework.filter_plugin_names) - keyed_names - skip
        verdicts: list[Status | None] = [None] * len(table.values)
        good = [False] * len(verdicts)
        skip.update(others)
        try:
            for v in range(len(verdicts)):
                try:
                    i = vids.index(v)
                except ValueError:
                    continue  # no position holds these values any more
                st = self.framework.run_filter_plugins(state, pod, nodes[i])
                verdicts[v] = st
                good[v] = st.code is Code.Success
        finally:
            skip.difference_update(others)
        if all(good[v] for v, st in enumerate(verdicts) if st is not None):
            return table.ok, verdicts
        return list(map(and_, table.ok, map(good.__getitem__, vids))), verdicts

    def run_filters_until_passing_node(
        self,
        pod: Pod,
        is_node_acceptable: Callable[[NodeInfo], bool] | None = None,
        node_ordering: NodeOrderMapping | None = None,
    ) -> tuple[NodeInfo, CycleState]:
        """PreFilter once, then Filter node by node until one passes
        (RunFiltersUntilPassingNode with parallelism 1): `walk_filters` for one node.

        Nodes are skipped without running Filter when a PreFilterResult excludes them, when
        ``spec.unschedulable`` is set (as CA does; see ``skip_unschedulable_nodes``) or when
        ``is_node_acceptable`` says no.

        Raises:
            SchedulingError: FAILING_PREDICATE when PreFilter rejects;
                NO_NODES_PASSING_PREDICATES when no node passes.
        """
        nodes = self._snapshot.list_node_infos()
        state, allowed, _ = self._pre_filter(pod, nodes)
        ordering = node_ordering or self._ordering
        ordering.reset(nodes)
        at = ordering.at
        walk = self.walk_filters(
            state,
            pod,
            nodes,
            map(at, range(len(nodes))),
            1,
            allowed=allowed,
            is_node_acceptable=is_node_acceptable,
            skip_unschedulable=self._skip_unschedulable,
            record=False,
            stop_on_error=False,  # CA counts a plugin Error as a failing node
        )
        if walk.feasible:
            ordering.mark_match(walk.indices[0])
            return walk.feasible[0], state
        raise SchedulingError.no_nodes_passing(pod)

    def pre_filter_or_fit_error(
        self, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[CycleState, PreFilterResult | None, tuple[str, ...]] | FitError:
        """Run PreFilter for a kube-scheduler attempt (``findNodesThatFitPod``'s first step).

        Returns:
            ``(state, result, narrowing_plugins)``, or the FitError when PreFilter rejects
            the pod (or there are no nodes: ``no nodes available to schedule pods``).

        Raises:
            SchedulingError: INTERNAL_ERROR when a PreFilter plugin returns an Error status.
        """
        if not nodes:
            return FitError(0, Diagnosis())
        state = CycleState()
        result, status, plugins = self.framework.run_pre_filter_plugins(state, pod, nodes)
        if not status.is_success:
            if status.code is Code.Error:
                raise SchedulingError.internal(pod, status.message)
            return FitError(len(nodes), Diagnosis(pre_filter_status=status))
        return state, result, plugins

    def find_node(self, pod: Pod) -> tuple[NodeInfo, CycleState] | FitError:
        """First fit with kube-scheduler's diagnosis, in one pass: PreFilter once, then
        `walk_filters` for one node (round robin, as `run_filters_until_passing_node`, but
        cordoned nodes are left to the NodeUnschedulable plugin), recording why each node
        failed. No node passing gives the FitError kube-scheduler reports, without a second
        pass.

        Returns:
            the passing NodeInfo and its CycleState, or the FitError.

        Raises:
            SchedulingError: INTERNAL_ERROR when a plugin returns an Error status (kube-scheduler
                aborts the attempt).
        """
        nodes = self._snapshot.list_node_infos()
        pre = self.pre_filter_or_fit_error(pod, nodes)
        if isinstance(pre, FitError):
            return pre
        state, result, plugins = pre
        allowed = None if result is None else result.node_names
        ordering = self._ordering
        ordering.reset(nodes)
        classes = self.failing_classes if allowed is None and nodes else None
        table = None
        if classes is not None and isinstance(ordering, LastIndexOrderMapping):
            table = classes.table(pod, state)
        if table is not None:
            # the same walk from the same start, earlier results of the class reused
            walk = self.walk_rotating(state, pod, nodes, ordering.at(0), 1, table)
        else:
            walk = self.walk_filters(
                state, pod, nodes, map(ordering.at, range(len(nodes))), 1, allowed=allowed
            )
        if walk.error is not None:
            raise SchedulingError.internal(pod, walk.error.message)
        if walk.feasible:
            ordering.mark_match(walk.indices[0])
            return walk.feasible[0], state
        if classes is not None and table is None:
            classes.failed(pod, state)
        return walk.fit_error(len(nodes), plugins if allowed is not None else None)

    def run_reserve_on_node(self, pod: Pod, node_name: str, state: CycleState) -> None:
        """Run Reserve with the CycleState Filter produced for this node (RunReserveOnNode);
        on failure run Unreserve.

        Raises:
            SchedulingError: FAILING_PREDICATE naming the plugin when a Reserve plugin rejects
                the pod (kube-scheduler then reports a FitError for that node; CA reports an
                internal error), with ``unexpected_error`` = `RESERVE_REJECTED`;
                INTERNAL_ERROR ``couldn't reserve node X for pod NS/NAME: ...`` for an Error
                status or a failing Unreserve.
        """
        status = self.framework.run_reserve_plugins_reserve(state, pod, node_name)
        if status.is_success:
            return
        try:
            self.framework.run_reserve_plugins_unreserve(state, pod, node_name)
        except PluginError as e:
            raise SchedulingError.internal(pod, str(e)) from None
        if status.is_rejected:
            raise SchedulingError.failing_predicate(
                pod,
                status.plugin,
                status.reasons,
                unexpected_error=RESERVE_REJECTED,
                debug_info=f'nodeName: "{node_name}"',
                node_name=node_name,
            )
        raise SchedulingError.internal(
            pod, f"couldn't reserve node {node_name} for pod {pod.key}: {status.message}"
        )

    def diagnose(self, pod: Pod) -> FitError:
        """Run PreFilter and every node's Filters and record why each node rejects the pod,
        as kube-scheduler's ``findNodesThatFitPod`` does for its FitError (`walk_filters`
        over every node, in list order). Does not mutate.
        """
        nodes = self._snapshot.list_node_infos()
        state = CycleState()
        result, status, plugins = self.framework.run_pre_filter_plugins(state, pod, nodes)
        if not status.is_success:
            return FitError(len(nodes), Diagnosis(pre_filter_status=status))
        allowed = None if result is None else result.node_names
        walk = self.walk_filters(
            state,
            pod,
            nodes,
            range(len(nodes)),
            len(nodes) + 1,
            allowed=allowed,
            stop_on_error=False,
        )
        return walk.fit_error(len(nodes), plugins if allowed is not None else None)


_COPIED, _RUN_REST = 1, 2  # `_seeded`'s answers (0: the seed does not know)


def _seeded(
    seed: FilterTable, prefix: frozenset[str], table: FilterTable, i: int, ni: NodeInfo
) -> int:
    """Position ``i`` of ``table`` from its ``seed`` (`FilterTable.seed`): 0 when the seed
    holds no result for ``ni`` (the NodeInfo object and generation the position has now);
    `_COPIED` for a rejection by a ``prefix`` plugin (stored in ``table``: the same
    status); else `_RUN_REST`: the ``prefix`` plugins passed, the caller runs the others."""
    if seed.objs[i] is not ni or seed.gens[i] != ni.generation:
        return 0
    st = seed.statuses[i]
    if st is None:
        return 0
    if st.plugin in prefix:
        table.statuses[i], table.ok[i] = st, False
        table.objs[i], table.gens[i] = ni, ni.generation
        return _COPIED
    return _RUN_REST


def _window(
    nodes: Sequence[NodeInfo],
    table: FilterTable,
    start: int,
    found: list[int],
    processed: int,
    record: bool,
    passing: Sequence[bool] | AbstractSet[int],
    verdicts: Sequence[Status | None] | Mapping[int, Status],
) -> FilterWalk:
    """The `walk_rotating` result: the feasible positions ``found``, and the rejected ones
    among the first ``processed`` positions from ``start`` (their statuses when ``record`` or
    nothing passed: the table's, or the keyed plugins' verdict by value id where the table
    passed). ``passing``: per position (a list) or the passing positions (a set)."""
    n = len(nodes)
    ok, statuses, names = table.ok, table.statuses, table.names
    # itemgetter: one C call for all of them (about half the cost of a map over __getitem__)
    feasible = list(itemgetter(*found)(nodes)) if len(found) > 1 else [nodes[i] for i in found]
    rejected = processed - len(found)
    node_to_status: dict[str, Status] = {}
    if record or not found:
        vids = table.value_ids
        by_set = isinstance(passing, AbstractSet)
        for p in range(processed):
            i = (p + start) % n
            if (i in passing) if by_set else passing[i]:  # type: ignore[index]
                continue
            st_i = verdicts[vids[i]] if ok[i] else statuses[i]
            if st_i is not None:
                node_to_status[names[i]] = st_i
        rejected = len(node_to_status)
    elif table.nodeless:  # positions without a Node: neither feasible nor rejected
        rejected -= sum(1 for p in range(processed) if statuses[(p + start) % n] is None)
    return FilterWalk(feasible, found, node_to_status, 0, None, rejected)
