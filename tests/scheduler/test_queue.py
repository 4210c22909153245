"""`schedsim.scheduler.queue.SchedulingQueue`: kube-scheduler 1.34's PriorityQueue
(pkg/scheduler/backend/queue/scheduling_queue_test.go, backoff_queue_test.go)."""

from __future__ import annotations

import attrs
import pytest

from schedsim.api.core import Pod
from schedsim.framework import Framework, Handle, default_profile
from schedsim.framework.events import (
    ASSIGNED_POD_ADD,
    ASSIGNED_POD_DELETE,
    NODE_ADD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    pod_scheduling_properties_change,
)
from schedsim.framework.queued_pod_info import QueuedPodInfo
from schedsim.framework.runtime import default_queue_sort_less
from schedsim.framework.status import Code, Status
from schedsim.scheduler.clock import LogicalClock
from schedsim.scheduler.queue import QueueingStrategy, SchedulingQueue
from schedsim.testing.snapshot_conformance import make_pod

FIT = "NodeResourcesFit"
HINTS = {"default-scheduler": Framework(default_profile(), Handle()).events_to_register()}


def _queue(clock: LogicalClock, **kw: object) -> SchedulingQueue:
    less = Framework(default_profile(), Handle()).queue_sort_less()
    return SchedulingQueue(less, clock=clock, queueing_hints=HINTS, **kw)  # type: ignore[arg-type]


def _park(q: SchedulingQueue, pod: Pod, rejectors: tuple[str, ...] = (FIT,)) -> QueuedPodInfo:
    """Add, pop and fail ``pod`` (the scheduler's path for an unschedulable pod)."""
    q.add(pod)
    qpi = q.pop()
    assert qpi is not None and qpi.pod is pod
    q.add_unschedulable_if_not_present(qpi, rejectors)
    q.done(pod)
    return qpi


def test_pop_in_priority_order_then_timestamp() -> None:
    """TestPriorityQueue_Add / TestPriorityQueue_Pop: highPriorityPodInfo pops before
    medPriorityPodInfo and unschedulablePodInfo; equal priorities go by queue timestamp
    (PrioritySort's Less)."""
    clock = LogicalClock()
    q = _queue(clock)
    low = make_pod("low", priority=1)
    q.add(low)
    clock.step(1)
    q.add(make_pod("mid-first", priority=50))
    clock.step(1)
    q.add(make_pod("high", priority=100))
    q.add(make_pod("mid-second", priority=50))
    order = [q.pop() for _ in range(4)]
    assert [o.pod.name for o in order if o is not None] == [
        "high",
        "mid-first",
        "mid-second",
        "low",
    ]
    assert q.pop() is None
    assert all(o is not None and o.attempts == 1 for o in order)


def test_prioritysort_less_is_priority_then_timestamp() -> None:
    """PrioritySort.Less (priority_sort_test.go): p1 > p2 wins; equal priority, the earlier
    timestamp wins."""
    fw = Framework(default_profile(), Handle())
    less = fw.queue_sort_less()
    assert fw.queue_sort_plugin_name == "PrioritySort"
    a = QueuedPodInfo(make_pod("a", priority=100), timestamp=5.0)
    b = QueuedPodInfo(make_pod("b", priority=1), timestamp=1.0)
    c = QueuedPodInfo(make_pod("c", priority=100), timestamp=6.0)
    assert less(a, b) and not less(b, a)
    assert less(a, c) and not less(c, a)
    assert default_queue_sort_less(a, c) and not default_queue_sort_less(b, a)


@pytest.mark.parametrize(
    ("attempts", "seconds"),
    [(0, 0.0), (1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (9, 10.0)],
)
def test_backoff_duration_doubles_up_to_the_maximum(attempts: int, seconds: float) -> None:
    """TestBackoffQueue_calculateBackoffDuration: initial 1 s, max 10 s; no attempt, no
    backoff; each further attempt doubles it, capped at the maximum."""
    assert _queue(LogicalClock()).backoff_duration(attempts) == seconds


def test_event_moves_pod_to_backoff_then_active_when_backoff_ends() -> None:
    """TestPriorityQueue_MoveAllToActiveOrBackoffQueue + TestPriorityQueue_flushBackoffQCompleted:
    a pod rejected by NodeResourcesFit at t=0 (1 rejection: 1 s backoff) moved by a pod delete at
    t=0.5 waits in backoffQ; without SchedulerPopFromBackoffQ it backs off while its expiry is
    not before now (1.34 isPodBackingoff: still at t=1), so a later flush moves it."""
    clock = LogicalClock()
    q = _queue(clock, pop_from_backoff_q=False)
    pod = make_pod("p")
    _park(q, pod)
    assert q.summary() == "activeQ:0; backoffQ:0; unschedulablePods:1"
    clock.advance_to(0.5)
    moved = q.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, make_pod("gone"), None)
    assert [m.pod for m in moved] == [pod]
    assert q.summary() == "activeQ:0; backoffQ:1; unschedulablePods:0"
    q.flush_backoff_completed(0.9)
    assert q.backoff_len == 1
    assert q.pop() is None  # without SchedulerPopFromBackoffQ, backoffQ is not popped
    clock.advance_to(1.0)
    assert q.pop() is None  # expiry 1.0 is not before now
    clock.advance_to(1.5)
    got = q.pop()
    assert got is not None and got.pod is pod and got.attempts == 2


def test_pop_from_backoff_q_when_active_is_empty() -> None:
    """SchedulerPopFromBackoffQ (beta, on in 1.34; TestPriorityQueue_Pop with the gate on): an
    empty activeQ pops the first pod of backoffQ, before its backoff ends. Expiries truncate to
    the 1 s ordering window (1.0 and 1.2 both to 1.0) and a window's pods are ordered as activeQ
    orders them (lessBackoffCompletedWithPriority: same priority, the older first); the backoff
    of the one left is over once the next window begins (2 s)."""
    clock = LogicalClock()
    q = _queue(clock)
    first, second = make_pod("first"), make_pod("second")
    _park(q, first)
    clock.advance_to(0.2)
    _park(q, second)
    q.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, make_pod("x"), None)
    assert q.backoff_len == 2
    got = q.pop()
    assert got is not None and got.pod is first
    assert q.next_backoff_expiration() == pytest.approx(2.0)
    assert q.is_pod_backing_off(q.pending_pods()[0], 1.9)
    assert not q.is_pod_backing_off(q.pending_pods()[0], 2.0)


def test_event_not_registered_by_the_rejector_does_not_move_the_pod() -> None:
    """TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint: NodeResourcesFit
    registers AssignedPod Delete and Node Add, not AssignedPod Add; a pod it rejected stays
    in unschedulablePods when a pod is bound and moves when a node is added."""
    clock = LogicalClock()
    q = _queue(clock)
    pod = make_pod("p")
    _park(q, pod)
    assert q.move_all_to_active_or_backoff(ASSIGNED_POD_ADD, None, make_pod("b")) == []
    assert q.unschedulable_len == 1
    assert [m.pod for m in q.move_all_to_active_or_backoff(NODE_ADD, None, object())] == [pod]


def test_pod_without_rejector_goes_to_error_backoff_and_is_not_popped_early() -> None:
    """An Error (no UnschedulablePlugins, no PendingPlugins) sends the pod to the error backoff
    queue (backoff_queue.go add), which SchedulerPopFromBackoffQ does not pop early."""
    clock = LogicalClock()
    q = _queue(clock)
    pod = make_pod("p")
    q.add(pod)
    qpi = q.pop()
    assert qpi is not None
    assert q.add_unschedulable_if_not_present(qpi, ()) is QueueingStrategy.QueueAfterBackoff
    q.done(pod)
    assert q.backoff_len == 1 and q.pop() is None
    clock.advance_to(1.0)
    assert q.pop() is None  # expiry 1.0 is in the current window (SchedulerPopFromBackoffQ)
    clock.advance_to(2.0)
    assert q.pop() is qpi


def test_backoff_grows_with_rejections_and_consecutive_errors() -> None:
    """1.34 backoff (kubernetes#128748, backoff_queue.go getBackoffTime): the backoff grows with
    the pod's UnschedulableCount, or with its ConsecutiveErrorsCount when it failed with Errors
    since its last rejection; a rejection resets the errors. Attempts do not count."""
    clock = LogicalClock()
    q = _queue(clock, pop_from_backoff_q=False)
    pod = make_pod("p")
    q.add(pod)
    backoffs = []
    for rejectors in ((FIT,), (FIT,), (FIT,), (), (), (FIT,)):
        qpi = q.pop()
        assert qpi is not None
        q.add_unschedulable_if_not_present(qpi, rejectors)
        q.done(pod)
        backoffs.append(qpi.backoff_expiration - qpi.timestamp)
        q.activate([pod])  # straight back to activeQ
    # rejections 1, 2, 3; errors 1, 2; rejection 4
    assert backoffs == [1.0, 2.0, 4.0, 1.0, 2.0, 8.0]


def test_in_flight_event_requeues_a_pod_that_then_fails() -> None:
    """Test_InFlightPods ("pod is enqueued to backoffQ because a matching event came while it
    was in flight"): a pod delete while the pod is being scheduled sends the pod, failing on
    NodeResourcesFit afterwards, to backoffQ instead of unschedulablePods."""
    clock = LogicalClock()
    q = _queue(clock)
    pod = make_pod("p")
    q.add(pod)
    qpi = q.pop()
    assert qpi is not None
    q.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, make_pod("victim"), None)
    assert q.add_unschedulable_if_not_present(qpi, (FIT,)) is QueueingStrategy.QueueAfterBackoff
    q.done(pod)
    assert q.backoff_len == 1 and q.unschedulable_len == 0


def test_hints_decide_and_an_erroring_hint_queues() -> None:
    """isPodWorthRequeuing: a hint answering QueueSkip keeps the pod; one that raises counts as
    Queue (upstream treats a hint error as Queue); a Pending plugin's Queue is
    queueImmediately."""
    clock = LogicalClock()
    ev = ClusterEvent(EventResource.Node, ActionType.Add)

    def skip(pod: Pod, old: object, new: object) -> QueueingHint:
        return QueueingHint.QueueSkip

    def boom(pod: Pod, old: object, new: object) -> QueueingHint:
        raise RuntimeError("x")

    hints = {
        "default-scheduler": {
            "Skip": (ClusterEventWithHint(ev, skip),),
            "Boom": (ClusterEventWithHint(ev, boom),),
        }
    }
    q = SchedulingQueue(default_queue_sort_less, clock=clock, queueing_hints=hints)
    a, b = make_pod("a"), make_pod("b")
    _park(q, a, ("Skip",))
    _park(q, b, ("Boom",))
    moved = q.move_all_to_active_or_backoff(NODE_ADD, None, object())
    assert [m.pod for m in moved] == [b]
    c = make_pod("c")
    q.add(c)
    qpi = q.pop()
    assert qpi is not None
    q.add_unschedulable_if_not_present(qpi, (), pending_plugins=("Boom",))
    q.done(c)
    q.move_all_to_active_or_backoff(NODE_ADD, None, object())
    assert q.pop() is qpi  # immediately, though its backoff (1 s) is not over


def test_pre_enqueue_gates_and_attempts_are_counted() -> None:
    """TestPriorityQueue_Add with PreEnqueue plugins (gated pods go to unschedulablePods with
    GatingPlugin set and are not popped); Pop increments Attempts."""
    clock = LogicalClock()

    def gate(pod: Pod) -> Status:
        if pod.name == "gated":
            return Status(Code.UnschedulableAndUnresolvable, ("waiting",), "Gate")
        return Status(Code.Success)

    q = SchedulingQueue(default_queue_sort_less, clock=clock, pre_enqueue=gate)
    gated = q.add(make_pod("gated"))
    assert gated.gated and gated.gating_status is not None
    assert gated.gating_status.message == "waiting"
    ok = make_pod("ok")
    q.add(ok)
    first = q.pop()
    assert first is not None and first.pod is ok and q.pop() is None
    q.add_unschedulable_if_not_present(first, ("Other",))
    q.done(ok)
    q.move_all_to_active_or_backoff(NODE_ADD, None, None)  # no hints: every event moves
    clock.advance_to(5)
    again = q.pop()
    assert again is first and again.attempts == 2
    assert [p.pod.name for p in q.pending_pods()] == ["gated"]
    with pytest.raises(ValueError, match="already in the scheduling queue"):
        q.add(make_pod("gated"))


def test_delete_and_leftover_flush() -> None:
    """TestPriorityQueue_Delete; flushUnschedulablePodsLeftover moves pods parked longer than
    podMaxInUnschedulablePodsDuration (5 min) whatever their rejector registered."""
    clock = LogicalClock()
    q = _queue(clock)
    a, b = make_pod("a"), make_pod("b")
    _park(q, a)
    clock.advance_to(100)
    _park(q, b)
    q.delete(b)
    assert q.unschedulable_len == 1
    clock.advance_to(301)
    assert [m.pod for m in q.flush_unschedulable_pods_left_over()] == [a]


def test_node_change_hints_of_in_tree_plugins() -> None:
    """The in-tree node-change hints (node_unschedulable.go, taint_toleration.go,
    node_affinity.go isSchedulableAfterNodeChange): an added node that cannot take the pod
    leaves it parked; one that can moves it."""
    from schedsim.framework.events import (
        node_affinity_hint,
        node_unschedulable_hint,
        taint_toleration_hint,
    )
    from schedsim.testing.snapshot_conformance import make_node

    queue_, skip = QueueingHint.Queue, QueueingHint.QueueSkip
    plain = make_node("plain", labels={"zone": "a"})
    cordoned = make_node("c", unschedulable=True)
    tainted = make_node("t", taints=[{"key": "gpu", "value": "x", "effect": "NoSchedule"}])
    pod = make_pod("p", node_selector={"zone": "a"})
    tolerant = make_pod("q", tolerations=[{"key": "gpu", "operator": "Exists"}])
    assert node_unschedulable_hint(pod, None, plain) is queue_
    assert node_unschedulable_hint(pod, None, cordoned) is skip
    assert node_unschedulable_hint(pod, cordoned, plain) is queue_
    assert node_unschedulable_hint(pod, plain, plain) is skip
    assert taint_toleration_hint(pod, None, tainted) is skip
    assert taint_toleration_hint(tolerant, None, tainted) is queue_
    assert node_affinity_hint(pod, None, plain) is queue_
    assert node_affinity_hint(pod, None, tainted) is skip


def test_added_node_the_pod_cannot_use_does_not_move_it() -> None:
    """TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint with a real hint: a
    pod rejected by TaintToleration stays parked when a node with the same taint is added and
    moves when an untainted node is."""
    from schedsim.testing.snapshot_conformance import make_node

    q = _queue(LogicalClock())
    pod = make_pod("p")
    _park(q, pod, ("TaintToleration",))
    tainted = make_node("t", taints=[{"key": "gpu", "value": "x", "effect": "NoSchedule"}])
    assert q.move_all_to_active_or_backoff(NODE_ADD, None, tainted) == []
    moved = q.move_all_to_active_or_backoff(NODE_ADD, None, make_node("free"))
    assert [m.pod for m in moved] == [pod]


# ---------------------------------------------------------------- Activate and Update

_OTHER = "otherPlugin"
_POD_UPDATE_HINTS = {
    "default-scheduler": {
        "queuePlugin": [
            ClusterEventWithHint(
                ClusterEvent(EventResource.UnscheduledPod, ActionType.Update),
                lambda pod, old, new: QueueingHint.Queue,
            )
        ],
        "skipPlugin": [
            ClusterEventWithHint(
                ClusterEvent(EventResource.UnscheduledPod, ActionType.Update),
                lambda pod, old, new: QueueingHint.QueueSkip,
            )
        ],
    }
}


def _hinted(clock: LogicalClock) -> SchedulingQueue:
    less = Framework(default_profile(), Handle()).queue_sort_less()
    return SchedulingQueue(less, clock=clock, queueing_hints=_POD_UPDATE_HINTS)


def test_activate_moves_parked_and_backing_off_pods_to_active() -> None:
    """TestPriorityQueue_Activate: a pod in unschedulablePods or backoffQ goes to activeQ;
    a pod in activeQ stays there; an unknown pod is ignored."""
    clock = LogicalClock()
    q = _hinted(clock)
    parked, backing, active = make_pod("parked"), make_pod("backing"), make_pod("active")
    _park(q, parked, ("queuePlugin",))
    q.add(backing)
    qpi = q.pop()
    assert qpi is not None
    q.add_unschedulable_if_not_present(qpi)  # an Error: error backoff
    q.done(backing)
    q.add(active)
    assert q.unschedulable_len == 1 and q.backoff_len == 1
    moved = q.activate([parked, backing, active, make_pod("unknown")])
    assert sorted(m.key for m in moved) == ["default/backing", "default/parked"]
    assert q.active_len == 3 and q.backoff_len == 0 and q.unschedulable_len == 0


def test_activate_in_flight_pod_requeues_it_on_failure() -> None:
    """TestPriorityQueue_Activate "pod not in unschedulablePods/backoffQ but in-flight":
    ForceActivate is recorded for it; Test_isPodWorthRequeuing's wildcard rows: the event
    requeues that pod (queueAfterBackoff) and not another in-flight pod."""
    clock = LogicalClock()
    q = _hinted(clock)
    a, b = make_pod("a"), make_pod("b")
    q.add(a)
    q.add(b)
    qa, qb = q.pop(), q.pop()
    assert qa is not None and qb is not None
    assert q.activate([a]) == []
    q.add_unschedulable_if_not_present(qa, ("skipPlugin",))
    q.done(a)
    q.add_unschedulable_if_not_present(qb, ("skipPlugin",))
    q.done(b)
    assert [p.key for p in q.unschedulable_pods()] == ["default/b"]
    assert q.backoff_len == 1  # a: still backing off (1 s after its first attempt)


def test_update_parked_pod_follows_its_hints() -> None:
    """TestPriorityQueue_Update: an annotation change (UpdatePodOther, a Pod Update) moves a
    pod rejected by a plugin whose hint queues to backoffQ while it backs off, to activeQ
    after; a QueueSkip hint leaves it parked; a pod not queued is added; a pod in flight is
    not queued."""
    clock = LogicalClock()
    q = _hinted(clock)
    pod = make_pod("p")
    _park(q, pod, ("queuePlugin",))
    q.update(pod, attrs.evolve(pod, annotations={"foo": "test"}))
    assert q.backoff_len == 1 and q.unschedulable_len == 0
    assert q.pending_pods()[0].pod.annotations == {"foo": "test"}

    q2 = _hinted(clock)
    _park(q2, pod, ("queuePlugin",))
    clock.step(10)
    q2.update(pod, attrs.evolve(pod, annotations={"foo": "test1"}))
    assert q2.active_len == 1

    q3 = _hinted(clock)
    _park(q3, pod, ("skipPlugin",))
    q3.update(pod, attrs.evolve(pod, annotations={"foo": "test1"}))
    assert q3.unschedulable_len == 1
    assert next(q3.unschedulable_pods()).pod.annotations == {"foo": "test1"}

    q4 = _hinted(clock)
    q4.update(pod, attrs.evolve(pod, annotations={"foo": "test"}))
    assert q4.active_len == 1

    q5 = _hinted(clock)
    q5.add(pod)
    assert q5.pop() is not None
    q5.update(pod, attrs.evolve(pod, annotations={"foo": "bar"}))
    assert q5.active_len == q5.backoff_len == q5.unschedulable_len == 0


def test_update_active_pod_resorts() -> None:
    """An update of a pod in activeQ replaces it there (activeQ's heap Update): a raised
    priority takes effect."""
    clock = LogicalClock()
    q = _hinted(clock)
    low, mid = make_pod("low", priority=1), make_pod("mid", priority=50)
    q.add(low)
    q.add(mid)
    q.update(low, attrs.evolve(low, priority=100))
    first = q.pop()
    assert first is not None and first.pod.name == "low" and first.pod.priority == 100
    assert q.active_len == 1


def test_pod_scheduling_properties_change() -> None:
    """framework.PodSchedulingPropertiesChange: a label change is UpdatePodLabel; an
    annotation change is UpdatePodOther; a bound pod's events are AssignedPod."""
    pod = make_pod("p")
    labelled = attrs.evolve(pod, labels={"a": "b"})
    assert pod_scheduling_properties_change(labelled, pod) == [
        ClusterEvent(EventResource.UnscheduledPod, ActionType.UpdatePodLabel)
    ]
    annotated = attrs.evolve(pod, annotations={"a": "b"})
    assert pod_scheduling_properties_change(annotated, pod) == [
        ClusterEvent(EventResource.UnscheduledPod, ActionType.UpdatePodOther)
    ]
    bound = attrs.evolve(pod, node_name="n1")
    assert pod_scheduling_properties_change(attrs.evolve(bound, labels={"a": "b"}), bound) == [
        ClusterEvent(EventResource.AssignedPod, ActionType.UpdatePodLabel)
    ]
