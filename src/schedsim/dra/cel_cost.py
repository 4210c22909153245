"""A worst-case cost estimate of a DRA CEL selector, in CEL cost units.

Kubernetes bounds device selectors twice (``k8s.io/dynamic-resource-allocation/cel``
``compile.go``, ``pkg/apis/resource/validation``): the API server refuses a selector whose
estimated worst-case cost (cel-go's ``checker.EstimateCost`` with Kubernetes' library cost
estimator and the declared maximum sizes of ``device``) exceeds
``CELSelectorExpressionMaxCost`` = 1 000 000 (``Forbidden: too complex, exceeds cost
limit``), and evaluation stops at the same number of actual cost units (``operation
cancelled: actual cost limit exceeded``).

cel-expr-python (cel-cpp) has neither a cost estimator nor a cost-limited evaluation, so this
module estimates over the checked tree cel-cpp produced (`schedsim.dra.cel_ast`) with cel-go's
cost model: a variable or field read costs 1, a list literal 10, a map literal 30, a call 1
plus its operands, a comprehension its range plus (range size x (condition + step)), and
string and list functions cost in proportion to the sizes they traverse (factor 0.1 per
character, 0.25 per regex character), with result sizes carried through (``replace``
multiplies a string's size by the replacement's, ``split``, ``join``, ``+``...). Sizes come
from the declared bounds (`Bounds`): driver name 63 characters, 32 attributes and capacities
per device, attribute values 64 characters, domain 63 and identifier 32 characters.

Deliberate differences from the API server (docs/architecture.md): the estimate is a little
more conservative where cel-go's is finer (``replace`` keeps the whole input as retained
size; ``==`` on lists is charged like on strings; a function schedsim does not model returns
a value of unknown size, so a size-dependent operation on it is refused); the runtime limit
is enforced by re-estimating with the actual sizes of a device that exceeds the declared
bounds (cel-cpp cannot count actual cost), on top of cel-cpp's fixed 10 000 comprehension
iterations per evaluation.

Cost: O(size of the expression) per estimate; once per compiled expression.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import attrs

from schedsim.dra.cel_ast import Node

__all__ = [
    "DECLARED",
    "MAX_COST",
    "TOO_COMPLEX",
    "Bounds",
    "estimate_cost",
]

MAX_COST = 1_000_000
"""``CELSelectorExpressionMaxCost``: the estimated and the runtime cost limit of a selector."""

TOO_COMPLEX = "Forbidden: too complex, exceeds cost limit"
"""The API server's refusal (``field.Forbidden(..., "too complex, exceeds cost limit")``)."""

_STRING = 0.1  # common.StringTraversalCostFactor
_REGEX = 0.25  # common.RegexStringLengthCostFactor
_LIST_CREATE = 10  # common.ListCreateBaseCost
_MAP_CREATE = 30  # common.MapCreateBaseCost
_INF = math.inf


@attrs.frozen
class Bounds:
    """The maximum sizes of what ``device`` holds (resource.k8s.io/v1 limits).

    Attributes:
        driver: characters of ``device.driver`` (``DriverNameMaxLength``).
        entries: attributes (or capacities) per device
            (``ResourceSliceMaxAttributesAndCapacitiesPerDevice``), also the domains.
        value: characters of a string or version attribute (``DeviceAttributeMaxValueLength``).
        domain: characters of a domain (``DeviceMaxDomainLength``).
        ident: characters of an attribute or capacity identifier (``DeviceMaxIDLength``).
    """

    driver: int = 63
    entries: int = 32
    value: int = 64
    domain: int = 63
    ident: int = 32

    def widen(self, other: Bounds) -> Bounds:
        """The larger of each bound."""
        return Bounds(
            *(max(a, b) for a, b in zip(attrs.astuple(self), attrs.astuple(other), strict=True))
        )


DECLARED = Bounds()
"""The API's limits: what the API server's estimate assumes."""


@attrs.frozen
class _Shape:
    """What the estimator knows of a value: its maximum size (characters of a string,
    elements of a list or map; ``inf`` when unknown), the shape of its elements (list items,
    map values), of its keys, and the fields of ``device``."""

    size: float = 0.0
    elem: _Shape | None = None
    key: _Shape | None = None
    fields: Mapping[str, _Shape] | None = None
    sized: bool = True


_SCALAR = _Shape(sized=False)
_UNKNOWN = _Shape(size=_INF)


def _join(a: _Shape | None, b: _Shape | None) -> _Shape:
    if a is None:
        return b or _SCALAR
    if b is None:
        return a
    fields = a.fields if a.fields is not None else b.fields
    return _Shape(
        max(a.size, b.size),
        None if a.elem is None and b.elem is None else _join(a.elem, b.elem),
        None if a.key is None and b.key is None else _join(a.key, b.key),
        fields,
        a.sized or b.sized,
    )


def _device(b: Bounds) -> _Shape:
    value = _Shape(size=b.value)
    domain = _Shape(size=b.domain)
    inner = _Shape(size=b.entries, elem=value, key=_Shape(size=b.ident))
    capacity_inner = _Shape(size=b.entries, elem=_SCALAR, key=_Shape(size=b.ident))
    return _Shape(
        size=4,
        fields={
            "driver": _Shape(size=b.driver),
            "attributes": _Shape(size=b.entries, elem=inner, key=domain),
            "capacity": _Shape(size=b.entries, elem=capacity_inner, key=domain),
            "allowMultipleAllocations": _SCALAR,
        },
    )


def _ceil(x: float) -> float:
    return x if math.isinf(x) else float(math.ceil(x))


# Functions whose cost is a traversal of the target string and whose result has its size.
_SAME_SIZE = frozenset({"lowerAscii", "upperAscii", "trim", "reverse", "substring"})
_LIST_TRAVERSAL = frozenset({"isSorted", "sum", "min", "max"})
_COMPARE = frozenset({"_<_", "_<=_", "_>_", "_>=_", "_==_", "_!=_"})
_SETS = frozenset({"sets.contains", "sets.intersects", "sets.equivalent"})
_PARSERS = frozenset({"ip", "isIP", "ip.isCanonical", "cidr", "isCIDR", "url", "isURL"})


class _Estimator:
    def __init__(self, bounds: Bounds) -> None:
        self.scope: dict[str, _Shape] = {"device": _device(bounds)}

    def visit(self, n: Node) -> tuple[float, _Shape]:
        """(worst-case cost, shape of the value) of ``n``."""
        if n.kind == "const":
            if isinstance(n.value, str):
                return 0.0, _Shape(size=len(n.value))
            return 0.0, _SCALAR
        if n.kind == "ident":
            return 1.0, self.scope.get(n.name, _UNKNOWN)
        if n.kind == "select":
            cost, shape = self.visit(n.children[0])
            if shape.fields is not None:
                return cost + 1, shape.fields.get(n.name, _UNKNOWN)
            return cost + 1, shape.elem or _UNKNOWN
        if n.kind in ("list", "map"):
            total, elem, key = 0.0, None, None
            for i, child in enumerate(n.children):
                c, s = self.visit(child)
                total += c
                if n.kind == "map" and i % 2 == 0:
                    key = _join(key, s)
                else:
                    elem = _join(elem, s)
            size = len(n.children) // (2 if n.kind == "map" else 1)
            base = _MAP_CREATE if n.kind == "map" else _LIST_CREATE
            return total + base, _Shape(size=size, elem=elem, key=key)
        if n.kind == "comprehension":
            return self._comprehension(n)
        return self._call(n)

    def _comprehension(self, n: Node) -> tuple[float, _Shape]:
        iter_range, init, cond, step, result = n.children
        range_cost, range_shape = self.visit(iter_range)
        init_cost, init_shape = self.visit(init)
        # the iteration variable: list items, map keys
        item = range_shape.key if range_shape.key is not None else range_shape.elem
        saved = dict(self.scope)
        self.scope[n.name] = item or _UNKNOWN
        if n.name2:  # two variables: (index, element) of a list, (key, value) of a map
            if range_shape.key is None:
                self.scope[n.name] = _SCALAR
            self.scope[n.name2] = range_shape.elem or _UNKNOWN
        if init.kind == "list":  # map, filter: the list grows by at most one item per iteration
            init_shape = _Shape(size=init_shape.size + range_shape.size, elem=init_shape.elem)
        self.scope["@result"] = init_shape
        cond_cost, _ = self.visit(cond)
        step_cost, grown = self.visit(step)
        if init.kind == "list":
            self.scope["@result"] = _Shape(size=init_shape.size, elem=grown.elem)
        result_cost, result_shape = self.visit(result)
        self.scope = saved
        per_iteration = cond_cost + step_cost
        loop = 0.0 if range_shape.size == 0 else range_shape.size * per_iteration
        return range_cost + init_cost + loop + result_cost, result_shape

    def _call(self, n: Node) -> tuple[float, _Shape]:
        visited = [self.visit(c) for c in n.children]
        operands = sum(c for c, _ in visited)
        shapes = [s for _, s in visited]
        name, ids = n.name, n.overloads
        if name in ("_&&_", "_||_"):
            return operands, _SCALAR
        if name == "_?_:_":
            cost = visited[0][0] + max(visited[1][0], visited[2][0])
            return cost, _join(shapes[1], shapes[2])
        own, shape = self._own(name, ids, n.has_target, shapes)
        return operands + own, shape

    def _own(
        self, name: str, ids: tuple[str, ...], has_target: bool, shapes: list[_Shape]
    ) -> tuple[float, _Shape]:
        """The call's own cost (without its operands) and the shape of its result."""
        first = shapes[0] if shapes else _UNKNOWN
        if name in ("_[_]", "_[?_]"):
            return 1.0, first.elem or (first.fields and _UNKNOWN) or _UNKNOWN
        if name in ("orValue", "or"):  # an optional has the shape of its value
            return 1.0, _join(first, shapes[-1])
        if name in ("dyn", "optional.of", "optional.ofNonZeroValue", "value"):
            return 1.0, first
        if name == "_+_" and any(
            i.startswith(("add_string", "add_list", "add_bytes")) for i in ids
        ):
            size = shapes[0].size + shapes[1].size
            return _ceil(size * _STRING), _Shape(
                size=size, elem=_join(shapes[0].elem, shapes[1].elem)
            )
        if name in _COMPARE and len(shapes) == 2 and shapes[0].sized and shapes[1].sized:
            return _ceil(min(shapes[0].size, shapes[1].size) * _STRING), _SCALAR
        if name == "@in" and shapes[1].key is None and shapes[1].fields is None:
            return shapes[1].size, _SCALAR  # a list is searched (a map is hashed: 1)
        if name == "size":
            return 1.0, _SCALAR
        if name == "contains" and has_target:
            return _ceil(first.size * _STRING) * _ceil(shapes[1].size * _STRING), _SCALAR
        if name in ("startsWith", "endsWith"):
            return _ceil(shapes[-1].size * _STRING), _SCALAR
        if name in ("matches", "find", "findAll"):
            target = shapes[0] if len(shapes) > 1 else _UNKNOWN
            regex = shapes[1] if len(shapes) > 1 else shapes[0]
            cost = _ceil((1 + target.size) * _STRING) * _ceil(regex.size * _REGEX)
            if name == "findAll":
                return cost, _Shape(size=target.size, elem=target)
            return cost, _Shape(size=target.size) if name == "find" else _SCALAR
        if name in _SAME_SIZE:
            return _ceil(first.size * _STRING), _Shape(size=first.size)
        if name in ("indexOf", "lastIndexOf", "charAt"):
            return _ceil(first.size * _STRING) if first.elem is None else first.size, _SCALAR
        if name == "replace" and has_target and len(shapes) >= 3:
            return self._replace(shapes)
        if name == "split" and has_target:
            part = _Shape(size=first.size)
            return _ceil(first.size * 2 * _STRING), _Shape(size=first.size + 1, elem=part)
        if name == "join" and has_target:
            elem = first.elem or _UNKNOWN
            sep = shapes[1].size if len(shapes) > 1 else 0
            size = first.size * (elem.size + sep)
            return _ceil(size * 2 * _STRING), _Shape(size=size)
        if name in ("quote", "strings.quote"):
            return _ceil(shapes[-1].size * _STRING), _Shape(size=2 * shapes[-1].size + 2)
        if name in _SETS:  # every element of one list against every element of the other
            return max(1.0, first.size * shapes[1].size), _SCALAR
        if name in _PARSERS:  # the library parses its string argument
            return max(1.0, _ceil(shapes[-1].size * _STRING)), _SCALAR
        if name in _LIST_TRAVERSAL:
            return max(1.0, first.size), first.elem or _SCALAR
        if name == "string":
            if any("string_to_string" in i or i == "to_string" for i in ids) and first.size:
                return 1.0, first
            return 1.0, _Shape(size=32)  # a number, bool or quantity as text
        if name in ("format",):
            return 1.0, _UNKNOWN
        return 1.0, _SCALAR

    def _replace(self, shapes: list[_Shape]) -> tuple[float, _Shape]:
        target, old, new = shapes[0], shapes[1], shapes[2]
        # every occurrence (at every boundary when ``old`` may be empty) becomes ``new``
        count = target.size + 1 if old.size == 0 else target.size
        size = target.size + count * new.size
        return _ceil(target.size * 2 * _STRING), _Shape(size=size)


def estimate_cost(tree: Node, bounds: Bounds = DECLARED) -> float:
    """The worst-case cost of evaluating ``tree`` (``inf`` when it depends on a size the
    estimator cannot bound), with ``device`` of at most ``bounds``.

    Mirrors cel-go's ``checker.EstimateCost`` with Kubernetes' ``library.CostEstimator`` and
    the DRA size estimator (see the module docstring for the differences).
    """
    cost, _ = _Estimator(bounds).visit(tree)
    return cost
