"""`QueuedPodInfo`: a pod in the scheduling queue with its queue bookkeeping.

Mirrors kube-scheduler 1.34's ``framework.QueuedPodInfo``. QueueSort plugins compare two of
them (``schedsim_queue_sort_less``); the queue (`schedsim.scheduler.queue`) owns and updates
them. Times are seconds on the queue's clock (virtual in a simulation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import attrs

from schedsim.api.core import Pod
from schedsim.framework.status import Status

__all__ = ["QueuedPodInfo", "priority_sort_key", "queue_sort_key", "sorts_by"]

_F = TypeVar("_F", bound=Callable[..., bool])

_KEY_ATTRIBUTE = "queue_sort_key"


@attrs.define(eq=False)
class QueuedPodInfo:
    """A pending pod as the queue holds it.

    Attributes:
        pod: the pod.
        timestamp: when the pod was added, or last failed (seconds); PrioritySort
            orders equal priorities by it.
        attempts: scheduling attempts so far (each `SchedulingQueue.pop` adds one).
        initial_attempt_timestamp: when the pod was first popped, or None.
        unschedulable_plugins: plugins that rejected the pod in its last attempt
            (Filter/PreFilter/Reserve/Permit rejections); empty after an Error.
        pending_plugins: plugins that answered Pending in the last attempt.
        gating_plugin: the PreEnqueue plugin that keeps the pod out of the active queue, or
            "" (``GatingPlugin``).
        gating_status: that plugin's status (its message says why), or None.
        unschedulable_count: times the pod was put back rejected by a plugin
            (``UnschedulableCount``; its backoff grows with it).
        consecutive_errors_count: times in a row the pod was put back after an Error
            (``ConsecutiveErrorsCount``; when not 0 the backoff grows with it instead; a
            rejection resets it).
        backoff_expiration: when the pod's backoff ends (seconds), computed when it is put
            back (with SchedulerPopFromBackoffQ truncated to the 1 s ordering window).
        seq: insertion number: equal pods in every heap keep insertion order (deterministic
            where Go's heap is not specified).
    """

    pod: Pod
    timestamp: float = 0.0
    attempts: int = 0
    initial_attempt_timestamp: float | None = None
    unschedulable_plugins: set[str] = attrs.field(factory=set)
    pending_plugins: set[str] = attrs.field(factory=set)
    gating_plugin: str = ""
    gating_status: Status | None = None
    unschedulable_count: int = 0
    consecutive_errors_count: int = 0
    backoff_expiration: float = 0.0
    seq: int = 0

    @property
    def gated(self) -> bool:
        """Whether a PreEnqueue plugin keeps the pod out of the active queue."""
        return bool(self.gating_plugin)

    @property
    def key(self) -> str:
        """The pod's ``namespace/name``."""
        return self.pod.key


SortKey = Callable[[QueuedPodInfo], Any]
"""A QueueSort order as a key: pods with smaller keys go first."""


def sorts_by(key: SortKey) -> Callable[[_F], _F]:
    """Mark a QueueSort ``Less`` as the order of ``key``: ``less(a, b)`` is exactly
    ``key(a) < key(b)`` for every two pods, and a pod's key does not change while it is in
    activeQ. The queue then orders its heap by the keys (compared without calling Python)
    instead of calling ``Less`` twice per comparison; the order is the same."""

    def mark(less: _F) -> _F:
        setattr(less, _KEY_ATTRIBUTE, key)
        return less

    return mark


def queue_sort_key(less: Callable[..., bool]) -> SortKey | None:
    """The key a ``Less`` was marked with (`sorts_by`), or None (also for a wrapped one,
    e.g. timed by ``--profile-plugins``: it is then called as it is)."""
    key: SortKey | None = getattr(less, _KEY_ATTRIBUTE, None)
    return key


def priority_sort_key(pod_info: QueuedPodInfo) -> tuple[int, float]:
    """PrioritySort's order as a key: priority descending, then queue timestamp (both fixed
    while the pod is in activeQ: the timestamp changes only when an attempt fails)."""
    return (-pod_info.pod.priority, pod_info.timestamp)
