"""`LogicalClock`: the virtual clock a simulation's queue and Permit timeouts read.

kube-scheduler reads wall time (``k8s.io/utils/clock``); a simulation reads this instead, so
the same input gives the same output. Every time the queue or the binding cycle needs goes
through one clock object (pytest's ``_pytest/timing.py`` habit); the replay drives its own.
"""

from __future__ import annotations

__all__ = ["LogicalClock"]


class LogicalClock:
    """Seconds that pass only when told to.

    Args:
        start: the initial time (seconds).

    Call it (``clock()``) for the time: it is the ``Callable[[], float]`` the queue takes.
    """

    __slots__ = ("_now",)

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)

    def __call__(self) -> float:
        return self._now

    def advance_to(self, t: float) -> None:
        """Move to ``t`` (seconds); a time in the past leaves the clock where it is (time never
        runs backwards)."""
        if t > self._now:
            self._now = float(t)

    def step(self, seconds: float) -> None:
        """Move ``seconds`` forward.

        Raises:
            ValueError: ``seconds`` is negative.
        """
        if seconds < 0:
            raise ValueError(f"a clock does not go back: step({seconds})")
        self._now += seconds
