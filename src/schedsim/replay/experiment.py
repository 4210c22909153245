"""`GpuSharingExperiment`: the FGD paper's experiment (one trace x one policy x one seed) on
the Alibaba openb trace with GPUs as shared DRA devices.

Follows the artifact's ``Simulate`` (``pkg/simulator/core.go`` of
``hkust-adsl/kubernetes-scheduler-simulator``; see ``fgd-experiment.md`` in the shared
reference), with Python's `random.Random` in place of Go's ``math/rand`` (different draws,
the same distribution):

1. the pods of the trace, sorted by name (the *original* workload), give the target
   workload of the fragmentation measure (`schedsim.replay.fragmentation`);
2. ``random.Random(seed)`` shuffles the name-sorted pods (Fisher-Yates);
3. *tune* to ``inflate`` x the cluster's GPU capacity (milli): below it, draw an original
   pod uniformly with replacement (CPU-only pods included), clone it as
   ``<name>-tuned-<i>`` and append it, stopping at the first draw whose **per-GPU** milli
   would take the running total past the target (that draw is dropped); above it, remove
   uniformly random pods until the total is at or below it;
4. a random permutation of the name-sorted nodes is the fixed node priority for ties
   (the artifact prefixes node names with it; its selectHost takes the smallest name);
5. the pods are scheduled one at a time, in list order, by kube-scheduler
   (`schedsim.scheduler.Scheduler` over the engine's profile); a pod that fails is dropped
   (its claims deleted, never retried); no pod departs;
6. after every pod: arrived GPU milli (every pod attempted, failed ones included), allocated
   GPU milli (the consumed capacity of bound pods' claims, per device), the cluster's
   fragment amount and idle GPU milli (`ExperimentEvent`);
7. the curve (`curve`): per integer arrived percent ``a`` in ``0..round(100 x inflate)``,
   the mean over the events whose arrived percent (``round(arrived / (10 x GPUs))``, half to
   even as Python's round) is ``a``, else over those within ``a +- 1``, else empty; as the
   artifact's ``merge_*_discrete.py`` scripts bin it (allocation rounded to 2 decimals per
   event first).

Plugins of the profile that define ``set_experiment(classes, seed)`` are given the target
workload and the seed before the first pod (the FGD policy needs the former, a seeded
random policy the latter; ``examples/gpu-sharing-policies``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from schedsim.api.core import Pod
from schedsim.api.loading.uids import default_uid
from schedsim.dra.claim_controller import create_template_claims
from schedsim.engine import Engine
from schedsim.framework.devices import node_devices
from schedsim.replay.alibaba import GPU_CAPACITY, GPU_DRIVER, GPU_MODEL_LABEL, pod_demand
from schedsim.replay.fragmentation import (
    GPU_MILLI,
    PodDemand,
    TargetClass,
    node_fragment_amount,
    target_workload,
)
from schedsim.replay.trace import Trace
from schedsim.scheduler import Scheduler
from schedsim.snapshot.infos import NodeInfo

__all__ = [
    "CurvePoint",
    "ExperimentEvent",
    "ExperimentResult",
    "GpuSharingExperiment",
    "curve",
    "tuned_workload",
]


@attrs.frozen
class ExperimentEvent:
    """The cluster after one pod (milli-GPU).

    Attributes:
        arrived: GPU milli of every pod attempted so far (``gpu_milli x num_gpu``).
        allocated: GPU milli consumed by bound pods.
        fragment: the cluster's fragment amount (`node_fragment_amount` summed).
        idle: unallocated GPU milli.
        scheduled: whether this pod was bound.
    """

    arrived: int
    allocated: int
    fragment: float
    idle: int
    scheduled: bool


@attrs.frozen
class CurvePoint:
    """One integer arrived percent of the curve (None: no event near it).

    Attributes:
        arrived: percent of the cluster's GPU capacity arrived.
        gpu_allocation: allocated GPU milli, percent of capacity.
        fragmentation: fragment amount, percent of idle GPU milli.
        fragmentation_amount: fragment amount, percent of capacity.
    """

    arrived: int
    gpu_allocation: float | None
    fragmentation: float | None
    fragmentation_amount: float | None


@attrs.frozen
class ExperimentResult:
    """One experiment.

    Attributes:
        seed, inflate: as run.
        gpus: the cluster's GPUs (capacity ``1000 x gpus`` milli).
        original: pods in the trace; pods: after tuning; scheduled, failed: of those.
        classes: the target workload.
        events: one per pod, in order.
        curve: per integer arrived percent (see the module docstring).
    """

    seed: int
    inflate: float
    gpus: int
    original: int
    pods: int
    scheduled: int
    failed: int
    classes: tuple[TargetClass, ...]
    events: tuple[ExperimentEvent, ...]
    curve: tuple[CurvePoint, ...]

    def to_json(self) -> dict[str, Any]:
        """Plain data (``-o json``): the summary, the target workload and the curve."""
        return {
            "experiment": {
                "seed": self.seed,
                "inflate": self.inflate,
                "gpus": self.gpus,
                "originalPods": self.original,
                "pods": self.pods,
                "scheduled": self.scheduled,
                "failed": self.failed,
            },
            "targetWorkload": [
                {
                    "milliCpu": c.milli_cpu,
                    "gpuMilli": c.gpu_milli,
                    "gpus": c.gpus,
                    "models": list(c.models),
                    "weight": c.weight,
                }
                for c in self.classes
            ],
            "curve": [
                {
                    "arrived": p.arrived,
                    "gpuAllocation": p.gpu_allocation,
                    "fragmentation": p.fragmentation,
                    "fragmentationAmount": p.fragmentation_amount,
                }
                for p in self.curve
            ],
        }


def tuned_workload(
    pods: Sequence[tuple[Pod, PodDemand]], capacity: int, inflate: float, rng: random.Random
) -> list[tuple[Pod, PodDemand]]:
    """Steps 2-3 of the module docstring: the name-sorted ``pods`` shuffled, then tuned to
    ``inflate x capacity`` milli-GPU (clones appended, or random pods removed).

    Args:
        pods: the original workload, sorted by name.
        capacity: the cluster's GPU milli.
        inflate: the target, as a multiple of ``capacity``.
        rng: the run's generator (shuffle, then draws).
    """
    out = list(pods)
    rng.shuffle(out)
    target = inflate * capacity
    total = sum(d.total_gpu_milli for _, d in out)
    if total < target and pods:
        i = 0
        while True:
            pod, demand = pods[rng.randrange(len(pods))]
            if total + demand.gpu_milli > target:  # the per-GPU milli, as the artifact
                break
            name = f"{pod.name}-tuned-{i}"
            clone = attrs.evolve(pod, name=name, uid=default_uid("Pod", pod.namespace, name))
            out.append((clone, demand))
            total += demand.total_gpu_milli
            i += 1
    else:
        while total > target and out:
            _, demand = out.pop(rng.randrange(len(out)))
            total -= demand.total_gpu_milli
    return out


MAX_TUNED_PODS = 1_000_000
"""Most pods a tuned workload may have (the limit of pods made from workload controllers)."""


def _check_tuned_size(trace: Trace, capacity: int, inflate: float) -> None:
    """Refuse, before anything is built, a tuning that cannot end or is too large: clones are
    drawn uniformly from the trace's pods until ``inflate x capacity`` GPU milli, so with no
    pod asking for a GPU the draws never get there, and the expected count is the missing
    milli over the mean GPU milli per pod."""
    pods = trace.arrivals
    total = sum(pod_demand(tp.pod).total_gpu_milli for tp in pods)
    target = inflate * capacity
    if total >= target or not pods:
        return
    if total == 0:
        raise ValueError(
            f"no pod of the trace asks for a GPU: it cannot be tuned to {inflate:g} x the "
            "cluster's GPU capacity"
        )
    expected = len(pods) + (target - total) / (total / len(pods))
    if expected > MAX_TUNED_PODS:
        raise ValueError(
            f"inflate {inflate:g}: about {expected:,.0f} pods after tuning, past schedsim's "
            f"limit of {MAX_TUNED_PODS:,}; use a smaller factor (the paper runs 1.3)"
        )


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def curve(events: Sequence[ExperimentEvent], gpus: int, last: int) -> tuple[CurvePoint, ...]:
    """Step 7 of the module docstring: ``events`` binned per integer arrived percent
    ``0..last`` of ``gpus`` GPUs."""
    by_percent: dict[int, list[tuple[float, float, float]]] = {}
    for e in events:
        a = round(e.arrived / (10 * gpus))
        alloc = round(e.allocated / (10 * gpus), 2)
        ratio = 100 * e.fragment / e.idle if e.idle > 0 else 0.0
        amount = 100 * e.fragment / (GPU_MILLI * gpus)
        by_percent.setdefault(a, []).append((alloc, ratio, amount))
    out = []
    for a in range(last + 1):
        rows = by_percent.get(a)
        if not rows:
            rows = [r for b in (a - 1, a, a + 1) for r in by_percent.get(b, ())]
        out.append(
            CurvePoint(
                a,
                _mean([r[0] for r in rows]),
                _mean([r[1] for r in rows]),
                _mean([r[2] for r in rows]),
            )
        )
    return tuple(out)


class GpuSharingExperiment:
    """One run of the paper's experiment (see the module docstring).

    Args:
        trace: an Alibaba trace read with ``gpu_as="dra"`` (`schedsim.replay.alibaba`);
            with ``gpu_share`` for GPU sharing (the engine then needs DRAConsumableCapacity).
        engine: the scheduler configuration (a policy profile).
        inflate: the target workload, as a multiple of the cluster's GPU capacity (> 0).
        seed: the run's random seed (shuffle, clones, node priority).

    Raises:
        ValueError: ``inflate`` not a finite number > 0; a trace without GPUs; a tuning that
            cannot end (no pod asks for a GPU) or passes `MAX_TUNED_PODS`.
        ManifestError, DraSnapshotError: as `Engine.snapshot`.
    """

    def __init__(self, trace: Trace, engine: Engine, *, inflate: float = 1.3, seed: int = 42):
        if not inflate > 0 or not math.isfinite(inflate):
            raise ValueError(f"inflate: must be a finite number > 0, got {inflate}")
        self.trace = trace
        self.engine = engine
        self.inflate = inflate
        self.seed = seed
        self.snapshot, _ = engine.snapshot(
            trace.cluster, skip_unschedulable_nodes=False, node_tree=True
        )
        self.gpus = sum(
            len(sl.devices) for sl in trace.cluster.resource_slices if sl.driver == GPU_DRIVER
        )
        if self.gpus == 0:
            raise ValueError("the trace has no GPUs (read it with gpu_as='dra')")
        _check_tuned_size(trace, GPU_MILLI * self.gpus, inflate)
        # (milli-CPU left, GPU model, milli-GPU left per GPU sorted) -> fragment amount
        self._fragments: dict[tuple[object, ...], float] = {}

    def _node_state(self, ni: NodeInfo) -> tuple[int, int, float]:
        """(GPU milli of the node, GPU milli left, fragment amount)."""
        node = ni.node
        assert node is not None
        devices = node_devices(ni, GPU_DRIVER)
        if not devices:
            return 0, 0, 0.0
        left = [
            int(d.left(GPU_CAPACITY)) if d.capacity else (0 if d.shares else GPU_MILLI)
            for d in devices
        ]
        cpu_left = ni.allocatable.milli_cpu - ni.requested.milli_cpu
        model = node.labels.get(GPU_MODEL_LABEL, "")
        # the amount reads the GPUs' free milli as a multiset: nodes in one state share it
        key = (cpu_left, model, *sorted(left))
        frag = self._fragments.get(key)
        if frag is None:
            if len(self._fragments) >= 100_000:
                self._fragments.clear()
            frag = self._fragments[key] = node_fragment_amount(cpu_left, left, model, self.classes)
        return GPU_MILLI * len(devices), sum(left), frag

    def run(self, progress: Callable[[int, int], None] | None = None) -> ExperimentResult:
        """Run it (once). ``progress(done, total)`` is called after each pod."""
        originals = sorted(self.trace.arrivals, key=lambda tp: tp.pod.name)
        demands = [(tp.pod, pod_demand(tp.pod)) for tp in originals]
        self.classes = target_workload(d for _, d in demands)
        self._fragments.clear()  # amounts are per target workload
        for plugin in self.engine.framework.plugins.values():
            setter = getattr(plugin, "set_experiment", None)
            if callable(setter):
                setter(self.classes, self.seed)
        rng = random.Random(self.seed)
        capacity = GPU_MILLI * self.gpus
        workload = tuned_workload(demands, capacity, self.inflate, rng)
        names = sorted(n.name for n in self.trace.cluster.nodes)
        perm = list(range(len(names)))
        rng.shuffle(perm)
        rank = dict(zip(names, perm, strict=True))
        scheduler = Scheduler(self.snapshot, node_rank=rank)
        snap = self.snapshot
        templates = self.trace.cluster.resource_claim_templates
        state: dict[str, tuple[int, int, float]] = {}
        for ni in snap.list_node_infos():
            assert ni.node is not None
            state[ni.node.name] = self._node_state(ni)
        left = sum(s[1] for s in state.values())
        frag = sum(s[2] for s in state.values())
        arrived = scheduled = 0
        events: list[ExperimentEvent] = []
        for n, (pod, demand) in enumerate(workload):
            if pod.resource_claims:
                made = create_template_claims([pod], templates)
                snap.dra_snapshot.add_claims(made.claims)
                pod = made.pods[0]
            placed = scheduler.schedule_one(pod)
            arrived += demand.total_gpu_milli
            host = placed.node_name
            if host is not None and placed.waiting:
                raise ValueError(f"pod {pod.key}: a Permit plugin made it wait (not supported)")
            if host is None:
                if pod.resource_claims:  # the artifact deletes a pod that failed
                    snap.dra_snapshot.remove_pod_owned_claims(pod)
            else:
                scheduled += 1
                before = state[host]
                after = state[host] = self._node_state(snap.get_node_info(host))
                left += after[1] - before[1]
                frag += after[2] - before[2]
            events.append(ExperimentEvent(arrived, capacity - left, frag, left, host is not None))
            if progress is not None:
                progress(n + 1, len(workload))
        last = round(100 * self.inflate)
        return ExperimentResult(
            self.seed,
            self.inflate,
            self.gpus,
            len(originals),
            len(workload),
            scheduled,
            len(workload) - scheduled,
            self.classes,
            tuple(events),
            curve(events, self.gpus, last),
        )
