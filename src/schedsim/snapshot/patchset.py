"""`PatchSet[K, V]`: a layered map with fork, commit and revert.

Mirrors CA ``simulator/common/patch.go`` and ``simulator/common/patchset.go`` (extracted from
the DRA snapshot in autoscaler PR #8090). The DRA snapshot keeps claims by (namespace, name),
slices by node name and device classes by name in one `PatchSet` each; the CSI snapshot keeps
CSINodes by name.

A `PatchSet` is a stack of `Patch` layers; each layer holds the keys set in it (``modified``)
and the keys deleted in it (``deleted``, tombstones). The effective value of a key is found by
walking the layers from the top: the first layer that sets the key gives its value, the first
layer that deletes it makes it absent. Only the top layer is ever written.

Values are stored as given and never copied: a value reachable from a lower layer is shared with
it, so callers copy on write (``in_current_patch`` tells whether a key's value already belongs to
the top layer, i.e. was written since the last fork).

Differences from CA, all deliberate:

* A `PatchSet` always holds at least one (base) patch, so CA's "fork first when there is no
  patch" rule in ``SetCurrent``/``DeleteCurrent`` never applies; `clear` leaves one empty base.
* `as_map` returns a cached, read-only, *live* view (a `types.MappingProxyType`) that set and
  delete keep in sync and revert repairs in place; CA builds a new map on every call and marks
  its cache out of sync on revert.
* `in_current_patch` is true for a key deleted in the top patch too (CA: set in it only).
"""

from __future__ import annotations

import enum
from collections.abc import Hashable, Mapping
from types import MappingProxyType
from typing import Final, Generic, TypeVar

__all__ = ["Patch", "PatchSet"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class _Absent(enum.Enum):
    ABSENT = enum.auto()  # "the key is absent" (also cached as such)


class _Uncached(enum.Enum):
    UNCACHED = enum.auto()  # the per-key cache knows nothing about the key


_ABSENT: Final = _Absent.ABSENT
_UNCACHED: Final = _Uncached.UNCACHED


class Patch(Generic[K, V]):
    """One layer of a `PatchSet`: keys set in it and keys deleted in it.

    A key is never both in ``modified`` and in ``deleted``. A deletion is recorded even for a key
    that no layer below holds (as in CA).

    Attributes:
        modified: Keys set in this layer and their values.
        deleted: Keys deleted in this layer.
    """

    __slots__ = ("deleted", "modified")

    def __init__(self, modified: Mapping[K, V] | None = None) -> None:
        """Creates a patch.

        Args:
            modified: Initial key/value pairs, copied into a new dict (the values are not copied).
        """
        self.modified: dict[K, V] = dict(modified) if modified is not None else {}
        self.deleted: set[K] = set()

    def set(self, key: K, value: V) -> None:
        """Records ``key`` as set to ``value`` in this layer (dropping a deletion of it)."""
        self.modified[key] = value
        self.deleted.discard(key)

    def delete(self, key: K) -> None:
        """Records ``key`` as deleted in this layer (dropping a value set for it)."""
        self.modified.pop(key, None)
        self.deleted.add(key)

    def merge(self, above: Patch[K, V]) -> None:
        """Applies ``above`` (the layer on top of this one) to this layer in place.

        Time: O(changes in ``above``).
        """
        modified, deleted = self.modified, self.deleted
        for key, value in above.modified.items():
            modified[key] = value
            deleted.discard(key)
        for key in above.deleted:
            modified.pop(key, None)
            deleted.add(key)


class PatchSet(Generic[K, V]):
    """A stack of `Patch` layers read as one map; mirrors CA ``common.PatchSet``.

    Complexity (N: number of patches, P: entries set or deleted in one patch, C: keys in the
    merged map):

    * fork: Time: O(1).
    * commit: Time: O(P) for the top patch; no-op with one patch.
    * revert: Time: O(P) for the top patch, O(N * P) while the `as_map` view exists (it is
      repaired in place); no-op with one patch.
    * find_value / get / in: Time: O(1) cached or while the `as_map` view exists, O(N) otherwise.
    * as_map: Time: O(N * P) on the first call (builds the view), O(1) afterwards.
    * set_current / delete_current / in_current_patch: Time: O(1).
    * revert_keys: Time: O(P).
    * clear: Time: O(1) (plus O(C) to empty an existing view).

    Caching: until `as_map` is first called, `find_value` caches what it computes (also "absent")
    in a per-key cache that set/delete update, fork and commit leave valid (effective values do
    not change) and revert invalidates for the popped patch's keys only (as in CA). Once built,
    the `as_map` dict holds the whole merged state and serves every lookup; set/delete update it
    and revert repairs the popped patch's keys in it, so it is never rebuilt.
    """

    __slots__ = ("_cache", "_map", "_patches", "_view")

    def __init__(self, base: Mapping[K, V] | None = None) -> None:
        """Creates a patch set holding one base patch.

        Args:
            base: Initial contents of the base patch, copied into a new dict (values are stored
                as given, not copied).
        """
        self._patches: list[Patch[K, V]] = [Patch(base)]
        self._cache: dict[K, V | _Absent] = {}
        self._map: dict[K, V] | None = None
        self._view: MappingProxyType[K, V] | None = None

    @classmethod
    def adopting(cls, base: dict[K, V]) -> PatchSet[K, V]:
        """A patch set whose base patch *is* ``base`` (no copy): the caller hands the dict
        over and must not use it afterwards. For snapshots built from a dict made for them
        (CA's ``NewSnapshot`` also uses the given maps as the base patch). Time: O(1)."""
        ps: PatchSet[K, V] = cls()
        ps._patches[0].modified = base
        return ps

    @property
    def depth(self) -> int:
        """Number of forks not yet committed or reverted (number of patches - 1)."""
        return len(self._patches) - 1

    def fork(self) -> None:
        """Pushes an empty patch; later writes go into it. Time: O(1)."""
        self._patches.append(Patch())

    def commit(self) -> None:
        """Merges the top patch into the one below it. No-op with one patch. Time: O(P)."""
        patches = self._patches
        if len(patches) > 1:
            patches[-2].merge(patches.pop())

    def revert(self) -> None:
        """Drops the top patch and everything written into it. No-op with one patch.

        Time: O(P), or O(N * P) while the `as_map` view exists.
        """
        patches = self._patches
        if len(patches) == 1:
            return
        top = patches.pop()
        m = self._map
        if m is None:
            cache = self._cache
            for key in top.modified:
                cache.pop(key, None)
            for key in top.deleted:
                cache.pop(key, None)
            return
        for keys in (top.modified, top.deleted):
            for key in keys:
                value = self._walk(key)
                if value is _ABSENT:
                    m.pop(key, None)
                else:
                    m[key] = value

    def revert_keys(self) -> list[K]:
        """The keys whose visible value `revert` may change now: those set or deleted in the
        top patch (none when not forked). For change journals
        (`schedsim.snapshot.change_journal`). Time: O(P)."""
        patches = self._patches
        if len(patches) == 1:
            return []
        top = patches[-1]
        return [*top.modified, *top.deleted]

    def clear(self) -> None:
        """Drops every patch and all contents, leaving one empty base patch.

        Time: O(1), plus O(C) to empty the `as_map` view if it exists.
        """
        self._patches = [Patch()]
        self._cache = {}
        if self._map is not None:
            self._map.clear()  # keeps a view handed out by as_map live (and now empty)

    def set_current(self, key: K, value: V) -> None:
        """Sets ``key`` to ``value`` in the top patch. Time: O(1).

        CA forks first when there is no patch; here there is always at least the base patch.

        Args:
            key: The key.
            value: Stored as given (not copied).
        """
        self._patches[-1].set(key, value)
        m = self._map
        if m is not None:
            m[key] = value
        else:
            self._cache[key] = value

    def delete_current(self, key: K) -> None:
        """Deletes ``key`` in the top patch; a no-op for reads if it is absent. Time: O(1).

        The deletion is recorded in the top patch even when no layer holds the key (as in CA).

        Args:
            key: The key.
        """
        self._patches[-1].delete(key)
        m = self._map
        if m is not None:
            m.pop(key, None)
        else:
            self._cache[key] = _ABSENT

    def in_current_patch(self, key: K) -> bool:
        """Tells whether the top patch sets or deletes ``key``. Time: O(1).

        A value set in the top patch belongs to it (it was written since the last fork), so a
        caller may change it in place without affecting the layers below.

        Args:
            key: The key.

        Returns:
            True if ``key`` was set or deleted in the top patch.
        """
        top = self._patches[-1]
        return key in top.modified or key in top.deleted

    def find_value(self, key: K) -> V | None:
        """Returns the effective value of ``key``, or None if it is absent.

        Time: O(1) cached or while the `as_map` view exists, else O(N) (the result is cached).

        Args:
            key: The key.

        Returns:
            The value from the topmost patch that sets ``key``, or None when no patch sets it or
            a patch above the one setting it deletes it.
        """
        m = self._map
        if m is not None:
            return m.get(key)
        value = self._lookup(key)
        return None if value is _ABSENT else value

    def get(self, key: K, default: V | None = None) -> V | None:
        """Like `find_value`, returning ``default`` when ``key`` is absent."""
        m = self._map
        if m is not None:
            return m.get(key, default)
        value = self._lookup(key)
        return default if value is _ABSENT else value

    def __contains__(self, key: K) -> bool:
        """Tells whether ``key`` is present (`find_value` would find it)."""
        m = self._map
        if m is not None:
            return key in m
        return self._lookup(key) is not _ABSENT

    def as_map(self) -> Mapping[K, V]:
        """Returns the merged state of all patches as a read-only mapping.

        The mapping is cached and *live*: the same object is returned every time, and it follows
        every later set/delete/revert/clear (CA returns a new map per call). Copy it
        (``dict(...)``) to keep a snapshot, and do not add or delete keys while iterating it.

        Time: O(1) once built; O(N * P) to build it the first time.

        Returns:
            A read-only view of every present key and its value.
        """
        view = self._view
        if view is not None:
            return view
        patches = self._patches
        m = dict(patches[0].modified)  # base tombstones hide nothing
        for patch in patches[1:]:
            m.update(patch.modified)
            for key in patch.deleted:
                m.pop(key, None)
        self._map = m
        self._cache = {}  # superseded by the map
        self._view = view = MappingProxyType(m)
        return view

    def _lookup(self, key: K) -> V | _Absent:
        """Effective value of ``key`` (or ``_ABSENT``) through the per-key cache."""
        cache = self._cache
        value = cache.get(key, _UNCACHED)
        if value is _UNCACHED:
            value = cache[key] = self._walk(key)
        return value

    def _walk(self, key: K) -> V | _Absent:
        """Effective value of ``key`` (or ``_ABSENT``) from the patches, top to bottom."""
        for patch in reversed(self._patches):
            value = patch.modified.get(key, _ABSENT)
            if value is not _ABSENT:
                return value
            if key in patch.deleted:
                return _ABSENT
        return _ABSENT
