"""GpuGuard: an example out-of-tree schedsim plugin.

Filter: pods that request a GPU (any of ``gpuResources``, by default ``nvidia.com/gpu``,
``amd.com/gpu`` and ``example.com/gpu``) do not go to nodes labelled
``<cpuNodeLabel>=<cpuNodeValue>`` (by default ``workload-class=cpu``): those nodes are set
aside for CPU work. Reserve: records which GPU pod went where (``decisions``), Unreserve
forgets it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from schedsim.api.core import Pod
from schedsim.api.core.resources import pod_requests
from schedsim.framework import Code, CycleState, Handle, NodeInfo, StateKey, Status

__all__ = ["GpuGuard"]

NAME = "GpuGuard"
RESERVED_FOR_CPU = Status(
    Code.UnschedulableAndUnresolvable, ("node(s) are reserved for CPU workloads",), NAME
)
_SKIP = Status(Code.Skip, (), NAME)
_WANTS_GPU: StateKey[bool] = StateKey("PreFilterGpuGuard")
_DEFAULT_GPUS = ("nvidia.com/gpu", "amd.com/gpu", "example.com/gpu")


class GpuGuard:
    """Keep GPU pods off CPU-only nodes.

    Args:
        args: ``gpuResources`` (list of resource names), ``cpuNodeLabel`` (label key,
            default ``workload-class``), ``cpuNodeValue`` (default ``cpu``).
        handle: unused.

    Raises:
        ValueError: unknown or malformed args.
    """

    name: ClassVar[str] = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        unknown = set(args) - {"apiVersion", "kind", "gpuResources", "cpuNodeLabel", "cpuNodeValue"}
        if unknown:
            raise ValueError(f"unknown GpuGuard args: {sorted(unknown)}")
        gpus = args.get("gpuResources", list(_DEFAULT_GPUS))
        if not isinstance(gpus, list) or not all(isinstance(g, str) for g in gpus):
            raise ValueError("args.gpuResources: expected a list of strings")
        self.gpu_resources = frozenset(gpus)
        self.label = str(args.get("cpuNodeLabel", "workload-class"))
        self.value = str(args.get("cpuNodeValue", "cpu"))
        self.decisions: list[tuple[str, str]] = []

    def schedsim_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """Skip the Filter for pods that request no GPU."""
        requests = pod_requests(pod)
        if not any(requests.get(r, 0) > 0 for r in self.gpu_resources):
            return _SKIP
        state[_WANTS_GPU] = True
        return None

    def schedsim_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject CPU-only nodes for GPU pods."""
        node = node_info.node
        if node is not None and node.labels.get(self.label) == self.value:
            return RESERVED_FOR_CPU
        return None

    def schedsim_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Record where a GPU pod went."""
        if state.get(_WANTS_GPU):
            self.decisions.append((pod.key, node_name))
        return None

    def schedsim_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Forget the decision."""
        if (pod.key, node_name) in self.decisions:
            self.decisions.remove((pod.key, node_name))
