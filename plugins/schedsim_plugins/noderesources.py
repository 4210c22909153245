"""NodeResourcesFit: does the node have room for the pod's requests?

Mirrors kube-scheduler ``noderesources/fit.go`` (1.34): PreFilter computes the pod's request
vector once (containers + sidecars vs. init containers, pod-level resources, overhead);
Filter compares it with ``allocatable - requested`` of the node, reporting every shortage in
kube-scheduler's order and words ("Too many pods", "Insufficient cpu", ...). A shortage
larger than the node's whole allocatable makes the status UnschedulableAndUnresolvable
(preemption cannot help); otherwise Unschedulable.

PreScore/Score rank the nodes by the args' ``scoringStrategy`` (``least_allocated.go``,
``most_allocated.go``, ``requested_to_capacity_ratio.go`` over the shared
``resource_allocation.go`` scorer, in `schedsim_plugins.resource_allocation`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import attrs

from schedsim.api.core import Pod
from schedsim.api.core.resources import is_extended_resource_name, pod_requests, request_parts
from schedsim.api.parts_memo import parts_memo
from schedsim.dra.extended import device_class_mapping
from schedsim.framework import (
    MAX_NODE_SCORE,
    Code,
    CycleState,
    Handle,
    NodeInfo,
    Resource,
    StateKey,
    Status,
)
from schedsim.framework.args import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    NodeResourcesFitArgs,
    ScoringStrategy,
)
from schedsim_plugins.resource_allocation import (
    NodeUsage,
    Scorer,
    least_resource_scorer,
    most_resource_scorer,
    pod_resource_requests,
    requested_to_capacity_ratio_scorer,
)

__all__ = [
    "DRA_EXTENDED_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "InsufficientResource",
    "NodeResourcesFit",
    "fits_request",
]

NAME = "NodeResourcesFit"
_SIDECAR_DISABLED = Status(
    Code.UnschedulableAndUnresolvable,
    ("Pod has a restartable init container and the SidecarContainers feature is disabled",),
    NAME,
)
_STATE_KEY: StateKey[Resource] = StateKey("PreFilter" + NAME)
DRA_EXTENDED_STATE_KEY: StateKey[frozenset[str]] = StateKey(
    "PreFilter" + NAME + "/DRAExtendedResources"
)
"""The pod's extended resources a DeviceClass stands for (DRAExtendedResource), written by
PreFilter: `fits_request`'s ``delegated_to_dra``."""
_MISSING: Any = object()
_NO_PRE_FILTER_STATE = Status(
    Code.Error, (f'error reading "{_STATE_KEY.name}" from cycleState: not found',), NAME
)
PRE_SCORE_STATE_KEY: StateKey[tuple[int, ...]] = StateKey("PreScore" + NAME)
"""The pod's request per scored resource (``preScoreStateKey``)."""


def _scorer(strategy: ScoringStrategy) -> Scorer:
    """``nodeResourceStrategyTypeMap``."""
    if strategy.type == LEAST_ALLOCATED:
        return least_resource_scorer(strategy.resources)
    if strategy.type == MOST_ALLOCATED:
        return most_resource_scorer(strategy.resources)
    return requested_to_capacity_ratio_scorer(strategy.resources, strategy.shape)


@attrs.frozen
class InsufficientResource:
    """One shortage found by `fits_request` (``noderesources.InsufficientResource``).

    Attributes:
        resource_name: e.g. ``cpu``, ``memory``, ``example.com/gpu``, ``pods``.
        reason: kube-scheduler's reason string (``Insufficient cpu``, ``Too many pods``).
        requested: what the pod asks for (milli-CPU for cpu, bytes for memory/storage,
            units otherwise; 1 for pods).
        used: already requested on the node (pod count for pods).
        capacity: the node's allocatable.
        unresolvable: the request exceeds the whole allocatable.
    """

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False


def _check(out: list[InsufficientResource], name: str, req: int, used: int, alloc: int) -> None:
    if req > alloc - used:
        out.append(
            InsufficientResource(name, f"Insufficient {name}", req, used, alloc, req > alloc)
        )


def fits_request(
    request: Resource,
    node_info: NodeInfo,
    ignored_resources: frozenset[str] = frozenset(),
    ignored_resource_groups: frozenset[str] = frozenset(),
    delegated_to_dra: frozenset[str] = frozenset(),
) -> list[InsufficientResource]:
    """Every resource the node is short of for ``request`` (``fitsRequest`` upstream).

    Order: pods, cpu, memory, ephemeral-storage, then scalar resources in the pod's order.
    Zero requests are skipped; ignored names/groups apply to extended resources only.

    Args:
        request: the pod's requests (milli-CPU, bytes, units).
        node_info: the node.
        ignored_resources: extended resources not checked (plugin arg ``ignoredResources``).
        ignored_resource_groups: domains whose extended resources are not checked
            (``ignoredResourceGroups``, e.g. ``example.com``).
        delegated_to_dra: extended resources a DeviceClass stands for (DRAExtendedResource):
            on a node without them in allocatable they are left to DynamicResources
            (``shouldDelegateResourceToDRA``).

    Returns:
        the shortages; empty when the pod fits.
    """
    out: list[InsufficientResource] = []
    alloc = node_info.allocatable
    used = node_info.requested
    n_pods = len(node_info.pods)
    if n_pods + 1 > alloc.allowed_pod_number:
        out.append(
            InsufficientResource("pods", "Too many pods", 1, n_pods, alloc.allowed_pod_number)
        )
    if not (
        request.milli_cpu or request.memory or request.ephemeral_storage or request.scalar_resources
    ):
        return out
    if request.milli_cpu > 0:
        _check(out, "cpu", request.milli_cpu, used.milli_cpu, alloc.milli_cpu)
    if request.memory > 0:
        _check(out, "memory", request.memory, used.memory, alloc.memory)
    if request.ephemeral_storage > 0:
        _check(
            out,
            "ephemeral-storage",
            request.ephemeral_storage,
            used.ephemeral_storage,
            alloc.ephemeral_storage,
        )
    for name, q in request.scalar_resources.items():
        if q == 0:
            continue
        if (
            name in ignored_resources or name.split("/", 1)[0] in ignored_resource_groups
        ) and is_extended_resource_name(name):  # (the name check only when it matters)
            continue
        if name in delegated_to_dra and alloc.scalar_resources.get(name, 0) <= 0:
            continue
        _check(
            out, name, q, used.scalar_resources.get(name, 0), alloc.scalar_resources.get(name, 0)
        )
    return out


class NodeResourcesFit:
    """The NodeResourcesFit plugin (PreFilter, Filter, PreScore, Score).

    Score follows ``scoringStrategy`` over its ``resources`` (cpu and memory, weight 1, by
    default): LeastAllocated ``(allocatable - requested) * 100 / allocatable``, MostAllocated
    ``requested * 100 / allocatable``, or RequestedToCapacityRatio (the shape applied to the
    utilization percent), each resource's score averaged by weight. ``requested`` is the
    node's requests plus the pod's, with 100m cpu / 200Mi memory assumed for containers that
    request none (NonZeroRequested); scalar resources count only when the pod requests them
    and the node has them, a resource with allocatable 0 does not count. As upstream's,
    the pod's scored requests ignore pod-level ``spec.resources`` (NewFit builds the scorer
    without the PodLevelResources flag). No NormalizeScore.

    Args:
        args: NodeResourcesFitArgs (`NodeResourcesFitArgs.from_mapping`):
            ``ignoredResources``, ``ignoredResourceGroups``, ``scoringStrategy``.
        handle: reads the ``SidecarContainers``, ``PodLevelResources`` and
            ``DRAExtendedResource`` gates, and the DeviceClasses through ``dra_manager``.

    Raises:
        ArgsError: invalid args.
    """

    name: ClassVar[str] = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.args = NodeResourcesFitArgs.from_mapping(args)
        self.ignored_resources = self.args.ignored_resources
        self.ignored_resource_groups = self.args.ignored_resource_groups
        strategy = self.args.scoring_strategy
        self._score_resources = strategy.resources
        self._scorer = _scorer(strategy)
        self._usage = NodeUsage(strategy.resources, use_requested=False)
        # LeastAllocated over exactly cpu and memory: their weights (`score_node_fn`)
        self._least_cpu_memory: tuple[int, int] | None = None
        if strategy.type == LEAST_ALLOCATED and tuple(r.name for r in strategy.resources) == (
            "cpu",
            "memory",
        ):
            self._least_cpu_memory = (strategy.resources[0].weight, strategy.resources[1].weight)
        gates = handle.feature_gates
        self._sidecars = gates.enabled("SidecarContainers")
        self._pod_level = gates.enabled("PodLevelResources")
        self._dra_extended = gates.enabled("DRAExtendedResource") and gates.enabled(
            "DynamicResourceAllocation"
        )
        self._handle = handle
        self._statuses: dict[tuple[tuple[str, ...], bool], Status] = {}
        # scalar resources checked -> `_shortages`' status (None: it fits) by which
        # resources fall short and which exceed allocatable (`filter_node_fn`)
        self._by_shortage: dict[tuple[object, ...], dict[tuple[bool, ...], Status | None]] = {}

    def compute_pod_request(self, pod: Pod) -> Resource:
        """The pod's request vector in scheduler units (``computePodResourceRequest``);
        computed once per pod object (read-only: it is shared)."""
        plr = self._pod_level
        return parts_memo(
            pod,
            (NAME, plr),
            request_parts(pod),
            lambda: Resource.from_resource_list(pod_requests(pod, pod_level_resources=plr)),
        )

    def pre_filter_reusable(self, pod: Pod) -> bool:
        """PreFilter reads the pod and the feature gates only, and writes the shared,
        read-only request vector, unless DRAExtendedResource maps the pod's scalar
        resources through the cluster's DeviceClasses
        (`schedsim.framework.pre_filter_reuse`)."""
        return not (self._dra_extended and self.compute_pod_request(pod).scalar_resources)

    def schedsim_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """Compute the pod's requests once per attempt; reject restartable init containers
        when SidecarContainers is off."""
        if not self._sidecars and any(c.is_restartable_init for c in pod.init_containers):
            return _SIDECAR_DISABLED
        request = state[_STATE_KEY] = self.compute_pod_request(pod)
        manager = self._handle.dra_manager
        if self._dra_extended and request.scalar_resources and manager is not None:
            mapped = device_class_mapping(manager.list_device_classes())
            state[DRA_EXTENDED_STATE_KEY] = frozenset(
                n for n in request.scalar_resources if n in mapped
            )
        return None

    def schedsim_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject the node when any requested resource does not fit."""
        request = state.get(_STATE_KEY)
        if request is None:  # PreFilter was not run (fmt's %q quoting, as upstream)
            return _NO_PRE_FILTER_STATE
        alloc = node_info.allocatable
        used = node_info.requested
        # Fast path for the common case: everything fits and nothing is allocated.
        if (
            len(node_info.pods) < alloc.allowed_pod_number
            and request.milli_cpu <= alloc.milli_cpu - used.milli_cpu
            and request.memory <= alloc.memory - used.memory
            and request.ephemeral_storage <= alloc.ephemeral_storage - used.ephemeral_storage
            and not request.scalar_resources
        ):
            return None
        return self._shortages(state, request, node_info)

    def filter_node_fn(self, state: CycleState, pod: Pod) -> Callable[[NodeInfo], Status | None]:
        """`schedsim_filter` for this attempt as a function of the node alone (the request
        read from ``state`` once): the same status on every node. A node where every
        requested amount fits in ``allocatable - requested`` (the pod count too) passes
        without `fits_request`, which would find no shortage there; elsewhere the status is
        looked up by which resources fall short (and which exceed allocatable), each such
        combination computed once by `fits_request` (the reasons and the code depend on
        nothing else)."""
        request = state.get(_STATE_KEY)
        if request is None:
            return lambda node_info: _NO_PRE_FILTER_STATE
        cpu, memory, storage = request.milli_cpu, request.memory, request.ephemeral_storage
        scalars = tuple(request.scalar_resources.items())
        shortages = self._shortages
        # `fits_request`'s shortages are a function of which of pods, cpu, memory,
        # ephemeral-storage and the scalar resources it checks (requested, not ignored; one
        # left to DRA only where allocatable has none of it) fall short and which of those
        # exceed allocatable (unresolvable): the status is looked up by that, computed by
        # `_shortages` the first time (per plugin and list of checked scalar resources)
        delegated = state.get(DRA_EXTENDED_STATE_KEY) or frozenset()
        ignored, groups = self.ignored_resources, self.ignored_resource_groups
        checked = tuple(
            (name, q, name in delegated)
            for name, q in scalars
            if q != 0
            and not (
                (name in ignored or name.split("/", 1)[0] in groups)
                and is_extended_resource_name(name)
            )
        )
        by_shortage = self._by_shortage.get(checked)
        if by_shortage is None:
            by_shortage = self._by_shortage[checked] = {}
        missing = _MISSING

        def fit(node_info: NodeInfo) -> Status | None:
            alloc = node_info.allocatable
            used = node_info.requested
            if (
                len(node_info.pods) < alloc.allowed_pod_number
                and cpu <= alloc.milli_cpu - used.milli_cpu
                and memory <= alloc.memory - used.memory
                and storage <= alloc.ephemeral_storage - used.ephemeral_storage
            ):
                if not scalars:
                    return None
                have, taken = alloc.scalar_resources, used.scalar_resources
                for name, q in scalars:
                    if q > have.get(name, 0) - taken.get(name, 0):
                        break
                else:
                    return None
            key: tuple[bool, ...] = (
                len(node_info.pods) >= alloc.allowed_pod_number,
                0 < cpu and alloc.milli_cpu - used.milli_cpu < cpu,
                alloc.milli_cpu < cpu,
                0 < memory and alloc.memory - used.memory < memory,
                alloc.memory < memory,
                0 < storage and alloc.ephemeral_storage - used.ephemeral_storage < storage,
                alloc.ephemeral_storage < storage,
            )
            if checked:
                have, taken = alloc.scalar_resources, used.scalar_resources
                for name, q, to_dra in checked:
                    a = have.get(name, 0)
                    if to_dra and a <= 0:
                        key += (False, False)
                    else:
                        key += (a - taken.get(name, 0) < q, a < q)
            st = by_shortage.get(key, missing)
            if st is missing:
                st = by_shortage[key] = shortages(state, request, node_info)
            return st  # type: ignore[no-any-return]

        return fit

    def _shortages(
        self, state: CycleState, request: Resource, node_info: NodeInfo
    ) -> Status | None:
        """Filter's status from `fits_request` (None: it fits)."""
        short = fits_request(
            request,
            node_info,
            self.ignored_resources,
            self.ignored_resource_groups,
            state.get(DRA_EXTENDED_STATE_KEY) or frozenset(),
        )
        if not short:
            return None
        reasons = tuple(s.reason for s in short)
        unresolvable = any(s.unresolvable for s in short)
        key = (reasons, unresolvable)
        st = self._statuses.get(key)
        if st is None:
            code = Code.UnschedulableAndUnresolvable if unresolvable else Code.Unschedulable
            st = self._statuses[key] = Status(code, reasons, NAME)
        return st

    def _score_requests(self, pod: Pod) -> tuple[int, ...]:
        return pod_resource_requests(
            pod, self._score_resources, use_requested=False, pod_level=False
        )

    def schedsim_pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """PreScore of upstream NodeResourcesFit: the pod's request per scored resource."""
        state[PRE_SCORE_STATE_KEY] = self._score_requests(pod)
        return None

    def schedsim_score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        """Score of upstream NodeResourcesFit (the pod's requests computed here when PreScore
        did not run)."""
        requests = state.get(PRE_SCORE_STATE_KEY)
        if requests is None:
            requests = self._score_requests(pod)
        requested, allocatable = self._usage(node_info, requests)
        return self._scorer(requested, allocatable)

    def score_node_fn(self, state: CycleState, pod: Pod) -> Callable[[NodeInfo], int]:
        """`schedsim_score` for this attempt as a function of the node alone (its requests
        read from ``state`` once): the same value on every node. With the default
        LeastAllocated over cpu and memory, the arithmetic inline (`NodeUsage` and
        `least_resource_scorer` give the same integers)."""
        requests = state.get(PRE_SCORE_STATE_KEY)
        if requests is None:
            requests = self._score_requests(pod)
        if self._least_cpu_memory is None:
            usage, scorer = self._usage, self._scorer
            return lambda node_info: scorer(*usage(node_info, requests))
        wc, wm = self._least_cpu_memory
        pc, pm = requests
        if wc == wm and wc > 0:
            # equal weights w: (s_cpu * w + s_memory * w) // 2w == (s_cpu + s_memory) // 2

            def least_allocated_even(node_info: NodeInfo) -> int:
                alloc = node_info.allocatable
                used = node_info.non_zero_requested
                a = alloc.milli_cpu
                b = alloc.memory
                if a and b:
                    r = used.milli_cpu + pc
                    q = used.memory + pm
                    return (
                        (0 if r > a else (a - r) * MAX_NODE_SCORE // a)
                        + (0 if q > b else (b - q) * MAX_NODE_SCORE // b)
                    ) // 2
                if a:
                    r = used.milli_cpu + pc
                    return 0 if r > a else (a - r) * MAX_NODE_SCORE // a
                if b:
                    q = used.memory + pm
                    return 0 if q > b else (b - q) * MAX_NODE_SCORE // b
                return 0

            return least_allocated_even

        def least_allocated(node_info: NodeInfo) -> int:
            alloc = node_info.allocatable
            used = node_info.non_zero_requested
            score = weights = 0
            a = alloc.milli_cpu
            if a:
                r = used.milli_cpu + pc
                score = (0 if r > a else (a - r) * MAX_NODE_SCORE // a) * wc
                weights = wc
            a = alloc.memory
            if a:
                r = used.memory + pm
                score += (0 if r > a else (a - r) * MAX_NODE_SCORE // a) * wm
                weights += wm
            return score // weights if weights else 0

        return least_allocated
