"""kube-scheduler's scheduling algorithm for one pod over a `PredicateSnapshot`.

Mirrors ``pkg/scheduler/schedule_one.go`` (1.34) ``schedulePod``:

1. ``findNodesThatFitPod``: PreFilter once (a rejection is the FitError; a PreFilterResult
   narrows the candidates to the nodes it names, kept in snapshot order where upstream
   iterates a Go map), then the filter walk (`SchedulerPluginRunner.walk_filters`) from the
   rotating ``next_start_node_index`` until `num_feasible_nodes_to_find` nodes passed;
   the index then advances by the nodes processed, modulo all nodes, as upstream.
2. One feasible node: chosen without scoring. Several: ``prioritizeNodes`` (PreScore, Score,
   NormalizeScore, weights) and ``selectHost`` (`select_host`: highest total; ties go to the
   first tied node in evaluation order, or to seeded reservoir sampling).
3. The pod is placed with `PredicateSnapshot.assume_pod` (Reserve, claim reservation, store)
   with the CycleState Filter produced: Filter does not run again on the chosen node.
4. Permit (``RunPermitPlugins``): allow, reject (Unreserve, the pod leaves the node) or wait
   (the pod keeps its place; the caller finishes it with `Scheduler.finish_waiting` once the
   waiting pod is decided).
5. The binding cycle (``bindingCycle``): PreBind (after PreBindPreFlight), Bind (the first
   Bind plugin that does not Skip; DefaultBinder confirms the snapshot's placement) and
   PostBind. A failure after Reserve runs Unreserve and takes the pod off the node
   (``ForgetPod``): a rejection is a FitError ``0/1 nodes are available: ...`` naming the
   plugin, anything else a `SchedulingError`.

Host selection is kube-scheduler's by default; ``first_fit=True`` takes the Cluster
Autoscaler's first fit (`SchedulerPluginRunner.find_node`) and runs the same Reserve, Permit
and binding cycle.

6. When no node fits (the failure path of ``schedulingCycle``, kube-scheduler host selection),
   PostFilter runs with the Filter status of every node (DefaultPreemption). Its message
   becomes the FitError's ``PostFilterMsg`` (``... preemption: 0/3 nodes are available:
   ...``). A result that nominates a node is applied as kube-scheduler applies it: the victims
   are deleted (here: evicted from the snapshot, `PredicateSnapshot.unschedule_pod`),
   lower-priority pods nominated to that node lose their nomination, and the pod is nominated
   there (``Scheduler.nominator``); a result with an empty node clears the pod's nomination.
   The pod itself is placed on a later attempt (the victims' deletion is the cluster event
   that requeues it).

Nominated pods: while any pod is nominated, Filter counts on each node the nominated pods of
equal or higher priority (``RunFilterPluginsWithNominatedPods``, see
`schedsim.framework.nominator`), and a nominated pod tries its nominated node first
(``evaluateNominatedNode``): if it passes, it is chosen without scoring. Pods of the input
with only ``status.nominatedNodeName`` are nominated when the scheduling pass queues them
(`SchedulingPass.add`); the Cluster Autoscaler's first fit places them at load instead.

The steps are methods named after upstream's functions: `Scheduler.schedule_pod`
(``schedulePod``) = ``_find_nodes_that_fit_pod`` (PreFilter, ``evaluateNominatedNode``,
``_find_nodes_that_pass_filters``) + ``_prioritize_and_select_host`` (``prioritizeNodes``,
``selectHost``); `Scheduler.schedule_one` adds Reserve, Permit, `Scheduler.bind` and the
PostFilter path. Each step tells a `Recorder` (`schedsim.scheduler.explain`) what it did,
once: `NO_RECORDER` records nothing, an `ExplanationRecorder` fills the ``--explain`` /
``-o kss`` `Explanation`.

Not modelled: extenders, parallelism (the walk is sequential, so exactly
``numFeasibleNodesToFind`` nodes pass, never more).

Cost per pod: PreFilter, the Filter chains of the nodes walked (dict look-ups for nodes whose
result is cached, see `ResultCache`), the scores of the feasible nodes; nothing else over
the cluster.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from itertools import chain

import attrs

from schedsim.api.core import Pod
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.fit_error import Diagnosis, FitError
from schedsim.framework.nominator import PodNominator
from schedsim.framework.runtime import PluginError
from schedsim.framework.status import SUCCESS, Code, Status
from schedsim.framework.waiting_pods import WaitingPod
from schedsim.scheduler.cache import FailingClasses, KeyedFilter, NodeJournal, ResultCache
from schedsim.scheduler.explain import (
    NO_RECORDER,
    Explanation,
    ExplanationRecorder,
    Recorder,
    recorder_for,
)
from schedsim.scheduler.feasible import num_feasible_nodes_to_find
from schedsim.scheduler.prioritize import prioritize_nodes, prioritize_totals
from schedsim.scheduler.scoring import ScoreColumns
from schedsim.scheduler.select import select_host
from schedsim.snapshot.errors import NodeNotFoundError, SchedulingError
from schedsim.snapshot.filter_walk import FilterTable, FilterWalk
from schedsim.snapshot.infos import NodeInfo
from schedsim.snapshot.plugin_runner import absent_nodes_status
from schedsim.snapshot.predicate import PredicateSnapshot

__all__ = ["Placement", "ScheduleResult", "Scheduler"]


@attrs.frozen
class ScheduleResult:
    """What ``schedulePod`` chose (``ScheduleResult``).

    Attributes:
        suggested_host: the node.
        evaluated_nodes: nodes whose Filter result was taken (feasible + rejected).
        feasible_nodes: nodes that passed Filter.
    """

    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int


@attrs.define(slots=True)
class _Feasible:
    """``findNodesThatFitPod``'s nodes that passed: the walk (feasible nodes, statuses,
    positions in ``table``) and the pod class's table when the walk used it."""

    walk: FilterWalk
    table: FilterTable | None


@attrs.frozen
class Placement:
    """The outcome of `Scheduler.schedule_one`.

    Attributes:
        node_name: where the pod was placed (bound, or reserved while ``waiting``), or None.
        fit_error: why it fits nowhere (None when placed).
        explanation: the per node, per plugin results when asked for, else None.
        waiting: a Permit plugin asked the pod to wait: it holds ``node_name`` and is
            registered in ``framework.handle.waiting_pods``; `Scheduler.finish_waiting`
            binds or rejects it once decided.
        forgotten: the pod held the node after Reserve and was taken off it again (a
            Permit, PreBind or Bind rejection): kube-scheduler's ``AssignedPodDelete``.
        state: the pod's CycleState (kept for `Scheduler.finish_waiting`).
        warnings: PostBind plugins that raised (the pod stays bound).
        nominated_node: when not placed: the node PostFilter nominated the pod to
            (preemption made room there; the pod is placed on a later attempt), else "".
        victims: the pods evicted from the snapshot to make that room, most important
            first (each one's removal is an ``AssignedPodDelete`` event).
    """

    node_name: str | None
    fit_error: FitError | None = None
    explanation: Explanation | None = None
    waiting: bool = False
    forgotten: bool = False
    state: CycleState | None = attrs.field(default=None, eq=False, repr=False)
    warnings: tuple[str, ...] = ()
    nominated_node: str = ""
    victims: tuple[Pod, ...] = ()

    @property
    def rejector_plugins(self) -> frozenset[str]:
        """The plugins that made the pod unschedulable (the queue's
        ``UnschedulablePlugins``); empty when placed."""
        if self.fit_error is None:
            return frozenset()
        return self.fit_error.diagnosis.unschedulable_plugins


class Scheduler:
    """Schedules pods one by one into ``snapshot`` as kube-scheduler 1.34 does.

    Args:
        snapshot: the cluster; its framework is the profile run.
        percentage_of_nodes_to_score: the configuration's global ``percentageOfNodesToScore``
            (None or 0: adaptive); the profile's own value, when set, wins.
        seed: None for deterministic host selection (first tied node in evaluation order);
            an int for upstream's reservoir sampling among tied nodes, from
            ``random.Random(seed)``.
        cache: reuse Filter results between identical pods on unchanged nodes (`ResultCache`).
        first_fit: choose the first node that passes (CA's order) instead of scoring.
        node_rank: node name -> rank: tied nodes go to the lowest rank instead (a fixed node
            priority, as the FGD artifact's selectHost; ``seed`` is then not used for
            ties). Every node of the snapshot must have one.

    Attributes:
        next_start_node_index: where the next filter walk starts (``nextStartNodeIndex``).
        nominator: the pods nominated by this scheduler's preemptions (the framework's
            handle reads it while this scheduler runs plugins).
    """

    def __init__(
        self,
        snapshot: PredicateSnapshot,
        *,
        percentage_of_nodes_to_score: int | None = None,
        seed: int | None = None,
        cache: bool = True,
        first_fit: bool = False,
        node_rank: Mapping[str, int] | None = None,
    ) -> None:
        self.snapshot = snapshot
        self._rank = node_rank
        self.framework = snapshot.framework
        self.next_start_node_index = 0
        self._runner = snapshot.plugin_runner
        self._rng = random.Random(seed) if seed is not None else None
        self._cache = ResultCache(self.framework) if cache else None
        self._global_percentage = percentage_of_nodes_to_score
        self._profile_percentage = self.framework.profile.percentage_of_nodes_to_score
        self._filter_plugins = self.framework.filter_plugin_names
        self._first_fit = first_fit
        self.nominator = PodNominator()
        if first_fit and self._cache is not None:
            # unschedulable pods of a class that failed before reuse its results (first fit)
            self._runner.failing_classes = FailingClasses(self._cache)

    def schedule_pod(
        self, pod: Pod, explanation: Explanation | None = None
    ) -> tuple[ScheduleResult, CycleState] | FitError:
        """``schedulePod``: choose a node for ``pod`` without placing it.

        Args:
            explanation: filled with the per node, per plugin results when given.

        Returns:
            the choice and the CycleState for Reserve, or the FitError (PreFilter rejected,
            no node passed, no nodes at all).

        Raises:
            SchedulingError: INTERNAL_ERROR when a plugin returns an Error status (the
                attempt fails, as upstream; only ``next_start_node_index`` changed).
        """
        # the plugins read this snapshot and this scheduler's nominations through the handle
        with self.snapshot.bound(), self.framework.handle.nominating(self.nominator):
            found, state = self._schedule_pod(pod, recorder_for(explanation))
        return found if isinstance(found, FitError) else (found, state)

    def _schedule_pod(
        self, pod: Pod, rec: Recorder
    ) -> tuple[ScheduleResult | FitError, CycleState]:
        """``schedulePod`` (bound): `_find_nodes_that_fit_pod`, then
        `_prioritize_and_select_host` among the feasible nodes; the choice or the FitError,
        and the CycleState PreFilter filled (PostFilter runs with it)."""
        state = CycleState()
        fit = self._find_nodes_that_fit_pod(pod, state, rec)
        if not isinstance(fit, _Feasible):
            return fit, state
        return self._prioritize_and_select_host(pod, state, fit, rec), state

    def _find_nodes_that_fit_pod(
        self, pod: Pod, state: CycleState, rec: Recorder
    ) -> _Feasible | ScheduleResult | FitError:
        """``findNodesThatFitPod``: PreFilter (a rejection is the FitError), the nominated
        node when it passes (``evaluateNominatedNode``: chosen, no scoring), the candidates a
        PreFilterResult keeps, then `_find_nodes_that_pass_filters`; no feasible node is the
        FitError with every node's status."""
        nodes = self.snapshot.list_node_infos()
        num_all = len(nodes)
        rec.nodes(num_all)
        if num_all == 0:
            return FitError(0, Diagnosis())
        framework = self.framework
        result, status, narrowing = framework.run_pre_filter_plugins(state, pod, nodes)
        rec.pre_filter(framework, state.skip_filter_plugins, status)
        if not status.is_success:
            if status.code is Code.Error:
                raise SchedulingError.internal(pod, status.message)
            return FitError(num_all, Diagnosis(pre_filter_status=status))
        nominated = self._evaluate_nominated_node(pod, state)
        if nominated is not None:
            rec.nominated_node_chosen(framework, state.skip_filter_plugins, nominated, num_all)
            return ScheduleResult(nominated, 1, 1)
        candidates = nodes
        allowed = None if result is None else result.node_names
        if allowed is not None:
            # Upstream iterates the result's set (Go map order); schedsim keeps snapshot order.
            # One name (a DaemonSet pod's node affinity) is looked up, not scanned for.
            candidates = (
                self._named_node(allowed)
                if len(allowed) == 1
                else [ni for ni in nodes if ni.node is not None and ni.node.name in allowed]
            )
            rec.pre_filter_result(allowed, narrowing, num_all - len(candidates))
        walk, table = self._find_nodes_that_pass_filters(pod, state, candidates, allowed, rec)
        self.next_start_node_index = (self.next_start_node_index + walk.processed) % num_all
        if walk.error is not None:
            raise SchedulingError.internal(pod, walk.error.message)
        n = len(candidates)
        rec.filtered(
            framework,
            state.skip_filter_plugins,
            walk.feasible,
            walk.node_to_status,
            n - walk.processed,
        )
        if not walk.feasible:
            absent = None if allowed is None else absent_nodes_status(narrowing)
            diagnosis = Diagnosis(
                node_to_status=walk.node_to_status,
                absent_nodes_status=absent,
                absent_nodes=num_all - n if allowed is not None else 0,
            )
            return FitError(num_all, diagnosis)
        return _Feasible(walk, table)

    def _find_nodes_that_pass_filters(
        self,
        pod: Pod,
        state: CycleState,
        candidates: Sequence[NodeInfo],
        allowed: AbstractSet[str] | None,
        rec: Recorder,
    ) -> tuple[FilterWalk, FilterTable | None]:
        """``findNodesThatPassFilters``: Filter from the rotating start until
        `num_feasible_nodes_to_find` nodes pass, through the pod class's cached table
        (`ResultCache`) when it applies, else node by node (with the nominated pods counted
        while any pod is nominated)."""
        n = len(candidates)
        num_to_find = num_feasible_nodes_to_find(
            n, self._profile_percentage, self._global_percentage
        )
        start = self.next_start_node_index % n if n else 0
        table = None
        with_nominated = len(self.nominator) > 0
        keyed: list[KeyedFilter] = []
        if self._cache is not None and allowed is None and not with_nominated:
            table = self._cache.filter_cache(pod, state, keyed)
        if table is not None:
            walk = self._runner.walk_rotating(
                state, pod, candidates, start, num_to_find, table, record=rec.active, keyed=keyed
            )
        else:
            walk = self._runner.walk_filters(
                state,
                pod,
                candidates,
                chain(range(start, n), range(start)),
                num_to_find,
                run_filter=self.framework.run_filter_plugins_with_nominated_pods
                if with_nominated
                else None,
            )
        return walk, table

    def _prioritize_and_select_host(
        self, pod: Pod, state: CycleState, fit: _Feasible, rec: Recorder
    ) -> ScheduleResult:
        """One feasible node is chosen as it is; several: ``prioritizeNodes`` (PreScore,
        Score, NormalizeScore, weights) and ``selectHost``."""
        framework = self.framework
        walk, table = fit.walk, fit.table
        feasible, evaluated = walk.feasible, walk.processed
        if len(feasible) == 1:
            node = feasible[0].node
            assert node is not None
            return ScheduleResult(node.name, evaluated, 1)
        if not framework.has_score_plugins:
            # Every node scores 1 (prioritizeNodes without Score plugins): selectHost's rule
            # without building the scores.
            if self._rank is not None:
                rank = self._rank
                host_info = min(feasible, key=lambda ni: rank[ni.node.name if ni.node else ""])
            else:
                host_info = feasible[self._rng.randrange(len(feasible)) if self._rng else 0]
            assert host_info.node is not None
            return ScheduleResult(host_info.node.name, evaluated, len(feasible))
        if table is not None and not rec.active and self._rng is None:
            host = self._select_from_totals(pod, state, feasible, walk.indices, table)
            return ScheduleResult(host, evaluated, len(feasible))
        raw: dict[str, dict[str, int]] | None = {} if rec.active else None
        reuse = None if self._cache is None else self._cache.score_reuse(pod)
        scores, failed = prioritize_nodes(framework, state, pod, feasible, raw, reuse)
        rec.scored(framework, state.skip_score_plugins, failed, raw, scores)
        if failed is not None:
            raise SchedulingError.internal(pod, failed.message)
        host = select_host(scores, self._rng, self._rank)
        return ScheduleResult(host, evaluated, len(feasible))

    def _select_from_totals(
        self,
        pod: Pod,
        state: CycleState,
        feasible: list[NodeInfo],
        positions: list[int],
        table: FilterTable,
    ) -> str:
        """prioritizeNodes and selectHost on totals only, the raw scores read from the pod
        class's columns (`ResultCache`, rule there): the highest total, the first of the
        tied ones in evaluation order (or the tied one of the lowest rank)."""
        assert self._cache is not None
        table_names = table.names
        cache = self._cache

        def names() -> list[str]:
            return list(map(table_names.__getitem__, positions))

        snapshot = self.snapshot

        def columns(after_pre_score: CycleState) -> ScoreColumns:
            journal = NodeJournal(snapshot.list_node_infos(), snapshot.node_changes_since)
            return cache.score_columns(pod, after_pre_score, table, feasible, positions, journal)

        totals, failed = prioritize_totals(
            self.framework, state, pod, feasible, positions, names, columns
        )
        if failed is not None:
            raise SchedulingError.internal(pod, failed.message)
        top = max(totals)
        if self._rank is None:
            return table_names[positions[totals.index(top)]]
        rank = self._rank
        return min(
            (table_names[positions[i]] for i, t in enumerate(totals) if t == top),
            key=rank.__getitem__,
        )

    def schedule_one(self, pod: Pod, *, explain: bool = False, now: float = 0.0) -> Placement:
        """Schedule ``pod`` and place it (``schedulingCycle`` then ``bindingCycle``): host
        selection, Reserve and store on the chosen node without running Filter again
        (`PredicateSnapshot.assume_pod`), Permit, then, unless a Permit plugin asked to
        wait, the binding cycle (`bind`).

        Args:
            explain: collect the per node, per plugin results (`Explanation`).
            now: the clock's time (seconds), for Permit deadlines.

        Returns:
            the `Placement`: bound, waiting at Permit, or unschedulable with its FitError.

        Raises:
            SchedulingError: INTERNAL_ERROR when a plugin fails with an Error status; the
                snapshot is unchanged (Unreserve ran when Reserve had).
        """
        rec = ExplanationRecorder() if explain else NO_RECORDER
        explanation = rec.explanation
        if self._first_fit:
            with self.snapshot.bound():
                found_ff = self._runner.find_node(pod)
            if isinstance(found_ff, FitError):
                return Placement(None, found_ff, explanation)
            node_info, state = found_ff
            assert node_info.node is not None
            host = node_info.node.name
        else:
            with self.snapshot.bound(), self.framework.handle.nominating(self.nominator):
                found, state = self._schedule_pod(pod, rec)
                if isinstance(found, FitError):
                    return self._post_filter(pod, found, state, rec)
            host = found.suggested_host
        rejected = self.snapshot.assume_pod(pod, host, state)
        rec.reserved(self.framework, rejected)
        if rejected is not None:
            return Placement(None, rejected, explanation)
        with self.snapshot.bound():
            permit = self.framework.run_permit_plugins(state, pod, host, now)
        rec.permitted(self.framework, pod.uid, permit)
        if permit.code is Code.Wait:
            return Placement(host, None, explanation, waiting=True, state=state)
        if not permit.is_success:
            return self._failed_after_reserve(pod, host, state, permit, explanation)
        placed = self.bind(pod, host, state, explanation)
        if placed.node_name is not None:
            self.nominator.delete_nominated_pod_if_exists(pod)
            rec.selected(host)
        return placed

    def _named_node(self, names: AbstractSet[str]) -> list[NodeInfo]:
        """The NodeInfo of the one name a PreFilterResult kept, or none when no such node
        exists (findNodesThatFitPod gets each named node from the snapshot). Time: O(1)."""
        (name,) = names
        try:
            ni = self.snapshot.get_node_info(name)
        except NodeNotFoundError:
            return []
        return [ni] if ni.node is not None else []

    def _evaluate_nominated_node(self, pod: Pod, state: CycleState) -> str | None:
        """``evaluateNominatedNode``: the pod's nominated node when it passes Filter (with
        the other nominated pods counted), else None."""
        name = self.nominator.nominated_node_name(pod)
        if not name:
            return None
        try:
            node_info = self.snapshot.get_node_info(name)
        except NodeNotFoundError:  # upstream logs the error and filters every node
            return None
        st = self.framework.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if st.code is Code.Error:
            raise SchedulingError.internal(pod, st.message)
        return name if st.is_success else None

    def _post_filter_statuses(self, fit: FitError) -> dict[str, Status]:
        """The node-to-status map PostFilter reads: the Filter statuses, or the PreFilter
        rejection for every node; a node left out (by a PreFilterResult) is absent, which
        counts as UnschedulableAndUnresolvable."""
        pre = fit.diagnosis.pre_filter_status
        if pre is None:
            return dict(fit.diagnosis.node_to_status)
        return {ni.node.name: pre for ni in self.snapshot.list_node_infos() if ni.node}

    def _post_filter(self, pod: Pod, fit: FitError, state: CycleState, rec: Recorder) -> Placement:
        """The failure path of ``schedulingCycle`` (bound): PostFilter, its message on the
        FitError, and its nomination applied (victims evicted, the pod nominated)."""
        framework = self.framework
        explanation = rec.explanation
        if fit.num_all_nodes == 0 or not framework.has_post_filter_plugins:
            return Placement(None, fit, explanation)
        statuses: dict[str, Status] | None = {} if rec.active else None
        result, st = framework.run_post_filter_plugins(
            state, pod, self._post_filter_statuses(fit), statuses=statuses
        )
        if statuses is not None:
            rec.post_filtered(statuses)
        if st.message:
            diagnosis = attrs.evolve(fit.diagnosis, post_filter_msg=st.message)
            fit = attrs.evolve(fit, diagnosis=diagnosis)
        if result is None:  # ModeNoop: the nomination is left as it is
            return Placement(None, fit, explanation)
        node = result.nominated_node_name
        rec.nominated(node or "")
        if not node:
            self.nominator.delete_nominated_pod_if_exists(pod)
            return Placement(None, fit, explanation)
        for victim in result.victims:  # prepareCandidate: delete the victims
            self.snapshot.unschedule_pod(victim.namespace, victim.name, node)
        for pi in list(self.nominator.nominated_pods_for_node(node)):
            if pi.pod.priority < pod.priority:  # they may no longer fit there
                self.nominator.delete_nominated_pod_if_exists(pi.pod)
        self.nominator.add_nominated_pod(self.snapshot.new_pod_info(pod), node)
        return Placement(None, fit, explanation, nominated_node=node, victims=result.victims)

    def finish_waiting(self, waiting: WaitingPod, placed: Placement) -> Placement:
        """Finish a pod that waited at Permit once its outcome is decided
        (``WaitOnPermit`` returning, then the rest of ``bindingCycle``).

        Args:
            waiting: the decided `WaitingPod` (``status`` not None); removed from
                ``handle.waiting_pods`` here.
            placed: the `Placement` `schedule_one` returned for it (``waiting`` set).

        Returns:
            the pod bound, or unschedulable with the rejecting plugin's FitError
            (``0/1 nodes are available: <reason>.``) after Unreserve.

        Raises:
            SchedulingError: a later binding step failed with an Error.
        """
        self.framework.handle.waiting_pods.remove(waiting.pod.uid)
        pod, host, state = waiting.pod, waiting.node_name, placed.state
        assert state is not None and waiting.status is not None
        if not waiting.status.is_success:
            return self._failed_after_reserve(pod, host, state, waiting.status, placed.explanation)
        out = self.bind(pod, host, state, placed.explanation)
        if out.node_name is not None:
            recorder_for(placed.explanation).selected(host)
        return out

    def bind(
        self, pod: Pod, host: str, state: CycleState, explanation: Explanation | None = None
    ) -> Placement:
        """The binding cycle after Permit allowed the pod (``bindingCycle``): PreBind, Bind,
        PostBind.

        Returns:
            the pod bound to ``host``, or (after Unreserve and removal from the node) the
            FitError of a rejecting PreBind or Bind plugin.

        Raises:
            SchedulingError: INTERNAL_ERROR for an Error status, or when every Bind plugin
                skipped (``no bind plugin bound pod``), after Unreserve and removal.
        """
        framework = self.framework
        with self.snapshot.bound():
            status = SUCCESS
            if framework.has_pre_bind_plugins:
                # the pre-flights record which plugins have nothing to do; RunPreBindPlugins
                # skips those and runs the others (a plugin without a pre-flight always runs)
                status = framework.run_pre_bind_pre_flights(state, pod, host)
                if status.code is not Code.Error:
                    status = framework.run_pre_bind_plugins(state, pod, host)
            binding = status.is_success
            if binding:
                status = framework.run_bind_plugins(state, pod, host)
            recorder_for(explanation).bound(framework, state.skip_pre_bind_plugins, status, binding)
            if binding:
                if status.code is Code.Skip:
                    status = Status(
                        Code.Error,
                        (f"no bind plugin bound pod {pod.key} to node {host} (every one skipped)",),
                    )
            if not status.is_success:
                return self._failed_after_reserve(pod, host, state, status, explanation)
            problems = framework.run_post_bind_plugins(state, pod, host)
        return Placement(host, None, explanation, warnings=tuple(problems))

    def _failed_after_reserve(
        self,
        pod: Pod,
        host: str,
        state: CycleState,
        status: Status,
        explanation: Explanation | None,
    ) -> Placement:
        """Unreserve, take the pod off ``host`` (``ForgetPod``), then the failure: a rejection
        as the FitError upstream builds (one node, its status), else a SchedulingError."""
        message = status.message
        with self.snapshot.bound():
            try:
                self.framework.run_reserve_plugins_unreserve(state, pod, host)
            except PluginError as failed:
                message = f"{message}; {failed}"
                status = Status(Code.Error, (message,), status.plugin)
            self.snapshot.unschedule_pod(pod.namespace, pod.name, host)
        if status.is_rejected:
            return Placement(
                None,
                FitError(1, Diagnosis(node_to_status={host: status})),
                explanation,
                forgotten=True,
            )
        raise SchedulingError.internal(pod, message)
