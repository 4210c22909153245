"""`Replay`: a discrete-event simulation of a cluster on a virtual clock, kube-scheduler and
the Cluster Autoscaler in the loop.

The state is one long-lived snapshot of the cluster (the engine's, `Engine.snapshot`). Events
(`schedsim.replay.clock`) move it: pods arrive and enter the scheduling queue
(`schedsim.replay.pending`); after the events of an instant, a scheduling pass places the
queue's active pods as kube-scheduler does (`schedsim.scheduler.Scheduler`: Filter, Score,
the highest total, through `run_scheduling_cycle`); a bound pod completes ``duration``
seconds later and leaves its node; every ``scan-interval`` the autoscaler's loop
(`schedsim.replay.autoscaler`) may request nodes (ready after the provisioning delay) or
delete unneeded ones (their pods are evicted back into the queue). A node added and a pod
leaving a node move every unschedulable pod back to the active queue (kube-scheduler's
cluster events). Metrics are sampled every ``sample_interval`` (`schedsim.replay.metrics`).

At one instant: nodes become ready and pods complete, then pods arrive, then the scheduling
pass, then the autoscaler's loop (and a second pass when it evicted pods), then the sample.
Everything is ordered by time, kind and insertion: the same input gives the same replay.

The replay ends at ``until`` when given; otherwise when nothing can change any more: no pod
or node event is scheduled, no node is being provisioned or waits to be deleted, and no node
group that could help a pending pod is backing off.

Differences from a real cluster, deliberate: binding is instantaneous (no API server, no
kubelet start-up); an evicted pod starts over (its full duration) when it is bound again;
within one pass a pod is not attempted when an equivalent pod (same scheduling spec, no pod
affinity) already failed in that pass (what CA's similar-pods check does); the queue has no
backoff (see `schedsim.replay.pending`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import attrs

from schedsim.api.core import Pod
from schedsim.dra.claim_controller import create_template_claims
from schedsim.engine import Engine
from schedsim.replay.autoscaler import Autoscaler, AutoscalerOptions, LoopDecision
from schedsim.replay.clock import Event, EventKind, EventQueue, VirtualClock
from schedsim.replay.metrics import MetricsRecorder, ReplayMetrics, task_classes
from schedsim.replay.pending import PendingQueue, SimpleQueue
from schedsim.replay.trace import Trace, TracePod
from schedsim.scheduler import Scheduler
from schedsim.simulation.equivalence import scheduling_spec
from schedsim.simulation.nodegroups import NodeGroup, group_of_nodes, template_node_info
from schedsim.simulation.scheduling import run_scheduling_cycle
from schedsim.snapshot.predicate import PredicateSnapshot

__all__ = ["DEFAULT_GPU_RESOURCE", "Replay", "ReplayState"]

DEFAULT_GPU_RESOURCE = "nvidia.com/gpu"
"""The extended resource GPU metrics count."""

ProgressCallback = Callable[[float], None]
"""Called with the virtual time (seconds) after each instant."""


@attrs.frozen
class ReplayState:
    """The replay at one instant (what `Replay.state` returns).

    Attributes:
        time: seconds since the trace's start.
        pending: keys of pods in the scheduling queue, in queue order.
        running: pod key -> node, for pods bound now.
        nodes: ready node -> its node group ("" for none).
        upcoming: node being provisioned -> its node group.
        unneeded: node -> since when the autoscaler finds it unneeded.
        done: the replay has ended.
    """

    time: float
    pending: tuple[str, ...]
    running: Mapping[str, str]
    nodes: Mapping[str, str]
    upcoming: Mapping[str, str]
    unneeded: Mapping[str, float]
    done: bool


def _spec_key(pod: Pod) -> str | None:
    if pod.affinity is not None and pod.affinity.has_pod_affinity_or_anti_affinity:
        return None
    return pod.memo("replay:spec", lambda: repr(scheduling_spec(pod)))


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
        queue: the scheduling queue (default `SimpleQueue`).

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
        queue: PendingQueue | None = None,
    ) -> None:
        if not sample_interval > 0:
            raise ValueError(f"sample interval must be > 0, got {sample_interval}")
        if until is not None and not until >= 0:
            raise ValueError(f"until must be >= 0, got {until}")
        self.trace = trace
        self.engine = engine if engine is not None else Engine()
        self.options = options if options is not None else AutoscalerOptions()
        self.sample_interval = sample_interval
        self.until = until
        cluster = trace.cluster
        # kube-scheduler leaves cordoned nodes to the NodeUnschedulable plugin
        self.snapshot: PredicateSnapshot
        self.snapshot, skipped = self.engine.snapshot(cluster, skip_unschedulable_nodes=False)
        self.warnings: list[str] = list(trace.warnings)
        self.warnings.extend(
            f"pod {p.key}: node {p.node_name or p.nominated_node_name!r} is not among the "
            "nodes; ignored"
            for p in skipped
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
        members = {n: g.name for n, g in group_of_nodes(node_groups, cluster.nodes).items()}
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
        self.queue: PendingQueue = queue if queue is not None else SimpleQueue()
        self.clock = VirtualClock()
        self.events = EventQueue()
        self._pods: dict[str, TracePod] = {}
        self.bound: dict[str, str] = {}  # pod key -> node
        self._binds: dict[str, int] = {}  # pod key -> bind count (completion tokens)
        self._messages: dict[str, str] = {}  # pod key -> last FitError message
        self._unhelped: Mapping[str, Mapping[str, str]] = {}
        self._upcoming_info: dict[str, object] = {}
        self.counters = {"events": 0, "loops": 0, "attempts": 0}
        """Work done: trace events handled, autoscaler loops run, scheduling attempts."""
        self._changes = 0  # bumped by every change of the cluster or the queue
        self._sampled_at = -1  # `_changes` at the last sample
        self._done = False
        self._scheduled_once = False
        all_pods = [tp.pod for tp in (*trace.running, *trace.arrivals)]
        self.metrics_recorder = MetricsRecorder(
            {g.name: g.price for g in node_groups},
            gpu_resource,
            task_classes(all_pods, gpu_resource),
        )
        for n in cluster.nodes:
            if self._info(n.name) is not None:
                self.metrics_recorder.on_node_added(0.0, n.name, members.get(n.name, ""))
        for tp in trace.running:
            key = tp.pod.key
            self._pods[key] = tp
            node = tp.pod.node_name or tp.pod.nominated_node_name
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
        pending = [p.key for p in self.queue.unschedulable_pods()]
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
        for pod in self.queue.unschedulable_pods():
            msg = self._messages.get(pod.key, "not attempted yet")
            groups = self._unhelped.get(pod.key)
            if groups:
                msg += "; no node group helps: " + "; ".join(f"{g}: {r}" for g, r in groups.items())
            unschedulable[pod.key] = msg
        return self.metrics_recorder.result(self.now, unschedulable)

    # ------------------------------------------------------------------ running

    def _push(self, event: Event) -> None:
        self.events.push(event)

    def _next_time(self) -> float:
        t = self.events.peek_time()
        return min(math.inf if t is None else t, self._next_sample, self._next_loop)

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
        while self.events.peek_time() == t:
            self._handle(self.events.pop())
        self._schedule_pass()
        if self._next_loop == t:
            self._autoscaler_loop()
            while self.events.peek_time() == t:  # e.g. nodes with no provisioning delay
                self._handle(self.events.pop())
            self._schedule_pass()
            self._next_loop = self._grid(
                min(self._next_event(), self.autoscaler.wake_time(t, len(self.queue) > 0)),
                t,
                self.options.scan_interval,
            )
        if self._next_sample == t:
            if self._changes != self._sampled_at:  # nothing changed: nothing to record
                self._sample()
            self._next_sample = self._grid(
                min(self._next_event(), self._next_loop), t, self.sample_interval
            )
        if math.isinf(self._next_event()) and math.isinf(self._next_loop):
            self._finish()
            return False
        return True

    def _next_event(self) -> float:
        t = self.events.peek_time()
        return math.inf if t is None else t

    @staticmethod
    def _grid(at: float, now: float, interval: float) -> float:
        """The first multiple of ``interval`` after ``now`` and at or after ``at`` (periodic
        work keeps its phase; instants where nothing can have changed are skipped)."""
        if math.isinf(at):
            return math.inf
        k = max(math.floor(now / interval) + 1, math.ceil(at / interval - 1e-9))
        return k * interval

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

    def _arrive(self, tp: TracePod) -> None:
        pod = tp.pod
        if pod.resource_claims:  # the resource-claim controller makes template claims
            dra = self.snapshot.dra_snapshot
            made = create_template_claims(
                [pod], self.trace.cluster.resource_claim_templates, dra.list_resource_claims()
            )
            self.warnings.extend(made.warnings)
            dra.add_claims(made.claims)
            pod = made.pods[0]
            self._pods[pod.key] = attrs.evolve(tp, pod=pod)
        self.metrics_recorder.on_arrival(self.now, pod.key)
        self.queue.add(pod)

    def _complete(self, key: str, token: int) -> None:
        node = self.bound.get(key)
        if node is None or self._binds.get(key) != token:
            return  # evicted since: that binding's completion is stale
        pod = self._pods[key].pod
        self.snapshot.unschedule_pod(pod.namespace, pod.name, node)
        del self.bound[key]
        self.metrics_recorder.completed += 1
        self.autoscaler.mark_changed()
        self.queue.move_all_to_active()

    def _node_ready(self, name: str) -> None:
        info = self._upcoming_info.pop(name, None)
        if info is None or name not in self.autoscaler.upcoming:
            return  # given up (max-node-provision-time)
        group = self.autoscaler.node_ready(name)
        self.snapshot.add_node_info(info)  # type: ignore[arg-type]
        self.metrics_recorder.on_node_added(self.now, name, group)
        self.queue.move_all_to_active()

    def _schedule_pass(self) -> None:
        if not self.queue.has_active():
            return
        failed_specs: set[str] = set()
        for pod in self.queue.pop_active():
            key = _spec_key(pod)
            if key is not None and key in failed_specs:
                self.queue.add_unschedulable(pod)
                continue
            self.counters["attempts"] += 1
            outcomes = run_scheduling_cycle(self.snapshot, [pod], self.scheduler)
            outcome = next(o for o in outcomes if o.pod.key == pod.key)
            for o in outcomes:  # DefaultPreemption's victims, already out of the snapshot
                if o.preempted_by:
                    self._preempted(o.pod.key)
            if outcome.node_name is None:
                self._messages[pod.key] = outcome.message
                self.queue.add_unschedulable(pod)
                if key is not None:
                    failed_specs.add(key)
                continue
            self._bind(pod, outcome.node_name)

    def _preempted(self, key: str) -> None:
        """A running pod preemption evicted: deleted, as upstream (only a controller would make
        a new pod); its completion is stale."""
        self._changes += 1
        self.bound.pop(key, None)
        self._binds[key] = self._binds.get(key, 0) + 1
        self.metrics_recorder.preempted += 1
        self.autoscaler.mark_changed()

    def _bind(self, pod: Pod, node: str) -> None:
        self._changes += 1
        key = pod.key
        self.bound[key] = node
        token = self._binds.get(key, 0) + 1
        self._binds[key] = token
        self._messages.pop(key, None)
        self.metrics_recorder.on_bound(self.now, key, node)
        self.autoscaler.mark_changed()
        duration = self._pods[key].duration
        if duration is not None:
            self._push(Event(self.now + duration, EventKind.POD_COMPLETION, key, token))

    def _autoscaler_loop(self) -> None:
        self.counters["loops"] += 1
        decision: LoopDecision = self.autoscaler.run_once(
            self.now, self.snapshot, self.queue.unschedulable_pods()
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

    def _delete_node(self, name: str) -> None:
        evicted = [k for k, n in self.bound.items() if n == name]
        self.snapshot.remove_node_info(name)
        self.autoscaler.node_removed(name)
        self.metrics_recorder.on_node_removed(self.now, name)
        for key in evicted:
            del self.bound[key]
            self._binds[key] += 1  # its scheduled completion is stale now
            self.queue.add(self._pods[key].pod)
        self.metrics_recorder.evicted += len(evicted)
        if evicted:
            self.queue.move_all_to_active()

    def _sample(self) -> None:
        self._sampled_at = self._changes
        a = self.autoscaler
        self.metrics_recorder.sample(
            self.now,
            len(self.queue),
            len(self.bound),
            self.snapshot.list_node_infos(),
            a.upcoming_sizes(),
            a.group_of,
        )
