"""The virtual clock and the event queue of a replay.

Time is a float of seconds since the trace's start (``t = 0``); nothing reads the wall clock.
Events are kept in a binary heap ordered by ``(time, kind order, sequence)``: at one instant
nodes become ready and pods complete before new pods arrive (so arrivals see the freed room),
and the Cluster Autoscaler's loop runs last; the sequence number (insertion order) breaks
the remaining ties, so the same input always replays in the same order.

Cost: `EventQueue.push` and `EventQueue.pop` are O(log events); `VirtualClock.advance` O(1).
"""

from __future__ import annotations

import enum
import heapq
import math
from typing import Final

import attrs

__all__ = ["Event", "EventKind", "EventQueue", "VirtualClock", "grid_time", "parse_duration"]


class EventKind(enum.IntEnum):
    """What happens at an instant; the value orders events of the same time."""

    NODE_READY = 0
    """A node the autoscaler asked for has finished provisioning and joins the cluster."""
    NODE_PROVISION_TIMEOUT = 1
    """A requested node is still not ready after ``max-node-provision-time``."""
    POD_COMPLETION = 2
    """A running pod finishes (its duration has elapsed since it was bound)."""
    POD_ARRIVAL = 3
    """A pod is created and enters the scheduling queue."""
    SAMPLE = 4
    """Metrics are sampled."""
    AUTOSCALER_LOOP = 5
    """The Cluster Autoscaler's ``RunOnce`` (every ``scan-interval``)."""
    RECORDED_CHANGE = 6
    """A change of a KWOK recording (`schedsim.replay.recording`): after the replay's own
    events of the instant, in recorded order."""
    JOB_SYNC = 7
    """The Job controller syncs a Job whose replacement pods waited for its pod failure
    backoff (the key is the Job's ``ns/name``)."""


@attrs.frozen(order=False)
class Event:
    """One scheduled event.

    Attributes:
        time: seconds since the trace's start.
        kind: what happens.
        key: what it happens to (a pod key ``ns/name``, a node name, "" for loops).
        token: a number the owner uses to recognise stale events (e.g. a pod's bind count:
            a completion scheduled for an earlier binding is ignored).
    """

    time: float
    kind: EventKind
    key: str = ""
    token: int = 0


class EventQueue:
    """Events in time order (see the module docstring for ties)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, int, Event]] = []
        self._seq = 0

    def push(self, event: Event) -> None:
        """Schedule ``event``. O(log n).

        Raises:
            ValueError: the time is negative or not finite.
        """
        if not 0.0 <= event.time < float("inf"):
            raise ValueError(f"event time must be finite and >= 0, got {event.time}")
        heapq.heappush(self._heap, (event.time, int(event.kind), self._seq, event))
        self._seq += 1

    def pop(self) -> Event:
        """The next event, removed. Raises IndexError when empty."""
        return heapq.heappop(self._heap)[3]

    def peek_time(self) -> float | None:
        """The time of the next event, or None when empty."""
        return self._heap[0][0] if self._heap else None

    def peek(self) -> Event:
        """The next event, left in place. Raises IndexError when empty."""
        return self._heap[0][3]

    def peek_kind(self) -> EventKind | None:
        """The kind of the next event, or None when empty."""
        return self._heap[0][3].kind if self._heap else None

    def __len__(self) -> int:
        return len(self._heap)


class VirtualClock:
    """The replay's clock: seconds since the trace's start, moved only by the event loop.

    Attributes:
        now: the current time (seconds).
    """

    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def advance(self, to: float) -> None:
        """Move to ``to``.

        Raises:
            ValueError: ``to`` is before `now` (time never goes back).
        """
        if to < self.now:
            raise ValueError(f"the clock cannot go back from {self.now} to {to}")
        self.now = to

    def __call__(self) -> float:
        """The current time (so the clock can be passed where a ``() -> float`` is wanted)."""
        return self.now


_UNITS_NS: Final = {
    "h": 3_600_000_000_000,
    "m": 60_000_000_000,
    "s": 1_000_000_000,
    "ms": 1_000_000,
    "us": 1_000,
    "\u00b5s": 1_000,
    "\u03bcs": 1_000,
    "ns": 1,
}
"""Go's time.ParseDuration units (its ``unitMap``), in nanoseconds."""


def grid_time(at: float, now: float, interval: float) -> float:
    """The first multiple of ``interval`` after ``now`` and at or after ``at`` (periodic
    work keeps its phase; instants where nothing can have changed are skipped); ``inf`` when
    ``at`` is."""
    if math.isinf(at):
        return math.inf
    k = max(math.floor(now / interval) + 1, math.ceil(at / interval - 1e-9))
    return k * interval


def parse_duration(text: str) -> float:
    """Seconds in a Go duration (``90s``, ``10m``, ``1h30m``, ``1.5h``, ``250ms``; every unit
    of time.ParseDuration: ``ns``, ``us``/``µs``, ``ms``, ``s``, ``m``, ``h``), as CA's
    duration flags and the trace annotation take it. As ParseDuration, a number needs a unit
    (``10`` is ``missing unit in duration``), except ``0`` (``+0``, ``-0``).

    Raises:
        ValueError: not a duration (the message quotes the text), a number without a unit,
            or longer than Go's time.Duration allows; negative values are returned as such
            (callers decide whether they are allowed).
    """
    s = text
    if s != s.strip():  # Go's ParseDuration takes no surrounding space
        raise ValueError(f"invalid duration {text!r} (expected e.g. 90s, 10m, 1h30m)")
    sign = 1.0
    if s[:1] and s[0] in "+-":
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    if s == "0":  # ParseDuration's special case
        return 0.0
    # Whole nanoseconds, as Go's time.Duration: each component's fraction is truncated to
    # the nanosecond and the sum is checked exactly against int64 (a float total cannot
    # tell 2^63 ns from 2^63 - 1 ns).
    total_ns, i, seen = 0, 0, False
    while i < len(s):
        j = i
        while j < len(s) and (s[j].isdigit() or s[j] == "."):
            j += 1
        k = j
        while k < len(s) and s[k].isalpha():
            k += 1
        number, unit = s[i:j], s[i:k][len(s[i:j]) :]
        whole, _, frac = number.partition(".")
        if number and not unit and k == len(s) and (whole + frac).isdigit():
            raise ValueError(  # ParseDuration: "time: missing unit in duration"
                f"invalid duration {text!r}: missing unit, as in Go's time.ParseDuration "
                "(give every number a unit: ns, us, ms, s, m or h, e.g. 90s)"
            )
        if (
            not number
            or unit not in _UNITS_NS
            or number.count(".") > 1
            or not (whole or frac)
            or not (whole + frac).isdigit()
            or not (whole + frac).isascii()
        ):
            raise ValueError(f"invalid duration {text!r} (expected e.g. 90s, 10m, 1h30m)")
        scale = _UNITS_NS[unit]
        total_ns += int(whole or "0") * scale
        if frac:
            total_ns += int(frac) * scale // 10 ** len(frac)
        seen = True
        i = k
    if not seen:
        raise ValueError(f"invalid duration {text!r} (expected e.g. 90s, 10m, 1h30m)")
    # ParseDuration: at most 2^63 - 1 ns, or 2^63 ns negated (the int64 minimum)
    if total_ns > (2**63 if sign < 0 else 2**63 - 1):
        raise ValueError(f"invalid duration {text!r}: out of range (at most 2562047h)")
    return sign * total_ns / 1e9

