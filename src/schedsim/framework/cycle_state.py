"""Per-cycle plugin state: a typed stash, modelled on pytest's ``Stash``/``StashKey``.

PreFilter writes under its plugin's key, Filter reads it; nothing is cloned per node.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, cast

__all__ = ["CycleState", "StateKey"]

T = TypeVar("T")


class StateKey(Generic[T]):
    """A typed key; create one per plugin datum, at module level."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"StateKey({self.name!r})"


class CycleState:
    """State shared by the plugins during one scheduling attempt of one pod.

    Attributes:
        skip_filter_plugins: plugins whose PreFilter returned Skip; their Filter is not run.
        skip_score_plugins: plugins whose PreScore returned Skip; their Score and
            NormalizeScore are not run.
        skip_pre_bind_plugins: plugins whose PreBindPreFlight returned Skip.
    """

    __slots__ = ("_data", "skip_filter_plugins", "skip_pre_bind_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._data: dict[StateKey[Any], object] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.skip_pre_bind_plugins: set[str] = set()

    def clone(self) -> CycleState:
        """A copy for a dry run (preemption), mirroring ``CycleState.Clone`` upstream.

        Each stored value that has a ``clone()`` method is replaced by what it returns (as
        upstream clones every ``StateData``); other values are shared, so store immutable
        data or give it a ``clone()``. The skip sets are copied.
        """
        out = CycleState()
        data = out._data
        for key, value in self._data.items():
            clone = getattr(value, "clone", None)
            data[key] = clone() if callable(clone) else value
        out.skip_filter_plugins = set(self.skip_filter_plugins)
        out.skip_score_plugins = set(self.skip_score_plugins)
        out.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
        return out

    def __setitem__(self, key: StateKey[T], value: T) -> None:
        self._data[key] = value

    def __getitem__(self, key: StateKey[T]) -> T:
        """Read ``key``; raises KeyError naming the key if nothing was written."""
        try:
            return cast(T, self._data[key])
        except KeyError:
            raise KeyError(f"{key.name} not found in the cycle state") from None

    def get(self, key: StateKey[T], default: T | None = None) -> T | None:
        """Read ``key`` or return ``default``."""
        # no typing.cast: a Python call per read, and plugins read per node
        return self._data.get(key, default)  # type: ignore[return-value]

    def __contains__(self, key: StateKey[Any]) -> bool:
        return key in self._data
