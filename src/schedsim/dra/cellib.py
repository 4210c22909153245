"""The Kubernetes CEL library functions DRA selectors use, for cel-expr-python.

Mirrors the parts of ``k8s.io/apiserver/pkg/cel/library`` that device selectors call:

* Quantity (``quantity``, ``isQuantity``; members ``compareTo``, ``isGreaterThan``,
  ``isLessThan``, ``add``, ``sub``, ``asInteger``, ``asApproximateFloat``, ``isInteger``,
  ``sign``);
* Semver, version 1 with the normalize flag (``semver``, ``isSemver`` with one or two
  arguments; members ``major``, ``minor``, ``patch``, ``compareTo``, ``isGreaterThan``,
  ``isLessThan``);
* Lists (``indexOf``, ``lastIndexOf``, ``isSorted``, ``sum``, ``min``, ``max``) and Regex
  (``find``, ``findAll``);
* IP, CIDR and URL (`schedsim.dra.cellib_net`).

cel-expr-python can only carry CEL values and protobuf messages across the Python boundary,
so a Quantity or a Semver travels as a one-entry map ``{TYPE_KEY: canonical string}``
(`quantity_value`, `semver_value`). The canonical string makes CEL's ``==`` behave like
Kubernetes' (``quantity("1Gi") == quantity("1024Mi")``; semver equality ignores build
metadata). Member functions shared by both types take ``dyn`` and dispatch in Python.
Errors raised here become CEL error values, so ``&&``/``||`` can absorb them as in cel-go.

Format (``"%d".format([x])``) comes with cel-cpp's strings extension. Not provided: Authz and
AuthzSelectors (they need the ``authorizer`` variable, which the DRA environment does not
declare, so no DRA selector can call them) and Image (not in the 1.34 base environment).
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache
from typing import Any

import re2  # type: ignore[import-untyped]
from cel_expr_python import cel  # type: ignore[import-untyped]

from schedsim.api.quantity import QuantityError, parse_quantity
from schedsim.dra import cellib_net as net

__all__ = [
    "QUANTITY_KEY",
    "SEMVER_KEY",
    "Semver",
    "go_regexp_error",
    "go_wording",
    "kubernetes_extension",
    "parse_semver",
    "quantity_value",
    "semver_value",
]

QUANTITY_KEY = "kubernetes.Quantity"
"""Key of the one-entry map that carries a Quantity (value: the exact amount as a
`Fraction` string, e.g. ``"1073741824"`` or ``"1/2"``)."""

SEMVER_KEY = "kubernetes.Semver"
"""Key of the one-entry map that carries a Semver (value: ``major.minor.patch[-pre]``)."""

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

# ---------------------------------------------------------------------------- quantities


def quantity_value(amount: Fraction) -> dict[str, str]:
    """The CEL carrier of an exact quantity."""
    return {QUANTITY_KEY: str(amount)}


@lru_cache(maxsize=4096)
def _parse_quantity_literal(text: str) -> dict[str, str]:
    # quantity("40Gi") runs on every evaluation (cel-cpp does not fold calls), so parse once.
    return quantity_value(parse_quantity(text))


def _quantity(text: str) -> dict[str, str]:
    try:
        return _parse_quantity_literal(text)
    except QuantityError as e:
        raise ValueError(str(e)) from None


def _is_quantity(text: str) -> bool:
    try:
        _parse_quantity_literal(text)
    except QuantityError:
        return False
    return True


def _amount(value: Any) -> Fraction | None:
    if isinstance(value, dict) and len(value) == 1 and QUANTITY_KEY in value:
        return Fraction(value[QUANTITY_KEY])
    return None


def _need_amount(value: Any, function: str) -> Fraction:
    amount = _amount(value)
    if amount is None:
        raise TypeError(f"no such overload: {function}")
    return amount


def _as_integer(q: Any) -> int:
    amount = _need_amount(q, "asInteger")
    if amount.denominator != 1 or not _INT64_MIN <= amount <= _INT64_MAX:
        raise ValueError("cannot convert value to integer")
    return int(amount)


def _is_integer(q: Any) -> bool:
    amount = _need_amount(q, "isInteger")
    return amount.denominator == 1 and _INT64_MIN <= amount <= _INT64_MAX


def _as_float(q: Any) -> float:
    return float(_need_amount(q, "asApproximateFloat"))


def _sign(q: Any) -> int:
    amount = _need_amount(q, "sign")
    return (amount > 0) - (amount < 0)


def _operand(value: Any, function: str) -> Fraction:
    if isinstance(value, bool):
        raise TypeError(f"no such overload: {function}")
    if isinstance(value, int):
        return Fraction(value)
    return _need_amount(value, function)


def _add(q: Any, other: Any) -> dict[str, str]:
    return quantity_value(_need_amount(q, "add") + _operand(other, "add"))


def _sub(q: Any, other: Any) -> dict[str, str]:
    return quantity_value(_need_amount(q, "sub") - _operand(other, "sub"))


# ---------------------------------------------------------------------------- semver


class Semver:
    """A parsed semantic version (blang/semver ``Version``): ordering follows semver 2.0.0,
    build metadata is kept for display but ignored by comparison."""

    __slots__ = ("build", "major", "minor", "patch", "pre")

    def __init__(
        self, major: int, minor: int, patch: int, pre: tuple[str, ...], build: tuple[str, ...]
    ) -> None:
        self.major, self.minor, self.patch, self.pre, self.build = major, minor, patch, pre, build

    def canonical(self) -> str:
        """``major.minor.patch[-pre]`` without build metadata (what equality compares)."""
        core = f"{self.major}.{self.minor}.{self.patch}"
        return f"{core}-{'.'.join(self.pre)}" if self.pre else core

    def compare(self, other: Semver) -> int:
        """-1, 0 or 1 (semver precedence)."""
        a = (self.major, self.minor, self.patch)
        b = (other.major, other.minor, other.patch)
        if a != b:
            return -1 if a < b else 1
        if not self.pre or not other.pre:
            return (not self.pre) - (not other.pre)
        for x, y in zip(self.pre, other.pre, strict=False):
            if x == y:
                continue
            xn, yn = x.isdigit(), y.isdigit()
            if xn and yn:
                return -1 if int(x) < int(y) else 1
            if xn != yn:
                return -1 if xn else 1
            return -1 if x < y else 1
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))


_NUM = r"0|[1-9][0-9]*"
_PRE_ID = r"0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*"
_SEMVER_RE = re.compile(
    rf"(?P<major>{_NUM})\.(?P<minor>{_NUM})\.(?P<patch>{_NUM})"
    rf"(?:-(?P<pre>(?:{_PRE_ID})(?:\.(?:{_PRE_ID}))*))?"
    r"(?:\+(?P<build>[0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?"
)
_LOOSE_CORE_RE = re.compile(r"([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?(.*)", re.DOTALL)


def parse_semver(text: str, normalize: bool = False) -> Semver:
    """Parse a version like the Kubernetes Semver library.

    Args:
        text: the version.
        normalize: accept a leading ``v``, missing minor/patch (filled with 0) and leading
            zeros (``semver(s, true)``).

    Raises:
        ValueError: not a valid semantic version.
    """
    if normalize:
        s = text[1:] if text.startswith("v") else text
        m = _LOOSE_CORE_RE.fullmatch(s)
        if m is not None:
            parts = [str(int(p)) if p else "0" for p in m.group(1, 2, 3)]
            s = ".".join(parts) + m.group(4)
        text_to_parse = s
    else:
        text_to_parse = text
    m = _SEMVER_RE.fullmatch(text_to_parse)
    if m is None:
        raise ValueError(f"could not parse {text!r} as semver")
    pre = tuple(m.group("pre").split(".")) if m.group("pre") else ()
    build = tuple(m.group("build").split(".")) if m.group("build") else ()
    return Semver(int(m.group("major")), int(m.group("minor")), int(m.group("patch")), pre, build)


@lru_cache(maxsize=4096)
def semver_value(text: str, normalize: bool = False) -> dict[str, str]:
    """The CEL carrier of a version (raises ValueError for an invalid one)."""
    return {SEMVER_KEY: parse_semver(text, normalize).canonical()}


def _semver_of(value: Any) -> Semver | None:
    if isinstance(value, dict) and len(value) == 1 and SEMVER_KEY in value:
        return _parse_canonical(value[SEMVER_KEY])
    return None


@lru_cache(maxsize=4096)
def _parse_canonical(text: str) -> Semver:
    return parse_semver(text)


def _semver(text: str, normalize: bool = False) -> dict[str, str]:
    return semver_value(text, normalize)


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        parse_semver(text, normalize)
    except ValueError:
        return False
    return True


def _need_semver(value: Any, function: str) -> Semver:
    v = _semver_of(value)
    if v is None:
        raise TypeError(f"no such overload: {function}")
    return v


# ---------------------------------------------------------------------------- shared members


def _compare(a: Any, b: Any) -> int:
    qa = _amount(a)
    if qa is not None:
        qb = _need_amount(b, "compareTo")
        return (qa > qb) - (qa < qb)
    return _need_semver(a, "compareTo").compare(_need_semver(b, "compareTo"))


def _greater(a: Any, b: Any) -> bool:
    return _compare(a, b) > 0


def _less(a: Any, b: Any) -> bool:
    return _compare(a, b) < 0


# ---------------------------------------------------------------------------- lists, regex


def _sort_key(values: list[Any], function: str) -> list[Any]:
    if any(isinstance(v, dict | list) for v in values):
        raise TypeError(f"no such overload: {function}")
    return values


def _is_sorted(values: list[Any]) -> bool:
    vals = _sort_key(values, "isSorted")
    return all(vals[i] <= vals[i + 1] for i in range(len(vals) - 1))


def _sum(values: list[Any]) -> Any:
    """Kubernetes' ``sum``: the list's elements added with CEL's ``+`` (an int sum beyond
    int64 is cel-go's ``integer overflow`` error, not a wider number)."""
    total: Any = 0
    for v in values:
        total = total + v
        if isinstance(total, int) and not isinstance(total, bool):
            if not _INT64_MIN <= total <= _INT64_MAX:
                raise OverflowError("integer overflow")
    return total


def _index_of(values: list[Any], item: Any) -> int:
    """Kubernetes' list ``indexOf``: the first index of an equal element, -1 if none."""
    for i, v in enumerate(values):
        if _cel_equal(v, item):
            return i
    return -1


def _last_index_of(values: list[Any], item: Any) -> int:
    for i in range(len(values) - 1, -1, -1):
        if _cel_equal(values[i], item):
            return i
    return -1


def _cel_equal(a: Any, b: Any) -> bool:
    # CEL: a bool never equals a number (Python: True == 1)
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    return bool(a == b)


def _min(values: list[Any]) -> Any:
    if not values:
        raise ValueError("min called on empty list")
    return min(_sort_key(values, "min"))


def _max(values: list[Any]) -> Any:
    if not values:
        raise ValueError("max called on empty list")
    return max(_sort_key(values, "max"))


_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # the error becomes a CEL error value; RE2 must not print it


# RE2's parser errors (re2/regexp.cc kErrorStrings) in the words of Go's regexp/syntax
# (parse.go ErrorCode), which cel-go and Kubernetes' regex library report.
_GO_ERROR_CODES = {
    "missing )": "missing closing )",
    "missing ]": "missing closing ]",
    "unexpected )": "unexpected )",
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class": "invalid character class",
    "invalid character class range": "invalid character class range",
    "no argument for repetition operator": "missing argument to repetition operator",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid repetition size": "invalid repeat count",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid named capture group": "invalid named capture",
    "invalid UTF-8": "invalid UTF-8",
}


def _go_named_capture(pattern: str, at: int) -> str:
    """Go 1.22+'s verdict on a ``(?<`` that RE2 calls an invalid Perl operator (a
    lookbehind): parsePerlFlags reads ``(?<name>``, so with no ``>`` after it the whole rest
    is an invalid named capture, else the text up to that ``>`` (a lookbehind's name
    starts with ``=`` or ``!``, never a valid capture name)."""
    rest = pattern[at:]
    end = rest.find(">")
    return f"invalid named capture: `{rest if end < 0 else rest[: end + 1]}`"


def go_regexp_error(pattern: str) -> str | None:
    """Go's ``regexp.Compile`` error for ``pattern`` (``error parsing regexp: <code>:
    `<text>```), None when Go compiles it.

    RE2 and Go's regexp/syntax are the same parser design; RE2's error codes are mapped to
    Go's texts (`_GO_ERROR_CODES`), with Go's differences: ``\\C`` (any byte) is RE2 only,
    ``(?<=``/``(?<!`` fall into Go's ``(?<name>`` parsing, and a trailing backslash is
    reported with an empty text.
    """
    if _go_only_invalid_escape(pattern):
        return "error parsing regexp: invalid escape sequence: `\\C`"
    try:
        _compiled(pattern)
    except re2.error as e:
        raw = e.args[0] if e.args else str(e)
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        return go_wording(text, pattern)
    return None


def go_wording(re2_error: str, pattern: str | None = None) -> str:
    """RE2's parser error ``<problem>: <text>`` as Go's ``error parsing regexp: <code>:
    `<text>```; ``pattern`` (when known) places a ``(?<`` lookbehind the way Go reads it,
    else RE2's text is shown."""
    if re2_error == "trailing \\":
        return "error parsing regexp: trailing backslash at end of expression: ``"
    problem, sep, where = re2_error.partition(": ")
    if problem == "invalid perl operator" and where.startswith("(?<"):
        at = -1 if pattern is None else pattern.find(where)
        source = where if pattern is None or at < 0 else pattern
        return "error parsing regexp: " + _go_named_capture(source, max(at, 0))
    if not sep:
        return f"error parsing regexp: {re2_error}"
    return f"error parsing regexp: {_GO_ERROR_CODES.get(problem, problem)}: `{where}`"


def _go_only_invalid_escape(pattern: str) -> bool:
    """Whether ``pattern`` has ``\\C`` outside ``\\Q...\\E`` (RE2 takes it, Go refuses)."""
    i, n = 0, len(pattern)
    while i < n - 1:
        if pattern[i] == "\\":
            nxt = pattern[i + 1]
            if nxt == "C":
                return True
            if nxt == "Q":
                end = pattern.find("\\E", i + 2)
                if end < 0:
                    return False
                i = end + 2
                continue
            i += 2
            continue
        i += 1
    return False


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> Any:
    return re2.compile(pattern, options=_RE2_OPTIONS)


@lru_cache(maxsize=1024)
def _regex(pattern: str) -> Any:
    """The pattern compiled by RE2, as Go's ``regexp`` that cel-go uses: linear time, no
    backreferences or lookarounds (Python's ``re`` backtracks exponentially on ``(a+)+$``).

    Raises:
        ValueError: ``Illegal regex: error parsing regexp: <problem>: `<text>```, the
            wording of Kubernetes' regex library (library/regex.go find/findAll) over Go's
            parser (`go_regexp_error`).
    """
    problem = go_regexp_error(pattern)
    if problem is not None:
        raise ValueError(f"Illegal regex: {problem}")
    return _compiled(pattern)


def _find(s: str, pattern: str) -> str:
    m = _regex(pattern).search(s)
    return str(m.group(0)) if m else ""


def _find_all(s: str, pattern: str, limit: int = -1) -> list[str]:
    out = [str(m.group(0)) for m in _regex(pattern).finditer(s)]
    return out if limit < 0 else out[:limit]


# ---------------------------------------------------------------------------- extension


def _net_decls(decl: Any, member: Any, glob: Any) -> list[Any]:
    """The IP, CIDR and URL library declarations (`schedsim.dra.cellib_net`)."""
    t = cel.Type
    dyn, string, boolean, integer = t.DYN, t.STRING, t.BOOL, t.INT
    f = net.FUNCTIONS
    out = [
        decl(
            "ip",
            glob("k8s_string_to_ip", dyn, [string], f["ip"]),
            member("k8s_cidr_ip", dyn, [dyn], f["cidr.ip"]),
        ),
        decl("isIP", glob("k8s_is_ip", boolean, [string], f["isIP"])),
        decl("ip.isCanonical", glob("k8s_ip_is_canonical", boolean, [string], f["ip.isCanonical"])),
        decl("cidr", glob("k8s_string_to_cidr", dyn, [string], f["cidr"])),
        decl("isCIDR", glob("k8s_is_cidr", boolean, [string], f["isCIDR"])),
        decl("url", glob("k8s_string_to_url", dyn, [string], f["url"])),
        decl("isURL", glob("k8s_is_url_string", boolean, [string], f["isURL"])),
        decl(
            "string", glob("k8s_net_to_string", string, [t.Map(string, string)], net.net_to_string)
        ),
        decl(
            "getQuery",
            member("k8s_url_get_query", t.Map(string, t.List(string)), [dyn], f["getQuery"]),
        ),
    ]
    for name, ret in (
        ("family", integer),
        ("isUnspecified", boolean),
        ("isLoopback", boolean),
        ("isLinkLocalMulticast", boolean),
        ("isLinkLocalUnicast", boolean),
        ("isGlobalUnicast", boolean),
        ("masked", dyn),
        ("prefixLength", integer),
        ("getScheme", string),
        ("getHost", string),
        ("getHostname", string),
        ("getPort", string),
        ("getEscapedPath", string),
    ):
        out.append(decl(name, member(f"k8s_net_{name}", ret, [dyn], f[name])))
    for name in ("containsIP", "containsCIDR"):
        out.append(decl(name, member(f"k8s_net_{name}", boolean, [dyn, dyn], f[name])))
    return out


def kubernetes_extension() -> cel.CelExtension:
    """The CEL extension declaring the functions above (load it after the strings
    extension)."""
    t = cel.Type
    dyn, string, boolean, integer = t.DYN, t.STRING, t.BOOL, t.INT
    dyn_list = t.List(t.DYN)

    def decl(name: str, *overloads: cel.Overload) -> cel.FunctionDecl:
        return cel.FunctionDecl(name, list(overloads))

    def member(oid: str, ret: cel.Type, params: list[cel.Type], impl: Any) -> cel.Overload:
        return cel.Overload(oid, ret, params, is_member=True, impl=impl)

    def glob(oid: str, ret: cel.Type, params: list[cel.Type], impl: Any) -> cel.Overload:
        return cel.Overload(oid, ret, params, impl=impl)

    return cel.CelExtension(
        "kubernetes",
        [
            decl("quantity", glob("k8s_quantity_string", dyn, [string], _quantity)),
            decl("isQuantity", glob("k8s_is_quantity_string", boolean, [string], _is_quantity)),
            decl(
                "semver",
                glob("k8s_semver_string", dyn, [string], _semver),
                glob("k8s_semver_string_bool", dyn, [string, boolean], _semver),
            ),
            decl(
                "isSemver",
                glob("k8s_is_semver_string", boolean, [string], _is_semver),
                glob("k8s_is_semver_string_bool", boolean, [string, boolean], _is_semver),
            ),
            decl("compareTo", member("k8s_compare_to", integer, [dyn, dyn], _compare)),
            decl("isGreaterThan", member("k8s_is_greater_than", boolean, [dyn, dyn], _greater)),
            decl("isLessThan", member("k8s_is_less_than", boolean, [dyn, dyn], _less)),
            decl("add", member("k8s_quantity_add", dyn, [dyn, dyn], _add)),
            decl("sub", member("k8s_quantity_sub", dyn, [dyn, dyn], _sub)),
            decl("asInteger", member("k8s_quantity_as_integer", integer, [dyn], _as_integer)),
            decl("isInteger", member("k8s_quantity_is_integer", boolean, [dyn], _is_integer)),
            decl(
                "asApproximateFloat",
                member("k8s_quantity_as_float", t.DOUBLE, [dyn], _as_float),
            ),
            decl("sign", member("k8s_quantity_sign", integer, [dyn], _sign)),
            decl(
                "major",
                member(
                    "k8s_semver_major", integer, [dyn], lambda v: _need_semver(v, "major").major
                ),
            ),
            decl(
                "minor",
                member(
                    "k8s_semver_minor", integer, [dyn], lambda v: _need_semver(v, "minor").minor
                ),
            ),
            decl(
                "patch",
                member(
                    "k8s_semver_patch", integer, [dyn], lambda v: _need_semver(v, "patch").patch
                ),
            ),
            decl(
                "indexOf",
                member("k8s_list_index_of", integer, [dyn_list, dyn], _index_of),
            ),
            decl(
                "lastIndexOf",
                member("k8s_list_last_index_of", integer, [dyn_list, dyn], _last_index_of),
            ),
            decl("isSorted", member("k8s_list_is_sorted", boolean, [dyn_list], _is_sorted)),
            decl("sum", member("k8s_list_sum", dyn, [dyn_list], _sum)),
            decl("min", member("k8s_list_min", dyn, [dyn_list], _min)),
            decl("max", member("k8s_list_max", dyn, [dyn_list], _max)),
            *_net_decls(decl, member, glob),
            decl("find", member("k8s_string_find", string, [string, string], _find)),
            decl(
                "findAll",
                member("k8s_string_find_all", t.List(string), [string, string], _find_all),
                member(
                    "k8s_string_find_all_n", t.List(string), [string, string, integer], _find_all
                ),
            ),
        ],
    )
