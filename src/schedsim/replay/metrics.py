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
    not billed.
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
from schedsim.snapshot.infos import NodeInfo

__all__ = [
    "MAX_TASK_CLASSES",
    "MetricsRecorder",
    "NodeUsage",
    "ReplayMetrics",
    "Sample",
    "TaskClass",
    "percentile",
    "task_classes",
]

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

    Time: every ``on_*`` call O(1); `sample` O(nodes), fragmentation memoised per free
    (cpu, memory, GPU) triple.
    """

    def __init__(
        self, prices: Mapping[str, float], gpu_resource: str, classes: Sequence[TaskClass]
    ) -> None:
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
    ) -> Sample:
        """Record the cluster at ``now`` (``node_infos``: the ready nodes; ``device_gpus``:
        node -> (GPUs allocated, GPUs) when GPUs are DRA devices, not the extended resource)."""
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
        return s

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
        )
