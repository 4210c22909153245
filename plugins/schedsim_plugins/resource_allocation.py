"""The resource-allocation scorers shared by NodeResourcesFit and
NodeResourcesBalancedAllocation.

Mirrors kube-scheduler 1.34 ``noderesources/resource_allocation.go`` (the
``resourceAllocationScorer``), ``least_allocated.go``, ``most_allocated.go``,
``requested_to_capacity_ratio.go``, ``balanced_allocation.go``'s ``balancedResourceScorer``
and ``helper/shape_score.go``'s ``BuildBrokenLinearFunction``.

For each configured resource a node contributes ``(allocatable, requested)``:

- cpu / memory: ``allocatable`` against the node's ``NonZeroRequested`` (100m / 200Mi assumed
  for containers without a request) plus the pod's request, computed the same way; with
  ``use_requested`` (BalancedAllocation) the plain ``Requested`` and the pod's own requests;
- ephemeral-storage: the plain ``Requested`` plus the pod's request;
- scalar (extended, hugepages, ...) resources: only when the pod requests them and the node
  lists them in allocatable;
- a resource with allocatable 0 (or skipped above) takes no part in the score.

Integer arithmetic is Go's (division truncates toward zero); RequestedToCapacityRatio rounds
its weighted average half away from zero (``math.Round``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction

from schedsim.api.core import Pod
from schedsim.api.core.resources import is_scalar_resource_name, pod_requests, request_parts
from schedsim.api.parts_memo import parts_memo
from schedsim.api.quantity import milli_value, value
from schedsim.framework import MAX_NODE_SCORE, NodeInfo
from schedsim.framework.args import (
    MAX_CUSTOM_PRIORITY_SCORE,
    ResourceSpec,
    UtilizationShapePoint,
)

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "NodeUsage",
    "Scorer",
    "balanced_resource_scorer",
    "broken_linear_function",
    "least_resource_scorer",
    "most_resource_scorer",
    "pod_resource_requests",
    "requested_to_capacity_ratio_scorer",
]

DEFAULT_MILLI_CPU_REQUEST = 100
"""``schedutil.DefaultMilliCPURequest``: milli-CPU assumed for a container without a request."""
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
"""``schedutil.DefaultMemoryRequest``: bytes assumed for a container without a request."""

_NON_MISSING: Mapping[str, Fraction] = {
    "cpu": Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000),
    "memory": Fraction(DEFAULT_MEMORY_REQUEST),
}

Scorer = Callable[[Sequence[int], Sequence[int]], int]
"""``scorer(requested, allocatable) -> score``; both lists in the configured resources' order,
0 allocatable meaning "not scored"."""

_CPU, _MEMORY, _EPHEMERAL, _SCALAR, _OTHER = range(5)


def _kind(name: str) -> int:
    if name == "cpu":
        return _CPU
    if name == "memory":
        return _MEMORY
    if name == "ephemeral-storage":
        return _EPHEMERAL
    return _SCALAR if is_scalar_resource_name(name) else _OTHER


def pod_resource_requests(
    pod: Pod, resources: Sequence[ResourceSpec], *, use_requested: bool, pod_level: bool
) -> tuple[int, ...]:
    """The pod's request per configured resource (``calculatePodResourceRequestList``).

    Args:
        pod: the pod.
        resources: the configured resources.
        use_requested: the pod's own requests; otherwise 100m cpu / 200Mi memory are assumed
            for containers that request none (NonMissingContainerRequests).
        pod_level: honour pod-level ``spec.resources`` (PodLevelResources).

    Returns:
        milli-CPU for cpu, integer units (bytes) otherwise, rounded up; 0 when not requested.
        Computed once per (immutable) pod object and configuration.
    """
    names = tuple(r.name for r in resources)

    def compute() -> tuple[int, ...]:
        reqs = pod_requests(
            pod,
            pod_level_resources=pod_level,
            non_missing_container_requests=None if use_requested else _NON_MISSING,
        )
        out = []
        for name in names:
            q = reqs.get(name)
            out.append(0 if q is None else milli_value(q) if name == "cpu" else value(q))
        return tuple(out)

    key = ("ResourceAllocationScorer", names, use_requested, pod_level)
    return parts_memo(pod, key, request_parts(pod), compute)


class NodeUsage:
    """``(requested, allocatable)`` of a node per configured resource
    (``resourceAllocationScorer.score`` with ``calculateResourceAllocatableRequest``).

    Built once per plugin (it classifies the resource names once); calling it costs one pass
    over the configured resources and two small lists.

    Args:
        resources: the configured resources.
        use_requested: use the node's ``Requested`` for cpu/memory, not ``NonZeroRequested``.
    """

    __slots__ = ("_kinds", "_use_requested")

    def __init__(self, resources: Sequence[ResourceSpec], use_requested: bool) -> None:
        self._kinds = tuple((_kind(r.name), r.name) for r in resources)
        self._use_requested = use_requested

    def __call__(
        self, node_info: NodeInfo, pod_requests: Sequence[int]
    ) -> tuple[list[int], list[int]]:
        """Returns ``(requested, allocatable)``, each one entry per configured resource."""
        alloc = node_info.allocatable
        requested = node_info.requested
        used = requested if self._use_requested else node_info.non_zero_requested
        n = len(self._kinds)
        req_out = [0] * n
        alloc_out = [0] * n
        for i, (kind, name) in enumerate(self._kinds):
            pr = pod_requests[i]
            if kind == _CPU:
                a, r = alloc.milli_cpu, used.milli_cpu + pr
            elif kind == _MEMORY:
                a, r = alloc.memory, used.memory + pr
            elif kind == _EPHEMERAL:
                a, r = alloc.ephemeral_storage, requested.ephemeral_storage + pr
            elif kind == _SCALAR and pr != 0 and name in alloc.scalar_resources:
                a = alloc.scalar_resources[name]
                r = requested.scalar_resources.get(name, 0) + pr
            else:  # not requested, not on the node, or not a resource the scorer knows
                continue
            if a == 0:
                continue
            alloc_out[i] = a
            req_out[i] = r
        return req_out, alloc_out


def _go_div(a: int, b: int) -> int:
    """Go's integer division: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def least_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """LeastAllocated (``leastResourceScorer``): per resource
    ``(allocatable - requested) * 100 / allocatable`` (0 when over), weighted average."""
    weights = tuple(r.weight for r in resources)

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i, a in enumerate(allocatable):
            if a == 0:
                continue
            r = requested[i]
            s = 0 if r > a else (a - r) * MAX_NODE_SCORE // a
            node_score += s * weights[i]
            weight_sum += weights[i]
        return 0 if weight_sum == 0 else node_score // weight_sum

    return score


def most_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """MostAllocated (``mostResourceScorer``): per resource
    ``min(requested, allocatable) * 100 / allocatable``, weighted average."""
    weights = tuple(r.weight for r in resources)

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i, a in enumerate(allocatable):
            if a == 0:
                continue
            r = min(requested[i], a)  # pods without requests get the non-zero defaults
            node_score += r * MAX_NODE_SCORE // a * weights[i]
            weight_sum += weights[i]
        return 0 if weight_sum == 0 else node_score // weight_sum

    return score


def broken_linear_function(points: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """``helper.BuildBrokenLinearFunction``: linear between the points (utilization, score),
    constant before the first and after the last; integer arithmetic."""
    pts = tuple(points)

    def f(p: int) -> int:
        for i, (u, s) in enumerate(pts):
            if p <= u:
                if i == 0:
                    return s
                u0, s0 = pts[i - 1]
                return s0 + _go_div((s - s0) * (p - u0), u - u0)
        return pts[-1][1]

    return f


def requested_to_capacity_ratio_scorer(
    resources: Sequence[ResourceSpec], shape: Sequence[UtilizationShapePoint]
) -> Scorer:
    """RequestedToCapacityRatio (``requestedToCapacityRatioScorer``): each resource's
    utilization percent (100 when over capacity) through the shape, whose scores are scaled
    from [0, 10] to [0, 100]; resources scoring 0 are left out of the weighted average, which
    is rounded."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    f = broken_linear_function([(p.utilization, p.score * scale) for p in shape])
    at_max = f(100)
    weights = tuple(r.weight for r in resources)

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        node_score = weight_sum = 0
        for i, a in enumerate(allocatable):
            if a == 0:
                continue
            r = requested[i]
            s = at_max if r > a else f(r * 100 // a)
            if s > 0:
                node_score += s * weights[i]
                weight_sum += weights[i]
        if weight_sum == 0:
            return 0
        return math.floor(node_score / weight_sum + 0.5)  # math.Round of a non-negative value

    return score


def balanced_resource_scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """BalancedAllocation (``balancedResourceScorer``): ``(1 - std) * 100`` truncated, where
    std is the standard deviation of the requested/allocatable fractions (each capped at 1)
    of the scored resources (``|f0 - f1| / 2`` for two)."""
    fractions = []
    total = 0.0
    for i, a in enumerate(allocatable):
        if a == 0:
            continue
        fraction = requested[i] / a
        if fraction > 1:
            fraction = 1.0
        total += fraction
        fractions.append(fraction)
    std = 0.0
    n = len(fractions)
    if n == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif n > 2:
        mean = total / n
        acc = 0.0
        for fraction in fractions:
            acc = acc + (fraction - mean) * (fraction - mean)
        std = math.sqrt(acc / n)
    return int((1 - std) * MAX_NODE_SCORE)
