"""The replay's scheduling queue: pods waiting for kube-scheduler.

A small stand-in for kube-scheduler's PriorityQueue (``pkg/scheduler/backend/queue``), with
the two sub-queues a replay needs: *active* pods are attempted at the next scheduling pass,
in queue order (priority descending, then creation, then name: `queue_order`);
*unschedulable* pods wait there until a cluster event that can make them fit moves them all
back (``MoveAllToActiveOrBackoffQueue`` on NodeAdd and AssignedPodDelete, without queueing
hints). Backoff is not emulated: on the virtual clock a retry costs no time.

`PendingQueue` is the interface the replay uses, so kube-scheduler's own queue can replace
`SimpleQueue` without touching the loop.

Time: `add` / `add_unschedulable` / `delete` O(1); `pop_active` O(k log k) for k active pods;
`move_all_to_active` O(unschedulable).
"""

from __future__ import annotations

from typing import Protocol

from schedsim.api.core import Pod
from schedsim.simulation.scheduling import queue_order

__all__ = ["PendingQueue", "SimpleQueue"]


class PendingQueue(Protocol):
    """What the replay needs from a scheduling queue."""

    def add(self, pod: Pod) -> None:
        """A new (or evicted) pod: attempted at the next pass."""

    def add_unschedulable(self, pod: Pod) -> None:
        """An attempt failed: the pod waits for a cluster event."""

    def move_all_to_active(self) -> None:
        """A node was added or a pod left a node: every waiting pod is attempted again."""

    def pop_active(self) -> list[Pod]:
        """The pods to attempt now, in queue order (they leave the queue)."""

    def has_active(self) -> bool:
        """Whether a pass would attempt anything."""

    def unschedulable_pods(self) -> list[Pod]:
        """The pods waiting for an event, in queue order."""

    def __len__(self) -> int:
        """Pods in the queue (active and waiting)."""


class SimpleQueue:
    """`PendingQueue` with an active set and an unschedulable set (module docstring)."""

    def __init__(self) -> None:
        self._active: dict[str, Pod] = {}
        self._unschedulable: dict[str, Pod] = {}

    def add(self, pod: Pod) -> None:
        self._unschedulable.pop(pod.key, None)
        self._active[pod.key] = pod

    def add_unschedulable(self, pod: Pod) -> None:
        self._unschedulable[pod.key] = pod

    def move_all_to_active(self) -> None:
        if self._unschedulable:
            self._active.update(self._unschedulable)
            self._unschedulable = {}

    def pop_active(self) -> list[Pod]:
        pods = queue_order(self._active.values())
        self._active = {}
        return pods

    def has_active(self) -> bool:
        return bool(self._active)

    def unschedulable_pods(self) -> list[Pod]:
        return queue_order(self._unschedulable.values())

    def __len__(self) -> int:
        return len(self._active) + len(self._unschedulable)
