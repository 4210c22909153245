"""A scheduling cycle over pending pods: what `schedsim simulate` runs.

Pods are taken in kube-scheduler's queue order (PrioritySort: priority descending, then
creation time, then name) and each is placed in one of two modes:

- ``kube-scheduler`` (the default): `schedsim.scheduler.Scheduler`, kube-scheduler's
  schedulePod (Filter over numFeasibleNodesToFind nodes from a rotating start, Score, the
  highest total wins);
- ``first-fit``: the first node that passes, trying nodes round robin from the one after the
  node chosen last (the Cluster Autoscaler's placement, which scale-up and scale-down use).

A pod that fits nowhere gets kube-scheduler's FitError message. With kube-scheduler
placement PostFilter then runs (DefaultPreemption): when it makes room by preempting running
pods of lower priority, the victims are evicted from the snapshot and reported
(``preempted_by``), each eviction is an ``AssignedPodDelete`` event for the queue, and the
pod, nominated to the node, is placed on its next attempt. Victims are not rescheduled:
upstream they are deleted, and only their controllers would make new pods.

The cyclic garbage collector is paused while the pods are scheduled (`gc_paused`; the
``simulate`` command pauses it for loading too): the cycle creates many small objects and almost no
reference cycles, and each collection of the oldest generation would walk every object of
the loaded cluster (see docs/performance.md for the measured effect).
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime

import attrs

from schedsim.api.core import Pod
from schedsim.api.resource import ResourceClaimTemplate
from schedsim.dra.claim_controller import create_template_claims
from schedsim.dra.extended import has_extended_resource_requests
from schedsim.framework.events import ASSIGNED_POD_ADD, ASSIGNED_POD_DELETE
from schedsim.framework.queued_pod_info import QueuedPodInfo
from schedsim.framework.runtime import Framework
from schedsim.framework.status import Code, Status
from schedsim.scheduler import Explanation, Scheduler
from schedsim.scheduler.clock import LogicalClock
from schedsim.scheduler.queue import (
    DEFAULT_POD_INITIAL_BACKOFF_SECONDS,
    DEFAULT_POD_MAX_BACKOFF_SECONDS,
    SchedulingQueue,
)
from schedsim.scheduler.schedule_one import Placement
from schedsim.snapshot.dra import claim_available_on_node, claim_reserved_for_pod
from schedsim.snapshot.errors import SchedulingError
from schedsim.snapshot.predicate import PredicateSnapshot

__all__ = [
    "MAX_ATTEMPTS_PER_POD",
    "PLACEMENTS",
    "DeviceAllocation",
    "PodOutcome",
    "QueueOptions",
    "SchedulingPass",
    "SimulationResult",
    "gc_paused",
    "partition_pods",
    "pods_on_missing_nodes",
    "queue_order",
    "run_scheduling_cycle",
    "simulate",
]

PLACEMENTS = ("kube-scheduler", "first-fit")
"""Placement modes of `simulate`: kube-scheduler's (scores, the default) or the Cluster
Autoscaler's first fit."""


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off inside the block, back to its previous state after.

    Reference counting still frees everything that is not in a cycle. On leaving the
    outermost block, the objects still alive are moved to the oldest generation without a
    collection (``gc.freeze()`` then ``gc.unfreeze()``, skipped when the program froze
    objects itself): otherwise the first allocation after the block starts a young
    collection that walks every object the block made (~0.19 s CPU after loading and
    scheduling the GCDA-sized cluster) only to promote them. Cycles made inside are still
    collected, at the next collection of the oldest generation.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


_FAR_FUTURE = datetime.max.replace(tzinfo=UTC)


def queue_order(pods: Iterable[Pod]) -> list[Pod]:
    """Pods in scheduling-queue order: priority descending, then creation time (pods without a
    timestamp last, as if created now), then name, then namespace."""

    def key(p: Pod) -> tuple[int, datetime, str, str]:
        ts = p.creation_timestamp
        if ts is not None and ts.tzinfo is None:
            ts = ts.replace(tzinfo=UTC)
        return (-p.priority, ts or _FAR_FUTURE, p.name, p.namespace)

    return sorted(pods, key=key)


@attrs.frozen
class DeviceAllocation:
    """One device allocated to a scheduled pod's claim (a ``status.allocation`` result).

    Attributes:
        claim: ``namespace/name`` of the ResourceClaim.
        request: the request (``req`` or ``req/subrequest``).
        driver, pool, device: the device.
        admin_access: the result grants admin access (the device is not exclusive).
    """

    claim: str
    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool = False


@attrs.frozen
class PodOutcome:
    """Where one pending pod landed, or why it did not.

    Attributes:
        pod: the pod (with ``status.resourceClaimStatuses`` filled in when schedsim created
            its claims from templates).
        node_name: the chosen node, or None.
        reasons: distinct reason strings of the rejecting plugins (sorted); empty on success.
        message: kube-scheduler's FitError message (empty on success).
        allocations: the devices of the pod's claims, claim by claim in
            ``spec.resourceClaims`` order (empty when unscheduled or without claims).
        error: a plugin failed with an Error status for this pod (``message`` says which
            and why, e.g. a CEL runtime error); kube-scheduler fails that attempt and goes on
            with the next pod, and so does the cycle.
        explanation: per node, per plugin results of the attempt (kube-scheduler placement,
            pods the caller asked to explain), else None.
        nominated_node: the node preemption nominated the pod to ("" when it did not
            preempt); the pod is then placed on a later attempt, usually there.
        preempted_by: for a running pod that preemption evicted: ``namespace/name`` of the
            preemptor (``node_name`` is then None); "" otherwise.
        attempts: scheduling attempts the pod had in the pass (0: never popped, e.g.
            gated); the outcome is the last attempt's.
    """

    pod: Pod
    node_name: str | None
    reasons: tuple[str, ...] = ()
    message: str = ""
    allocations: tuple[DeviceAllocation, ...] = ()
    error: bool = False
    explanation: Explanation | None = attrs.field(default=None, eq=False)
    attempts: int = 0
    nominated_node: str = ""
    preempted_by: str = ""


@attrs.frozen
class SimulationResult:
    """The outcome of a cycle.

    Attributes:
        outcomes: one per pending pod, in queue order.
        nodes: number of nodes in the snapshot.
        skipped_pods: bound pods whose node is not among the nodes (not placed).
        not_emulated: default plugins schedsim does not implement (they did not run).
        other_scheduler_pods: pending pods whose schedulerName is not the profile's; a
            kube-scheduler with this profile leaves them alone, and so does schedsim.
        unchecked: plugin name -> pending pods that use what that plugin checks (volumes,
            pod affinity, topology spread, resource claims) while it is not emulated, so
            their placement did not take it into account.
        warnings: other things the user should know (e.g. a ResourceClaimTemplate that
            does not exist).
    """

    outcomes: tuple[PodOutcome, ...]
    nodes: int
    skipped_pods: tuple[Pod, ...] = ()
    not_emulated: tuple[str, ...] = ()
    other_scheduler_pods: tuple[Pod, ...] = ()
    unchecked: Mapping[str, tuple[Pod, ...]] = attrs.field(factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def scheduled(self) -> int:
        """Pods placed."""
        return sum(1 for o in self.outcomes if o.node_name is not None)

    @property
    def preempted(self) -> int:
        """Running pods evicted by preemption."""
        return sum(1 for o in self.outcomes if o.preempted_by)

    @property
    def unschedulable(self) -> int:
        """Pending pods not placed because they fit nowhere (pods a plugin failed for are
        `errors`, counted apart, as kube-scheduler reports an Error status apart from
        Unschedulable; victims of preemption are `preempted`)."""
        return sum(
            1 for o in self.outcomes if o.node_name is None and not o.error and not o.preempted_by
        )

    @property
    def errors(self) -> int:
        """Pods whose attempt failed with a plugin error."""
        return sum(1 for o in self.outcomes if o.error)

    def pods_per_node(self) -> dict[str, int]:
        """Node name -> pending pods placed there."""
        return dict(Counter(o.node_name for o in self.outcomes if o.node_name is not None))


_EXCLUSIVE_DISKS = frozenset({"gcePersistentDisk", "awsElasticBlockStore"})

# What the not-yet-emulated default plugins would check, per pod (NodeVolumeLimits, the
# CSI volume limits, is emulated).
_NEEDS: Mapping[str, Callable[[Pod], bool]] = {
    "InterPodAffinity": lambda p: (
        p.affinity is not None and p.affinity.has_pod_affinity_or_anti_affinity
    ),
    "PodTopologySpread": lambda p: p.hard_topology_spread_constraints > 0,
    "VolumeBinding": lambda p: any(v.persistent_volume_claim or v.ephemeral for v in p.volumes),
    # PVC access modes (ReadWriteOncePod) and disks that one node may not mount twice
    "VolumeRestrictions": lambda p: any(
        v.persistent_volume_claim
        or (v.in_tree is not None and v.in_tree.field in _EXCLUSIVE_DISKS)
        or "rbd" in v.source
        or "iscsi" in v.source
        for v in p.volumes
    ),
    "VolumeZone": lambda p: any(v.persistent_volume_claim for v in p.volumes),
    "DynamicResources": lambda p: bool(p.resource_claims),
}


def partition_pods(
    pods: Iterable[Pod], scheduler_name: str | Collection[str]
) -> tuple[list[Pod], list[Pod], tuple[Pod, ...]]:
    """Split pods the way every simulation reads them.

    Succeeded/Failed pods are dropped.

    Returns:
        ``(bound, pending, others)``: pods with ``spec.nodeName`` (else
        ``status.nominatedNodeName``, as CA does), in input order; unbound pods for
        ``scheduler_name`` (or any of several names) in `queue_order`; unbound pods for
        another scheduler.
    """
    names = {scheduler_name} if isinstance(scheduler_name, str) else set(scheduler_name)
    live = [p for p in pods if not p.is_terminal]
    bound = [p for p in live if p.node_name or p.nominated_node_name]
    unbound = [p for p in live if not (p.node_name or p.nominated_node_name)]
    pending = queue_order(p for p in unbound if p.scheduler_name in names)
    others = tuple(p for p in unbound if p.scheduler_name not in names)
    return bound, pending, others


def pods_on_missing_nodes(snapshot: PredicateSnapshot, bound: Iterable[Pod]) -> list[Pod]:
    """The bound pods whose node (``spec.nodeName``, else ``status.nominatedNodeName``) is not
    in ``snapshot``: `PredicateSnapshot.set_cluster_state` skipped them, as CA does.

    Time: O(nodes + pods).
    """
    names = {ni.node.name for ni in snapshot.list_node_infos() if ni.node is not None}
    return [p for p in bound if (p.node_name or p.nominated_node_name) not in names]


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
    """
    if scheduler is None:
        scheduler = Scheduler(snapshot, first_fit=True)
    schedulers = {snapshot.framework.profile.scheduler_name: scheduler, **(other_schedulers or {})}
    loop = SchedulingPass(schedulers, explain, clock, options)
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
        )
        self.outcomes: dict[str, PodOutcome] = {}
        # preemption: the node each preemptor was nominated to, and the evicted pods
        self.nominated: dict[str, str] = {}
        self.victims: dict[str, PodOutcome] = {}
        self.settled: list[PodOutcome] = []
        self.attempts: dict[str, int] = {}
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

    def schedule_ready(self) -> int:
        """Schedule pods until none is ready (activeQ and backoffQ empty); the clock does not
        move. Returns how many attempts were made."""
        n = 0
        while (qpi := self.queue.pop()) is not None:
            self._attempt(qpi)
            self._finish_decided()
            n += 1
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
            queue.move_all_to_active_or_backoff(ASSIGNED_POD_ADD, None, pod)
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


def _allocations(snapshot: PredicateSnapshot, pod: Pod) -> tuple[DeviceAllocation, ...]:
    out: list[DeviceAllocation] = []
    for claim in snapshot.dra_snapshot.pod_claims(pod):
        allocation = claim.status.allocation
        if allocation is None:
            continue
        out.extend(
            DeviceAllocation(claim.key, r.request, r.driver, r.pool, r.device, bool(r.admin_access))
            for r in allocation.results
        )
    return tuple(out)


def _bound_claim_warnings(
    snapshot: PredicateSnapshot, bound: Sequence[Pod], skipped: Sequence[Pod]
) -> list[str]:
    """Running pods whose claims are not allocated for their node or not reserved for them:
    a state the API server and kube-scheduler never produce (CA's snapshot refuses it when
    adding such a node), usually a stale or partial export. The claims are used as they are."""
    out = []
    skipped_uids = {p.uid for p in skipped}
    for pod in bound:
        # Nominated pods have not been through Reserve: their claims may be unallocated.
        if not pod.resource_claims or not pod.node_name or pod.uid in skipped_uids:
            continue
        target = pod.node_name
        node = snapshot.get_node_info(target).node
        assert node is not None
        for claim in snapshot.dra_snapshot.pod_claims(pod):
            if not claim_available_on_node(claim, node):
                problem = (
                    "is not allocated"
                    if claim.status.allocation is None
                    else "is allocated for other nodes"
                )
                out.append(
                    f"pod {pod.key} runs on {target} but its ResourceClaim {claim.key} "
                    f"{problem}; used as it is"
                )
            elif not claim_reserved_for_pod(pod, claim):
                out.append(
                    f"pod {pod.key} runs on {target} but its ResourceClaim {claim.key} is not "
                    f"reserved for it (status.reservedFor); used as it is"
                )
    return out


def simulate(
    snapshot: PredicateSnapshot,
    pods: Sequence[Pod],
    *,
    resource_claim_templates: Sequence[ResourceClaimTemplate] = (),
    placement: str = "kube-scheduler",
    seed: int | None = None,
    explain: Callable[[Pod], bool] | None = None,
    other_profiles: Mapping[str, Framework] | None = None,
    queue_options: QueueOptions | None = None,
) -> SimulationResult:
    """Schedule every pending pod of a loaded cluster.

    Pending pods for the snapshot's profile (its schedulerName) are scheduled in queue order
    as kube-scheduler places them (``placement`` ``"kube-scheduler"``) or on the first node
    that passes the Filter plugins, round robin after the node chosen last
    (``"first-fit"``); Succeeded/Failed pods are ignored. A snapshot built with
    ``skip_unschedulable_nodes=False`` leaves cordoned nodes to the NodeUnschedulable plugin,
    as kube-scheduler does (what `schedsim.engine.Engine.simulate` builds).

    Args:
        snapshot: the cluster, ready (`schedsim.engine.Cluster.snapshot`): its nodes with the
            bound pods (``spec.nodeName``, else ``status.nominatedNodeName``, as CA places
            them), its DRA, CSI and storage state; it keeps the result. Claims that pending
            pods need from ``resource_claim_templates`` are created in its DRA snapshot
            first, as the resource-claim controller would.
        pods: the cluster's pods, bound and pending (the bound ones are in the snapshot).
        resource_claim_templates: the cluster's ResourceClaimTemplates.
        placement: one of `PLACEMENTS`.
        seed: kube-scheduler placement: None breaks score ties by taking the first tied node
            in evaluation order; an int samples among them like upstream, seeded.
        explain: which pending pods get an `Explanation` (kube-scheduler placement).
        other_profiles: the frameworks of the configuration's other profiles, by
            schedulerName: their pods are scheduled too, each by its own profile, through
            views of ``snapshot`` (`PredicateSnapshot.with_framework`).
        queue_options: the queue's backoff seconds (KubeSchedulerConfiguration).

    Returns:
        the outcome per pending pod, with the devices allocated to its claims; pods naming a
        schedulerName no profile has are left alone (``other_scheduler_pods``), as
        kube-scheduler leaves them to that scheduler.

    Raises:
        ValueError: an unknown ``placement``.
    """
    if placement not in PLACEMENTS:
        raise ValueError(f"placement {placement!r}: expected one of {', '.join(PLACEMENTS)}")
    framework = snapshot.framework
    profiles = {framework.profile.scheduler_name: framework, **(other_profiles or {})}
    bound, pending, others = partition_pods(pods, profiles)
    dra = snapshot.dra_snapshot
    warnings: list[str] = []
    if any(p.resource_claims for p in pending):
        made = create_template_claims(pending, resource_claim_templates, dra.list_resource_claims())
        pending, warnings = made.pods, made.warnings
        dra.add_claims(made.claims)
    unchecked = {
        plugin: tuple(p for p in pending if needs(p))
        for plugin, needs in _NEEDS.items()
        if plugin in framework.not_emulated
    }
    skipped = pods_on_missing_nodes(snapshot, bound)
    if snapshot.dra_enabled:
        warnings.extend(_bound_claim_warnings(snapshot, bound, skipped))
    with gc_paused():
        first_fit = placement != "kube-scheduler"
        scheduler = Scheduler(snapshot, seed=seed, first_fit=first_fit)
        more = {
            name: Scheduler(snapshot.with_framework(fw), seed=seed, first_fit=first_fit)
            for name, fw in profiles.items()
            if fw is not framework
        }
        cycle = run_scheduling_cycle(
            snapshot,
            pending,
            scheduler,
            explain,
            options=queue_options,
            warnings=warnings,
            other_schedulers=more,
        )
        outcomes = [
            attrs.evolve(o, allocations=_allocations(snapshot, o.pod))
            if o.node_name is not None
            and snapshot.dra_enabled
            and (o.pod.resource_claims or has_extended_resource_requests(o.pod))
            else o
            for o in cycle
        ]
    return SimulationResult(
        outcomes=tuple(outcomes),
        nodes=len(snapshot.list_node_infos()),
        skipped_pods=tuple(skipped),
        not_emulated=framework.not_emulated,
        other_scheduler_pods=others,
        unchecked={k: v for k, v in unchecked.items() if v},
        warnings=tuple(warnings),
    )
