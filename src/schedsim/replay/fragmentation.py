"""The FGD paper's GPU fragmentation measure, on milli-GPU, as its artifact computes it.

Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation
Gradient Descent" (USENIX ATC '23), section 3; the artifact
(``hkust-adsl/kubernetes-scheduler-simulator``) ``pkg/utils/frag.go``: ``GetTypicalPods``
(the target workload), ``NodeGpuShareFragAmount`` / ``GetNodePodFrag`` (one node),
``FragAmountSumExceptQ3``.

Target workload (`target_workload`)
    The pods of the original trace (before inflation), CPU-only pods included, grouped by
    ``(milli-CPU, per-GPU milli, GPU count, GPU model list)`` (memory is not part of a class;
    milli-CPU is the non-zero request: 100 for a pod asking for none). Classes sorted by pod
    count, descending (ties: by that tuple, ascending), taken from the top until they cover
    at least `POPULARITY_CUT` percent of the pods; their weights (pod counts) renormalised to
    sum to 1.

Fragment of one node for one class m (`node_fragment_amount`), in milli-GPU
    A node without GPUs has none. Otherwise, with ``idle`` its unallocated GPU milli:

    * m asks for no GPU: all of ``idle`` (no GPU can serve it);
    * the node's model is not in m's model list (when m has one): all of ``idle``;
    * the node has at least k GPUs with >= g milli left each, and m's CPU fits: only the
      milli left on GPUs with less than g left (those GPUs cannot serve m);
    * otherwise (GPUs or CPU short): all of ``idle``.

    The node's fragmentation is ``sum_m p_m x fragment_m``; the cluster's the sum over nodes.
    The *fragmentation ratio* divides it by the cluster's idle GPU milli, the *fragmentation
    amount* by its GPU capacity (1000 per GPU). Memory never enters.

Differences from `schedsim.replay.metrics` (the replay's whole-GPU measure, kept as is):
classes without memory, per-GPU milli and model lists, the 95 % cut instead of a fixed top
64, partial-GPU fragments, model mismatch counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

import attrs

__all__ = [
    "GPU_MILLI",
    "POPULARITY_CUT",
    "PodDemand",
    "TargetClass",
    "node_fragment_amount",
    "target_workload",
]

GPU_MILLI: Final = 1000
"""Milli-GPU of one GPU."""

POPULARITY_CUT: Final = 95.0
"""The target workload covers at least this percentage of the trace's pods
(``podPopularityThreshold: 95``)."""

DEFAULT_MILLI_CPU: Final = 100
"""kube-scheduler's non-zero CPU request for a pod that asks for none (milli-CPU)."""


@attrs.frozen
class PodDemand:
    """What one pod asks for, as the fragmentation measure sees it.

    Attributes:
        milli_cpu: its CPU request (milli-CPU).
        gpu_milli: milli-GPU per GPU (0..1000; 0 without GPUs).
        gpus: the GPU count.
        models: the GPU models it accepts (empty: any).
    """

    milli_cpu: int
    gpu_milli: int
    gpus: int
    models: tuple[str, ...] = ()

    @property
    def total_gpu_milli(self) -> int:
        """``gpu_milli x gpus``: what it adds to the arrived and allocated workload."""
        return self.gpu_milli * self.gpus


@attrs.frozen
class TargetClass:
    """One class of the target workload: a request and its weight (they sum to 1).

    Attributes:
        milli_cpu: the non-zero CPU request.
        gpu_milli: milli-GPU per GPU.
        gpus: the GPU count.
        models: accepted models (empty: any).
        weight: its share of the covered pods.
    """

    milli_cpu: int
    gpu_milli: int
    gpus: int
    models: tuple[str, ...]
    weight: float


def target_workload(
    pods: Iterable[PodDemand], cut: float = POPULARITY_CUT
) -> tuple[TargetClass, ...]:
    """The target workload of ``pods`` (the original trace; see the module docstring), most
    popular first.

    Args:
        pods: every pod of the trace before inflation.
        cut: the coverage to reach, in percent of the pods (0 < cut <= 100).

    Raises:
        ValueError: ``cut`` out of range.
    """
    if not 0 < cut <= 100:
        raise ValueError(f"cut: expected a percentage in (0, 100], got {cut}")
    counts: dict[tuple[int, int, int, tuple[str, ...]], int] = {}
    n = 0
    for p in pods:
        key = (p.milli_cpu or DEFAULT_MILLI_CPU, p.gpu_milli, p.gpus, p.models)
        counts[key] = counts.get(key, 0) + 1
        n += 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    kept: list[tuple[tuple[int, int, int, tuple[str, ...]], int]] = []
    covered = 0
    for key, c in ranked:
        if covered * 100 >= cut * n:
            break
        kept.append((key, c))
        covered += c
    return tuple(TargetClass(k[0], k[1], k[2], k[3], c / covered) for k, c in kept)


def node_fragment_amount(
    cpu_left: int, gpu_left: Sequence[int], model: str, classes: Sequence[TargetClass]
) -> float:
    """``sum_m p_m x fragment_m`` of one node, in milli-GPU (see the module docstring).

    Args:
        cpu_left: allocatable minus requested milli-CPU.
        gpu_left: milli-GPU left on each of its GPUs (empty: no GPUs).
        model: its GPU model.
        classes: the target workload.
    """
    if not gpu_left:
        return 0.0
    idle = sum(gpu_left)
    if idle <= 0:
        return 0.0
    frag = 0.0
    for m in classes:
        if m.gpus == 0 or (m.models and model not in m.models):
            frag += m.weight * idle
            continue
        g = m.gpu_milli
        if m.milli_cpu <= cpu_left and sum(1 for x in gpu_left if x >= g) >= m.gpus:
            frag += m.weight * sum(x for x in gpu_left if x < g)
        else:
            frag += m.weight * idle
    return frag
