"""Per-plugin timing of the extension points (``schedsim simulate --profile-plugins``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = ["PluginTimings"]


class PluginTimings:
    """Time spent per (plugin, extension point), filled when a Framework is built with it
    (``schedsim simulate --profile-plugins``); without it the chains are not wrapped.

    Attributes:
        calls: (plugin, point) -> number of calls.
        nanoseconds: (plugin, point) -> total time in ns.
    """

    def __init__(self) -> None:
        self.calls: dict[tuple[str, str], int] = {}
        self.nanoseconds: dict[tuple[str, str], int] = {}

    def wrap(self, plugin: str, point: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` timed with ``time.perf_counter_ns``."""
        key = (plugin, point)
        self.calls.setdefault(key, 0)
        self.nanoseconds.setdefault(key, 0)
        clock = time.perf_counter_ns

        def timed(*args: Any) -> Any:
            start = clock()
            try:
                return fn(*args)
            finally:
                self.nanoseconds[key] += clock() - start
                self.calls[key] += 1

        return timed
