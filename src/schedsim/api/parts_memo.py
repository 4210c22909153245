"""Values derived from parts of a pod, shared between the pods holding the same parts.

The decoders share equal parts between objects (`schedsim.api.interning`: a template's pods
hold one containers tuple, one overhead map, one labels map...). A value computed from such
parts alone (the request vector of the containers, the scheduler's class key) is then the
same for every pod holding them: `parts_memo` computes it once per distinct set of part
objects instead of once per pod (7,064 pods of 10 shapes in the GCDA benchmark: 10
computations, not 7,064).

The table is keyed by the parts' identities and each entry holds the parts themselves, so an
identity cannot be reused by another object while its entry exists. Sharing is exact because
API objects never change after decoding; parts that are equal but not shared (objects built
outside the decoders) only miss. The table holds at most `TABLE_LIMIT` entries and is
emptied when full.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:
    from schedsim.api.core import Pod

__all__ = ["TABLE_LIMIT", "parts_memo"]

_T = TypeVar("_T")

TABLE_LIMIT = 4096
"""Entries kept before the table is emptied."""

_values: dict[tuple[Hashable, tuple[int, ...]], tuple[tuple[object, ...], Any]] = {}


def parts_memo(pod: Pod, key: Hashable, parts: tuple[object, ...], compute: Callable[[], _T]) -> _T:
    """``compute()`` once per ``key`` and distinct set of ``parts`` objects, stored in
    ``pod``'s own memo (`Pod.memo`) too.

    Args:
        pod: the pod asking (its memo answers the next call for ``key`` directly).
        key: what is computed, with every setting ``compute`` depends on (feature gates,
            configured resources); hashable.
        parts: the pod's fields ``compute`` reads (e.g. ``(pod.containers,
            pod.init_containers, pod.overhead, pod.resources)``); ``compute`` must depend on
            nothing else of the pod.
        compute: the computation, called on a miss.

    Returns:
        the value, shared: callers must treat it as read-only.
    """

    # `Pod.memo`'s table read directly (no closure per call: three lookups per scheduled pod)
    memo = pod.memo_table()
    try:
        return cast(_T, memo[key])
    except KeyError:
        pass
    ident = (key, tuple(map(id, parts)))
    entry = _values.get(ident)
    if entry is not None:
        value = entry[1]
    else:
        value = compute()
        if len(_values) >= TABLE_LIMIT:
            _values.clear()
        _values[ident] = (parts, value)
    memo[key] = value
    return cast(_T, value)
