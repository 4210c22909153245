"""Typed plugin protocols: what a plugin class provides, for mypy to check.

The pluggy hook specs (`schedsim.framework.hookspec`) are the runtime contract; these
Protocols say the same thing to a type checker, so a plugin author gets an error from
``mypy --strict`` instead of a surprise at run time. Implementations don't inherit from them:

.. code-block:: python

    _: FilterPlugin = MyPlugin({}, Handle())   # mypy checks name and schedsim_filter

The hook parameters are keyword-only here (``def schedsim_filter(self, *, state, pod,
node_info)``): pluggy passes hook arguments by name, so an implementation whose parameter
names differ from the spec's (``nodeInfo``, Go's ``p``) is an error for mypy. The
implementation itself may declare them as ordinary or keyword-only parameters; the runtime
handles both. A method that takes fewer arguments than the spec is accepted by the runtime
(pluggy's rule) but does not match these Protocols; declare the full signature to have it
type-checked.

One protocol per extension point of `schedsim.framework.extension_points` that schedsim
runs (the table's ``protocol`` column names them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from schedsim.api.core import Pod
from schedsim.api.resource import ResourceClaim
from schedsim.framework.cycle_state import CycleState
from schedsim.framework.devices import DeviceCandidate
from schedsim.framework.hookspec import PostFilterResult, PreFilterResult
from schedsim.framework.interface import NodeInfo, PodInfo
from schedsim.framework.queued_pod_info import QueuedPodInfo
from schedsim.framework.status import Status

__all__ = [
    "BindPlugin",
    "DeviceChoicePlugin",
    "FilterPlugin",
    "PermitPlugin",
    "Plugin",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreScorePlugin",
    "QueueSortPlugin",
    "ReservePlugin",
    "ScoreExtensions",
    "ScorePlugin",
]


class Plugin(Protocol):
    """Every plugin has a name: the one profiles and ``pluginConfig`` use."""

    @property
    def name(self) -> str:
        """The plugin's name, e.g. ``"NodeResourcesFit"``."""
        ...


class PreEnqueuePlugin(Plugin, Protocol):
    """Implements PreEnqueue (see ``hookspec.schedsim_pre_enqueue``)."""

    def schedsim_pre_enqueue(self, *, pod: Pod) -> Status | None:
        """Admit the pod to the queue (None) or keep it out (a rejection)."""
        ...


class PreFilterPlugin(Plugin, Protocol):
    """Implements PreFilter (see ``hookspec.schedsim_pre_filter``)."""

    def schedsim_pre_filter(
        self, *, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | PreFilterResult | None:
        """Once per pod: precompute, narrow the nodes, skip, or reject."""
        ...


class PreFilterExtensions(PreFilterPlugin, Protocol):
    """A PreFilter plugin with AddPod/RemovePod (kube-scheduler's ``PreFilterExtensions``;
    see ``hookspec.schedsim_pre_filter_add_pod``)."""

    def schedsim_pre_filter_add_pod(
        self,
        *,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_add: PodInfo,
        node_info: NodeInfo,
    ) -> Status | None:
        """Update the PreFilter state as if the pod were added to the node."""
        ...

    def schedsim_pre_filter_remove_pod(
        self,
        *,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: PodInfo,
        node_info: NodeInfo,
    ) -> Status | None:
        """Update the PreFilter state as if the pod were removed from the node."""
        ...


class FilterPlugin(Plugin, Protocol):
    """Implements Filter (see ``hookspec.schedsim_filter``)."""

    def schedsim_filter(self, *, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Once per (pod, node): None to accept, a Status to reject."""
        ...


class PostFilterPlugin(Plugin, Protocol):
    """Implements PostFilter (see ``hookspec.schedsim_post_filter``)."""

    def schedsim_post_filter(
        self, *, state: CycleState, pod: Pod, node_to_status: Mapping[str, Status]
    ) -> Status | PostFilterResult | None:
        """After no node passed: make room (None, or a `PostFilterResult` nominating a node)
        or say why not (Unschedulable)."""
        ...


class PreScorePlugin(Plugin, Protocol):
    """Implements PreScore (see ``hookspec.schedsim_pre_score``)."""

    def schedsim_pre_score(
        self, *, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """Once per pod, over the feasible nodes: precompute for Score, or Skip it."""
        ...


class ScorePlugin(Plugin, Protocol):
    """Implements Score (see ``hookspec.schedsim_score``). Without NormalizeScore its scores
    must already be in [0, 100]."""

    def schedsim_score(self, *, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        """Once per (pod, feasible node): the raw score, or a Status for failure."""
        ...


class ScoreExtensions(ScorePlugin, Protocol):
    """A Score plugin with NormalizeScore (kube-scheduler's ``ScoreExtensions``; see
    ``hookspec.schedsim_normalize_score``)."""

    def schedsim_normalize_score(
        self, *, state: CycleState, pod: Pod, scores: dict[str, int]
    ) -> Status | None:
        """Once per pod: map the raw scores (node -> score) into [0, 100] in place."""
        ...


class ReservePlugin(Plugin, Protocol):
    """Implements Reserve and Unreserve (see ``hookspec.schedsim_reserve``)."""

    def schedsim_reserve(self, *, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Claim node-level resources for the chosen node."""
        ...

    def schedsim_unreserve(self, *, state: CycleState, pod: Pod, node_name: str) -> None:
        """Undo Reserve; idempotent."""
        ...


class PreBindPlugin(Plugin, Protocol):
    """Implements PreBindPreFlight and PreBind (see ``hookspec.schedsim_pre_bind``)."""

    def schedsim_pre_bind_pre_flight(
        self, *, state: CycleState, pod: Pod, node_name: str
    ) -> Status | None:
        """None if PreBind has work for the pod, Skip otherwise."""
        ...

    def schedsim_pre_bind(self, *, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Record what binding needs; None on success."""
        ...


class QueueSortPlugin(Plugin, Protocol):
    """Implements QueueSort (see ``hookspec.schedsim_queue_sort_less``)."""

    def schedsim_queue_sort_less(
        self, *, pod_info1: QueuedPodInfo, pod_info2: QueuedPodInfo
    ) -> bool:
        """Whether ``pod_info1`` is scheduled before ``pod_info2``."""
        ...


class PermitPlugin(Plugin, Protocol):
    """Implements Permit (see ``hookspec.schedsim_permit``)."""

    def schedsim_permit(
        self, *, state: CycleState, pod: Pod, node_name: str
    ) -> Status | tuple[Status, float] | None:
        """Allow (None), reject, or ``(Status(Code.Wait), seconds)``."""
        ...


class BindPlugin(Plugin, Protocol):
    """Implements Bind (see ``hookspec.schedsim_bind``)."""

    def schedsim_bind(self, *, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Bind (None), pass on (Skip), reject or fail."""
        ...


class PostBindPlugin(Plugin, Protocol):
    """Implements PostBind (see ``hookspec.schedsim_post_bind``)."""

    def schedsim_post_bind(self, *, state: CycleState, pod: Pod, node_name: str) -> None:
        """Be told the pod is bound."""
        ...


class DeviceChoicePlugin(Plugin, Protocol):
    """Ranks the chosen node's devices for a claim request (schedsim's DeviceChoice point,
    beyond kube-scheduler 1.34; see the hook spec)."""

    def schedsim_choose_devices(
        self,
        *,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        claim: ResourceClaim,
        request: str,
        candidates: Sequence[DeviceCandidate],
    ) -> Sequence[int] | None:
        """Indices into ``candidates``, best first, or None for no preference."""
        ...
