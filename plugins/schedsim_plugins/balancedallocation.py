"""NodeResourcesBalancedAllocation: favour nodes whose resource usage stays balanced.

Mirrors kube-scheduler 1.34 ``noderesources/balanced_allocation.go`` (PreScore, Score; no
NormalizeScore).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from schedsim.api.core import Pod
from schedsim.framework import MAX_NODE_SCORE, Code, CycleState, Handle, NodeInfo, StateKey, Status
from schedsim.framework.args import NodeResourcesBalancedAllocationArgs
from schedsim_plugins.resource_allocation import (
    NodeUsage,
    balanced_resource_scorer,
    pod_resource_requests,
)

__all__ = ["PRE_SCORE_STATE_KEY", "NodeResourcesBalancedAllocation"]

NAME = "NodeResourcesBalancedAllocation"

PRE_SCORE_STATE_KEY: StateKey[tuple[int, ...]] = StateKey("PreScore" + NAME)
"""The pod's request per configured resource (``balancedAllocationPreScoreStateKey``)."""

_SKIP = Status(Code.Skip, (), NAME)


class NodeResourcesBalancedAllocation:
    """Mirrors kube-scheduler's ``NodeResourcesBalancedAllocation`` plugin.

    PreScore: the pod's requests for the configured resources (its own requests: no
    100m / 200Mi defaults; pod-level ``spec.resources`` with PodLevelResources); a pod that
    requests none of them (best effort) makes PreScore return Skip, so it is not scored
    (kubernetes#129138: best-effort pods would all pile onto one node).

    Score: for each configured resource the node has in allocatable (extended resources
    only when the pod requests them), ``fraction = (node requested + pod request) /
    allocatable`` capped at 1; ``score = (1 - std(fractions)) * 100``, truncated. No
    NormalizeScore (the scores are already in [0, 100]).

    Args:
        args: NodeResourcesBalancedAllocationArgs (``resources``, weights must be 1;
            defaults to cpu and memory).
        handle: reads the PodLevelResources gate.

    Raises:
        ArgsError: invalid args.
    """

    name: ClassVar[str] = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.args = NodeResourcesBalancedAllocationArgs.from_mapping(args)
        self._resources = self.args.resources
        self._pod_level = handle.feature_gates.enabled("PodLevelResources")
        self._usage = NodeUsage(self._resources, use_requested=True)
        self._cpu_memory = tuple(r.name for r in self._resources) == ("cpu", "memory")

    def _pod_requests(self, pod: Pod) -> tuple[int, ...]:
        return pod_resource_requests(
            pod, self._resources, use_requested=True, pod_level=self._pod_level
        )

    def schedsim_pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """PreScore of upstream BalancedAllocation: Skip for best-effort pods, else store the
        pod's requests."""
        requests = self._pod_requests(pod)
        if not any(requests):
            return _SKIP
        state[PRE_SCORE_STATE_KEY] = requests
        return None

    def schedsim_score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        """Score of upstream BalancedAllocation (without PreScore: computed here, 0 for a
        best-effort pod)."""
        requests = state.get(PRE_SCORE_STATE_KEY)
        if requests is None:
            requests = self._pod_requests(pod)
            if not any(requests):
                return 0
        requested, allocatable = self._usage(node_info, requests)
        return balanced_resource_scorer(requested, allocatable)

    def score_node_fn(self, state: CycleState, pod: Pod) -> Callable[[NodeInfo], int]:
        """`schedsim_score` for this attempt as a function of the node alone (the pod's
        requests read from ``state`` once): the same value on every node. Over exactly cpu
        and memory, the arithmetic inline (the same float operations as
        `balanced_resource_scorer` on two fractions)."""
        requests = state.get(PRE_SCORE_STATE_KEY)
        if requests is None:
            requests = self._pod_requests(pod)
            if not any(requests):
                return lambda node_info: 0
        if not self._cpu_memory:
            usage = self._usage
            return lambda node_info: balanced_resource_scorer(*usage(node_info, requests))
        pc, pm = requests

        def balanced(node_info: NodeInfo) -> int:
            alloc = node_info.allocatable
            ac, am = alloc.milli_cpu, alloc.memory
            if not (ac and am):  # one fraction or none: std 0
                return MAX_NODE_SCORE
            used = node_info.requested
            f0 = (used.milli_cpu + pc) / ac
            if f0 > 1:
                f0 = 1.0
            f1 = (used.memory + pm) / am
            if f1 > 1:
                f1 = 1.0
            return int((1 - abs((f0 - f1) / 2)) * MAX_NODE_SCORE)

        return balanced
