"""The checked syntax tree of a compiled CEL program, read from cel-expr-python.

cel-expr-python offers no syntax-tree API, but ``Program.serialize()`` returns the checked
expression as a ``google.protobuf.Any`` holding a ``cel.expr.CheckedExpr`` (the cel-spec
protos, ``cel/expr/checked.proto`` and ``syntax.proto``). This module decodes the few fields
the cost estimator (`schedsim.dra.cel_cost`) needs straight from the protobuf wire format, so
the tree is the one cel-cpp parsed and type-checked, not a second parser's guess:

* ``CheckedExpr.expr`` (4) and ``reference_map`` (2: expression id -> overload ids);
* ``Expr``: ``id`` (2), ``const_expr`` (3), ``ident_expr`` (4), ``select_expr`` (5),
  ``call_expr`` (6), ``list_expr`` (7), ``struct_expr`` (8, map literals),
  ``comprehension_expr`` (9).

Cost: O(size of the serialized program), once per compiled expression.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

__all__ = ["Node", "checked_tree"]


@attrs.frozen
class Node:
    """One expression of the checked tree.

    Attributes:
        kind: ``const``, ``ident``, ``select``, ``call``, ``list``, ``map`` or
            ``comprehension``.
        id: the expression id (keys ``overloads``).
        name: the identifier, selected field or called function.
        value: a constant's value (``str`` for strings and bytes, else ``int``/``bool``/
            ``None``).
        children: operands in order: a select's operand; a call's target (when it has one)
            then its arguments; list elements; map keys and values alternating; a
            comprehension's range, accumulator init, loop condition, loop step, result.
        has_target: a call written as ``target.f(...)``.
        overloads: the overload ids the checker resolved for a call.
        name2: a two-variable comprehension's second variable (``iter_var2``: the value of
            a map entry, the element of a list whose index is ``name``); empty otherwise.
    """

    kind: str
    id: int = 0
    name: str = ""
    value: object = None
    children: tuple[Node, ...] = ()
    has_target: bool = False
    overloads: tuple[str, ...] = ()
    name2: str = ""


def _varint(data: bytes, i: int) -> tuple[int, int]:
    out = shift = 0
    while True:
        b = data[i]
        i += 1
        out |= (b & 0x7F) << shift
        if b < 0x80:
            return out, i
        shift += 7


def _fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of one message: varints as ``int``, length-delimited
    fields as ``bytes``, fixed-width fields as ``int``."""
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
            yield number, wire, value
        elif wire == 2:
            size, i = _varint(data, i)
            yield number, wire, data[i : i + size]
            i += size
        elif wire == 1:
            yield number, wire, int.from_bytes(data[i : i + 8], "little")
            i += 8
        elif wire == 5:
            yield number, wire, int.from_bytes(data[i : i + 4], "little")
            i += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")


def _message(data: bytes) -> dict[int, list[int | bytes]]:
    out: dict[int, list[int | bytes]] = {}
    for number, _, value in _fields(data):
        out.setdefault(number, []).append(value)
    return out


def _bytes(m: dict[int, list[int | bytes]], number: int) -> bytes:
    v = m.get(number, [b""])[-1]
    return v if isinstance(v, bytes) else b""


def _text(m: dict[int, list[int | bytes]], number: int) -> str:
    return _bytes(m, number).decode("utf-8", "replace")


def _constant(data: bytes) -> object:
    for number, _, value in _fields(data):
        if number in (6, 7):  # string_value, bytes_value
            return value.decode("utf-8", "replace") if isinstance(value, bytes) else ""
        if number == 2:
            return bool(value)
        if number in (3, 4):
            return value
    return None


def _expr(data: bytes, refs: dict[int, tuple[str, ...]]) -> Node:
    m = _message(data)
    raw_id = m.get(2, [0])[-1]
    eid = raw_id if isinstance(raw_id, int) else 0
    if 3 in m:
        return Node("const", eid, value=_constant(_bytes(m, 3)))
    if 4 in m:
        return Node("ident", eid, name=_text(_message(_bytes(m, 4)), 1))
    if 5 in m:
        s = _message(_bytes(m, 5))
        return Node("select", eid, name=_text(s, 2), children=(_expr(_bytes(s, 1), refs),))
    if 6 in m:
        c = _message(_bytes(m, 6))
        target = [_expr(_bytes(c, 1), refs)] if 1 in c else []
        args = [_expr(a, refs) for a in c.get(3, []) if isinstance(a, bytes)]
        return Node(
            "call",
            eid,
            name=_text(c, 2),
            children=(*target, *args),
            has_target=bool(target),
            overloads=refs.get(eid, ()),
        )
    if 7 in m:
        items = _message(_bytes(m, 7)).get(1, [])
        return Node(
            "list", eid, children=tuple(_expr(e, refs) for e in items if isinstance(e, bytes))
        )
    if 8 in m:
        parts: list[Node] = []
        for entry in _message(_bytes(m, 8)).get(2, []):
            if isinstance(entry, bytes):
                e = _message(entry)
                parts += [_expr(_bytes(e, 3), refs), _expr(_bytes(e, 4), refs)]
        return Node("map", eid, children=tuple(parts))
    if 9 in m:
        c = _message(_bytes(m, 9))
        parts = [_expr(_bytes(c, n), refs) for n in (2, 4, 5, 6, 7)]
        return Node(
            "comprehension", eid, name=_text(c, 1), children=tuple(parts), name2=_text(c, 8)
        )
    return Node("const", eid)  # an empty expression (never produced by the checker)


def checked_tree(serialized: bytes) -> Node:
    """The root of the checked tree of ``Program.serialize()``'s output.

    Raises:
        ValueError: the bytes are not a serialized ``CheckedExpr`` (another
            cel-expr-python format).
    """
    outer = _message(serialized)
    if not _text(outer, 1).endswith("cel.expr.CheckedExpr"):
        raise ValueError("not a serialized cel.expr.CheckedExpr")
    checked = _message(_bytes(outer, 2))
    refs: dict[int, tuple[str, ...]] = {}
    for entry in checked.get(2, []):
        if isinstance(entry, bytes):
            e = _message(entry)
            key = e.get(1, [0])[-1]
            ref = _message(_bytes(e, 2))
            overloads = tuple(
                o.decode("utf-8", "replace") for o in ref.get(3, []) if isinstance(o, bytes)
            )
            if isinstance(key, int):
                refs[key] = overloads
    return _expr(_bytes(checked, 4), refs)
