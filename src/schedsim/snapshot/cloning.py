"""`CloningMap[K, V]`: the map a snapshot used before patch sets: fork copies everything.

The simple reference design the patch-based `PatchSet` replaced (CA's DRA snapshot before
autoscaler PR #8090: ``Clone()`` deep-copied every ResourceClaim and copied the slice and
class maps). Same methods and semantics as `PatchSet`, so `DraSnapshot` runs on either and
both pass the same conformance tests; kept for differential tests and for the ScheduleRevert
benchmark that measures what the patches save.

Costs (n keys): fork O(n) (O(n x object size) with ``deep_copy``), commit O(1) (the parent
copy is dropped), revert O(1), reads and writes O(1).
"""

from __future__ import annotations

import copy
from collections.abc import Hashable, Mapping
from types import MappingProxyType
from typing import Generic, TypeVar

__all__ = ["CloningMap"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class CloningMap(Generic[K, V]):
    """A stack of full copies of a map; only the top one is read and written.

    Args:
        base: the initial contents (copied).
        deep_copy: fork deep-copies every value (``copy.deepcopy``), as CA's clone design did
            for ResourceClaims, which it mutated in place; False copies the map only.
    """

    __slots__ = ("_deep", "_stack")

    def __init__(self, base: Mapping[K, V] | None = None, *, deep_copy: bool = False) -> None:
        self._stack: list[dict[K, V]] = [dict(base or {})]
        self._deep = deep_copy

    @property
    def depth(self) -> int:
        """Number of forks not yet committed or reverted (0 when not forked), as `PatchSet`."""
        return len(self._stack) - 1

    def fork(self) -> None:
        """Push a copy of the top map. Time: O(n), deep: O(n x value size)."""
        top = self._stack[-1]
        self._stack.append(
            {k: copy.deepcopy(v) for k, v in top.items()} if self._deep else dict(top)
        )

    def commit(self) -> None:
        """Keep the top copy in place of the one below; no-op when not forked. Time: O(1)."""
        if len(self._stack) > 1:
            # pop first, then index: ``stack[-2] = stack.pop()`` pops before it indexes
            top = self._stack.pop()
            self._stack[-1] = top

    def revert(self) -> None:
        """Drop the top copy; no-op when not forked. Time: O(1)."""
        if len(self._stack) > 1:
            self._stack.pop()

    def revert_keys(self) -> list[K] | None:
        """None (unknown: `revert` brings back a whole copy) when forked, else no key; the
        counterpart of `PatchSet.revert_keys`. Time: O(1)."""
        return None if len(self._stack) > 1 else []

    def clear(self) -> None:
        """One empty map."""
        self._stack = [{}]

    def set_current(self, key: K, value: V) -> None:
        """Set ``key`` in the top map."""
        self._stack[-1][key] = value

    def delete_current(self, key: K) -> None:
        """Remove ``key`` from the top map (no-op when absent)."""
        self._stack[-1].pop(key, None)

    def in_current_patch(self, key: K) -> bool:
        """Always True: the top map is a private copy (whatever is read from it may be
        written in place)."""
        del key
        return True

    def find_value(self, key: K) -> V | None:
        """The value of ``key``, or None."""
        return self._stack[-1].get(key)

    def get(self, key: K, default: V | None = None) -> V | None:
        """The value of ``key``, or ``default``."""
        return self._stack[-1].get(key, default)

    def __contains__(self, key: K) -> bool:
        return key in self._stack[-1]

    def as_map(self) -> Mapping[K, V]:
        """A read-only live view of the top map."""
        return MappingProxyType(self._stack[-1])
