"""`SchedulingQueue`: kube-scheduler 1.34's PriorityQueue on an injectable clock.

Mirrors ``pkg/scheduler/backend/queue`` (scheduling_queue.go, active_queue.go,
backoff_queue.go, unschedulable_pods.go):

- **activeQ**: a heap ordered by the profiles' QueueSort plugin (``Less``; PrioritySort:
  priority descending, then queue timestamp); pods still equal keep insertion order.
- **backoffQ**: pods that failed and are still backing off, ordered by backoff expiry. The
  backoff is ``podInitialBackoffSeconds * 2^(n-1)``, at most ``podMaxBackoffSeconds`` (1 s and
  10 s by default), counted from when the pod was last put back, where n is the pod's
  ``UnschedulableCount`` (rejections), or its ``ConsecutiveErrorsCount`` when it failed with
  Errors since its last rejection (1.34, backoff_queue.go getBackoffTime). Pods that failed
  with an Error (no rejecting plugin) wait in a separate error backoff queue.
  With SchedulerPopFromBackoffQ (beta, on by default since 1.33) the expiry is truncated to
  the 1 s ordering window and a pod backs off until a later window begins
  (``isPodBackingoff``: expiry not before the current window), backoffQ orders a window's
  pods as activeQ does, and `pop` takes the first of them when activeQ is empty, error
  backoffs excepted. Without the gate a pod backs off while its expiry is not before now.
- **unschedulablePods**: pods a plugin rejected. A cluster event moves one back
  (`move_all_to_active_or_backoff`) only if one of its rejecting plugins registered that event
  (``events_to_register``, `schedsim.framework.events`) and the registered hint, if any,
  answers ``Queue`` (``isPodWorthRequeuing``); the pod then goes to activeQ if its backoff is
  over (or a Pending plugin queued it), else to backoffQ. `flush_unschedulable_pods_left_over`
  moves pods parked longer than ``podMaxInUnschedulablePodsDuration`` (5 min).
- **assigned pods** (`assigned_pod_added`, `assigned_pod_updated`): a pod bound to a node, or
  a bound pod's label change, is offered only to the pods it may help across nodes
  (``getUnschedulablePodsWithCrossTopologyTerm``): those PodTopologySpread rejected in the
  same namespace and those with a required pod-affinity term selecting it; a bound pod's
  scale-down is offered to all (it frees resources).
- **in-flight events**: events that happen while a popped pod is being scheduled are
  recorded; when the pod then fails (`add_unschedulable_if_not_present`) an event that would
  have moved it sends it to backoffQ/activeQ instead of unschedulablePods, so the change is
  not missed (a victim evicted by the pod's own preemption, for one).
- **PreEnqueue**: the pod's PreEnqueue plugins run on every move to activeQ (`add` included;
  not for a pod coming straight from backoffQ with SchedulerPopFromBackoffQ, whose plugins ran
  when it entered backoffQ) and, with that gate, on entering backoffQ; a pod they reject is
  parked as gated (``GatingPlugin``) and only an event its gating plugin registered lets
  PreEnqueue run again (``moveToActiveQ`` / ``moveToBackoffQ``).
- **events of interest**: an event no profile's plugin registered (and not the wildcard) moves
  nothing and is not recorded for in-flight pods (``isEventOfInterest``).
- **attempts**: each `pop` counts one attempt for the pod.

Differences from upstream, all deliberate:

- Nothing blocks: `pop` returns None when no pod is ready instead of waiting.
- Backoff completion is checked in `pop` (upstream flushes completed backoffs every second
  from a goroutine); `flush_backoff_completed` and `flush_unschedulable_pods_left_over` are
  also public, for a caller that drives time itself (the replay).
- Every heap breaks remaining ties by insertion order (Go's heap is not stable).
- One queue serves every profile (upstream too); hints are looked up by the pod's
  ``spec.schedulerName``.

Cost: `add`/`pop` O(log n) QueueSort calls; an event costs O(unschedulable pods x matching
registered events) hint calls, as upstream.
"""

from __future__ import annotations

import enum
import heapq
import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from schedsim.api.core import Pod
from schedsim.framework.events import (
    ASSIGNED_POD_ADD,
    FORCE_ACTIVATE,
    UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    pod_scheduling_properties_change,
)
from schedsim.framework.events import QueueingHint as Hint
from schedsim.framework.plugin_results import PLUGIN_FAILURES
from schedsim.framework.queued_pod_info import QueuedPodInfo, queue_sort_key
from schedsim.framework.status import Status
from schedsim.framework.types import AffinityTerm
from schedsim.snapshot.infos import PodInfo

__all__ = [
    "DEFAULT_POD_INITIAL_BACKOFF_SECONDS",
    "DEFAULT_POD_MAX_BACKOFF_SECONDS",
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION",
    "QueueingStrategy",
    "SchedulingQueue",
]

DEFAULT_POD_INITIAL_BACKOFF_SECONDS = 1.0
"""KubeSchedulerConfiguration v1 default ``podInitialBackoffSeconds``."""
DEFAULT_POD_MAX_BACKOFF_SECONDS = 10.0
"""KubeSchedulerConfiguration v1 default ``podMaxBackoffSeconds``."""
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 300.0
"""kube-scheduler's ``DefaultPodMaxInUnschedulablePodsDuration`` (5 minutes)."""

_ORDERING_WINDOW = 1.0
"""``backoffQOrderingWindowDuration`` (SchedulerPopFromBackoffQ)."""

_POD_TOPOLOGY_SPREAD = "PodTopologySpread"
_POD_SCALE_DOWN = ClusterEvent(EventResource.Pod, ActionType.UpdatePodScaleDown)

Less = Callable[[QueuedPodInfo, QueuedPodInfo], bool]
Hints = Mapping[str, Mapping[str, Sequence[ClusterEventWithHint]]]


def _backoff_count(qpi: QueuedPodInfo) -> int:
    """The failures the pod's backoff grows with: its consecutive Errors if it has some, else
    its rejections (1.34 getBackoffTime)."""
    return qpi.consecutive_errors_count or qpi.unschedulable_count


def _same_pod(a: Pod, b: Pod) -> bool:
    """Upstream compares UIDs; pods without one are compared by ``namespace/name``."""
    if a.uid and b.uid:
        return a.uid == b.uid
    return a.key == b.key


class QueueingStrategy(enum.Enum):
    """Where an event sends an unschedulable pod (upstream's ``queueingStrategy``)."""

    QueueSkip = 0
    QueueAfterBackoff = 1
    QueueImmediately = 2


class _Active:
    """A heap entry of activeQ: compared with the QueueSort ``Less``, then insertion."""

    __slots__ = ("less", "qpi")

    def __init__(self, qpi: QueuedPodInfo, less: Less) -> None:
        self.qpi = qpi
        self.less = less

    def __lt__(self, other: _Active) -> bool:
        a, b = self.qpi, other.qpi
        if self.less(a, b):
            return True
        if self.less(b, a):
            return False
        return a.seq < b.seq


_ACTIVE, _BACKOFF, _ERROR_BACKOFF, _UNSCHEDULABLE = "active", "backoff", "errorBackoff", "unsched"


class SchedulingQueue:
    """kube-scheduler's PriorityQueue (see the module docstring for the rules).

    Args:
        less: the QueueSort plugin's ``Less`` (`Framework.queue_sort_less`); every profile
            shares it, as kube-scheduler requires.
        clock: the time in seconds (a `schedsim.scheduler.clock.LogicalClock` in a
            simulation); read when pods are added, failed, moved, popped.
        pod_initial_backoff_seconds: ``podInitialBackoffSeconds`` (> 0).
        pod_max_backoff_seconds: ``podMaxBackoffSeconds`` (>= the initial backoff).
        pre_enqueue: runs a pod's PreEnqueue plugins (its profile's
            ``run_pre_enqueue_plugins``); None admits every pod.
        queueing_hints: schedulerName -> plugin -> registered events
            (`Framework.events_to_register` per profile). A pod whose schedulerName is not
            here is moved by every event.
        pop_from_backoff_q: SchedulerPopFromBackoffQ (on by default in 1.34).
        pod_max_in_unschedulable_pods_duration: seconds before
            `flush_unschedulable_pods_left_over` moves a parked pod.
        namespace_labels: the labels of a Namespace by name, None when unknown (the
            namespace lister `assigned_pod_added` matches affinity namespace selectors
            with; ``ObjectListers.namespace_labels``); None: no namespace is known.

    Raises:
        ValueError: backoff seconds out of range.
    """

    def __init__(
        self,
        less: Less,
        *,
        clock: Callable[[], float],
        pod_initial_backoff_seconds: float = DEFAULT_POD_INITIAL_BACKOFF_SECONDS,
        pod_max_backoff_seconds: float = DEFAULT_POD_MAX_BACKOFF_SECONDS,
        pre_enqueue: Callable[[Pod], Status] | None = None,
        queueing_hints: Hints | None = None,
        pop_from_backoff_q: bool = True,
        pod_max_in_unschedulable_pods_duration: float = (
            DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION
        ),
        namespace_labels: Callable[[str], Mapping[str, str] | None] | None = None,
    ) -> None:
        if pod_initial_backoff_seconds <= 0:
            raise ValueError(
                f"pod_initial_backoff_seconds {pod_initial_backoff_seconds}: must be > 0"
            )
        if pod_max_backoff_seconds < pod_initial_backoff_seconds:
            raise ValueError(
                f"pod_max_backoff_seconds {pod_max_backoff_seconds}: must be >= "
                f"pod_initial_backoff_seconds {pod_initial_backoff_seconds}"
            )
        self._less = less
        self._key = queue_sort_key(less)
        self._pushes = itertools.count()
        self._clock = clock
        self._initial = float(pod_initial_backoff_seconds)
        self._max = float(pod_max_backoff_seconds)
        self._pre_enqueue = pre_enqueue
        self._hints: Hints = queueing_hints if queueing_hints is not None else {}
        # event -> whether some profile's plugin registered it (`_event_of_interest`; the
        # registrations do not change while the queue lives)
        self._registered: dict[ClusterEvent, bool] = {}
        self._pop_from_backoff = pop_from_backoff_q
        self._max_unschedulable = pod_max_in_unschedulable_pods_duration
        self._namespace_labels = namespace_labels
        # key -> (pod, its required pod-affinity terms), for the parked pods asked about
        self._affinity_terms: dict[str, tuple[Pod, tuple[AffinityTerm, ...]]] = {}
        self._seq = 0
        # key -> (where, qpi): the one place a pod is; heap entries not matching are stale
        self._where: dict[str, tuple[str, QueuedPodInfo]] = {}
        # activeQ entries: (the key of a Less marked with `sorts_by`, else an _Active that
        # calls Less; the pod's seq; a push number; the pod): equal pods keep insertion order
        self._active: list[tuple[Any, int, int, QueuedPodInfo]] = []
        # backoff entries: (expiry, then with SchedulerPopFromBackoffQ the activeQ order of the
        # pod (0 in the error queue and without the gate), insertion number, the pod)
        self._backoff: list[tuple[float, Any, int, QueuedPodInfo]] = []
        self._error_backoff: list[tuple[float, Any, int, QueuedPodInfo]] = []
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        # in-flight pods -> index of the first event recorded after their pop
        self._in_flight: dict[str, int] = {}
        self._events: list[tuple[ClusterEvent, object, object]] = []
        self._events_base = 0  # number of events dropped from the front of _events
        self._counts = {_ACTIVE: 0, _BACKOFF: 0, _ERROR_BACKOFF: 0}

    # ------------------------------------------------------------------ adding and popping

    def add(self, pod: Pod) -> QueuedPodInfo:
        """A new pending pod (``Add``): PreEnqueue runs; admitted pods enter activeQ, the
        others are parked as gated in unschedulablePods.

        Returns:
            the pod's `QueuedPodInfo` (``gating_status`` says why a gated pod waits).

        Raises:
            ValueError: a pod with the same ``namespace/name`` is already queued or in flight.
        """
        key = pod.key
        if key in self._where or key in self._in_flight:
            raise ValueError(f"pod {key} is already in the scheduling queue")
        qpi = QueuedPodInfo(pod, timestamp=self._clock(), seq=self._next_seq())
        self._activate_or_gate(qpi)
        return qpi

    def pop(self) -> QueuedPodInfo | None:
        """The next pod to schedule (``Pop``), or None when none is ready.

        Pods whose backoff is over move to activeQ first; with an empty activeQ the pod whose
        backoff ends first is taken (SchedulerPopFromBackoffQ). The pod's ``attempts`` grows
        by one and it is in flight until `done`.
        """
        self.flush_backoff_completed()
        qpi = self._pop_heap_active()
        if qpi is None and self._pop_from_backoff:
            qpi = self._pop_heap_timed(self._backoff, _BACKOFF)
        if qpi is None:
            return None
        qpi.attempts += 1
        if qpi.initial_attempt_timestamp is None:
            qpi.initial_attempt_timestamp = self._clock()
        self._in_flight[qpi.key] = self._events_base + len(self._events)
        return qpi

    def add_unschedulable_if_not_present(
        self,
        qpi: QueuedPodInfo,
        rejector_plugins: Sequence[str] = (),
        pending_plugins: Sequence[str] = (),
    ) -> QueueingStrategy:
        """Put a pod whose attempt failed back (``AddUnschedulableIfNotPresent``).

        Args:
            qpi: the popped pod.
            rejector_plugins: the plugins that rejected it (``UnschedulablePlugins``: the
                Diagnosis' plugins, or the Reserve/Permit/PreBind plugin); empty when the
                attempt failed with an Error.
            pending_plugins: plugins that answered Pending.

        Returns:
            where the pod went: ``QueueSkip`` = unschedulablePods; ``QueueAfterBackoff`` =
            backoffQ (activeQ if its backoff is already over; an Error goes to the error
            backoff queue), because it failed with an Error or an event recorded while it was
            in flight may have helped it; ``QueueImmediately`` = activeQ.
            A pod already queued is left where it is (``QueueSkip`` returned).
        """
        key = qpi.key
        if key in self._where:
            return QueueingStrategy.QueueSkip
        qpi.unschedulable_plugins = set(rejector_plugins)
        qpi.pending_plugins = set(pending_plugins)
        if not rejector_plugins and not pending_plugins:
            qpi.consecutive_errors_count += 1  # an Error (e.g. the API server failed)
        else:
            qpi.unschedulable_count += 1
            qpi.consecutive_errors_count = 0
        qpi.timestamp = self._clock()
        qpi.backoff_expiration = self._align(
            qpi.timestamp + self.backoff_duration(_backoff_count(qpi))
        )
        strategy = self._hint_for_in_flight(qpi)
        if strategy is QueueingStrategy.QueueSkip:
            self._unschedulable[key] = qpi
            self._where[key] = (_UNSCHEDULABLE, qpi)
            return strategy
        self._requeue(qpi, strategy)
        return strategy

    def done(self, pod: Pod) -> None:
        """The pod's scheduling (and binding) is over (``Done``): it is no longer in flight;
        events recorded only for in-flight pods are dropped once none is left."""
        self._in_flight.pop(pod.key, None)
        if not self._in_flight:
            self._events_base += len(self._events)
            self._events.clear()
        else:
            oldest = min(self._in_flight.values())
            drop = oldest - self._events_base
            if drop > 0:
                del self._events[:drop]
                self._events_base = oldest

    def delete(self, pod: Pod) -> None:
        """Forget a pod wherever it is (``Delete``: the pod was deleted or bound elsewhere)."""
        found = self._where.pop(pod.key, None)
        if found is not None:
            where, _ = found
            if where == _UNSCHEDULABLE:
                del self._unschedulable[pod.key]
            else:
                self._counts[where] -= 1
        self._in_flight.pop(pod.key, None)
        self._affinity_terms.pop(pod.key, None)

    def activate(self, pods: Sequence[Pod]) -> list[QueuedPodInfo]:
        """Move the given pods to activeQ now (``Activate``; a plugin asking for an
        immediate retry): a pod in unschedulablePods goes through PreEnqueue (a gated pod
        stays parked), a pod in backoffQ goes to activeQ without it (SchedulerPopFromBackoffQ:
        it passed PreEnqueue on entering backoffQ). For a pod in flight ``ForceActivate`` is
        recorded with the pod as its object, so that when it fails
        (`add_unschedulable_if_not_present`) it goes to backoffQ, or activeQ once its backoff
        is over, rather than unschedulablePods. Pods in activeQ or unknown are ignored.

        Returns:
            the pods that went to activeQ.
        """
        moved = []
        for pod in pods:
            found = self._where.get(pod.key)
            if found is None:
                if pod.key in self._in_flight:
                    self._events.append((FORCE_ACTIVATE, None, pod))
                continue
            where, qpi = found
            if where == _ACTIVE:
                continue
            del self._where[pod.key]
            if where == _UNSCHEDULABLE:
                del self._unschedulable[pod.key]
                self._affinity_terms.pop(pod.key, None)
                self._move_to_active(qpi)
            else:
                self._counts[where] -= 1
                self._move_to_active(qpi, from_backoff=True)
            if self._where.get(pod.key, (None,))[0] == _ACTIVE:
                moved.append(qpi)
        return moved

    def update(self, old: Pod | None, new: Pod) -> None:
        """A pending pod changed (``Update``, SchedulerQueueingHints on).

        The change is the events `pod_scheduling_properties_change` gives. A pod in flight:
        the events are recorded for it (its failure then consults them) and nothing else
        happens. A pod in activeQ or backoffQ: updated where it is. A pod in
        unschedulablePods: updated, then the events are offered to its rejecting (or
        gating) plugins' hints in turn; the first that is worth requeuing moves it to
        backoffQ (activeQ when its backoff is over, or a Pending plugin queued it), else it
        stays parked. A pod not queued: added (PreEnqueue runs).
        """
        key = new.key
        events = pod_scheduling_properties_change(new, old if old is not None else new)
        if key in self._in_flight:
            for e in events:
                self._events.append((e, old, new))
            return
        found = self._where.get(key)
        if found is None:
            qpi = QueuedPodInfo(new, timestamp=self._clock(), seq=self._next_seq())
            self._activate_or_gate(qpi)
            return
        where, qpi = found
        if where == _ACTIVE:
            # re-sort: the heap order may depend on the pod (its priority)
            self._counts[_ACTIVE] -= 1
            fresh = attrs.evolve(qpi, pod=new)
            self._push_active(fresh)
            return
        if where in (_BACKOFF, _ERROR_BACKOFF):
            qpi.pod = new
            return
        qpi.pod = new
        self._affinity_terms.pop(key, None)
        for e in events:
            strategy = self._worth_requeuing(qpi, e, old, new)
            if strategy is QueueingStrategy.QueueSkip:
                continue
            del self._unschedulable[key]
            del self._where[key]
            self._requeue(qpi, strategy)
            return

    # ------------------------------------------------------------------ events and time

    def move_all_to_active_or_backoff(
        self,
        event: ClusterEvent,
        old_obj: object = None,
        new_obj: object = None,
        pre_check: Callable[[Pod], bool] | None = None,
    ) -> list[QueuedPodInfo]:
        """A cluster event happened (``MoveAllToActiveOrBackoffQueue``): move every
        unschedulable pod it may help to activeQ or backoffQ.

        Args:
            event: what happened (`schedsim.framework.events`, e.g. ``ASSIGNED_POD_DELETE``).
            old_obj: the object before (None for an Add).
            new_obj: the object after (None for a Delete).
            pre_check: only pods for which it returns True are considered (upstream's
                PreEnqueueCheck; e.g. not the pod whose binding just failed).

        Returns:
            the pods moved, in the order they were parked. The event is also recorded for the
            pods in flight (see `add_unschedulable_if_not_present`).
        """
        return self._move(
            event,
            old_obj,
            new_obj,
            None if pre_check is None else (lambda qpi: pre_check(qpi.pod)),
        )

    def assigned_pod_added(self, pod: Pod) -> list[QueuedPodInfo]:
        """A pod was bound to a node (``AssignedPodAdded``): ``AssignedPodAdd`` for the
        parked pods it may help across nodes (see the module docstring), not all of them:
        a pod event does not help a pod rejected by a single-node requirement.

        Returns:
            the pods moved, in the order they were parked.
        """
        return self._move(ASSIGNED_POD_ADD, None, pod, self._cross_topology(pod))

    def assigned_pod_updated(self, old: Pod, new: Pod, event: ClusterEvent) -> list[QueuedPodInfo]:
        """A bound pod changed (``AssignedPodUpdated``; ``event``: e.g. ``AssignedPod
        UpdatePodLabel``): a scale-down is offered to every parked pod (it frees resources
        on the node), any other change only to the pods it may help across nodes.

        Returns:
            the pods moved, in the order they were parked.
        """
        if _POD_SCALE_DOWN.match(event):
            return self._move(event, old, new, None)
        return self._move(event, old, new, self._cross_topology(new))

    def _cross_topology(self, pod: Pod) -> Callable[[QueuedPodInfo], bool]:
        """``getUnschedulablePodsWithCrossTopologyTerm``: whether a parked pod may be helped
        by ``pod``: PodTopologySpread rejected it in ``pod``'s namespace, or one of its
        required pod-affinity terms selects ``pod``."""
        get = self._namespace_labels
        ns_labels = get(pod.namespace) if get is not None else None

        def accept(qpi: QueuedPodInfo) -> bool:
            if _POD_TOPOLOGY_SPREAD in qpi.unschedulable_plugins:
                if qpi.pod.namespace == pod.namespace:
                    return True
            return any(t.matches(pod, ns_labels) for t in self._terms(qpi.pod))

        return accept

    def _terms(self, pod: Pod) -> tuple[AffinityTerm, ...]:
        """The pod's required pod-affinity terms, computed once per pod."""
        if pod.affinity is None:
            return ()
        hit = self._affinity_terms.get(pod.key)
        if hit is not None and hit[0] is pod:
            return hit[1]
        terms = PodInfo(pod).required_affinity_terms
        self._affinity_terms[pod.key] = (pod, terms)
        return terms

    def _move(
        self,
        event: ClusterEvent,
        old_obj: object,
        new_obj: object,
        accept: Callable[[QueuedPodInfo], bool] | None,
    ) -> list[QueuedPodInfo]:
        """``movePodsToActiveOrBackoffQueue`` over the parked pods ``accept`` admits (all
        when None); the event is recorded for the pods in flight either way."""
        if not self._event_of_interest(event):
            return []  # upstream: isEventOfInterest (not recorded for in-flight pods either)
        if self._in_flight:
            self._events.append((event, old_obj, new_obj))
        moved = []
        for qpi in list(self._unschedulable.values()):
            if accept is not None and not accept(qpi):
                continue
            strategy = self._worth_requeuing(qpi, event, old_obj, new_obj)
            if strategy is QueueingStrategy.QueueSkip:
                continue
            del self._unschedulable[qpi.key]
            del self._where[qpi.key]
            self._affinity_terms.pop(qpi.key, None)
            self._requeue(qpi, strategy)
            moved.append(qpi)
        return moved

    def flush_backoff_completed(self, now: float | None = None) -> None:
        """Move the pods whose backoff is over (at ``now``, default the clock's time) to
        activeQ (``flushBackoffQCompleted``), error backoffs included."""
        t = self._clock() if now is None else now
        for heap, where in ((self._backoff, _BACKOFF), (self._error_backoff, _ERROR_BACKOFF)):
            while True:
                qpi = self._peek_timed(heap, where)
                if qpi is None or self.is_pod_backing_off(qpi, t):
                    break
                self._pop_heap_timed(heap, where)
                self._move_to_active(qpi, from_backoff=True)

    def flush_unschedulable_pods_left_over(self, now: float | None = None) -> list[QueuedPodInfo]:
        """Move the pods parked in unschedulablePods for longer than
        ``podMaxInUnschedulablePodsDuration`` (``flushUnschedulablePodsLeftover``, with the
        ``UnschedulableTimeout`` event).

        Returns:
            the pods moved.
        """
        t = self._clock() if now is None else now
        old = {
            q.key for q in self._unschedulable.values() if t - q.timestamp > self._max_unschedulable
        }
        if not old:
            return []
        return self.move_all_to_active_or_backoff(
            UNSCHEDULABLE_TIMEOUT, pre_check=lambda p: p.key in old
        )

    # ------------------------------------------------------------------ reading

    def backoff_duration(self, count: int) -> float:
        """Seconds of backoff after ``count`` failures (``calculateBackoffDuration`` of the
        pod's UnschedulableCount or ConsecutiveErrorsCount): 0 before any, then the initial
        backoff doubled per further failure, at most the maximum."""
        if count <= 0:
            return 0.0
        duration = self._initial
        for _ in range(1, count):
            if duration > self._max - duration:
                return self._max
            duration += duration
        return duration

    def is_pod_backing_off(self, qpi: QueuedPodInfo, now: float | None = None) -> bool:
        """Whether the pod's backoff is not over at ``now`` (default the clock's time):
        ``isPodBackingoff``, its expiry is not before the current ordering window
        (SchedulerPopFromBackoffQ; without it, not before ``now``). A pod that never failed
        does not back off."""
        if _backoff_count(qpi) == 0:
            return False
        t = self._clock() if now is None else now
        return qpi.backoff_expiration >= self._align(t)

    def _align(self, t: float) -> float:
        """``alignToWindow``: truncated to the 1 s ordering window with
        SchedulerPopFromBackoffQ, unchanged without."""
        if not self._pop_from_backoff:
            return t
        return math.floor(t / _ORDERING_WINDOW) * _ORDERING_WINDOW

    def next_backoff_expiration(self) -> float | None:
        """When the next backoff ends (seconds), or None when both backoff queues are empty:
        the time a caller driving the clock advances to when nothing is ready. That is the
        whole-second flush after the expiry (upstream flushes backoffQ once a second, on the
        ordering windows' boundaries with SchedulerPopFromBackoffQ), the first time the pod is
        no longer backing off."""
        times = [
            math.floor(q.backoff_expiration / _ORDERING_WINDOW) * _ORDERING_WINDOW
            + _ORDERING_WINDOW
            for heap, where in ((self._backoff, _BACKOFF), (self._error_backoff, _ERROR_BACKOFF))
            for q in (self._peek_timed(heap, where),)
            if q is not None
        ]
        return min(times, default=None)

    def pending_pods(self) -> list[QueuedPodInfo]:
        """Every queued pod (``PendingPods``): activeQ in pop order, then backoffQ and the error
        backoff queue by expiry, then unschedulablePods in the order they were parked. In-flight
        pods are not listed."""
        active = sorted(e for e in self._active if self._is_live(e[3], _ACTIVE))
        backoff = sorted(
            (
                e
                for e in self._backoff + self._error_backoff
                if self._is_live(e[3], _BACKOFF) or self._is_live(e[3], _ERROR_BACKOFF)
            ),
            key=lambda e: (e[0], e[2]),
        )
        return [e[3] for e in active] + [e[3] for e in backoff] + list(self._unschedulable.values())

    def summary(self) -> str:
        """Upstream's ``PendingPods`` summary: ``activeQ:N; backoffQ:N; unschedulablePods:N``
        (the error backoff queue counts in backoffQ)."""
        return (
            f"activeQ:{self.active_len}; backoffQ:{self.backoff_len}; "
            f"unschedulablePods:{self.unschedulable_len}"
        )

    @property
    def pod_max_in_unschedulable_pods_duration(self) -> float:
        """Seconds a pod stays parked before the flush moves it
        (``podMaxInUnschedulablePodsDuration``)."""
        return self._max_unschedulable

    @property
    def active_len(self) -> int:
        """Pods in activeQ."""
        return self._counts[_ACTIVE]

    @property
    def backoff_len(self) -> int:
        """Pods in backoffQ and the error backoff queue."""
        return self._counts[_BACKOFF] + self._counts[_ERROR_BACKOFF]

    @property
    def unschedulable_len(self) -> int:
        """Pods in unschedulablePods (gated pods included)."""
        return len(self._unschedulable)

    def unschedulable_pods(self) -> Iterator[QueuedPodInfo]:
        """The parked pods, in the order they were parked."""
        return iter(list(self._unschedulable.values()))

    def in_flight(self) -> tuple[str, ...]:
        """Keys of the pods popped and not `done` yet."""
        return tuple(self._in_flight)

    # ------------------------------------------------------------------ internals

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _is_live(self, qpi: QueuedPodInfo, where: str) -> bool:
        found = self._where.get(qpi.key)
        return found is not None and found[0] == where and found[1] is qpi

    def _pop_heap_active(self) -> QueuedPodInfo | None:
        heap = self._active
        while heap:
            qpi = heapq.heappop(heap)[3]
            if self._is_live(qpi, _ACTIVE):
                del self._where[qpi.key]
                self._counts[_ACTIVE] -= 1
                return qpi
        return None

    def _peek_timed(
        self, heap: list[tuple[float, Any, int, QueuedPodInfo]], where: str
    ) -> QueuedPodInfo | None:
        while heap:
            qpi = heap[0][3]
            if self._is_live(qpi, where):
                return qpi
            heapq.heappop(heap)
        return None

    def _pop_heap_timed(
        self, heap: list[tuple[float, Any, int, QueuedPodInfo]], where: str
    ) -> QueuedPodInfo | None:
        qpi = self._peek_timed(heap, where)
        if qpi is None:
            return None
        heapq.heappop(heap)
        del self._where[qpi.key]
        self._counts[where] -= 1
        return qpi

    def _push_active(self, qpi: QueuedPodInfo) -> None:
        self._where[qpi.key] = (_ACTIVE, qpi)
        self._counts[_ACTIVE] += 1
        key = self._key
        order = key(qpi) if key is not None else _Active(qpi, self._less)
        heapq.heappush(self._active, (order, qpi.seq, next(self._pushes), qpi))

    def _push_backoff(self, qpi: QueuedPodInfo) -> None:
        error = not qpi.unschedulable_plugins and not qpi.pending_plugins
        where = _ERROR_BACKOFF if error else _BACKOFF
        heap = self._error_backoff if error else self._backoff
        self._where[qpi.key] = (where, qpi)
        self._counts[where] += 1
        order: Any = 0
        if self._pop_from_backoff and not error:
            # lessBackoffCompletedWithPriority: a window's pods in activeQ's order
            key = self._key
            order = key(qpi) if key is not None else _Active(qpi, self._less)
        heapq.heappush(heap, (qpi.backoff_expiration, order, self._next_seq(), qpi))

    def _passes_pre_enqueue(self, qpi: QueuedPodInfo) -> bool:
        """``runPreEnqueuePlugins``: run the pod's PreEnqueue plugins and record the gating
        plugin (cleared when they all pass)."""
        if self._pre_enqueue is not None:
            st = self._pre_enqueue(qpi.pod)
            if not st.is_success:
                qpi.gating_plugin = st.plugin or "PreEnqueue"
                qpi.gating_status = st
                return False
        qpi.gating_plugin = ""
        qpi.gating_status = None
        return True

    def _park(self, qpi: QueuedPodInfo) -> None:
        self._unschedulable[qpi.key] = qpi
        self._where[qpi.key] = (_UNSCHEDULABLE, qpi)

    def _activate_or_gate(self, qpi: QueuedPodInfo) -> None:
        """PreEnqueue, then activeQ; a rejected pod is parked as gated."""
        if self._passes_pre_enqueue(qpi):
            self._push_active(qpi)
        else:
            self._park(qpi)

    def _move_to_active(self, qpi: QueuedPodInfo, *, from_backoff: bool = False) -> None:
        """``moveToActiveQ``: PreEnqueue runs again (a pod it now rejects is parked as
        gated), except for a pod coming straight from backoffQ with SchedulerPopFromBackoffQ
        (its PreEnqueue ran when it entered backoffQ)."""
        # the timestamp stays the one of the pod's last failure (PrioritySort's tie-break)
        if from_backoff and self._pop_from_backoff:
            self._push_active(qpi)
        else:
            self._activate_or_gate(qpi)

    def _move_to_backoff(self, qpi: QueuedPodInfo) -> None:
        """``moveToBackoffQ``: with SchedulerPopFromBackoffQ PreEnqueue runs on entering
        backoffQ (a pod it rejects is parked as gated instead); without, later, on leaving it."""
        if self._pop_from_backoff and not self._passes_pre_enqueue(qpi):
            self._park(qpi)
            return
        self._push_backoff(qpi)

    def _requeue(self, qpi: QueuedPodInfo, strategy: QueueingStrategy) -> None:
        """``requeuePodWithQueueingStrategy``."""
        if strategy is QueueingStrategy.QueueAfterBackoff and self.is_pod_backing_off(qpi):
            self._move_to_backoff(qpi)
            return
        self._move_to_active(qpi)

    def _event_of_interest(self, event: ClusterEvent) -> bool:
        """``isEventOfInterest``: a wildcard event, or one some profile's plugin registered
        (or a parked pod's profile has no registrations here: every event may move it)."""
        if event.is_wildcard:
            return True
        known = self._registered.get(event)  # (equal events match the same registrations)
        if known is None:
            known = self._registered[event] = any(
                r.event.match(event)
                for plugins in self._hints.values()
                for registered in plugins.values()
                for r in registered
            )
        if known:
            return True
        return any(q.pod.scheduler_name not in self._hints for q in self._unschedulable.values())

    def _hint_for_in_flight(self, qpi: QueuedPodInfo) -> QueueingStrategy:
        """``determineSchedulingHintForInFlightPod``."""
        if not qpi.unschedulable_plugins and not qpi.pending_plugins:
            return QueueingStrategy.QueueAfterBackoff  # an Error: always retried after backoff
        start = self._in_flight.get(qpi.key)
        if start is None:
            return QueueingStrategy.QueueSkip
        strategy = QueueingStrategy.QueueSkip
        for event, old, new in self._events[max(0, start - self._events_base) :]:
            s = self._worth_requeuing(qpi, event, old, new)
            if s is QueueingStrategy.QueueImmediately:
                return s
            if s is QueueingStrategy.QueueAfterBackoff:
                strategy = s
        return strategy

    def _worth_requeuing(
        self, qpi: QueuedPodInfo, event: ClusterEvent, old: object, new: object
    ) -> QueueingStrategy:
        """``isPodWorthRequeuing``: the strategy the pod's rejecting (or gating) plugins give
        the event."""
        if qpi.gated:
            rejectors = {qpi.gating_plugin}
        else:
            rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
        if not rejectors:
            return QueueingStrategy.QueueAfterBackoff
        if event.is_wildcard:
            # a wildcard event with a pod as its object concerns that pod only
            # (ForceActivate)
            if isinstance(new, Pod) and not _same_pod(new, qpi.pod):
                return QueueingStrategy.QueueSkip
            return QueueingStrategy.QueueAfterBackoff
        hints = self._hints.get(qpi.pod.scheduler_name)
        if hints is None:
            return QueueingStrategy.QueueAfterBackoff
        strategy = QueueingStrategy.QueueSkip
        for plugin in sorted(rejectors):
            for registered in hints.get(plugin, ()):
                if not registered.event.match(event):
                    continue
                hint = Hint.Queue
                if registered.hint is not None:
                    try:
                        hint = registered.hint(qpi.pod, old, new)
                    except PLUGIN_FAILURES:  # upstream: an erroring hint counts as Queue
                        hint = Hint.Queue
                if hint is not Hint.Queue:
                    continue
                if plugin in qpi.pending_plugins or qpi.gated:
                    return QueueingStrategy.QueueImmediately
                if not qpi.pending_plugins:
                    return QueueingStrategy.QueueAfterBackoff
                strategy = QueueingStrategy.QueueAfterBackoff
        return strategy
