"""A cheaper ``attrs.evolve``.

``attrs.evolve(pod, priority=...)`` walks the class's fields through attrs' generic machinery
(a Python loop with a ``getattr`` and a name check per field) and then calls ``__init__``
with every field by keyword: ~10 µs for a `Pod`, paid per pod at loading (the Priority and
DefaultTolerationSeconds admission steps). `evolve` makes the same call (``__init__`` with
every init field, so validators, converters and ``init=False`` defaults apply exactly as in
``attrs.evolve``), with the fields read by one ``operator.attrgetter`` and passed by
position: ~1.7x cheaper. Classes with keyword-only fields go through ``attrs.evolve``.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, TypeVar, cast

import attrs

__all__ = ["evolve"]

_T = TypeVar("_T")

# per class: (the init fields' getter, position of each init field's argument name), or
# None when the class needs attrs.evolve
_plans: dict[type, tuple[Any, dict[str, int]] | None] = {}


def _plan(cls: type) -> tuple[Any, dict[str, int]] | None:
    fields = [f for f in attrs.fields(cls) if f.init]
    if len(fields) < 2 or any(f.kw_only for f in fields):
        return None
    getter = attrgetter(*(f.name for f in fields))
    return getter, {f.alias: i for i, f in enumerate(fields)}


def evolve(inst: _T, **changes: Any) -> _T:
    """``attrs.evolve(inst, **changes)``: a new instance of ``inst``'s attrs class with the
    fields of ``inst`` and ``changes`` (keyed by ``__init__`` argument name) applied.

    Raises:
        TypeError: a change names no ``__init__`` argument (``attrs.evolve``'s error).
        attrs.exceptions.NotAnAttrsClassError: ``inst`` is not an attrs instance.
    """
    cls = type(inst)
    try:
        plan = _plans[cls]
    except KeyError:
        plan = _plans[cls] = _plan(cls)
    if plan is None:
        return cast(_T, attrs.evolve(cast(Any, inst), **changes))
    getter, position = plan
    values = list(getter(inst))
    for name, value in changes.items():
        i = position.get(name)
        if i is None:
            return cast(_T, attrs.evolve(cast(Any, inst), **changes))  # raises attrs' TypeError
        values[i] = value
    return cls(*values)
