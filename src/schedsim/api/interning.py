"""Shared immutable parts of decoded objects: equal maps and tuples stored once.

Pods of one template (a Deployment's, a Job's, a generated benchmark's) carry equal labels,
requests, tolerations and containers. Decoding makes a new dict, tuple and `Container` for
each pod; the decoders pass them through `shared_map` / `shared` so that the pods hold one
object per distinct value instead. Empty maps, the most common value of all (annotations,
node selectors, limits, overhead), are the one `EMPTY_MAP`.

Sharing is safe because API objects never change after decoding (`attrs.frozen`; their maps
are read-only `Mapping`s by contract: no code path writes into an object's map). Two equal
maps that differ in iteration order are not shared (the key keeps the order), so every
object iterates its maps in the order of its manifest, as before.

The tables are bounded: each holds at most `TABLE_LIMIT` distinct values and is emptied when
full, so a file of all-distinct values (every pod's own labels) costs a constant, not a
table entry per pod. Values already handed out stay valid (they are ordinary objects); only
later sharing with them is lost.

Cost: one tuple built and one dict lookup per shared value at decoding; no cost afterwards.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from itertools import chain
from typing import Any, TypeVar

__all__ = ["EMPTY_MAP", "TABLE_LIMIT", "changed_shared_maps", "shared", "shared_map"]

_K = TypeVar("_K")
_V = TypeVar("_V")
_T = TypeVar("_T")

TABLE_LIMIT = 4096
"""Distinct values kept per table before it is emptied."""

EMPTY_MAP: dict[Any, Any] = {}
"""The empty map every decoded object shares. Never written to."""

_maps: dict[tuple[Any, ...], Mapping[Any, Any]] = {}
_values: dict[Hashable, Any] = {}


def shared_map(m: Mapping[_K, _V]) -> Mapping[_K, _V]:
    """The stored map equal to ``m`` with the same key order (``m`` itself the first time);
    `EMPTY_MAP` when ``m`` is empty. ``m``'s keys and values must be hashable (strings,
    quantities); the caller must not modify ``m`` afterwards."""
    if not m:
        return EMPTY_MAP
    key = tuple(chain.from_iterable(m.items()))
    found = _maps.get(key)
    if found is not None:
        return found  # equal key, equal map of the same types
    if len(_maps) >= TABLE_LIMIT:
        _maps.clear()
    _maps[key] = m
    return m


def shared(key: Hashable, value: _T) -> _T:
    """The value stored under ``key``, or ``value`` stored under it the first time.

    ``key`` must determine ``value`` completely (equal keys: equal, interchangeable values),
    e.g. the value itself when it is hashable (a tuple of frozen tolerations) or the fields
    of a frozen object that holds maps.
    """
    found = _values.get(key)
    if found is not None:
        return found  # type: ignore[no-any-return]
    if len(_values) >= TABLE_LIMIT:
        _values.clear()
    _values[key] = value
    return value


def changed_shared_maps() -> list[Mapping[Any, Any]]:
    """The stored maps whose contents no longer match what they were stored with (someone
    wrote into an object's map: a bug that would change every object sharing it), the empty
    map included. For tests; O(stored entries)."""
    changed: list[Mapping[Any, Any]] = [EMPTY_MAP] if EMPTY_MAP else []
    for key, m in _maps.items():
        if tuple(chain.from_iterable(m.items())) != key:
            changed.append(m)
    return changed
