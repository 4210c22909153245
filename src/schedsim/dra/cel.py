"""CEL device selectors: the Kubernetes DRA CEL environment on cel-expr-python (cel-cpp),
compiled once per expression and evaluated once per (expression, device).

Mirrors ``k8s.io/dynamic-resource-allocation/cel`` (``compile.go``) as used by the
structured allocator of Kubernetes 1.34:

* the variable ``device`` with ``driver``, ``attributes[domain][id]``,
  ``capacity[domain][id]`` (Quantities) and, with DRAConsumableCapacity,
  ``allowMultipleAllocations``; a bare attribute or capacity name belongs to the driver's
  domain;
* an unknown domain reads as an empty map (``"x" in device.attributes`` stays false), an
  unknown id inside a domain is the runtime error ``no such key: <id>``;
* the libraries of Kubernetes 1.34's base environment (apiserver/pkg/cel/environment
  base.go): strings (version 2, with ``format``), sets, two-variable comprehensions,
  optional types, and the Kubernetes URL, Regex, Lists, Quantity, IP, CIDR and Semver
  libraries (`schedsim.dra.cellib`, `schedsim.dra.cellib_net`), plus ``cel.bind`` that DRA
  adds; ``&&``/``||`` absorb errors. ``transformMap`` and ``transformMapEntry`` are
  rewritten onto ``transformList`` (cel-expr-python 0.1.3 has no runtime
  ``cel.@mapInsert``, `_rewrite_transform_maps`);
* the expression must evaluate to bool (or dyn); compile errors read
  ``compilation failed: ERROR: <input>:L:C: ...`` like cel-go's.

Adapter details (reference/cel-runtimes.md): ``device`` is declared ``map(string, dyn)``, so
two source-level passes restore what a typed ``kubernetes.DRADevice`` gives: unknown fields
of ``device`` are rejected at compile time (``undefined field 'x'``), and
``device.attributes[d]`` / ``device.capacity[d]`` are rewritten to
``device.attributes[?d].orValue(dyn({}))`` for the empty-map default. Runtime error texts are
normalized to cel-go's wording.

Cost (issue 15): cel-cpp has neither a cost estimator nor a cost limit, so every compiled
selector's worst-case cost is estimated over cel-cpp's own checked tree
(`schedsim.dra.cel_cost`, cel-go's cost model with the declared maximum sizes of ``device``);
above Kubernetes' 1 000 000 units it is refused like a compile error, with the API server's
``Forbidden: too complex, exceeds cost limit``. At run time a device larger than the declared
bounds is re-estimated with its own sizes and, over the limit, not evaluated (``operation
cancelled: actual cost limit exceeded``, cel-go's runtime message); cel-cpp's fixed budget of
10 000 comprehension iterations per evaluation reports the same message.

cel-expr-python 0.1.3 leaks a few hundred bytes per Python callback; `CelCache` memoizes
results per (expression, device), which bounds both time and that leak by the number of
distinct pairs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, NamedTuple

import attrs
from cel_expr_python import cel  # type: ignore[import-untyped]
from cel_expr_python.ext import (  # type: ignore[import-untyped]
    ext_bindings,
    ext_optional,
    ext_strings,
)

from schedsim.api.resource import Device, split_qualified_name
from schedsim.dra.cel_ast import Node, checked_tree
from schedsim.dra.cel_cost import DECLARED, MAX_COST, TOO_COMPLEX, Bounds, estimate_cost
from schedsim.dra.cellib import (
    go_regexp_error,
    go_wording,
    kubernetes_extension,
    quantity_value,
    semver_value,
)

__all__ = ["CelCache", "CelCompileError", "CelRuntimeError", "CompiledSelector", "device_bounds"]


class CelCompileError(ValueError):
    """A selector does not compile; the message is cel-go shaped
    (``compilation failed: ERROR: <input>:1:1: undeclared reference to 'x' ...``)."""


class CelRuntimeError(ValueError):
    """A selector failed while evaluating (``no such key: x``, ``no such overload``,
    ``no such overload: find(int, string)``, ...)."""


# ----------------------------------------------------------------------------- source passes


class _Token(NamedTuple):
    kind: str  # "id", "str", "num", "op"
    text: str
    start: int
    end: int


_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+|//[^\n]*)
  | (?P<str>(?:[rR][bB]?|[bB][rR]?)?(?:\"\"\"(?:\\.|[^\\])*?\"\"\"|'''(?:\\.|[^\\])*?'''
        |"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
  | (?P<id>[_a-zA-Z][_a-zA-Z0-9]*)
  | (?P<num>(?:0[xX][0-9a-fA-F]+|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)[uU]?)
  | (?P<op>\S)
    """,
    re.VERBOSE | re.DOTALL,
)


def _tokens(source: str) -> list[_Token]:
    """CEL tokens (whitespace and comments dropped); lexing problems are left to the parser
    (an unterminated string becomes single-character tokens and fails to compile there)."""
    out: list[_Token] = []
    for m in _TOKEN_RE.finditer(source):
        kind = m.lastgroup
        if kind is None or kind == "ws":
            continue
        out.append(_Token(kind, m.group(), m.start(), m.end()))
    return out


_DEVICE_FIELDS = ("driver", "attributes", "capacity")
_MAP_FIELDS = ("attributes", "capacity")
_OPEN = {"[": "]", "(": ")", "{": "}"}


def _device_roots(tokens: list[_Token]) -> Iterator[int]:
    """Indices of ``device`` tokens that start a member chain (not ``x.device``)."""
    for i, tok in enumerate(tokens):
        if tok.kind != "id" or tok.text != "device":
            continue
        if i > 0 and tokens[i - 1].text in (".", "?"):
            continue
        if i + 2 < len(tokens) and tokens[i + 1].text == "." and tokens[i + 2].kind == "id":
            yield i


def _position(source: str, offset: int) -> str:
    line = source.count("\n", 0, offset) + 1
    column = offset - (source.rfind("\n", 0, offset) + 1) + 1
    return f"<input>:{line}:{column}"


def _check_fields(source: str, tokens: list[_Token], consumable_capacity: bool) -> None:
    allowed = (
        (*_DEVICE_FIELDS, "allowMultipleAllocations") if consumable_capacity else _DEVICE_FIELDS
    )
    for i in _device_roots(tokens):
        field = tokens[i + 2]
        if field.text not in allowed:
            raise CelCompileError(
                f"compilation failed: ERROR: {_position(source, tokens[i + 1].start)}: "
                f"undefined field '{field.text}'"
            )


_TRANSFORM_MAPS = ("transformMap", "transformMapEntry")
_MAP_OF_PAIRS = "__schedsim_map_of_pairs__"
_MAP_OF_MAPS = "__schedsim_map_of_maps__"
"""The functions `_rewrite_transform_maps` calls; a source naming them is refused."""


def _check_reserved(source: str, tokens: list[_Token]) -> None:
    for tok in tokens:
        if tok.kind == "id" and tok.text in (_MAP_OF_PAIRS, _MAP_OF_MAPS):
            raise CelCompileError(
                f"compilation failed: ERROR: {_position(source, tok.start)}: undeclared "
                f"reference to '{tok.text}' (in container '')"
            )


def _closing(tokens: list[_Token], i: int) -> int:
    """Index of the bracket closing the one at ``i`` (len(tokens) when unbalanced)."""
    depth = 0
    for j in range(i, len(tokens)):
        t = tokens[j].text
        if t in _OPEN:
            depth += 1
        elif t in _OPEN.values():
            depth -= 1
            if depth == 0:
                return j
    return len(tokens)


def _opening(tokens: list[_Token], j: int) -> int:
    """Index of the bracket opening the one closed at ``j`` (-1 when unbalanced)."""
    depth = 0
    for i in range(j, -1, -1):
        t = tokens[i].text
        if t in _OPEN.values():
            depth += 1
        elif t in _OPEN:
            depth -= 1
            if depth == 0:
                return i
    return -1


_ENDS_OPERAND = frozenset({")", "]", "}"})


def _receiver_start(tokens: list[_Token], end: int) -> int:
    """Index of the first token of the member chain ending at ``end`` (``a.b[0].f(x)``,
    ``{...}``, ``(e)``); -1 when there is none. Member selection, indexing and calls bind
    tighter than every operator, so the chain is the receiver of a ``.m(...)`` after it."""
    pos = end
    while pos >= 0:
        tok = tokens[pos]
        if tok.text in _ENDS_OPERAND:
            pos = _opening(tokens, pos)
            if pos < 0:
                return -1
            before = tokens[pos - 1] if pos > 0 else None
            if before is not None and (
                before.kind in ("id", "str", "num") or before.text in _ENDS_OPERAND
            ):
                # f(...), x[...] (or Msg{...}): the chain goes on before the bracket
                pos -= 1
                continue
        elif tok.kind not in ("id", "str", "num"):
            return -1
        if pos >= 2 and tokens[pos - 1].text == "?" and tokens[pos - 2].text == ".":
            pos -= 3  # x.?f
        elif pos >= 1 and tokens[pos - 1].text == ".":
            pos -= 2  # x.f
        else:
            return pos
    return -1


def _rewrite_transform_maps(source: str) -> str:
    """``r.transformMap(k, v, [filter,] e)`` -> ``__schedsim_map_of_pairs__(r.transformList(k,
    v, [filter,] [k, e]))`` and ``r.transformMapEntry(...)`` -> ``__schedsim_map_of_maps__(
    r.transformList(...))``, innermost last-first until none is left.

    cel-cpp declares both macros (two-variable comprehensions) but cel-expr-python 0.1.3
    has no runtime ``cel.@mapInsert`` they expand to; ``transformList`` builds the entries
    with list concatenation, and the two functions (`_map_of_pairs`, `_map_of_maps`) build
    the map, as cel-go's mutable map does (a repeated key is ``insert failed: key K already
    exists``). The result is typed ``map(dyn, dyn)``.
    """
    while True:
        tokens = _tokens(source)
        found = [
            i
            for i, tok in enumerate(tokens)
            if tok.kind == "id"
            and tok.text in _TRANSFORM_MAPS
            and i > 0
            and tokens[i - 1].text == "."
            and i + 1 < len(tokens)
            and tokens[i + 1].text == "("
        ]
        if not found:
            return source
        i = found[-1]  # its arguments hold no other call; its receiver may
        close = _closing(tokens, i + 1)
        first = _receiver_start(tokens, i - 2)
        if close >= len(tokens) or first < 0:
            return source  # malformed: the parser reports it
        args = _split_arguments(source, tokens, i + 1, close)
        if len(args) not in (3, 4):
            return source  # a wrong arity: the parser's macro error
        receiver = source[tokens[first].start : tokens[i - 2].end]
        if tokens[i].text == "transformMap":
            *head, value = args
            body = ", ".join([*head, f"[{args[0]}, {value}]"])
            call = f"{_MAP_OF_PAIRS}(({receiver}).transformList({body}))"
        else:
            call = f"{_MAP_OF_MAPS}(({receiver}).transformList({', '.join(args)}))"
        source = source[: tokens[first].start] + call + source[tokens[close].end :]


def _split_arguments(source: str, tokens: list[_Token], open_: int, close: int) -> list[str]:
    """The source text of each top-level argument between the parentheses at ``open_`` and
    ``close``."""
    out: list[str] = []
    depth, start = 0, open_ + 1
    for j in range(open_ + 1, close):
        t = tokens[j].text
        if t in _OPEN:
            depth += 1
        elif t in _OPEN.values():
            depth -= 1
        elif t == "," and depth == 0:
            out.append(source[tokens[start].start : tokens[j - 1].end] if j > start else "")
            start = j + 1
    out.append(source[tokens[start].start : tokens[close - 1].end] if close > start else "")
    return out


def _map_key(key: Any) -> str:
    """A map key as cel-go's ``%v`` prints it in ``insert failed`` (strings unquoted)."""
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _map_of_pairs(pairs: list[Any]) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"insert failed: key {_map_key(key)} already exists")
        out[key] = value
    return out


def _map_of_maps(maps: list[Any]) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for entry in maps:
        if not isinstance(entry, dict):
            raise TypeError("no such overload")
        for key, value in entry.items():
            if key in out:
                raise ValueError(f"insert failed: key {_map_key(key)} already exists")
            out[key] = value
    return out


def _transform_map_extension() -> cel.CelExtension:
    """The two functions `_rewrite_transform_maps` calls."""
    t = cel.Type
    dyn_map, dyn_list = t.Map(t.DYN, t.DYN), t.List(t.DYN)
    map_list = t.List(dyn_map)  # an entry that is not a map: "no matching overload", as cel-go
    return cel.CelExtension(
        "schedsim_transform_map",
        [
            cel.FunctionDecl(
                _MAP_OF_PAIRS,
                [cel.Overload("schedsim_map_of_pairs", dyn_map, [dyn_list], impl=_map_of_pairs)],
            ),
            cel.FunctionDecl(
                _MAP_OF_MAPS,
                [cel.Overload("schedsim_map_of_maps", dyn_map, [map_list], impl=_map_of_maps)],
            ),
        ],
    )


def _rewrite_domain_lookups(source: str, tokens: list[_Token]) -> str:
    """``device.attributes[d]`` -> ``device.attributes[?d].orValue(dyn({}))`` (and ``.d`` ->
    ``.?d.orValue(dyn({}))``): an unknown domain reads as an empty map, as in Kubernetes."""
    inserts: list[tuple[int, str]] = []
    for i in _device_roots(tokens):
        if tokens[i + 2].text not in _MAP_FIELDS or i + 3 >= len(tokens):
            continue
        nxt = tokens[i + 3]
        if nxt.text == "[":
            j = _closing(tokens, i + 3)
            if j >= len(tokens) or (i + 4 < len(tokens) and tokens[i + 4].text == "?"):
                continue
            inserts.append((nxt.end, "?"))
            inserts.append((tokens[j].end, ".orValue(dyn({}))"))
        elif (
            nxt.text == "."
            and i + 4 < len(tokens)
            and tokens[i + 4].kind == "id"
            and (i + 5 >= len(tokens) or tokens[i + 5].text != "(")  # not a method call
        ):
            inserts.append((nxt.end, "?"))
            inserts.append((tokens[i + 4].end, ".orValue(dyn({}))"))
    if not inserts:
        return source
    out: list[str] = []
    last = 0
    for offset, text in sorted(inserts):
        out.append(source[last:offset])
        out.append(text)
        last = offset
    out.append(source[last:])
    return "".join(out)


# ----------------------------------------------------------------------------- errors

_STATUS_PREFIX = re.compile(r"^[A-Z_]+: ")
_STATUS_SUFFIX = re.compile(r"\s*\[[A-Z_]+\]\s*$")
_KEY_NOT_FOUND = re.compile(r'Key not found in map\s*:\s*"?(.*?)"?$')
_INDEX_OUT_OF_RANGE = re.compile(r"^Index error: index=(-?\d+) size=(\d+)$")
_INDEX_TYPE = re.compile(r"^Index error: expected integer type, got (string|bool|bytes|null_type)$")
_CANNOT_CONVERT = re.compile(r"^cannot convert string to (int|uint|double)$")
_PRIMITIVE = "(int|uint|double|string|bool|bytes)"  # named alike by cel-cpp and cel-go
_TYPE_CONVERSION = re.compile(f"^Type conversion error from '{_PRIMITIVE}' to '{_PRIMITIVE}'$")

# cel-cpp's message -> cel-go v0.26.0's (the version Kubernetes 1.34 vendors), where the two
# say the same thing in other words: common/types/err.go (errDivideByZero, errIntOverflow,
# errUintOverflow), overflow.go (the checked conversions int64ToUint64Checked,
# uint64ToInt64Checked, doubleToInt64Checked, doubleToUint64Checked return those errors),
# string.go ConvertToType (which int(), uint(), double(), duration() and timestamp() of a
# string call: "type conversion error from 'string' to '<type>'", Duration and Timestamp
# named by their protobuf names).
_CEL_GO_WORDING = {
    "divide by zero": "division by zero",
    "int64 out of uint64 range": "unsigned integer overflow",
    "double out of uint64 range": "unsigned integer overflow",
    "uint64 out of int64 range": "integer overflow",
    "double out of int64 range": "integer overflow",
    "String to Duration conversion failed": (
        "type conversion error from 'string' to 'google.protobuf.Duration'"
    ),
    "String to Timestamp conversion failed": (
        "type conversion error from 'string' to 'google.protobuf.Timestamp'"
    ),
}


_CPP_BAD_REGEX = "invalid regular expression: "
"""cel-cpp's ``matches`` with a pattern RE2 refuses, followed by RE2's error."""

_REGEX_FUNCTIONS = frozenset({"matches", "find", "findAll"})
"""Calls whose constant pattern (argument 1, the target counting as 0) cel-go compiles at
program creation: the stdlib's MatchesRegexOptimization (with OptOptimize, which Kubernetes'
base environment sets) and the regex library's Find/FindAllRegexOptimization."""


def _constant_regex_error(tree: Node) -> str | None:
    """The first refused constant pattern of ``tree`` in cel-go's program-creation words:
    ``program instantiation failed: error parsing regexp: ...`` (DRA compile.go wraps
    ``env.Program``'s error so; the regex factories return Go's ``regexp.Compile`` error
    unchanged)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if node.kind == "call" and node.name in _REGEX_FUNCTIONS and len(node.children) >= 2:
            pattern = node.children[1]
            if pattern.kind == "const" and isinstance(pattern.value, str):
                problem = go_regexp_error(pattern.value)
                if problem is not None:
                    return f"program instantiation failed: {problem}"
        stack.extend(reversed(node.children))
    return None


_CPP_NO_OVERLOAD = re.compile(r"No matching overloads found\s*:\s*(?:\((.*?)\)\.)?(\w+)\((.*)\)$")

_TYPED_BINDINGS = frozenset({"find", "findAll"})
"""Functions cel-go binds per typed overload (``cel.MemberOverload(...,
cel.BinaryBinding/FunctionBinding)``, Kubernetes library/regex.go): a call whose runtime
argument types match no overload is decls.MaybeNoSuchOverload's ``no such overload:
<function>(<argument types>)``. The standard operators are one binding per function over a
trait (``SingletonBinaryBinding``, stdlib), whose receiver answers a bare ``no such
overload``; that stays the message for them and for the rest."""

_GO_TYPE_NAMES = {"int64": "int", "uint64": "uint"}
"""cel-cpp's type names where cel-go's ``Type().TypeName()`` differs."""


def _typed_find(tree: Node | None) -> bool:
    """Whether every find/findAll call of ``tree`` has a non-constant pattern: cel-go's
    Find/FindAllRegexOptimization replaces a constant-pattern call by one whose type check
    answers a bare ``no such overload`` (types.MaybeNoSuchOverloadErr), so the typed
    wording of `_no_such_overload` is certain only when no call was replaced."""
    if tree is None:
        return False
    stack, seen = [tree], False
    while stack:
        node = stack.pop()
        if node.kind == "call" and node.name in _TYPED_BINDINGS and len(node.children) >= 2:
            if node.children[1].kind == "const":
                return False
            seen = True
        stack.extend(node.children)
    return seen


def _no_such_overload(msg: str) -> str:
    """cel-cpp's ``No matching overloads found : (recv).f(args)`` in cel-go's words."""
    m = _CPP_NO_OVERLOAD.match(msg)
    if m is None or m.group(2) not in _TYPED_BINDINGS:
        return "no such overload"
    receiver, function, args = m.groups()
    names = [receiver] if receiver is not None else []
    names += [a.strip() for a in args.split(",") if a.strip()]
    types = ", ".join(_GO_TYPE_NAMES.get(n, n) for n in names)
    return f"no such overload: {function}({types})"


def _runtime_message(raw: str, typed_find: bool = False) -> str:
    """cel-cpp's runtime error in cel-go's words where the mapping is certain (the same
    failure, only worded differently); any other message is kept as cel-cpp wrote it (minus
    its status code), e.g. the string extension's range errors, whose cel-go wording names
    the index cel-cpp's message does not give. ``typed_find``: every find/findAll call of
    the expression has a non-constant pattern (`_typed_find`)."""
    msg = _STATUS_SUFFIX.sub("", _STATUS_PREFIX.sub("", raw.strip()))
    m = _KEY_NOT_FOUND.search(msg)
    if m is not None:
        return f"no such key: {m.group(1)}"
    if msg.startswith("No matching overloads found"):
        return _no_such_overload(msg) if typed_find else "no such overload"
    if "Iteration budget exceeded" in msg:
        return "operation cancelled: actual cost limit exceeded"
    if msg.startswith(_CPP_BAD_REGEX):
        # cel-go's matches: types.WrapErr of Go's regexp.MatchString error (string.go Match)
        return go_wording(msg[len(_CPP_BAD_REGEX) :])
    known = _CEL_GO_WORDING.get(msg)
    if known is not None:
        return known
    m = _INDEX_OUT_OF_RANGE.match(msg)
    if m is not None:  # list.go baseList.Get
        return f"index '{m.group(1)}' out of range in list size '{m.group(2)}'"
    m = _INDEX_TYPE.match(msg)
    if m is not None:  # list.go IndexOrError
        return f"unsupported index type '{m.group(1)}' in list"
    m = _CANNOT_CONVERT.match(msg)
    if m is not None:
        return f"type conversion error from 'string' to '{m.group(1)}'"
    m = _TYPE_CONVERSION.match(msg)
    if m is not None:
        return f"type conversion error from '{m.group(1)}' to '{m.group(2)}'"
    return msg


def _compile_message(raw: str) -> str:
    return "compilation failed: " + _STATUS_SUFFIX.sub("", _STATUS_PREFIX.sub("", raw.strip()))


# ----------------------------------------------------------------------------- cache


@attrs.frozen
class CompiledSelector:
    """One compiled selector expression (or why it does not compile).

    Attributes:
        expression: the expression as written in the DeviceClass or claim.
        program: the cel-cpp program; None when ``error`` is set.
        error: the cel-go shaped compile error, or the API server's cost refusal.
        tree: cel-cpp's checked tree (re-estimated for devices beyond the declared bounds).
        cost: the worst-case cost with the declared bounds (CEL cost units).
    """

    expression: str
    program: Any = None
    error: str | None = None
    tree: Node | None = attrs.field(default=None, eq=False, repr=False)
    cost: float = 0.0


_DYN_DEVICE = cel.Type.Map(cel.Type.STRING, cel.Type.DYN)

_BASE_CONFIG = cel.NewEnvConfigFromYaml(
    "name: kubernetes-dra\n"
    "extensions:\n"
    "  - name: sets\n"  # ext.Sets (base environment since 1.29)
    "  - name: two-var-comprehensions\n"  # ext.TwoVarComprehensions (since 1.32)
)
"""cel-cpp's extensions that only its YAML configuration enables (the others are loaded as
extension objects below)."""


class CelCache:
    """Compiled selectors and their results, shared by all allocators of a scheduler
    (upstream ``cel.Cache``, plus result memoization).

    Every expression is compiled once (per DRAConsumableCapacity setting, which decides
    whether ``device.allowMultipleAllocations`` exists); every (expression, device) pair is
    evaluated once. Devices are keyed by identity (the decoded ResourceSlice objects are
    immutable; the cache keeps a reference so an identity is never reused while cached), and
    a device seen for the first time is looked up by what CEL sees of it (driver,
    attributes, capacity, ``allowMultipleAllocations`` with DRAConsumableCapacity; not its
    name): the 10 identical devices of 500 nodes' slices are evaluated once, not 5,000
    times.

    Args:
        max_results: memoized results kept before the result memo is cleared and refilled
            (bounds memory for long simulations with changing slices).
        max_inputs: per-device CEL activations kept likewise.
    """

    def __init__(self, max_results: int = 1_000_000, max_inputs: int = 100_000) -> None:
        self._env = cel.NewEnv(
            config=_BASE_CONFIG,
            variables={"device": _DYN_DEVICE},
            extensions=[
                ext_strings.ExtStrings(2),
                ext_bindings.ExtBindings(),
                ext_optional.ExtOptional(),
                kubernetes_extension(),
                _transform_map_extension(),
            ],
        )
        self._compiled: dict[tuple[str, bool], CompiledSelector] = {}
        self._results: dict[tuple[str, bool, str, int], tuple[Device, bool | str]] = {}
        # (expression, consumable capacity, driver, what CEL sees of the device) -> result
        self._by_content: dict[tuple[str, bool, str, object], bool | str] = {}
        self._inputs: dict[tuple[str, bool, int], tuple[Device, Any]] = {}
        self._max_results = max_results
        self._max_inputs = max_inputs
        self._over: dict[tuple[str, Bounds], bool] = {}
        self.evaluations = 0
        """How many CEL evaluations ran (memo misses); for tests and benchmarks."""

    def compile(self, expression: str, consumable_capacity: bool = False) -> CompiledSelector:
        """The compiled form of ``expression`` (cached).

        Args:
            expression: a selector's ``cel.expression``.
            consumable_capacity: DRAConsumableCapacity (declares
                ``device.allowMultipleAllocations``).

        Returns:
            the compiled selector; its ``error`` is set when the expression does not
            compile or does not evaluate to bool.
        """
        key = (expression, consumable_capacity)
        hit = self._compiled.get(key)
        if hit is None:
            hit = self._compile(expression, consumable_capacity)
            self._compiled[key] = hit
        return hit

    def _compile(self, expression: str, consumable_capacity: bool) -> CompiledSelector:
        tokens = _tokens(expression)
        try:
            _check_fields(expression, tokens, consumable_capacity)
            _check_reserved(expression, tokens)
            program = self._env.compile(
                _rewrite_transform_maps(_rewrite_domain_lookups(expression, tokens))
            )
        except CelCompileError as e:
            return CompiledSelector(expression, error=str(e))
        except RuntimeError as e:
            # Report positions and source lines of the expression as written when it
            # fails on its own too (the rewrite shifts columns).
            message = str(e)
            try:
                self._env.compile(expression)
            except RuntimeError as original:
                message = str(original)
            return CompiledSelector(expression, error=_compile_message(message))
        out = program.return_type()
        if out != cel.Type.BOOL and out != cel.Type.DYN:
            return CompiledSelector(
                expression,
                error=f"must evaluate to bool or the unknown type, not {out.name().lower()}",
            )
        tree = self._tree(expression, program)
        regex_error = _constant_regex_error(tree)
        if regex_error is not None:
            return CompiledSelector(expression, error=regex_error)
        cost = estimate_cost(tree)
        if cost > MAX_COST:
            worst = "unbounded" if cost == float("inf") else f"{cost:.0f}"
            return CompiledSelector(
                expression,
                error=f"{TOO_COMPLEX} (estimated worst-case cost {worst} exceeds the budget "
                f"of {MAX_COST})",
                cost=cost,
            )
        return CompiledSelector(expression, program=program, tree=tree, cost=cost)

    def _tree(self, expression: str, program: Any) -> Node:
        """The checked tree of the expression as written (the domain-lookup rewrite would add
        its own cost to the estimate), else of the rewritten program."""
        try:
            return checked_tree(self._env.compile(expression).serialize())
        except RuntimeError:  # pragma: no cover - the rewrite compiled, so does the original
            return checked_tree(program.serialize())

    def matches(
        self, expression: str, driver: str, device: Device, consumable_capacity: bool = False
    ) -> bool:
        """Evaluate a selector for one device (memoized per expression and device).

        Args:
            expression: the selector.
            driver: the driver of the device's ResourceSlice (``device.driver``, and the
                domain of bare attribute and capacity names).
            device: the device.
            consumable_capacity: DRAConsumableCapacity.

        Returns:
            whether the device is selected.

        Raises:
            CelCompileError: the expression does not compile.
            CelRuntimeError: evaluation failed (the error is memoized like a result).
        """
        key = (expression, consumable_capacity, driver, id(device))
        hit = self._results.get(key)
        if hit is not None and hit[0] is device:
            result = hit[1]
        else:
            content = _content_key(device, consumable_capacity)
            ckey = (expression, consumable_capacity, driver, content)
            known = None if content is None else self._by_content.get(ckey)
            if known is not None:
                result = known
            else:
                compiled = self.compile(expression, consumable_capacity)
                if compiled.error is not None:
                    raise CelCompileError(compiled.error)
                result = self._evaluate(compiled, driver, device, consumable_capacity)
                if content is not None:
                    if len(self._by_content) >= self._max_results:
                        self._by_content.clear()
                    self._by_content[ckey] = result
            if len(self._results) >= self._max_results:
                self._results.clear()
            self._results[key] = (device, result)
        if isinstance(result, str):
            raise CelRuntimeError(result)
        return result

    def _evaluate(
        self, compiled: CompiledSelector, driver: str, device: Device, consumable_capacity: bool
    ) -> bool | str:
        self.evaluations += 1
        if self._over_budget(compiled, driver, device):
            return "operation cancelled: actual cost limit exceeded"
        activation = self._activation(driver, device, consumable_capacity)
        try:
            value = compiled.program.eval(activation)
        except RuntimeError as e:
            return _runtime_message(str(e), _typed_find(compiled.tree))
        kind = value.type()
        if kind == cel.Type.BOOL:
            return bool(value.value())
        if kind == cel.Type.ERROR:
            return _runtime_message(str(value.value()), _typed_find(compiled.tree))
        return f"CEL result of type {kind.name().lower()} could not be converted to bool"

    def _over_budget(self, compiled: CompiledSelector, driver: str, device: Device) -> bool:
        """The runtime cost guard: a device within the declared bounds is covered by the
        compile-time estimate; a larger one (the API server would have refused it) is
        re-estimated with its own sizes, once per (expression, sizes)."""
        sizes = device_bounds(driver, device)
        if sizes == DECLARED or compiled.tree is None:
            return False
        key = (compiled.expression, sizes)
        over = self._over.get(key)
        if over is None:
            over = estimate_cost(compiled.tree, sizes) > MAX_COST
            self._over[key] = over
        return over

    def _activation(self, driver: str, device: Device, consumable_capacity: bool) -> Any:
        key = (driver, consumable_capacity, id(device))
        hit = self._inputs.get(key)
        if hit is not None and hit[0] is device:
            return hit[1]
        activation = self._env.Activation(
            {"device": device_input(driver, device, consumable_capacity)}
        )
        if len(self._inputs) >= self._max_inputs:
            self._inputs.clear()
        self._inputs[key] = (device, activation)
        return activation


def _content_key(device: Device, consumable_capacity: bool) -> object:
    """What a selector can see of ``device`` besides its driver (`device_input`'s inputs and
    the sizes the runtime cost guard reads), hashable; None when a value does not hash."""
    key = (
        tuple(device.attributes.items()),
        tuple(device.capacity.items()),
        device.allow_multiple_allocations if consumable_capacity else None,
    )
    try:
        hash(key)
    except TypeError:
        return None
    return key


def device_input(driver: str, device: Device, consumable_capacity: bool) -> dict[str, Any]:
    """The value of the CEL variable ``device`` (``cel.Device`` / ``DeviceMatches``):
    attributes and capacity grouped by domain (bare names under ``driver``), versions and
    quantities as `schedsim.dra.cellib` carriers."""
    attributes: dict[str, dict[str, Any]] = {}
    for name, attr in device.attributes.items():
        domain, ident = split_qualified_name(driver, name)
        value: Any = semver_value(str(attr.value)) if attr.kind == "version" else attr.value
        attributes.setdefault(domain, {})[ident] = value
    capacity: dict[str, dict[str, Any]] = {}
    for name, cap in device.capacity.items():
        domain, ident = split_qualified_name(driver, name)
        capacity.setdefault(domain, {})[ident] = quantity_value(cap.value)
    out: dict[str, Any] = {"driver": driver, "attributes": attributes, "capacity": capacity}
    if consumable_capacity:
        out["allowMultipleAllocations"] = device.allow_multiple_allocations
    return out


def device_bounds(driver: str, device: Device) -> Bounds:
    """The declared bounds (`DECLARED`), widened to this device's sizes where it exceeds
    them (a driver name, attribute value or name longer, or more entries, than the API
    allows). Time: O(attributes + capacities)."""
    longest = max(
        (len(a.value) for a in device.attributes.values() if isinstance(a.value, str)), default=0
    )
    names = [split_qualified_name(driver, n) for n in (*device.attributes, *device.capacity)]
    actual = Bounds(
        driver=len(driver),
        entries=max(len(device.attributes), len(device.capacity)),
        value=longest,
        domain=max((len(d) for d, _ in names), default=0),
        ident=max((len(i) for _, i in names), default=0),
    )
    return DECLARED.widen(actual)
