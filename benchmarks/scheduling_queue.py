"""The scheduling queue's own cost: SchedulingQueue against a plain sort.

Run: ``python benchmarks/scheduling_queue.py [--pods 7064] [--repeat 3]``

``--pods`` pending pods of seven priorities go through a `SchedulingQueue` with the default
profile's PrioritySort and PreEnqueue plugins (add every pod, then pop each and mark it done:
what one `simulate` pass does per pod besides scheduling it), and, as the baseline, through
``queue_order`` (the sort `simulate` used before the queue). A third run parks every pod as
unschedulable after its pop and then sends one ``AssignedPodDelete`` event, which moves them
all back (the cost of an event over the unschedulable pods). Best of ``--repeat``; the ratios
come from one run.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from schedsim.api.core import Pod
from schedsim.framework import Framework, Handle, default_profile
from schedsim.framework.events import ASSIGNED_POD_DELETE
from schedsim.scheduler.clock import LogicalClock
from schedsim.scheduler.queue import SchedulingQueue
from schedsim.scheduler.scheduling import queue_order
from schedsim.testing.snapshot_conformance import make_pod


def _best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pods", type=int, default=7064)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    pods: list[Pod] = [make_pod(f"p{i}", priority=i % 7) for i in range(args.pods)]
    fw = Framework(default_profile(), Handle())
    hints = {"default-scheduler": fw.events_to_register()}

    def queue() -> SchedulingQueue:
        return SchedulingQueue(
            fw.queue_sort_less(),
            clock=LogicalClock(),
            queueing_hints=hints,
            pre_enqueue=fw.run_pre_enqueue_plugins,
        )

    def through_queue() -> None:
        q = queue()
        for p in pods:
            q.add(p)
        while (qpi := q.pop()) is not None:
            q.done(qpi.pod)

    def park_and_move() -> None:
        q = queue()
        for p in pods:
            q.add(p)
        while (qpi := q.pop()) is not None:
            q.add_unschedulable_if_not_present(qpi, ("NodeResourcesFit",))
            q.done(qpi.pod)
        moved = q.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, pods[0], None)
        assert len(moved) == len(pods)

    sort = _best(lambda: queue_order(pods), args.repeat)
    full = _best(through_queue, args.repeat)
    event = _best(park_and_move, args.repeat)
    n = len(pods)
    print(f"{n} pods, best of {args.repeat}")
    for label, t in (
        ("queue_order sort", sort),
        ("queue add+pop+done", full),
        ("+ park all, one event", event),
    ):
        print(f"{label:<24} {t * 1e3:8.1f} ms  {t / sort:5.1f}x  {t / n * 1e6:6.1f} us/pod")


if __name__ == "__main__":
    main()
