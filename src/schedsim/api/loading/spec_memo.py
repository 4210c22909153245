"""Values derived from a parsed manifest subtree, computed once per distinct subtree text.

Manifests repeat themselves: a generated or exported file holds thousands of pods whose
``spec`` is the same template (the GCDA benchmark: 7,064 pods of ten specs). Decoding a pod
spec and applying the API server's rules to it are pure functions of the spec (plus, for
affinity, the pod's labels); `SpecMemo` lets the loader do each once per distinct spec of a
file.

A subtree is keyed by its ``repr``. For values parsed from YAML or JSON text
(`schedsim.api.loading.manifest_text.parse_text`: dicts with string keys, lists, strings, ints,
floats, booleans, None, and PyYAML's bytes, sets and pair lists for explicit tags) two
subtrees have the same ``repr`` exactly when they are equal, hold the same types and list
their keys in the same order, so a hit gives what computing again would give. Objects built
in Python may hold types whose ``repr`` says less (a ``Mapping`` class without one): the
memo is only for parsed text, which is why the loader, not the decoders, creates it. Only
successes are stored: a subtree whose computation raised is computed (and raises) again.

One memo lives for one file's decoding and is then dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar, cast

__all__ = ["SpecMemo"]

_T = TypeVar("_T")


class SpecMemo:
    """Per-file table of values computed from parsed subtrees (module docstring)."""

    __slots__ = ("_last", "_values")

    def __init__(self) -> None:
        self._values: dict[Hashable, Any] = {}
        # the subtree keyed last and its key: the decoder and the validator key the same
        # spec one after the other; the reference keeps its identity from being reused
        self._last: tuple[object, str] = (None, "None")

    def text(self, value: object) -> str:
        """``repr(value)``; the same string again for the non-empty subtree keyed just
        before (an empty one, e.g. a pending pod's ``status: {}``, is cheap to print and
        does not replace it)."""
        last, text = self._last
        if value is last:
            return text
        text = repr(value)
        if value:
            self._last = (value, text)
        return text

    def get(self, key: Hashable, compute: Callable[[], _T]) -> _T:
        """The value stored under ``key``, or ``compute()`` stored under it (a raising
        ``compute`` stores nothing). ``key`` must name what is computed and hold the texts
        (`text`) of everything ``compute`` reads; the value is shared, so read-only."""
        try:
            return cast(_T, self._values[key])
        except KeyError:
            value = self._values[key] = compute()
            return value
