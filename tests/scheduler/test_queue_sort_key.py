"""The activeQ heap orders pods by a QueueSort key when the ``Less`` declares one
(`schedsim.framework.queued_pod_info.sorts_by`): the pop order must be exactly the one
``Less`` gives (PrioritySort's: higher priority first, then earlier queue timestamp, as
pkg/scheduler/framework/plugins/queuesort/priority_sort.go), insertion order for pods still
equal, with pods failing and coming back with new timestamps in between."""

from __future__ import annotations

import random

import pytest

from schedsim.framework import Framework, Handle, default_profile
from schedsim.framework.queued_pod_info import (
    QueuedPodInfo,
    priority_sort_key,
    queue_sort_key,
)
from schedsim.framework.runtime import default_queue_sort_less
from schedsim.scheduler.clock import LogicalClock
from schedsim.scheduler.queue import SchedulingQueue
from schedsim.testing.snapshot_conformance import make_pod

HINTS = {"default-scheduler": Framework(default_profile(), Handle()).events_to_register()}


def test_prioritysort_and_default_less_declare_the_priority_key() -> None:
    """The in-tree PrioritySort plugin's Less (as the framework hands it to the queue) and
    the default Less both carry `priority_sort_key`; a plain function carries none."""
    less = Framework(default_profile(), Handle()).queue_sort_less()
    assert queue_sort_key(less) is priority_sort_key
    assert queue_sort_key(default_queue_sort_less) is priority_sort_key
    assert queue_sort_key(lambda a, b: False) is None


def test_key_order_is_less_order() -> None:
    """For every pair of pods, less(a, b) == key(a) < key(b)."""
    rng = random.Random(7)
    infos = [
        QueuedPodInfo(
            make_pod(f"p{i}", priority=rng.choice([-5, 0, 0, 3, 1000])), rng.randint(0, 3)
        )
        for i in range(40)
    ]
    for a in infos:
        for b in infos:
            assert default_queue_sort_less(a, b) == (priority_sort_key(a) < priority_sort_key(b))


@pytest.mark.parametrize("seed", range(5))
def test_pop_order_with_key_equals_pop_order_with_less(seed: int) -> None:
    """The same random run of adds, pops, failures (new timestamps, back through backoff)
    and deletions on a queue ordering by the key and on one calling Less (wrapped, so it
    carries no key): the same pods pop in the same order."""

    def run(less: object) -> list[str]:
        rng = random.Random(seed)
        clock = LogicalClock()
        q = SchedulingQueue(less, clock=clock, queueing_hints=HINTS)  # type: ignore[arg-type]
        pods = [make_pod(f"p{i}", priority=rng.choice([0, 0, 1, 5])) for i in range(30)]
        popped: list[str] = []
        for pod in pods:
            q.add(pod)
            if rng.random() < 0.3:
                clock.step(rng.choice([0, 1]))
        deleted: list[object] = []
        for _ in range(200):
            r = rng.random()
            if r < 0.1:
                pod = pods[rng.randrange(len(pods))]
                if pod.key not in q.in_flight() and pod not in deleted:
                    q.delete(pod)
                    deleted.append(pod)
                continue
            if r < 0.15 and deleted:  # back under the same name: a new queue entry
                q.add(deleted.pop())  # type: ignore[arg-type]
                continue
            clock.step(rng.choice([0, 0.5, 3]))
            qpi = q.pop()
            if qpi is None:
                clock.step(20)
                continue
            popped.append(qpi.pod.name)
            if rng.random() < 0.5:
                q.add_unschedulable_if_not_present(qpi, ("NodeResourcesFit",))
            q.done(qpi.pod)
            if rng.random() < 0.3:
                q.flush_unschedulable_pods_left_over(clock() + 1000)
        return popped

    keyed = run(default_queue_sort_less)
    called = run(lambda a, b: default_queue_sort_less(a, b))
    assert len(keyed) > 30
    assert keyed == called
