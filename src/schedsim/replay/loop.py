"""`Replay`: a discrete-event simulation of a cluster on a virtual clock, kube-scheduler and
the Cluster Autoscaler in the loop.

The state is one long-lived snapshot of the cluster (the engine's, `Engine.snapshot`). Events
(`schedsim.replay.clock`) move it: pods arrive and enter kube-scheduler's scheduling queue
(`schedsim.scheduler.queue.SchedulingQueue`, stepped through
`schedsim.scheduler.scheduling.SchedulingPass` on the replay's clock); after the events of an
instant the pass schedules every ready pod as kube-scheduler does (QueueSort order; Filter,
Score, the highest total; PostFilter preemption); a bound pod completes ``duration`` seconds
later and leaves its node; every ``scan-interval`` the autoscaler's loop
(`schedsim.replay.autoscaler`) may request nodes (ready after the provisioning delay) or delete
unneeded ones (their pods are evicted and come back as new pods). Each change is a cluster
event for the queue (``AssignedPodDelete`` for a completed or evicted pod, ``NodeAdd`` and
``ResourceSliceAdd`` for its slices, ``NodeDelete``; the pass itself fires ``AssignedPodAdd``
for a binding): a parked pod moves back only when one of its rejecting plugins registered the
event and its hint says Queue, as upstream. Backoff expiries, Permit deadlines and the periodic
flush of pods parked longer than ``podMaxInUnschedulablePodsDuration`` (5 min, checked every 30
s as upstream) are instants of the replay too. Metrics are sampled every ``sample_interval``
(`schedsim.replay.metrics`).

At one instant: nodes become ready and pods complete, then pods arrive, then a KWOK
recording's changes (`schedsim.replay.recording`, in recorded order), then the scheduling
pass, then the autoscaler's loop (and a second pass when it evicted pods), then the sample.
Everything is ordered by time, kind and insertion: the same input gives the same replay.

The replay ends at ``until`` when given; otherwise when nothing can change any more: no pod
or node event is scheduled, no backoff or Permit wait is running (a backoff of pods whose
last attempt failed with nothing changed since does not count: e.g. a pod facing a cluster
with no nodes), no node is being
provisioned or waits to be deleted, and no node group that could help a pending pod is
backing off (the unschedulable flush alone does not keep a replay going: with nothing else
changing, a retry fails the same way).

Differences from a real cluster, deliberate: binding is instantaneous (no API server, no
kubelet start-up, no scheduling time: a pod popped at an instant is decided at that
instant); an evicted pod starts over (its full duration) when it is bound again; the queue
pops a backing-off pod as soon as activeQ is empty (SchedulerPopFromBackoffQ, on by default
in 1.34), so with instantaneous scheduling a backoff delays a pod only when a
feature-gate-less queue is configured; a pod is never dropped after many attempts (the
one-shot pass's attempt guard is off).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import attrs

from schedsim.api.apps.controller_names import JOB_COMPLETION_INDEX
from schedsim.api.apps.controllers import new_job_pod
from schedsim.api.apps.workloads import Job
from schedsim.api.core import Node, Pod
from schedsim.autoscaler.nodegroups import (
    NodeGroup,
    group_of_nodes,
    templates_without_pods,
    unknown_member_nodes,
)
from schedsim.autoscaler.sanitize import template_node_info
from schedsim.dra.claim_controller import create_template_claims
from schedsim.engine import Engine
from schedsim.framework.events import (
    ASSIGNED_POD_DELETE,
    NODE_ADD,
    ActionType,
    ClusterEvent,
    EventResource,
)
from schedsim.framework.status import Code
from schedsim.framework.waiting_pods import go_duration
from schedsim.replay.autoscaler import Autoscaler, AutoscalerOptions, LoopDecision
from schedsim.replay.clock import Event, EventKind, EventQueue, VirtualClock, grid_time
from schedsim.replay.gpus import device_gpus
from schedsim.replay.metrics import (
    NOT_ATTEMPTED,
    WAITING_ON_PERMIT,
    MetricsRecorder,
    ReplayMetrics,
    dra_devices,
    pending_reason,
    task_classes,
)
from schedsim.replay.recording import (
    NODE_CREATE,
    NODE_UPDATE,
    POD_CREATE,
    POD_FINISH,
    RecordedChange,
)
from schedsim.replay.recording import NODE_DELETE as RECORDED_NODE_DELETE
from schedsim.replay.state import ReplayState
from schedsim.replay.trace import Trace, TracePod, pod_duration
from schedsim.scheduler import Scheduler
from schedsim.scheduler.clock import LogicalClock
from schedsim.scheduler.scheduling import PodOutcome, QueueOptions, SchedulingPass, queue_order
from schedsim.snapshot.infos import NodeInfo
from schedsim.snapshot.predicate import PredicateSnapshot

__all__ = ["DEFAULT_GPU_RESOURCE", "Replay", "ReplayState"]

DEFAULT_GPU_RESOURCE = "nvidia.com/gpu"
"""The extended resource GPU metrics count."""

ProgressCallback = Callable[[float], None]
"""Called with the virtual time (seconds) after each instant."""

NODE_DELETE = ClusterEvent(EventResource.Node, ActionType.Delete, "NodeDelete")
"""The autoscaler deleted a node (kube-scheduler's informer sees a Node delete)."""

RESOURCE_SLICE_ADD = ClusterEvent(EventResource.ResourceSlice, ActionType.Add, "ResourceSliceAdd")
"""A new node's ResourceSlice was published (what DynamicResources waits for)."""

BACKOFF_LIMIT_EXCEEDED = "BackoffLimitExceeded"
BACKOFF_LIMIT_MESSAGE = "Job has reached the specified backoff limit"
"""The Failed condition of a Job with more failed pods than ``spec.backoffLimit``
(``batch.JobReasonBackoffLimitExceeded`` and syncJob's message)."""

JOB_POD_FAILURE_BACKOFF = 10.0
JOB_POD_FAILURE_BACKOFF_MAX = 600.0
"""The Job controller's pod failure backoff: replacements wait 10 s after the first failure
since the last success, doubling per failure, at most 10 minutes
(``DefaultJobPodFailureBackOff``, ``MaxJobPodFailureBackOff``, ``getRemainingTime``)."""


def job_pod_failure_backoff(failures: int) -> float:
    """Seconds the Job controller waits after the last failure before creating pods, after
    ``failures`` failures since the last success (0: none)."""
    if failures <= 0:
        return 0.0
    delay = JOB_POD_FAILURE_BACKOFF
    for _ in range(1, failures):
        delay *= 2
        if delay >= JOB_POD_FAILURE_BACKOFF_MAX:
            return JOB_POD_FAILURE_BACKOFF_MAX
    return delay


FLUSH_PERIOD = 30.0
"""Seconds between kube-scheduler's checks for pods parked too long
(``flushUnschedulablePodsLeftover`` runs every 30 s)."""


@attrs.define
class _JobRun:
    """What the replay's Job controller knows of one Job: completions and failed pods so
    far, its active pods (keys), the completion index of each (Indexed), the indexes done,
    the next serial for a NonIndexed pod's generated name, its Failed condition's reason
    once it failed, and its pod failure backoff record (failures since the last success, the
    last failure's time, whether a delayed sync is due)."""

    job: Job
    succeeded: int
    failed: int = 0
    failed_reason: str | None = None
    failures_after_success: int = 0
    last_failure: float = 0.0
    sync_pending: bool = False
    active: set[str] = attrs.field(factory=set)
    index_of: dict[str, int] = attrs.field(factory=dict)
    completed: set[int] = attrs.field(factory=set)
    serial: int = 0


def _job_ref(pod: Pod) -> tuple[str, str] | None:
    ref = next((r for r in pod.owner_references if r.controller), None)
    if ref is None or ref.kind != "Job":
        return None
    return (pod.namespace, ref.name)


NODE_SPEC_UNSCHEDULABLE_CHANGE = ClusterEvent(
    EventResource.Node, ActionType.UpdateNodeTaint, "NodeSpecUnschedulableChange"
)
NODE_ALLOCATABLE_CHANGE = ClusterEvent(
    EventResource.Node, ActionType.UpdateNodeAllocatable, "NodeAllocatableChange"
)
NODE_LABEL_CHANGE = ClusterEvent(EventResource.Node, ActionType.UpdateNodeLabel, "NodeLabelChange")
NODE_TAINT_CHANGE = ClusterEvent(EventResource.Node, ActionType.UpdateNodeTaint, "NodeTaintChange")
NODE_ANNOTATION_CHANGE = ClusterEvent(
    EventResource.Node, ActionType.UpdateNodeAnnotation, "NodeAnnotationChange"
)


def node_update_events(old: Node, new: Node) -> list[ClusterEvent]:
    """The queue events of a node update, in kube-scheduler 1.34's order
    (``nodeSchedulingPropertiesChange``, pkg/scheduler/eventhandlers.go): unschedulable
    cleared (only a node becoming schedulable), allocatable, labels, taints, annotations.
    Conditions are not modelled (`schedsim.api.core.Node` has none)."""
    out: list[ClusterEvent] = []
    if old.unschedulable and not new.unschedulable:
        out.append(NODE_SPEC_UNSCHEDULABLE_CHANGE)
    if old.allocatable != new.allocatable:
        out.append(NODE_ALLOCATABLE_CHANGE)
    if old.labels != new.labels:
        out.append(NODE_LABEL_CHANGE)
    if old.taints != new.taints:
        out.append(NODE_TAINT_CHANGE)
    if old.annotations != new.annotations:
        out.append(NODE_ANNOTATION_CHANGE)
    return out


class Replay:
    """A replay you can step and inspect.

    .. code-block:: python

        replay = Replay(trace_from_paths(["trace.yaml"]), load_node_groups("groups.yaml"))
        replay.run_until(3600)          # the first simulated hour
        print(replay.state().pending)   # who is still waiting
        metrics = replay.run()          # to the end

    Args:
        trace: what to replay (`schedsim.replay.trace.manifest_trace`,
            `schedsim.replay.alibaba.alibaba_trace`).
        node_groups: the node groups the autoscaler may grow and shrink (none: no
            autoscaling, the cluster keeps its nodes).
        engine: the scheduler configuration (default: kube-scheduler's default profile).
        options: the autoscaler's settings (CA's flags and defaults).
        sample_interval: seconds of virtual time between metric samples (> 0).
        until: end at this time (seconds); None: when nothing can change any more.
        seed: kube-scheduler's tie-breaking among equal scores (None: the first tied node).
        gpu_resource: the extended resource GPU metrics count.
        gpu_driver: count GPUs as the devices of this DRA driver instead (in the nodes'
            ResourceSlices; allocated: in the claims' allocation results), e.g. the Alibaba
            trace's ``--gpu-as dra`` (`schedsim.replay.alibaba.GPU_DRIVER`).
        queue_options: the queue's backoff seconds (default: the engine's
            KubeSchedulerConfiguration ``podInitialBackoffSeconds`` /
            ``podMaxBackoffSeconds``, else 1 s and 10 s); its attempt guard is ignored (a
            replay retries a pod for as long as it waits).
        detail: record what a report draws besides the samples (per-node shares, pending
            pods by reason, DRA devices in use: `schedsim.replay.metrics.SampleDetail`);
            off, the replay computes none of it.

    Raises:
        ValueError: a non-positive ``sample_interval``; a negative ``until``.
        NodeGroupError, SanitizationError: a node is in two groups, a template cannot be
            copied.
        ManifestError, DraSnapshotError: as `Engine.snapshot`.
    """

    def __init__(
        self,
        trace: Trace,
        node_groups: Sequence[NodeGroup] = (),
        *,
        engine: Engine | None = None,
        options: AutoscalerOptions | None = None,
        sample_interval: float = 60.0,
        until: float | None = None,
        seed: int | None = None,
        gpu_resource: str = DEFAULT_GPU_RESOURCE,
        gpu_driver: str | None = None,
        queue_options: QueueOptions | None = None,
        detail: bool = False,
    ) -> None:
        if not sample_interval > 0:
            raise ValueError(f"sample interval must be > 0, got {sample_interval}")
        if until is not None and not until >= 0:
            raise ValueError(f"until must be >= 0, got {until}")
        self.trace = trace
        self.engine = engine if engine is not None else Engine()
        self.options = options if options is not None else AutoscalerOptions()
        o = self.options
        # every new node is given up before it is ready (`_autoscaler_loop`)
        self._scale_up_futile = o.node_provision_delay > o.max_node_provision_time
        self.sample_interval = sample_interval
        self.until = until
        cluster = trace.cluster
        # kube-scheduler leaves cordoned nodes to NodeUnschedulable and walks its node tree
        self.snapshot: PredicateSnapshot
        # a pod with only status.nominatedNodeName is pending (kube-scheduler placement)
        self.snapshot, skipped = self.engine.snapshot(
            cluster, skip_unschedulable_nodes=False, node_tree=True, place_nominated=False
        )
        self.warnings: list[str] = list(trace.warnings)
        self.warnings.extend(
            f"pod {p.key}: node {p.node_name!r} is not among the nodes; ignored" for p in skipped
        )
        framework = self.engine.framework
        self._scheduler_name = framework.profile.scheduler_name
        self.scheduler = Scheduler(self.snapshot, seed=seed)
        plr = framework.handle.feature_gates.enabled("PodLevelResources")
        claims = self.snapshot.dra_snapshot.list_resource_claims()
        templates = {
            g.name: template_node_info(
                g.template,
                claims,
                pod_level_resources=plr,
                path=f"nodeGroups[{i}].template",
                group=g.name,
                daemon_sets=cluster.daemon_sets,
            )
            for i, g in enumerate(node_groups)
        }
        self._node_groups = tuple(node_groups)
        members = {n: g.name for n, g in group_of_nodes(node_groups, cluster.nodes).items()}
        # as scale-up and scale-down warn: a listed member the cluster lacks is not silent
        self.warnings.extend(unknown_member_nodes(node_groups, cluster.nodes))
        self.warnings.extend(templates_without_pods(node_groups))
        if node_groups and self._scale_up_futile:
            self.warnings.append(
                f"--node-provision-delay {go_duration(o.node_provision_delay)} is longer than "
                f"--max-node-provision-time {go_duration(o.max_node_provision_time)}: every "
                "scale-up times out and its group backs off; once nothing else is left to "
                "happen, the replay ends with the pods still pending"
            )
        self.autoscaler = Autoscaler(
            node_groups,
            templates,
            self.options,
            members,
            [n.name for n in cluster.nodes],
            daemon_sets=cluster.daemon_sets,
            pod_level_resources=plr,
        )
        self._autoscaling = bool(node_groups)
        self.clock = VirtualClock()
        self._queue_clock = LogicalClock()
        if queue_options is None:
            sc = self.engine.config.scheduler_config
            queue_options = QueueOptions()
            if sc is not None:
                queue_options = QueueOptions(
                    sc.pod_initial_backoff_seconds, sc.pod_max_backoff_seconds
                )
        queue_options = attrs.evolve(queue_options, max_attempts_per_pod=2**62)
        self.scheduling = SchedulingPass(
            {self._scheduler_name: self.scheduler}, clock=self._queue_clock, options=queue_options
        )
        """kube-scheduler's loop and queue (``scheduling.queue``), on the replay's clock."""
        self.queue = self.scheduling.queue
        self._flush_at = math.inf  # next check for pods parked too long (30 s grid)
        self.events = EventQueue()
        self._pods: dict[str, TracePod] = {}
        self.bound: dict[str, str] = {}  # pod key -> node
        self._binds: dict[str, int] = {}  # pod key -> bind count (completion tokens)
        self._unbound: set[str] = set()  # pods in the queue or at Permit
        self._messages: dict[str, str] = {}  # pod key -> last FitError message
        self._detail = detail
        self._reasons: dict[str, str] = {}  # with detail: pod key -> `pending_reason`
        self.failed: dict[str, str] = {}
        """Pods whose attempt ended with an Error status (a plugin failed): key -> message.
        They leave the queue (kube-scheduler would retry them after backoff, and fail again).
        At the end, also the pods a PreEnqueue plugin's Error status still keeps out of the
        queue (kube-scheduler keeps such a pod gated, as here, and logs the error)."""
        self.skipped: dict[str, str] = {}
        """Pending pods being deleted (``metadata.deletionTimestamp``), popped and skipped as
        kube-scheduler's skipPodSchedule skips them: key -> ``skip schedule deleting pod:
        NS/NAME``. They leave the queue, and the autoscaler never sees them."""
        self._unhelped: Mapping[str, Mapping[str, str]] = {}
        self._upcoming_info: dict[str, NodeInfo] = {}
        self.counters = {"events": 0, "loops": 0, "attempts": 0}
        """Work done: trace events handled, autoscaler loops run, scheduling attempts."""
        self._changes = 0  # bumped by every change of the cluster or the queue
        self._sampled_at = -1  # `_changes` at the last sample
        # pod key -> `_changes` before the pass whose attempt failed for it: a retry with
        # nothing changed since fails the same way
        self._failed_at: dict[str, int] = {}
        self._done = False
        self._scheduled_once = False
        self._gpu_driver = gpu_driver
        trace_pods = (*trace.running, *trace.arrivals)
        self.metrics_recorder = MetricsRecorder(
            {g.name: g.price for g in node_groups},
            gpu_resource,
            task_classes(
                [tp.pod for tp in trace_pods],
                gpu_resource,
                {tp.pod.key: tp.gpus for tp in trace_pods if tp.gpus is not None},
            ),
            detail=detail,
        )
        for n in cluster.nodes:
            if self._info(n.name) is not None:
                self.metrics_recorder.on_node_added(0.0, n.name, members.get(n.name, ""))
        for tp in trace.running:
            key = tp.pod.key
            self._pods[key] = tp
            node = tp.pod.node_name
            if self._info(node) is None:
                continue
            self.bound[key] = node
            self._binds[key] = 1
            if tp.duration is not None:
                self._push(Event(tp.duration, EventKind.POD_COMPLETION, key, 1))
        others = 0
        for tp in trace.arrivals:
            if tp.pod.scheduler_name != self._scheduler_name:
                others += 1
                continue
            self._pods[tp.pod.key] = tp
            self._push(Event(tp.arrival, EventKind.POD_ARRIVAL, tp.pod.key))
        for i, change in enumerate(trace.recorded):
            self._push(Event(change.time, EventKind.RECORDED_CHANGE, change.key, i))
        self._jobs: dict[str, _JobRun] = {}  # pod key -> its Job's run
        self._deleted: set[str] = set()  # pods a failed Job's controller deleted
        self._job_runs: dict[str, _JobRun] = {}  # Job ns/name -> its run
        self.job_failures: dict[str, str] = {}
        """Jobs the replay's Job controller marked Failed: ``NS/NAME`` -> ``REASON: message``
        (their Failed condition)."""
        self._taken = {(p.namespace, p.name) for p in cluster.pods}
        self._taken.update((tp.pod.namespace, tp.pod.name) for tp in self._pods.values())
        if not trace.recorded:  # a KWOK recording brings the pods its Job controller made
            self._start_jobs(cluster.jobs, cluster.pods)
        if others:
            self.warnings.append(
                f"{others} pod(s) name another schedulerName than {self._scheduler_name!r}; "
                "not replayed"
            )
        self._next_sample = 0.0
        self._next_loop = 0.0 if self._autoscaling else math.inf

    # ------------------------------------------------------------------ inspection

    def _info(self, node: str) -> object | None:
        try:
            return self.snapshot.get_node_info(node)
        except LookupError:
            return None

    @property
    def now(self) -> float:
        """The virtual time (seconds since the trace's start)."""
        return self.clock.now

    @property
    def done(self) -> bool:
        """The replay has ended (see the module docstring)."""
        return self._done

    def state(self) -> ReplayState:
        """The replay now (copies: later steps do not change it)."""
        a = self.autoscaler
        nodes = {
            ni.node.name: a.group_of.get(ni.node.name, "")
            for ni in self.snapshot.list_node_infos()
            if ni.node is not None
        }
        pending = [q.pod.key for q in self.queue.pending_pods()]
        return ReplayState(
            self.now,
            tuple(pending),
            dict(self.bound),
            nodes,
            {n: g for n, (g, _) in a.upcoming.items()},
            dict(a.unneeded_since),
            self._done,
        )

    def metrics(self) -> ReplayMetrics:
        """The metrics so far (pods still queued are reported with their reasons)."""
        unschedulable: dict[str, str] = {}
        for qpi in self.queue.pending_pods():
            pod = qpi.pod
            default = qpi.gating_status.message if qpi.gating_status else NOT_ATTEMPTED
            msg = self._messages.get(pod.key, default)
            groups = self._unhelped.get(pod.key)
            if groups:
                msg += "; no node group helps: " + "; ".join(f"{g}: {r}" for g, r in groups.items())
            unschedulable[pod.key] = msg
        return self.metrics_recorder.result(self.now, unschedulable)

    # ------------------------------------------------------------------ running

    def _push(self, event: Event) -> None:
        self.events.push(event)

    def _next_time(self) -> float:
        t = min(self._next_event(), self._next_sample, self._next_loop)
        if not math.isinf(t):  # the flush alone does not keep the replay going
            t = min(t, self._flush_at)
        return t

    def _next_queue_time(self) -> float:
        """When the queue has work of its own: a backoff ends, a Permit wait times out. Once
        no trace or node event is left, a backoff whose pods all failed with nothing changed
        since does not count: their retries would fail the same way for ever (e.g. ``no
        nodes available to schedule pods``, an Error status kube-scheduler retries after
        backoff), so the replay ends with them listed as pending."""
        backoff = self.queue.next_backoff_expiration()
        if backoff is not None and self.events.peek_time() is None and self._retries_futile():
            backoff = None
        times = (backoff, self.scheduling.next_deadline())
        return min((x for x in times if x is not None), default=math.inf)

    def _retries_futile(self) -> bool:
        parked = {q.pod.key for q in self.queue.unschedulable_pods()}
        changes = self._changes
        return all(
            self._failed_at.get(q.pod.key) == changes
            for q in self.queue.pending_pods()
            if q.pod.key not in parked
        )

    def pending_count(self) -> int:
        """Pods waiting to be scheduled: in the queue (active, backing off, parked, gated) or
        waiting at Permit."""
        q = self.queue
        return q.active_len + q.backoff_len + q.unschedulable_len + len(self.scheduling.waiting)

    def step(self) -> bool:
        """Process the next instant: its events, the scheduling pass, the sample and the
        autoscaler's loop when due.

        Returns:
            False when the replay has ended (nothing was done).

        Raises:
            SchedulingError: a plugin failed outside PreFilter/Filter.
        """
        if self._done:
            return False
        t = self._next_time()
        if math.isinf(t) or (self.until is not None and t > self.until):
            self._finish()
            return False
        self.clock.advance(t)
        self._queue_clock.advance_to(t)
        while self.events.peek_time() == t:
            self._handle(self.events.pop())
        self._schedule_pass()
        if self._next_loop == t:
            self._autoscaler_loop()
            while self.events.peek_time() == t:  # e.g. nodes with no provisioning delay
                self._handle(self.events.pop())
            self._schedule_pass()
            next_event = self._next_event()
            # a backed-off group's return wakes the loop for the pending pods, unless no
            # scale-up can ever bring a node (provisioning slower than the CA waits) and
            # nothing else is left to happen: the retries would fail the same way for ever
            retry = self.pending_count() > 0 and not (
                self._scale_up_futile and math.isinf(next_event)
            )
            self._next_loop = grid_time(
                min(next_event, self.autoscaler.wake_time(t, retry)),
                t,
                self.options.scan_interval,
            )
        if self._next_sample == t:
            if self._changes != self._sampled_at:  # nothing changed: nothing to record
                self._sample()
            self._next_sample = grid_time(
                min(self._next_event(), self._next_loop), t, self.sample_interval
            )
        if math.isinf(self._next_event()) and math.isinf(self._next_loop):
            self._finish()
            return False
        return True

    def _next_event(self) -> float:
        """The next trace or node event, or queue deadline (seconds). Stale events at the
        head are dropped first (`_stale`): an instant where nothing would happen is not one
        of the replay's instants (it ended at a preempted pod's would-be completion)."""
        while self._stale():
            self.events.pop()
        t = self.events.peek_time()
        return min(math.inf if t is None else t, self._next_queue_time())

    def _stale(self) -> bool:
        """The next event changes nothing: the completion of a binding that ended since
        (preempted, evicted, deleted), or the arrival of a pod its failed Job deleted."""
        kind = self.events.peek_kind()
        if kind is EventKind.POD_COMPLETION:
            event = self.events.peek()
            return event.key not in self.bound or self._binds.get(event.key) != event.token
        if kind is EventKind.POD_ARRIVAL:
            return self.events.peek().key in self._deleted
        return False

    def run_until(self, t: float, progress: ProgressCallback | None = None) -> None:
        """Step through every instant up to and including ``t`` (seconds)."""
        while not self._done:
            if self._next_time() > t:
                break
            self.step()
            if progress is not None:
                progress(self.now)

    def run(self, progress: ProgressCallback | None = None) -> ReplayMetrics:
        """Step to the end; the metrics."""
        while self.step():
            if progress is not None:
                progress(self.now)
        return self.metrics()

    def _finish(self) -> None:
        if not self._done:
            self._done = True
            for qpi in self.queue.pending_pods():  # a plugin failed for them too
                st = qpi.gating_status
                if st is not None and st.code is Code.Error and qpi.pod.key not in self.failed:
                    self.failed[qpi.pod.key] = st.message
                    self.warnings.append(
                        f"pod {qpi.pod.key}: kept out of the scheduling queue to the end by a "
                        f"PreEnqueue plugin's error: {st.message}"
                    )
            if self.until is not None and self.now < self.until:
                self.clock.advance(self.until)  # the replay ends at --until, quiet or not
            if self._changes != self._sampled_at or self.metrics_recorder.last_time != self.now:
                self._sample()  # the end, once (the cost so far keeps growing with time)

    # ------------------------------------------------------------------ events

    def _handle(self, event: Event) -> None:
        self._changes += 1
        self.counters["events"] += 1
        kind = event.kind
        if kind is EventKind.POD_ARRIVAL:
            if event.key not in self._deleted:
                self._arrive(self._pods[event.key])
        elif kind is EventKind.POD_COMPLETION:
            self._complete(event.key, event.token)
        elif kind is EventKind.NODE_READY:
            self._node_ready(event.key)
        elif kind is EventKind.NODE_PROVISION_TIMEOUT:
            ev = self.autoscaler.provision_timeout(event.key, self.now)
            if ev is not None:
                self._upcoming_info.pop(event.key, None)
                self.metrics_recorder.on_event(ev)
        elif kind is EventKind.RECORDED_CHANGE:
            self._recorded(self.trace.recorded[event.token])
        elif kind is EventKind.JOB_SYNC:
            run = self._job_runs[event.key]
            run.sync_pending = False
            if run.failed_reason is None:
                self._manage_job(run)

    def _arrive(self, tp: TracePod) -> None:
        self.metrics_recorder.on_arrival(self.now, tp.pod.key)
        self._enqueue(tp.pod, arrival=True)

    def _enqueue(self, pod: Pod, *, arrival: bool = False) -> None:
        """A new pod (an arrival, or the replacement of an evicted one) enters the queue; the
        resource-claim controller first makes the claims of its templates (a new pod has
        none yet: the claims of one that left were deleted with it). An arrival keeps its
        ``status.nominatedNodeName`` (the queue nominates it there, `SchedulingPass.add`); a
        replacement is a new pod, without one."""
        if pod.node_name or (pod.nominated_node_name and not arrival):
            # running at the start: a new pod (one being deleted too: kube-scheduler counts a
            # bound pod until it is gone, so it keeps its place; only a pending pod being
            # deleted is skipped)
            deletion = None if pod.node_name else pod.deletion_timestamp
            pod = attrs.evolve(
                pod, node_name="", nominated_node_name="", deletion_timestamp=deletion
            )
        if pod.resource_claims:
            made = create_template_claims([pod], self.trace.cluster.resource_claim_templates)
            self.warnings.extend(made.warnings)
            self.snapshot.dra_snapshot.add_claims(made.claims)
            pod = made.pods[0]
        self._unbound.add(pod.key)
        self.scheduling.add(pod)

    def _complete(self, key: str, token: int) -> None:
        if key not in self.bound or self._binds.get(key) != token:
            return  # evicted since: that binding's completion is stale
        self._leave_node(key)
        self.metrics_recorder.completed += 1
        run = self._jobs.get(key)
        if run is not None:
            self._job_pod_gone(run, key, succeeded=True)

    # ------------------------------------------------------------------ Job controller

    def _start_jobs(self, jobs: Sequence[Job], pods: Sequence[Pod]) -> None:
        """Index the replay's pods by the Job that controls them (by namespace and name, as
        `expand_workloads`); a Job's completions start from ``status.succeeded`` or its
        Succeeded pods in the input, whichever is more."""
        done: dict[tuple[str, str], int] = {}
        for p in pods:
            ref = _job_ref(p)
            if ref is not None and p.phase == "Succeeded":
                done[ref] = done.get(ref, 0) + 1
        runs = {
            (j.namespace, j.name): _JobRun(
                j, max(j.succeeded, done.get((j.namespace, j.name), 0)), j.failed
            )
            for j in jobs
        }
        if not runs:
            return
        self._job_runs = {f"{ns}/{name}": run for (ns, name), run in runs.items()}
        for j in jobs:
            if j.backoff_limit_per_index is not None:
                self.warnings.append(
                    f"Job {j.namespace}/{j.name}: spec.backoffLimitPerIndex is not counted by "
                    "the replay's Job controller (failed pods count against spec.backoffLimit "
                    "only)"
                )
            if j.pod_failure_policy:
                self.warnings.append(
                    f"Job {j.namespace}/{j.name}: spec.podFailurePolicy is not applied by the "
                    "replay's Job controller (every failed pod counts against "
                    "spec.backoffLimit)"
                )
            if j.active_deadline:
                self.warnings.append(
                    f"Job {j.namespace}/{j.name}: spec.activeDeadlineSeconds is not applied by "
                    "the replay's Job controller (the Job does not fail at its deadline, "
                    "DeadlineExceeded)"
                )
        for key, tp in self._pods.items():
            ref = _job_ref(tp.pod)
            run = runs.get(ref) if ref is not None else None
            if run is None:
                continue
            self._jobs[key] = run
            run.active.add(key)
            run.serial += 1
            index = tp.pod.annotations.get(JOB_COMPLETION_INDEX, "")
            if run.job.completion_mode == "Indexed" and index.isdigit():
                run.index_of[key] = int(index)

    def _job_pod_gone(self, run: _JobRun, key: str, *, succeeded: bool) -> None:
        """A pod of the Job completed (``succeeded``: a replay's pod that runs its duration
        succeeds) or was deleted by preemption (failed): the Job controller counts it and
        creates pods until ``min(parallelism, completions - succeeded)`` are active
        (``syncJob`` / ``manageJob``); Indexed, one per index not yet completed nor running.
        A work queue (no ``completions``) creates none once one pod succeeded.

        A failed pod counts against ``spec.backoffLimit`` (from ``status.failed``): once more
        pods failed than it allows (``jobCtx.failed > *job.Spec.BackoffLimit`` in
        ``syncJob``; a deleted pod that had not succeeded is a failed one, ``isPodFailed``)
        the Job is Failed with reason ``BackoffLimitExceeded``, its active pods are deleted
        (``deleteActivePods``) and it creates no more. Replacements after a failure wait for
        the pod failure backoff (`job_pod_failure_backoff`; a success resets it)."""
        run.active.discard(key)
        index = run.index_of.pop(key, None)
        if run.failed_reason is not None:
            return
        if succeeded:
            run.succeeded += 1
            run.failures_after_success = 0
            if index is not None:
                run.completed.add(index)
        else:
            run.failed += 1
            run.failures_after_success += 1
            run.last_failure = self.now
            if run.failed > run.job.backoff_limit:
                self._fail_job(run, BACKOFF_LIMIT_EXCEEDED, BACKOFF_LIMIT_MESSAGE)
                return
        self._manage_job(run)

    def _manage_job(self, run: _JobRun) -> None:
        """``manageJob``: create the pods the Job wants, once its pod failure backoff since
        the last failure is over (else a sync is due then)."""
        job = attrs.evolve(run.job, succeeded=run.succeeded)
        want = job.wanted_active - len(run.active)
        if want <= 0:
            return
        ready_at = run.last_failure + job_pod_failure_backoff(run.failures_after_success)
        if self.now < ready_at:
            if not run.sync_pending:
                run.sync_pending = True
                self._push(Event(ready_at, EventKind.JOB_SYNC, f"{job.namespace}/{job.name}"))
            return
        if job.completion_mode == "Indexed":
            assert job.completions is not None  # decoding requires it for Indexed
            busy = run.completed | set(run.index_of.values())
            numbers = [i for i in range(job.completions) if i not in busy][:want]
        else:
            numbers = list(range(run.serial, run.serial + want))
            run.serial += want
        for n in numbers:
            pod = new_job_pod(run.job, n, self._taken)
            where = f"Job {job.namespace}/{job.name}: Pod {pod.key}"
            tp = TracePod(pod, self.now, pod_duration(pod, where), where)
            new = pod.key
            self._pods[new] = tp
            self._jobs[new] = run
            run.active.add(new)
            if job.completion_mode == "Indexed":
                run.index_of[new] = n
            self.metrics_recorder.on_arrival(self.now, new)
            self._enqueue(pod)

    def _fail_job(self, run: _JobRun, reason: str, message: str) -> None:
        """The Job controller marks the Job Failed (``reason``, ``message``) and deletes its
        active pods: a bound one leaves its node, a pending one the queue, one that has not
        arrived yet never does."""
        job = run.job
        run.failed_reason = reason
        self.job_failures[f"{job.namespace}/{job.name}"] = f"{reason}: {message}"
        self.warnings.append(
            f"Job {job.namespace}/{job.name}: Failed at {self.now:g}s: {reason}: {message} "
            f"({run.failed} failed pod(s), backoffLimit {job.backoff_limit}); its "
            f"{len(run.active)} active pod(s) deleted"
        )
        self._changes += 1
        for key in sorted(run.active):
            if key in self.bound:
                if self._on_node(key, self.bound[key]):
                    self._leave_node(key)
                # else preempted in the pass whose outcomes are being read: its own
                # outcome takes it off (`_preempted`)
            elif key in self._unbound:
                self.queue.delete(self._pods[key].pod)
                self._unbound.discard(key)
            self._deleted.add(key)
        run.active.clear()
        run.index_of.clear()

    def _on_node(self, key: str, node: str) -> bool:
        """Pod ``key`` is on ``node`` in the snapshot."""
        try:
            info = self.snapshot.get_node_info(node)
        except LookupError:
            return False
        return any(pi.pod.key == key for pi in info.pods)

    def _leave_node(self, key: str) -> None:
        """A bound pod finished or was deleted: off its node (``AssignedPodDelete``); a
        completion scheduled for it is stale."""
        node = self.bound[key]
        pod = self._pods[key].pod
        owned = pod.resource_claims and self.snapshot.dra_enabled
        running = self._running_pod(key, node) if owned else pod
        self.snapshot.unschedule_pod(pod.namespace, pod.name, node)
        if owned:  # the resource-claim controller deletes the claims a finished pod owned
            self.snapshot.dra_snapshot.remove_pod_owned_claims(running)
        del self.bound[key]
        self._binds[key] += 1
        self.autoscaler.mark_changed()
        self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, pod, None)

    # ------------------------------------------------------------------ recorded changes

    def _recorded(self, change: RecordedChange) -> None:
        """Apply one change of a KWOK recording (`schedsim.replay.recording`); one the
        replay's cluster cannot take (a pod that exists, a node that does not) is a warning
        naming it."""
        action = change.action
        if action == POD_CREATE:
            self._recorded_pod(change)
        elif action == NODE_CREATE:
            self._recorded_node(change)
        elif action == NODE_UPDATE:
            self._recorded_node_update(change)
        elif action == RECORDED_NODE_DELETE:
            self._recorded_node_delete(change)
        else:
            self._recorded_pod_gone(change, finished=action == POD_FINISH)

    def _skip(self, change: RecordedChange, why: str) -> None:
        self.warnings.append(f"{change.label}: {why}; not applied")

    def _recorded_pod(self, change: RecordedChange) -> None:
        pod = change.pod
        assert pod is not None
        key = pod.key
        if key in self.bound or key in self._unbound:
            self._skip(change, f"pod {key} exists in the replay")
            return
        if pod.scheduler_name != self._scheduler_name:
            self._skip(change, f"pod {key} names schedulerName {pod.scheduler_name!r}")
            return
        tp = TracePod(pod, self.now, change.duration, change.label)
        node = pod.node_name
        if node and self._info(node) is None:
            self._skip(change, f"pod {key} is bound to node {node!r}, which is not in the replay")
            return
        self._pods[key] = tp
        self.metrics_recorder.on_arrival(self.now, key)
        if not node:
            self._enqueue(pod)
            return
        self.snapshot.force_add_pod(pod, node)  # created bound (a static pod's mirror)
        self._bind(pod, node)
        self.queue.assigned_pod_added(pod)

    def _recorded_pod_gone(self, change: RecordedChange, *, finished: bool) -> None:
        key = change.key
        if key in self.bound:
            self._leave_node(key)
            if finished:
                self.metrics_recorder.completed += 1
        elif key in self._unbound:  # the recorded cluster ran it; here it still waits
            self.queue.delete(self._pods[key].pod)
            self._unbound.discard(key)
            self.warnings.append(
                f"{change.label}: pod {key} was still pending in the replay; removed"
            )
        elif key not in self._pods:
            self._skip(change, f"pod {key} is not in the replay")

    def _recorded_node(self, change: RecordedChange) -> None:
        node = change.node
        assert node is not None
        if self._info(node.name) is not None:
            self._skip(change, f"node {node.name} exists in the replay")
            return
        info = NodeInfo(node)
        self.snapshot.add_node_info(info)
        group = group_of_nodes(self._node_groups, [node]).get(node.name)
        if group is not None:
            self.autoscaler.group_of[node.name] = group.name
        self.autoscaler.taken.add(node.name)
        self.autoscaler.mark_changed()
        self.metrics_recorder.on_node_added(self.now, node.name, group.name if group else "")
        self.queue.move_all_to_active_or_backoff(NODE_ADD, None, node)

    def _recorded_node_update(self, change: RecordedChange) -> None:
        new = change.node
        assert new is not None
        try:
            old_info = self.snapshot.get_node_info(new.name)
        except LookupError:
            self._skip(change, f"node {new.name} is not in the replay")
            return
        old = old_info.node
        assert old is not None
        info = NodeInfo(new, old_info.local_resource_slices, old_info.csi_node, old_info.pods)
        self.snapshot.remove_node_info(new.name)
        self.snapshot.add_node_info(info)
        self.autoscaler.mark_changed()
        for event in node_update_events(old, new):
            self.queue.move_all_to_active_or_backoff(event, old, new)

    def _recorded_node_delete(self, change: RecordedChange) -> None:
        name = change.key
        try:
            info = self.snapshot.get_node_info(name)
        except LookupError:
            self._skip(change, f"node {name} is not in the replay")
            return
        node = info.node
        gone = [pi.pod.key for pi in info.pods if self.bound.get(pi.pod.key) == name]
        self.snapshot.remove_node_info(name)
        self.autoscaler.node_removed(name)
        self.metrics_recorder.on_node_removed(self.now, name)
        for key in gone:  # the pod garbage collector deletes pods bound to a deleted node
            del self.bound[key]
            self._binds[key] += 1
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, self._pods[key].pod, None)
        self.queue.move_all_to_active_or_backoff(NODE_DELETE, node, None)

    def _node_ready(self, name: str) -> None:
        info = self._upcoming_info.pop(name, None)
        if info is None or name not in self.autoscaler.upcoming:
            return  # given up (max-node-provision-time)
        group = self.autoscaler.node_ready(name)
        self.snapshot.add_node_info(info)
        self.metrics_recorder.on_node_added(self.now, name, group)
        self.queue.move_all_to_active_or_backoff(NODE_ADD, None, info.node)
        for sl in info.local_resource_slices:  # its DRA drivers publish the node's devices
            self.queue.move_all_to_active_or_backoff(RESOURCE_SLICE_ADD, None, sl)

    def _schedule_pass(self) -> None:
        """Schedule every ready pod now (kube-scheduler's loop until activeQ and backoffQ are
        empty), after the queue's own deadlines: Permit waits that timed out, backoffs that
        ended, and (every 30 s) pods parked longer than podMaxInUnschedulablePodsDuration."""
        sp = self.scheduling
        now = self.now
        parked_max = self.queue.pod_max_in_unschedulable_pods_duration
        with self.snapshot.bound():
            sp.advance_to(now)
            if now >= self._flush_at:
                self.queue.flush_unschedulable_pods_left_over(now)
                oldest = min((q.timestamp for q in self.queue.unschedulable_pods()), default=None)
                self._flush_at = math.inf
                if oldest is not None:
                    self._flush_at = grid_time(oldest + parked_max, now, FLUSH_PERIOD)
            self.counters["attempts"] += sp.schedule_ready()
        settled, sp.settled = sp.settled, []
        before = self._changes
        for outcome in settled:
            if outcome.node_name is None and not outcome.preempted_by and not outcome.skipped:
                self._failed_at[outcome.pod.key] = before
            else:
                self._failed_at.pop(outcome.pod.key, None)
            self._settled(outcome)
        if sp.warnings:  # PostBind failures
            self.warnings.extend(sp.warnings)
            sp.warnings.clear()
        if math.isinf(self._flush_at) and self.queue.unschedulable_len:
            # pods parked from now on are parked at or after now
            self._flush_at = grid_time(now + parked_max, now, FLUSH_PERIOD)

    def _settled(self, outcome: PodOutcome) -> None:
        key = outcome.pod.key
        if key in self._deleted and not outcome.preempted_by:
            # its Job failed earlier in this pass's outcomes: the controller deleted it
            if outcome.node_name is not None and self._on_node(key, outcome.node_name):
                self.snapshot.unschedule_pod(
                    outcome.pod.namespace, outcome.pod.name, outcome.node_name
                )
            return
        if outcome.preempted_by:  # DefaultPreemption's victim, already out of the snapshot
            self._preempted(key)
        elif outcome.skipped:  # being deleted: kube-scheduler skips it, never puts it back
            self._unbound.discard(key)
            self.skipped[key] = outcome.message
            self.warnings.append(
                f"pod {key}: {outcome.message} at {self.now:g}s (metadata.deletionTimestamp is "
                "set): not scheduled, as kube-scheduler skips a pod being deleted"
            )
        elif outcome.error:  # the pass reports an Error and does not put the pod back
            self._unbound.discard(key)
            self._messages[key] = outcome.message
            self.failed[key] = outcome.message
            self.warnings.append(
                f"pod {key}: scheduling failed with an error at {self.now:g}s, not retried: "
                f"{outcome.message}"
            )
        elif outcome.node_name is None:
            self._messages[key] = outcome.message
            if self._detail:
                self._reasons[key] = pending_reason(outcome.reasons, outcome.message)
        else:
            self._bind(outcome.pod, outcome.node_name)

    def _preempted(self, key: str) -> None:
        """A running pod preemption evicted: deleted, as upstream (only a controller would make
        a new pod); its completion is stale."""
        self._changes += 1
        self.bound.pop(key, None)
        self._binds[key] = self._binds.get(key, 0) + 1
        self.metrics_recorder.preempted += 1
        self.autoscaler.mark_changed()
        run = self._jobs.get(key)
        if run is not None:  # a failed pod of a Job: the controller replaces it
            self._job_pod_gone(run, key, succeeded=False)

    def _bind(self, pod: Pod, node: str) -> None:
        self._changes += 1
        key = pod.key
        self._unbound.discard(key)
        self.bound[key] = node
        token = self._binds.get(key, 0) + 1
        self._binds[key] = token
        self._messages.pop(key, None)
        if self._detail:
            self._reasons.pop(key, None)
        self.metrics_recorder.on_bound(self.now, key, node)
        self.autoscaler.mark_changed()
        duration = self._pods[key].duration
        if duration is not None:
            self._push(Event(self.now + duration, EventKind.POD_COMPLETION, key, token))

    def _autoscaler_loop(self) -> None:
        self.counters["loops"] += 1
        decision: LoopDecision = self.autoscaler.run_once(
            self.now, self.snapshot, self._unschedulable_pods()
        )
        self._unhelped = decision.unhelped
        if decision.add or decision.delete:
            self._changes += 1
        for ev in decision.events:
            self.metrics_recorder.on_event(ev)
        o = self.options
        for _, name, info in decision.add:
            self._upcoming_info[name] = info
            if o.node_provision_delay <= o.max_node_provision_time:
                self._push(Event(self.now + o.node_provision_delay, EventKind.NODE_READY, name))
            else:
                self._push(
                    Event(
                        self.now + o.max_node_provision_time,
                        EventKind.NODE_PROVISION_TIMEOUT,
                        name,
                    )
                )
        for name in decision.delete:
            self._delete_node(name)

    def _unschedulable_pods(self) -> list[Pod]:
        """The pods CA sees as unschedulable (PodScheduled False, reason Unschedulable), in
        queue order: attempted and parked, not gated (a gated pod's PodScheduled condition
        says SchedulingGated); and those backing off after ``no nodes available to schedule
        pods``. kube-scheduler's schedulingCycle turns ErrNoNodesAvailable into an
        UnschedulableAndUnresolvable status, so handleSchedulingFailure marks the pod
        Unschedulable, while the queue, with no rejector plugin, backs it off as after an
        error: CA sees it and scales up from no nodes (--scale-up-from-zero, default true).
        Such a rejection is the only one without reasons."""
        pods = [q.pod for q in self.queue.unschedulable_pods() if not q.gated]
        if self.queue.backoff_len:
            outcomes = self.scheduling.outcomes
            parked = {p.key for p in pods}
            for q in self.queue.pending_pods():
                o = outcomes.get(q.key)
                if (
                    o is not None
                    and q.key not in parked
                    and not q.gated
                    and not q.unschedulable_plugins
                    and o.node_name is None
                    and not (o.reasons or o.error or o.preempted_by or o.skipped)
                ):
                    pods.append(q.pod)
        return queue_order(pods)

    def _delete_node(self, name: str) -> None:
        """CA drains the node (each pod's eviction an ``AssignedPodDelete``), deletes it
        (``NodeDelete``); the evicted pods come back as new pending pods, except a Job's:
        an evicted pod is deleted, which the Job controller counts as a failed pod
        (``isPodFailed``) and replaces with a new one (`_job_pod_gone`)."""
        node_info = self.snapshot.get_node_info(name)
        node = node_info.node
        running = {
            pi.pod.key: pi.pod for pi in node_info.pods if self.bound.get(pi.pod.key) == name
        }
        evicted = list(running)
        self.snapshot.remove_node_info(name)
        self.autoscaler.node_removed(name)
        self.metrics_recorder.on_node_removed(self.now, name)
        for key in evicted:
            del self.bound[key]
            self._binds[key] += 1  # its scheduled completion is stale now
            self.queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, self._pods[key].pod, None)
        self.queue.move_all_to_active_or_backoff(NODE_DELETE, node, None)
        for key in evicted:
            run = self._jobs.get(key)
            if run is None:
                self._enqueue(self._pods[key].pod)
                continue
            if running[key].resource_claims and self.snapshot.dra_enabled:
                self.snapshot.dra_snapshot.remove_pod_owned_claims(running[key])
            self._job_pod_gone(run, key, succeeded=False)
        self.metrics_recorder.evicted += len(evicted)

    def _running_pod(self, key: str, node: str) -> Pod:
        """The pod as it was bound (with its claims' names)."""
        for pi in self.snapshot.get_node_info(node).pods:
            if pi.pod.key == key:
                return pi.pod
        raise LookupError(f"pod {key} is not on node {node}")

    def _sample(self) -> None:
        self._sampled_at = self._changes
        a = self.autoscaler
        self.metrics_recorder.sample(
            self.now,
            self.pending_count(),
            len(self.bound),
            self.snapshot.list_node_infos(),
            a.upcoming_sizes(),
            a.group_of,
            device_gpus(self.snapshot, self._gpu_driver),
            self._pending_reasons() if self._detail else None,
            dra_devices(self.snapshot.dra_snapshot) if self._detail else None,
        )

    def _pending_reasons(self) -> dict[str, int]:
        """Pending pods by reason (`SampleDetail.pending`): a gated pod under its PreEnqueue
        plugin's message, an attempted one under its last attempt's reasons, the others
        not attempted yet; pods held at Permit as waiting on it."""
        out: dict[str, int] = {}
        reasons = self._reasons
        for qpi in self.queue.pending_pods():
            if qpi.gating_status is not None:
                why = qpi.gating_status.message
            else:
                why = reasons.get(qpi.pod.key, NOT_ATTEMPTED)
            out[why] = out.get(why, 0) + 1
        if self.scheduling.waiting:
            out[WAITING_ON_PERMIT] = len(self.scheduling.waiting)
        return out
