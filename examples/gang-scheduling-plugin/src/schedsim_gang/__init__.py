"""Gang: an example out-of-tree schedsim plugin that schedules pod groups all or nothing.

A pod joins a group with the label ``pod-group.scheduling.sigs.k8s.io/name: <group>`` and says
how many members the group needs with the annotation
``pod-group.scheduling.sigs.k8s.io/min-available: "<n>"`` (the names of the lightweight
coscheduling plugin of kubernetes-sigs/scheduler-plugins). Pods without the label are not
touched.

- **Permit**: a member that got a node waits (keeping its node) until ``n`` members of its
  group hold nodes; the member that completes the group allows every waiting one, and all
  are bound. A member waits at most ``permitWaitingTimeSeconds`` (default 60).
- **Unreserve**: when one member is rejected (it timed out, or a later step failed), every
  other waiting member of its group is rejected too, so no partial group is bound.
- **Events**: a rejected member is retried when a pod is added (a new member may complete
  the group; kube-scheduler's ``Pod/Add``).

Members are counted from the pods the snapshot holds with the group's label (bound, or
holding a node while they wait): O(pods) per Permit call, enough for an example.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from schedsim.api.core import Pod
from schedsim.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    Status,
    WaitingPod,
)

__all__ = ["GROUP_LABEL", "MIN_AVAILABLE_ANNOTATION", "Gang"]

NAME = "Gang"
GROUP_LABEL = "pod-group.scheduling.sigs.k8s.io/name"
MIN_AVAILABLE_ANNOTATION = "pod-group.scheduling.sigs.k8s.io/min-available"
_WAIT = Status(Code.Wait, (), NAME)


class Gang:
    """All members of a pod group or none (see the module docstring).

    Args:
        args: ``permitWaitingTimeSeconds`` (a positive number, default 60).
        handle: the framework handle: its snapshot (to count members) and waiting pods (to
            allow or reject the other members).

    Raises:
        ValueError: unknown or malformed args.
    """

    name: ClassVar[str] = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        unknown = set(args) - {"apiVersion", "kind", "permitWaitingTimeSeconds"}
        if unknown:
            raise ValueError(f"unknown Gang args: {sorted(unknown)}")
        timeout = args.get("permitWaitingTimeSeconds", 60)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ValueError("args.permitWaitingTimeSeconds: expected a positive number")
        self.timeout = float(timeout)
        self.handle = handle

    def schedsim_permit(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> Status | tuple[Status, float] | None:
        """Wait until the group has its minimum of members on nodes, then allow them all."""
        group = pod.labels.get(GROUP_LABEL)
        if group is None:
            return None
        needed = min_available(pod)
        if needed is None:
            problem = f"annotation {MIN_AVAILABLE_ANNOTATION} is not a positive integer"
            return Status(
                Code.UnschedulableAndUnresolvable, (f"pod group {group}: {problem}",), NAME
            )
        if self._members_on_nodes(pod.namespace, group) < needed:
            return _WAIT, self.timeout
        for wp in self._waiting(pod.namespace, group):
            wp.allow(NAME)
        return None

    def schedsim_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """A member failed after getting a node: reject the group's other waiting members."""
        group = pod.labels.get(GROUP_LABEL)
        if group is None:
            return
        for wp in self._waiting(pod.namespace, group):
            if wp.pod.uid != pod.uid:
                wp.reject(NAME, f"pod group {group}: member {pod.key} was rejected")

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """A new pod may complete the group (``Pod/Add``)."""
        return (ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Add)),)

    def _members_on_nodes(self, namespace: str, group: str) -> int:
        return sum(
            1
            for ni in self.handle.shared_lister.node_infos().list()
            for pi in ni.pods
            if pi.pod.namespace == namespace and pi.pod.labels.get(GROUP_LABEL) == group
        )

    def _waiting(self, namespace: str, group: str) -> list[WaitingPod]:
        return [
            wp
            for wp in self.handle.waiting_pods
            if wp.pod.namespace == namespace and wp.pod.labels.get(GROUP_LABEL) == group
        ]


def min_available(pod: Pod) -> int | None:
    """The pod's ``min-available`` annotation as a positive int (1 when absent), or None when
    it is not one."""
    raw = pod.annotations.get(MIN_AVAILABLE_ANNOTATION, "1")
    try:
        value = int(raw)
    except ValueError:
        return None
    return value if value > 0 else None
