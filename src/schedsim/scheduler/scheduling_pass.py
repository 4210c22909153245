"""The scheduling pass: kube-scheduler's loop of popping the next pod from the scheduling queue
(`schedsim.scheduler.queue`), running its scheduling cycle and binding cycle, waiting at
Permit, and telling the queue what happened (events that move parked pods, backoff), until
no pod is ready (`SchedulingPass`, `run_scheduling_cycle`).

The queue's clock is logical: a pass advances it to the next backoff or Permit deadline when
nothing is ready, so backoffs and timeouts cost no wall time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs

from schedsim.api.core import Pod
from schedsim.framework.events import ASSIGNED_POD_DELETE
from schedsim.framework.queued_pod_info import QueuedPodInfo
from schedsim.framework.status import Code, Status
from schedsim.scheduler import Scheduler
from schedsim.scheduler.clock import LogicalClock
from schedsim.scheduler.explain import Explanation
from schedsim.scheduler.outcomes import PodOutcome, skip_deleting_message
from schedsim.scheduler.queue import (
    DEFAULT_POD_INITIAL_BACKOFF_SECONDS,
    DEFAULT_POD_MAX_BACKOFF_SECONDS,
    SchedulingQueue,
)
from schedsim.scheduler.schedule_one import Placement
from schedsim.snapshot.errors import SchedulingError
from schedsim.snapshot.predicate import PredicateSnapshot

__all__ = ["MAX_ATTEMPTS_PER_POD", "QueueOptions", "SchedulingPass", "run_scheduling_cycle"]

MAX_ATTEMPTS_PER_POD = 100
"""A pass stops retrying a pod after this many attempts and reports it (a guard against
plugins whose registered events keep requeueing each other; kube-scheduler would go on
retrying for ever)."""


@attrs.define
class QueueOptions:
    """How the pass's queue runs (KubeSchedulerConfiguration's queue fields).

    Attributes:
        pod_initial_backoff_seconds: ``podInitialBackoffSeconds`` (default 1).
        pod_max_backoff_seconds: ``podMaxBackoffSeconds`` (default 10).
        max_attempts_per_pod: see `MAX_ATTEMPTS_PER_POD`.
    """

    pod_initial_backoff_seconds: float = DEFAULT_POD_INITIAL_BACKOFF_SECONDS
    pod_max_backoff_seconds: float = DEFAULT_POD_MAX_BACKOFF_SECONDS
    max_attempts_per_pod: int = MAX_ATTEMPTS_PER_POD


def run_scheduling_cycle(
    snapshot: PredicateSnapshot,
    pending: Sequence[Pod],
    scheduler: Scheduler | None = None,
    explain: Callable[[Pod], bool] | None = None,
    *,
    clock: LogicalClock | None = None,
    options: QueueOptions | None = None,
    warnings: list[str] | None = None,
    other_schedulers: Mapping[str, Scheduler] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[PodOutcome]:
    """Schedule ``pending`` into ``snapshot`` through kube-scheduler's queue, in one
    deterministic pass; the snapshot keeps the result.

    The pass (the rule docs/architecture.md states): every pod is added to a
    `SchedulingQueue` (PreEnqueue runs there: gated pods and pods a PreEnqueue plugin
    rejects stay out, with that status as their outcome); then pods are popped in QueueSort
    order and scheduled one at a time. A bound pod is the cluster event ``AssignedPodAdd``;
    a pod that fails is parked in unschedulablePods with its rejecting plugins and comes
    back only when a later event one of them registered may help (a pod leaving a node:
    ``AssignedPodDelete``, after a failed binding or a rejected waiting pod); an Error fails
    the pod for the pass (kube-scheduler would retry it after backoff, and fail again). When
    no pod is ready, the clock moves to the next Permit deadline and pods that waited too
    long are rejected. The pass ends when activeQ and backoffQ are empty and no pod waits at
    Permit; each pod's outcome is its last attempt.

    Args:
        snapshot: the cluster; its framework is the profile.
        pending: the pods, in queue order (pods with equal QueueSort keys keep this order).
        scheduler: kube-scheduler placement through this `Scheduler` (over ``snapshot``);
            None: first fit (the Cluster Autoscaler's placement).
        explain: which pods get an `Explanation` (kube-scheduler placement only); None: none,
            and nothing is collected.
        clock: the pass's clock (a new `LogicalClock` at 0 by default).
        options: backoff seconds and the attempt guard.
        warnings: when given, PostBind failures and pods stopped by the attempt guard are
            appended to it.
        other_schedulers: the Schedulers of the other profiles, by schedulerName (over
            `PredicateSnapshot.with_framework` views of ``snapshot``): each pod is scheduled
            by the profile its ``spec.schedulerName`` names (``frameworkForPod``); one queue
            serves them all, sorted by the first profile's QueueSort plugin (kube-scheduler
            requires every profile to have the same one).
        progress: called after each attempt with (pods attempted at least once, pods bound
            now); for a progress bar.
    """
    if scheduler is None:
        scheduler = Scheduler(snapshot, first_fit=True)
    schedulers = {snapshot.framework.profile.scheduler_name: scheduler, **(other_schedulers or {})}
    loop = SchedulingPass(schedulers, explain, clock, options)
    loop.progress = progress
    with snapshot.bound():  # PreEnqueue runs here, outside the snapshot's own operations
        out = loop.run(pending)
    if warnings is not None:
        warnings.extend(loop.warnings)
    return out


class SchedulingPass:
    """kube-scheduler's scheduling loop over one queue, driven step by step (what
    `run_scheduling_cycle` runs to the end; a replay drives it on its own clock).

    Args:
        schedulers: schedulerName -> the `Scheduler` of that profile (views of one snapshot,
            `PredicateSnapshot.with_framework`); the first one's QueueSort orders the queue.
        explain: which pods get an `Explanation`, or None.
        clock: the clock the queue and Permit deadlines read.
        options: backoff seconds and the attempt guard.

    Attributes:
        queue: the `SchedulingQueue` (fire cluster events on it with
            ``move_all_to_active_or_backoff``: a pod evicted, a node added).
        warnings: PostBind failures and pods stopped by the attempt guard.
        victims: ``namespace/name`` -> the outcome of each running pod preemption evicted.
        settled: every outcome decided since the caller last cleared it, in order: a pod
            bound or failed by an attempt, a running pod preemption evicted
            (``preempted_by``); a caller stepping the pass (the replay) drains it.
        bound: how many of the outcomes are on a node now.
        progress: None, or called after each attempt with (pods attempted, `bound`).
    """

    def __init__(
        self,
        schedulers: Mapping[str, Scheduler],
        explain: Callable[[Pod], bool] | None = None,
        clock: LogicalClock | None = None,
        options: QueueOptions | None = None,
    ) -> None:
        options = options or QueueOptions()
        self.schedulers = schedulers
        self.explain = explain
        self.clock = clock or LogicalClock()
        self.options = options
        self.warnings: list[str] = []
        first = next(iter(schedulers.values())).framework
        self.queue = SchedulingQueue(
            first.queue_sort_less(),
            clock=self.clock,
            pod_initial_backoff_seconds=options.pod_initial_backoff_seconds,
            pod_max_backoff_seconds=options.pod_max_backoff_seconds,
            pre_enqueue=self._pre_enqueue,
            queueing_hints={n: s.framework.events_to_register() for n, s in schedulers.items()},
            namespace_labels=first.handle.object_listers.namespace_labels,
        )
        self.outcomes: dict[str, PodOutcome] = {}
        # preemption: the node each preemptor was nominated to, and the evicted pods
        self.nominated: dict[str, str] = {}
        self.victims: dict[str, PodOutcome] = {}
        self.settled: list[PodOutcome] = []
        self.attempts: dict[str, int] = {}
        self.histories: dict[str, list[Explanation]] = {}
        self.bound = 0
        self.progress: Callable[[int, int], None] | None = None
        # pods waiting at Permit: uid -> (queued info, scheduler, placement)
        self.waiting: dict[str, tuple[QueuedPodInfo, Scheduler, Placement]] = {}
        for sched in schedulers.values():  # pods left waiting by an aborted earlier run
            sched.framework.handle.waiting_pods.clear()

    def _pre_enqueue(self, pod: Pod) -> Status:
        if pod.scheduling_gates:  # the SchedulingGates PreEnqueue plugin's status (Go %v)
            msg = f"waiting for scheduling gates: [{' '.join(pod.scheduling_gates)}]"
            return Status(Code.UnschedulableAndUnresolvable, (msg,), "SchedulingGates")
        scheduler = self.schedulers[pod.scheduler_name]
        with scheduler.snapshot.bound():  # the pod's profile reads the snapshot (O(1) nested)
            return scheduler.framework.run_pre_enqueue_plugins(pod)

    def add(self, pod: Pod) -> None:
        """A pending pod arrives (``Add``: PreEnqueue runs; a pod it keeps out gets that
        status as its outcome).

        Raises:
            KeyError: no profile has the pod's schedulerName.
            ValueError: the pod is already queued.
        """
        if pod.scheduler_name not in self.schedulers:
            raise KeyError(f"pod {pod.key}: no profile has schedulerName {pod.scheduler_name!r}")
        st = self.queue.add(pod).gating_status
        if st is not None:
            error = st.code is Code.Error
            reasons = (st.message,) if error else st.reasons
            self.outcomes[pod.key] = PodOutcome(pod, None, reasons, st.message, error=error)
        elif pod.nominated_node_name and not pod.node_name:
            # moveToActiveQ of an added pod: nominator.addNominatedPod(pInfo, nil) takes
            # status.nominatedNodeName, so other pods' Filter counts it there (equal or
            # higher priority) and its own cycle tries that node first (evaluateNominatedNode)
            sched = self.schedulers[pod.scheduler_name]
            sched.nominator.add_nominated_pod(
                sched.snapshot.new_pod_info(pod), pod.nominated_node_name
            )

    def schedule_ready(self) -> int:
        """Schedule pods until none is ready (activeQ and backoffQ empty); the clock does not
        move. Returns how many attempts were made."""
        n = 0
        progress = self.progress
        while (qpi := self.queue.pop()) is not None:
            self._attempt(qpi)
            self._finish_decided()
            n += 1
            if progress is not None:
                progress(len(self.attempts), self.bound)
        return n

    def next_deadline(self) -> float | None:
        """The earliest Permit deadline of a waiting pod (seconds), or None."""
        times = [
            t
            for s in self.schedulers.values()
            for t in (s.framework.handle.waiting_pods.next_deadline(),)
            if t is not None
        ]
        return min(times, default=None)

    def advance_to(self, t: float) -> None:
        """Move the clock to ``t``: waiting pods whose deadline passed are rejected (and
        their pods put back), backoffs that ended move to activeQ."""
        self.clock.advance_to(t)
        now = self.clock()
        for s in self.schedulers.values():
            s.framework.handle.waiting_pods.expire(now)
        self._finish_decided()
        self.queue.flush_backoff_completed(now)

    def run(self, pending: Sequence[Pod]) -> list[PodOutcome]:
        """Add ``pending`` and schedule until nothing is ready and no pod waits at Permit
        (the clock jumps to each next Permit deadline). Returns the outcomes of ``pending``
        in that order, then those of the running pods preemption evicted."""
        for pod in pending:
            self.add(pod)
        while True:
            self.schedule_ready()
            deadline = self.next_deadline()
            if deadline is None:
                break
            self.advance_to(deadline)
        done = [self.outcome(pod) for pod in pending if pod.key not in self.victims]
        return done + list(self.victims.values())

    def outcome(self, pod: Pod) -> PodOutcome:
        """The pod's outcome so far (its last attempt), with its attempts.

        Raises:
            KeyError: the pod was never added, or has not been attempted nor gated yet.
        """
        o = self.outcomes[pod.key]
        n = self.attempts.get(pod.key, 0)
        return attrs.evolve(o, attempts=n) if n != o.attempts else o

    def _attempt(self, qpi: QueuedPodInfo) -> None:
        pod = qpi.pod
        self.attempts[pod.key] = qpi.attempts
        if pod.deletion_timestamp is not None:
            # ScheduleOne: skipPodSchedule "Case 1: pod is being deleted" records a
            # FailedScheduling event and returns; the pod is Done, never put back
            msg = skip_deleting_message(pod)
            self._record(PodOutcome(pod, None, (), msg, skipped=True))
            self.queue.done(pod)
            return
        scheduler = self.schedulers[pod.scheduler_name]
        explain = self.explain is not None and self.explain(pod)
        try:
            placed = scheduler.schedule_one(pod, explain=explain, now=self.clock())
        except SchedulingError as e:
            # An Error status fails this attempt; the snapshot is unchanged. kube-scheduler
            # would retry after backoff; the pass reports it.
            msg = e.internal_message or str(e)
            self._record(PodOutcome(pod, None, (msg,), msg, error=True))
            self.queue.done(pod)
            return
        if placed.waiting:
            self.waiting[pod.uid] = (qpi, scheduler, placed)
            return  # in flight until decided
        self._settle(qpi, placed)

    def _record(self, outcome: PodOutcome) -> None:
        if outcome.explanation is not None:  # result-history: every explained attempt
            seen = self.histories.setdefault(outcome.pod.key, [])
            seen.append(outcome.explanation)
            outcome = attrs.evolve(outcome, history=tuple(seen))
        before = self.outcomes.get(outcome.pod.key)
        self.bound += (outcome.node_name is not None) - (
            before is not None and before.node_name is not None
        )
        self.outcomes[outcome.pod.key] = outcome
        self.settled.append(outcome)

    def _finish_decided(self) -> None:
        """Bind or fail every pod whose wait at Permit is decided, in the order they started
        waiting."""
        while True:
            decided = [
                wp
                for s in self.schedulers.values()
                for wp in s.framework.handle.waiting_pods.decided()
            ]
            if not decided:
                return
            for wp in decided:
                qpi, scheduler, placed = self.waiting.pop(wp.pod.uid)
                try:
                    out = scheduler.finish_waiting(wp, placed)
                except SchedulingError as e:
                    msg = e.internal_message or str(e)
                    pod = qpi.pod
                    self._record(PodOutcome(pod, None, (msg,), msg, error=True))
                    self.queue.done(pod)
                    self._forgotten(pod)
                    continue
                self._settle(qpi, out)

    def _settle(self, qpi: QueuedPodInfo, placed: Placement) -> None:
        """Record the attempt's outcome and tell the queue."""
        pod = qpi.pod
        queue = self.queue
        if placed.warnings:
            self.warnings.extend(f"pod {pod.key}: {w}" for w in placed.warnings)
        nominated = self.nominated.get(pod.key, "")
        if placed.node_name is not None:
            self._record(
                PodOutcome(
                    pod,
                    placed.node_name,
                    explanation=placed.explanation,
                    nominated_node=nominated,
                    attempts=qpi.attempts,
                )
            )
            queue.done(pod)
            queue.assigned_pod_added(pod)
            return
        fit_error = placed.fit_error
        assert fit_error is not None
        nominated = self.nominated[pod.key] = placed.nominated_node or nominated
        self._record(
            PodOutcome(
                pod,
                None,
                fit_error.reasons,
                fit_error.message,
                explanation=placed.explanation,
                nominated_node=nominated,
                attempts=qpi.attempts,
            )
        )
        for victim in placed.victims:  # deleted by preemption, while the pod is in flight
            msg = f"preempted by {pod.key}"
            gone = PodOutcome(victim, None, (msg,), msg, preempted_by=pod.key)
            earlier = self.outcomes.get(victim.key)
            if earlier is not None and earlier.node_name is not None:
                self.bound -= 1  # bound earlier in this pass, deleted now
            self.victims[victim.key] = gone
            self.settled.append(gone)
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, victim, None)
        if qpi.attempts >= self.options.max_attempts_per_pod:
            self.warnings.append(
                f"pod {pod.key}: not retried after {qpi.attempts} attempts in this pass"
            )
            queue.done(pod)
            return
        queue.add_unschedulable_if_not_present(qpi, sorted(placed.rejector_plugins))
        queue.done(pod)
        if placed.forgotten:  # it held the node after Reserve: its leaving is an event
            self._forgotten(pod)

    def _forgotten(self, pod: Pod) -> None:
        """A reserved pod left its node (``AssignedPodDelete``, not for the pod itself)."""
        self.queue.move_all_to_active_or_backoff(
            ASSIGNED_POD_DELETE, pod, None, pre_check=lambda p: p.key != pod.key
        )
