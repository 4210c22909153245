"""What a replay measures, over time and in total.

Sampled every ``sample_interval`` seconds of virtual time (`Sample`): pending and running
pods, ready nodes per node group and nodes being provisioned, cpu / memory / GPU requested
and allocatable over the ready nodes, the GPU fragmentation and the cost so far. Besides the
samples: every pod's scheduling latency (first bind minus arrival), every scale event with its
reason, every node's lifetime and average allocation, node-hours and cost per node group.

GPU fragmentation
    The measure of the FGD paper (Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing
    Workloads with Fragmentation Gradient Descent", USENIX ATC '23, section 3), on whole GPUs
    (GPUs are an extended resource here, counted per node). The *workload* is the set of task
    classes of the trace's pods: a class is a distinct ``(milli-CPU, memory bytes, GPUs)``
    request, and its popularity ``p_m`` is its share of the trace's pods (the
    `MAX_TASK_CLASSES` most frequent classes, popularities renormalised over them). For a
    node ``n`` with ``F_n`` unallocated GPUs and a class ``m``, the fragment ``f(n, m)`` is:

    * ``F_n`` when ``m`` cannot run on ``n`` (its cpu, memory or GPU request exceeds what is
      free there), or when ``m`` requests no GPU (no GPU on ``n`` can serve it);
    * 0 otherwise (whole GPUs: a class that fits can use every free GPU).

    The node's fragmentation is ``sum_m p_m * f(n, m)``, the cluster's the sum over ready
    nodes (in GPUs; `Sample.gpu_fragmentation`); the *fragmentation ratio* divides it by the
    cluster's unallocated GPUs (0 when none is free). The paper's partial-GPU case (GPU
    sharing, ``gpu_milli < 1000``) does not arise: shared-GPU requests are rounded up to a
    whole GPU when a trace is read.

Cost
    ``price`` per node-hour of each node group (the node-groups file's ``price``), times the
    hours its nodes were ready (nodes outside every group cost nothing). Provisioning time is
    not billed. Cost therefore grows linearly while the set of ready nodes holds, with a slope
    of the summed prices per hour, and bends only where a node becomes ready or is deleted:
    `ReplayMetrics.timeline` gives those breakpoints exactly (from the nodes' lifetimes, not
    the samples), so a chart drawn through them is the cost at every instant.

Detail (``MetricsRecorder(detail=True)``, what ``replay --report`` asks for)
    One `SampleDetail` per sample besides the `Sample`: each ready node's requested /
    allocatable cpu and memory, the pending pods by reason (`pending_reason`), and the DRA
    devices allocated per driver (`dra_devices`). Without detail none of it is computed: a
    replay that writes no report does not pay for it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

import attrs

from schedsim.api.core import Pod
from schedsim.api.core.resources import pod_requests
from schedsim.framework.resource import Resource
from schedsim.replay.autoscaler import ScaleEvent
from schedsim.snapshot.dra import DraSnapshot
from schedsim.snapshot.infos import NodeInfo

__all__ = [
    "MAX_TASK_CLASSES",
    "NOT_ATTEMPTED",
    "WAITING_ON_PERMIT",
    "GroupTimeline",
    "MetricsRecorder",
    "NodeUsage",
    "ReplayMetrics",
    "Sample",
    "SampleDetail",
    "TaskClass",
    "dra_devices",
    "pending_reason",
    "percentile",
    "task_classes",
]

NOT_ATTEMPTED: Final = "not attempted yet"
"""The pending reason of a queued pod kube-scheduler has not tried yet."""

WAITING_ON_PERMIT: Final = "waiting on Permit"
"""The pending reason of a pod a Permit plugin holds (Wait): reserved, not bound yet."""

MAX_TASK_CLASSES: Final = 64
"""The fragmentation measure's workload keeps at most this many task classes."""


@attrs.frozen
class TaskClass:
    """A kind of pod of the workload: its requests (milli-CPU, bytes, GPUs) and its share of
    the trace's pods."""

    milli_cpu: int
    memory: int
    gpus: int
    popularity: float


def _requests(pod: Pod, gpu_resource: str) -> tuple[int, int, int]:
    r = Resource.from_resource_list(pod_requests(pod))
    return r.milli_cpu, r.memory, r.scalar_resources.get(gpu_resource, 0)


def task_classes(
    pods: Iterable[Pod], gpu_resource: str, gpus: Mapping[str, int] | None = None
) -> tuple[TaskClass, ...]:
    """The workload of the fragmentation measure (see the module docstring): the most
    frequent `MAX_TASK_CLASSES` request vectors, popularity renormalised, most popular first
    (ties: smaller requests first). ``gpus``: pod key -> GPUs, for pods whose GPUs are DRA
    devices (not ``gpu_resource`` requests)."""
    counts: dict[tuple[int, int, int], int] = {}
    for pod in pods:
        k = _requests(pod, gpu_resource)
        if gpus is not None and pod.key in gpus:
            k = (k[0], k[1], gpus[pod.key])
        counts[k] = counts.get(k, 0) + 1
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_TASK_CLASSES]
    total = sum(c for _, c in top)
    return tuple(TaskClass(k[0], k[1], k[2], c / total) for k, c in top)


def node_fragmentation(
    free_cpu: int, free_memory: int, free_gpus: int, classes: Sequence[TaskClass]
) -> float:
    """``sum_m p_m * f(n, m)`` for one node (GPUs; see the module docstring)."""
    if free_gpus <= 0:
        return 0.0
    frag = 0.0
    for m in classes:
        if m.gpus == 0 or m.gpus > free_gpus or m.milli_cpu > free_cpu or m.memory > free_memory:
            frag += m.popularity * free_gpus
    return frag


def pending_reason(reasons: Sequence[str], message: str) -> str:
    """What a pending pod waits for, as one label: its last attempt's rejection reasons
    (`PodOutcome.reasons`: kube-scheduler's reason strings, e.g. ``Insufficient cpu``,
    distinct and sorted) joined by ``"; "``, so a pod is counted once under the set of
    reasons that kept it out; the FitError message when there is no reason (``no nodes
    available to schedule pods``)."""
    return "; ".join(reasons) or message


def dra_devices(dra: DraSnapshot) -> dict[str, tuple[int, int]]:
    """DRA driver -> (devices allocated, devices published) over every ResourceSlice in
    ``dra`` (node-local or not); allocated: named by an allocation result of a claim (a
    device shared by several claims, DRAConsumableCapacity, counts once). Drivers sorted.

    Time: O(slices' devices + claims' results)."""
    total: dict[str, int] = {}
    for sl in dra.list_resource_slices():
        total[sl.driver] = total.get(sl.driver, 0) + len(sl.devices)
    used = {
        (r.driver, r.pool, r.device)
        for claim in dra.list_resource_claims()
        if claim.status.allocation is not None
        for r in claim.status.allocation.results
    }
    in_use: dict[str, int] = {}
    for driver, _, _ in used:
        in_use[driver] = in_use.get(driver, 0) + 1
    return {d: (in_use.get(d, 0), total.get(d, 0)) for d in sorted(total.keys() | in_use.keys())}


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q``-th percentile (0 < q <= 100) of ascending values (0 when
    empty)."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


@attrs.frozen
class Sample:
    """The cluster at one instant.

    Attributes:
        time: seconds since the trace's start.
        pending: pods waiting to be scheduled.
        running: pods bound to a node.
        nodes: node group -> ready nodes ("" for nodes in no group).
        upcoming: node group -> nodes being provisioned.
        cpu_requested, cpu_allocatable: milli-CPU over the ready nodes.
        memory_requested, memory_allocatable: bytes.
        gpu_requested, gpu_allocatable: GPUs.
        gpu_fragmentation: GPUs (see the module docstring).
        cost: the cost so far.
    """

    time: float
    pending: int
    running: int
    nodes: Mapping[str, int]
    upcoming: Mapping[str, int]
    cpu_requested: int
    cpu_allocatable: int
    memory_requested: int
    memory_allocatable: int
    gpu_requested: int
    gpu_allocatable: int
    gpu_fragmentation: float
    cost: float

    @property
    def gpu_fragmentation_ratio(self) -> float:
        """Fragmented GPUs / unallocated GPUs (0 when none is free)."""
        free = self.gpu_allocatable - self.gpu_requested
        return self.gpu_fragmentation / free if free > 0 else 0.0


@attrs.frozen
class SampleDetail:
    """What a report draws at one sample besides its `Sample` (recorded only with
    ``MetricsRecorder(detail=True)``).

    Attributes:
        time: the sample's time (seconds since the trace's start).
        cpu, memory: ready node -> requested / allocatable (a fraction; 0 when nothing is
            allocatable), the nodes in `list_node_infos` order.
        pending: reason (`pending_reason`, `NOT_ATTEMPTED`, `WAITING_ON_PERMIT`, a gated
            pod's PreEnqueue message) -> pending pods; sums to `Sample.pending`.
        devices: DRA driver -> (devices allocated, devices published) (`dra_devices`); empty
            without ResourceSlices.
    """

    time: float
    cpu: Mapping[str, float]
    memory: Mapping[str, float]
    pending: Mapping[str, int]
    devices: Mapping[str, tuple[int, int]]


@attrs.frozen
class GroupTimeline:
    """One node group's ready nodes and cost over the whole replay, exact: a point at t = 0,
    at every instant one of its nodes became ready or was deleted, and at the end.

    Attributes:
        times: seconds, ascending.
        nodes: ready nodes from each time until the next (a step function).
        cost: the group's cost so far at each time; linear in between (node-hours x price,
            the slope is ``nodes x price`` per hour).
    """

    times: tuple[float, ...]
    nodes: tuple[int, ...]
    cost: tuple[float, ...]

    def cost_at(self, t: float) -> float:
        """The cost so far at ``t`` (interpolated between the breakpoints; 0 before the
        first, the last value after the end)."""
        times = self.times
        if not times or t <= times[0]:
            return 0.0
        for i in range(1, len(times)):
            if t <= times[i]:
                t0, c0 = times[i - 1], self.cost[i - 1]
                return c0 + (self.cost[i] - c0) * (t - t0) / (times[i] - t0)
        return self.cost[-1]


@attrs.frozen
class NodeUsage:
    """One node's life in the replay.

    Attributes:
        name, group: the node and its group ("" for none).
        added, removed: when it became ready / was deleted (None: still there at the end).
        hours: ready hours within the replay.
        cpu, memory, gpu: average requested / allocatable over the samples it was in.
        pods: pods bound to it over its life.
    """

    name: str
    group: str
    added: float
    removed: float | None
    hours: float
    cpu: float
    memory: float
    gpu: float
    pods: int


@attrs.frozen
class ReplayMetrics:
    """Everything a replay measured.

    Attributes:
        samples: over time, every ``sample_interval``.
        events: the autoscaler's scale events, in time order.
        latencies: pod key -> seconds from arrival to its first bind.
        nodes: one `NodeUsage` per node that was ever ready, in the order they were added.
        unschedulable: pod key -> why it was still pending at the end (kube-scheduler's
            message, then each node group's reason when no group helps it).
        arrivals, completed, evicted: pod counts.
        preempted: running pods evicted by a higher-priority pod's preemption (deleted, as
            upstream: not scheduled again).
        end: the replay's last instant (seconds).
        prices: node group -> price per node-hour.
        details: one per sample, in step with ``samples``, when recorded with detail; else
            empty.
    """

    samples: tuple[Sample, ...]
    events: tuple[ScaleEvent, ...]
    latencies: Mapping[str, float]
    nodes: tuple[NodeUsage, ...]
    unschedulable: Mapping[str, str]
    arrivals: int
    completed: int
    evicted: int
    end: float
    prices: Mapping[str, float] = attrs.field(factory=dict)
    preempted: int = 0
    details: tuple[SampleDetail, ...] = ()

    def latency_percentiles(self) -> dict[str, float]:
        """``p50``, ``p90``, ``p99`` and ``max`` of the scheduling latencies (seconds)."""
        values = sorted(self.latencies.values())
        return {
            "p50": percentile(values, 50),
            "p90": percentile(values, 90),
            "p99": percentile(values, 99),
            "max": values[-1] if values else 0.0,
        }

    def node_hours(self) -> dict[str, float]:
        """Node group -> node-hours ("" for nodes in no group)."""
        out: dict[str, float] = {}
        for n in self.nodes:
            out[n.group] = out.get(n.group, 0.0) + n.hours
        return out

    def cost(self) -> dict[str, float]:
        """Node group -> cost (node-hours x price)."""
        return {g: h * self.prices.get(g, 0.0) for g, h in self.node_hours().items()}

    def timeline(self) -> dict[str, GroupTimeline]:
        """Node group ("" for nodes in no group) -> its ready nodes and cost over time, from
        the nodes' lifetimes (`NodeUsage.added` / `removed`; a node still there at the end
        counts until then), groups sorted. At the samples' times the groups' costs add up
        to `Sample.cost`.

        Time: O(nodes log nodes)."""
        changes: dict[str, list[tuple[float, int]]] = {}
        for n in self.nodes:
            ch = changes.setdefault(n.group, [])
            ch.append((n.added, 1))
            if n.removed is not None:
                ch.append((n.removed, -1))
        out: dict[str, GroupTimeline] = {}
        for group in sorted(changes):
            per_second = self.prices.get(group, 0.0) / 3600
            times, nodes, cost = [0.0], [0], [0.0]
            for t, d in sorted(changes[group]):
                if t > times[-1]:
                    cost.append(cost[-1] + nodes[-1] * per_second * (t - times[-1]))
                    times.append(t)
                    nodes.append(nodes[-1])
                nodes[-1] += d
            if self.end > times[-1]:
                cost.append(cost[-1] + nodes[-1] * per_second * (self.end - times[-1]))
                times.append(self.end)
                nodes.append(nodes[-1])
            out[group] = GroupTimeline(tuple(times), tuple(nodes), tuple(cost))
        return out

    def summary(self) -> dict[str, object]:
        """The totals, as plain data (what the summary table and ``summary`` in JSON show)."""
        kinds: dict[str, int] = {}
        for e in self.events:
            kinds[e.kind] = kinds.get(e.kind, 0) + len(e.nodes)
        peak = max((sum(s.nodes.values()) for s in self.samples), default=0)
        frag = [s.gpu_fragmentation_ratio for s in self.samples if s.gpu_allocatable]
        return {
            "simulatedSeconds": self.end,
            "arrivals": self.arrivals,
            "scheduled": len(self.latencies),
            "completed": self.completed,
            "evicted": self.evicted,
            "preempted": self.preempted,
            "pendingAtEnd": len(self.unschedulable),
            "latencySeconds": self.latency_percentiles(),
            "nodesAdded": kinds.get("scale-up", 0),
            "nodesRemoved": kinds.get("scale-down", 0),
            "provisionTimeouts": kinds.get("scale-up-timeout", 0),
            "peakNodes": peak,
            "nodeHours": self.node_hours(),
            "cost": self.cost(),
            "totalCost": sum(self.cost().values()),
            "meanGpuFragmentationRatio": sum(frag) / len(frag) if frag else 0.0,
        }


@attrs.define
class _NodeRecord:
    name: str
    group: str
    added: float
    removed: float | None = None
    cpu: float = 0.0
    memory: float = 0.0
    gpu: float = 0.0
    seen: int = 0
    pods: int = 0


class MetricsRecorder:
    """Collects the metrics while a replay runs; `result` freezes them.

    Args:
        prices: node group -> price per node-hour.
        gpu_resource: the extended resource that counts GPUs (``nvidia.com/gpu``).
        classes: the workload for the fragmentation measure (`task_classes`).
        detail: record a `SampleDetail` with each sample (the caller passes ``pending`` by
            reason and ``devices`` to `sample`).

    Time: every ``on_*`` call O(1); `sample` O(nodes), fragmentation memoised per free
    (cpu, memory, GPU) triple; with detail another O(nodes) pass.
    """

    def __init__(
        self,
        prices: Mapping[str, float],
        gpu_resource: str,
        classes: Sequence[TaskClass],
        *,
        detail: bool = False,
    ) -> None:
        self.detail = detail
        self._details: list[SampleDetail] = []
        self.prices = dict(prices)
        self.gpu_resource = gpu_resource
        self.classes = tuple(classes)
        self._nodes: dict[str, _NodeRecord] = {}
        self._arrived: dict[str, float] = {}
        self._latency: dict[str, float] = {}
        self._events: list[ScaleEvent] = []
        self._samples: list[Sample] = []
        self._frag: dict[tuple[int, int, int], float] = {}
        self._closed_cost = 0.0
        self.completed = 0
        self.evicted = 0
        self.preempted = 0

    @property
    def last_time(self) -> float | None:
        """The time of the last sample, or None."""
        return self._samples[-1].time if self._samples else None

    def on_node_added(self, now: float, name: str, group: str) -> None:
        """A node became ready."""
        self._nodes[name] = _NodeRecord(name, group, now)

    def on_node_removed(self, now: float, name: str) -> None:
        """A node was deleted."""
        rec = self._nodes.get(name)
        if rec is not None:
            rec.removed = now
            self._closed_cost += self.prices.get(rec.group, 0.0) * (now - rec.added) / 3600

    def on_arrival(self, now: float, key: str) -> None:
        """A pod arrived."""
        self._arrived.setdefault(key, now)

    def on_bound(self, now: float, key: str, node: str) -> None:
        """A pod was bound (the first binding sets its latency)."""
        if key not in self._latency and key in self._arrived:
            self._latency[key] = now - self._arrived[key]
        rec = self._nodes.get(node)
        if rec is not None:
            rec.pods += 1

    def on_event(self, event: ScaleEvent) -> None:
        """The autoscaler did something."""
        self._events.append(event)

    def sample(
        self,
        now: float,
        pending: int,
        running: int,
        node_infos: Sequence[NodeInfo],
        upcoming: Mapping[str, int],
        group_of: Mapping[str, str],
        device_gpus: Mapping[str, tuple[int, int]] | None = None,
        pending_reasons: Mapping[str, int] | None = None,
        devices: Mapping[str, tuple[int, int]] | None = None,
    ) -> Sample:
        """Record the cluster at ``now`` (``node_infos``: the ready nodes; ``device_gpus``:
        node -> (GPUs allocated, GPUs) when GPUs are DRA devices, not the extended resource;
        with detail, ``pending_reasons`` and ``devices`` as `SampleDetail` has them)."""
        gpu = self.gpu_resource
        nodes: dict[str, int] = dict.fromkeys(upcoming, 0)
        cpu_r = cpu_a = mem_r = mem_a = gpu_r = gpu_a = 0
        frag = 0.0
        cost = self._closed_cost
        for ni in node_infos:
            node = ni.node
            if node is None:
                continue
            req, alloc = ni.requested, ni.allocatable
            if device_gpus is None:
                g_r = req.scalar_resources.get(gpu, 0)
                g_a = alloc.scalar_resources.get(gpu, 0)
            else:
                g_r, g_a = device_gpus.get(node.name, (0, 0))
            cpu_r += req.milli_cpu
            cpu_a += alloc.milli_cpu
            mem_r += req.memory
            mem_a += alloc.memory
            gpu_r += g_r
            gpu_a += g_a
            group = group_of.get(node.name, "")
            nodes[group] = nodes.get(group, 0) + 1
            if g_a > g_r:
                key = (alloc.milli_cpu - req.milli_cpu, alloc.memory - req.memory, g_a - g_r)
                f = self._frag.get(key)
                if f is None:
                    f = self._frag[key] = node_fragmentation(*key, self.classes)
                frag += f
            rec = self._nodes.get(node.name)
            if rec is not None:
                cost += self.prices.get(rec.group, 0.0) * (now - rec.added) / 3600
                rec.seen += 1
                rec.cpu += req.milli_cpu / alloc.milli_cpu if alloc.milli_cpu else 0.0
                rec.memory += req.memory / alloc.memory if alloc.memory else 0.0
                rec.gpu += g_r / g_a if g_a else 0.0
        s = Sample(
            now,
            pending,
            running,
            nodes,
            dict(upcoming),
            cpu_r,
            cpu_a,
            mem_r,
            mem_a,
            gpu_r,
            gpu_a,
            frag,
            cost,
        )
        self._samples.append(s)
        if self.detail:
            self._record_detail(now, node_infos, pending_reasons or {}, devices or {})
        return s

    def _record_detail(
        self,
        now: float,
        node_infos: Sequence[NodeInfo],
        pending: Mapping[str, int],
        devices: Mapping[str, tuple[int, int]],
    ) -> None:
        cpu: dict[str, float] = {}
        memory: dict[str, float] = {}
        for ni in node_infos:
            node = ni.node
            if node is None:
                continue
            req, alloc = ni.requested, ni.allocatable
            cpu[node.name] = req.milli_cpu / alloc.milli_cpu if alloc.milli_cpu else 0.0
            memory[node.name] = req.memory / alloc.memory if alloc.memory else 0.0
        self._details.append(SampleDetail(now, cpu, memory, dict(pending), dict(devices)))

    def result(self, end: float, unschedulable: Mapping[str, str]) -> ReplayMetrics:
        """The metrics, frozen (nodes still ready count until ``end``)."""
        usages = []
        for r in self._nodes.values():
            stop = r.removed if r.removed is not None else end
            n = r.seen or 1
            usages.append(
                NodeUsage(
                    r.name,
                    r.group,
                    r.added,
                    r.removed,
                    max(0.0, stop - r.added) / 3600,
                    r.cpu / n,
                    r.memory / n,
                    r.gpu / n,
                    r.pods,
                )
            )
        return ReplayMetrics(
            tuple(self._samples),
            tuple(self._events),
            dict(self._latency),
            tuple(usages),
            dict(unschedulable),
            len(self._arrived),
            self.completed,
            self.evicted,
            end,
            self.prices,
            self.preempted,
            tuple(self._details),
        )
