"""Selector expressions against Kubernetes' expected outcomes.

Cases are those of ``TestCEL`` in
``staging/src/k8s.io/dynamic-resource-allocation/cel/compile_test.go`` that apply to 1.34
(scalar attributes; the list-type-attribute cases belong to a later alpha), with the
expected match, compile error or runtime error substring given there. The "expensive" case
is refused when compiled, as the API server's validation refuses it (validation_test.go
``CEL-cost``); its estimated cost is checked in test_cel_cost.py.
"""

from __future__ import annotations

import gc
import tracemalloc
from typing import Any

import attrs
import pytest

from schedsim.api.quantity import parse_quantity
from schedsim.api.resource import Device, DeviceAttribute, DeviceCapacity
from schedsim.dra.cel import CelCache, CelCompileError, CelRuntimeError

D = "dra.example.com"

# name: (expression, driver, attributes {name: (kind, value)}, capacity {name: quantity},
#        expected: True/False, ("compile", substring) or ("runtime", substring), cc gate)
CASES: dict[str, tuple[str, str, dict[str, Any], dict[str, str], Any, bool]] = {
    "true": ("true", "", {}, {}, True, False),
    "false": ("false", "", {}, {}, False, False),
    "syntax-error": ("?!", "", {}, {}, ("compile", "Syntax error"), False),
    "type-error": (
        "1",
        "",
        {},
        {},
        ("compile", "must evaluate to bool or the unknown type, not int"),
        False,
    ),
    "runtime-error-lookup-identifier": (
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
        "",
        {},
        {},
        ("runtime", "no such key: noSuchAttr"),
        False,
    ),
    "runtime-error-lookup-map": (
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
        "",
        {},
        {},
        ("runtime", "no such key: noSuchAttr"),
        False,
    ),
    "domain-check-negative": ('"no-such-domain" in device.attributes', "", {}, {}, False, False),
    "domain-check-positive": (
        '"dra.example.com" in device.attributes',
        "",
        {"dra.example.com/something": ("bool", True)},
        {},
        True,
        False,
    ),
    "empty-driver-name": ('device.driver == ""', "", {}, {}, True, False),
    "real-driver-name": ('device.driver == "dra.example.com"', D, {}, {}, True, False),
    "driver-name-qualifier": (
        'device.attributes["dra.example.com"].name',
        D,
        {"name": ("bool", True)},
        {},
        True,
        False,
    ),
    "driver-name-qualifier-map-lookup": (
        'device.attributes["dra.example.com"]["name"]',
        D,
        {"name": ("bool", True)},
        {},
        True,
        False,
    ),
    "bind": (
        'cel.bind(dra, device.attributes["dra.example.com"], dra.name)',
        D,
        {"name": ("bool", True)},
        {},
        True,
        False,
    ),
    "qualified-attribute-name": (
        'device.attributes["other.example.com"].name',
        D,
        {"other.example.com/name": ("bool", True)},
        {},
        True,
        False,
    ),
    "bool": (
        'device.attributes["dra.example.com"].name',
        D,
        {"name": ("bool", True)},
        {},
        True,
        False,
    ),
    "int": (
        'device.attributes["dra.example.com"].name > 0',
        D,
        {"name": ("int", 1)},
        {},
        True,
        False,
    ),
    "string": (
        'device.attributes["dra.example.com"].name == "fish"',
        D,
        {"name": ("string", "fish")},
        {},
        True,
        False,
    ),
    "version": (
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))',
        D,
        {"name": ("version", "1.0.0")},
        {},
        True,
        False,
    ),
    "version_v": (
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true))'
        ' && isSemver("v1.0.0", true)',
        D,
        {"name": ("version", "1.0.0")},
        {},
        True,
        False,
    ),
    "quantity": (
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        D,
        {},
        {"name": "1Mi"},
        True,
        False,
    ),
    "check-positive": (
        '"name" in device.capacity["dra.example.com"] && '
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        D,
        {},
        {"name": "1Mi"},
        True,
        False,
    ),
    "check-negative": (
        '!("name" in device.capacity["dra.example.com"]) || '
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        "",
        {},
        {},
        True,
        False,
    ),
    "all": (
        'device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&\n'
        'device.attributes["dra.example.com"].bool &&\n'
        'device.attributes["dra.example.com"].int > 0 &&\n'
        'device.attributes["dra.example.com"].string == "fish" &&\n'
        'device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&\n'
        'device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&\n'
        'device.attributes["dra.example.com"]["bool"] &&\n'
        'device.attributes["dra.example.com"]["int"] > 0 &&\n'
        'device.attributes["dra.example.com"]["string"] == "fish" &&\n'
        'device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))',
        D,
        {
            "bool": ("bool", True),
            "int": ("int", 1),
            "string": ("string", "fish"),
            "version": ("version", "1.0.0"),
        },
        {"quantity": "1Mi"},
        True,
        False,
    ),
    "many": (
        'device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b'
        ' && device.attributes["dra.example.com"].c',
        D,
        {"a": ("bool", True), "b": ("bool", True), "c": ("bool", True)},
        {},
        True,
        False,
    ),
    "check_attribute_domains": (
        'device.attributes.exists_one(x, x == "dra.example.com")',
        D,
        {"services": ("string", "some_example_value")},
        {},
        True,
        False,
    ),
    "check_attribute_ids": (
        'device.attributes["dra.example.com"].exists_one(x, x == "services")',
        D,
        {"services": ("string", "some_example_value")},
        {},
        True,
        False,
    ),
    "split_attribute": (
        'device.attributes["dra.example.com"].services.split("example").size() >= 2',
        D,
        {"services": ("string", "some_example_value")},
        {},
        True,
        False,
    ),
    "regexp_attribute": (
        'device.attributes["dra.example.com"].services.matches("[^a]?sym")',
        D,
        {"services": ("string", "asymetric")},
        {},
        True,
        False,
    ),
    "check_capacity_domains": (
        'device.capacity.exists_one(x, x == "dra.example.com")',
        D,
        {},
        {"memory": "1Mi"},
        True,
        False,
    ),
    "check_capacity_ids": (
        'device.capacity["dra.example.com"].exists_one(x, x == "memory")',
        D,
        {},
        {"memory": "1Mi"},
        True,
        False,
    ),
    "expensive": (
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, "
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, "
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z4, "
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z5, int('1'.find('[0-9]*')) < 100)))))))",
        D,
        {},
        {},
        ("compile", "Forbidden: too complex, exceeds cost limit"),
        False,
    ),
    "allow_multiple_allocations_default": (
        "device.allowMultipleAllocations == false",
        D,
        {},
        {},
        True,
        True,
    ),
    "allow_multiple_allocations_disabled": (
        "device.allowMultipleAllocations == false",
        D,
        {},
        {},
        ("compile", "undefined field 'allowMultipleAllocations'"),
        False,
    ),
}


def _device(attributes: dict[str, Any], capacity: dict[str, str], multi: bool = False) -> Device:
    return Device(
        name="dev",
        attributes={k: DeviceAttribute(kind, value) for k, (kind, value) in attributes.items()},
        capacity={k: DeviceCapacity(parse_quantity(v)) for k, v in capacity.items()},
        allow_multiple_allocations=multi,
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_compile_test_go_case(name: str) -> None:
    """One TestCEL case: same match result, compile error or runtime error."""
    expression, driver, attributes, capacity, expect, cc = CASES[name]
    cache = CelCache()
    dev = _device(attributes, capacity)
    if isinstance(expect, bool):
        assert cache.matches(expression, driver, dev, cc) is expect
        return
    kind, text = expect
    error = CelCompileError if kind == "compile" else CelRuntimeError
    with pytest.raises(error) as info:
        cache.matches(expression, driver, dev, cc)
    assert text in str(info.value)


def test_allow_multiple_allocations_true() -> None:
    """compile_test.go ``allow_multiple_allocations``: the field reads the device's value."""
    dev = _device({}, {}, multi=True)
    assert CelCache().matches("device.allowMultipleAllocations == true", D, dev, True)


def test_unknown_domain_is_empty_map_but_not_contained() -> None:
    """cel-runtimes.md: ``device.attributes["x"]`` is ``{}``, ``"x" in device.attributes``
    false, ``has(...)`` false, and errors are absorbed by ``||``/``&&``."""
    cache = CelCache()
    dev = _device({"model": ("string", "a100")}, {})
    assert cache.matches('device.attributes["x"].size() == 0', D, dev)
    assert not cache.matches('has(device.attributes["x"].model)', D, dev)
    assert cache.matches('device.attributes["x"].model == "a" || true', D, dev)
    assert not cache.matches('device.attributes["x"].model == "a" && false', D, dev)
    # the rewrite leaves string literals alone
    assert cache.matches('"device.attributes[\\"x\\"]".size() > 0', D, dev)


def test_quantity_and_semver_equality_are_semantic() -> None:
    """``Quantity.Equal`` (1Gi == 1024Mi) and ``Version.EQ`` (build metadata ignored)."""
    cache = CelCache()
    dev = _device({"v": ("version", "1.2.3+build.7")}, {"mem": "1Gi"})
    assert cache.matches('device.capacity["dra.example.com"].mem == quantity("1024Mi")', D, dev)
    assert cache.matches('device.attributes["dra.example.com"].v == semver("1.2.3")', D, dev)
    assert cache.matches('semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', D, dev)
    assert cache.matches('semver("1.0.0-alpha.2").compareTo(semver("1.0.0-alpha.10")) < 0', D, dev)
    assert cache.matches('quantity("1.5").add(quantity("500m")).asInteger() == 2', D, dev)
    with pytest.raises(CelRuntimeError):
        cache.matches('quantity("1.5").asInteger() == 1', D, dev)


def test_results_are_memoized_per_expression_and_device() -> None:
    """Each (expression, device) pair is evaluated once: cost and cel-expr-python's
    per-callback leak are bounded by the distinct pairs, not by the allocations."""
    cache = CelCache()
    devices = [_device({}, {"mem": f"{i}Gi"}) for i in range(10)]
    expr = 'device.capacity["dra.example.com"].mem.compareTo(quantity("5Gi")) >= 0'
    for _ in range(50):
        assert sum(cache.matches(expr, D, d) for d in devices) == 5
    assert cache.evaluations == 10
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for _ in range(2000):
        for d in devices:
            cache.matches(expr, D, d)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert grown < 10_000, f"memoized lookups allocated {grown} bytes"
    assert cache.evaluations == 10


def test_devices_that_look_alike_share_one_evaluation() -> None:
    """A selector sees a device's driver, attributes and capacity, never its name (upstream
    ``cel.Device``): devices equal in those are evaluated once, whatever their name or
    object; a different attribute, capacity or driver is evaluated on its own, and the
    answers are those of a fresh cache."""
    cache = CelCache()
    expr = 'device.attributes["dra.example.com"].model == "a" && device.driver == "dra.example.com"'
    same = [
        attrs.evolve(_device({"model": ("string", "a")}, {"mem": "1Gi"}), name=f"gpu-{i}")
        for i in range(20)
    ]
    assert all(cache.matches(expr, D, d) for d in same)
    assert cache.evaluations == 1
    other = _device({"model": ("string", "b")}, {"mem": "1Gi"})
    assert not cache.matches(expr, D, other)
    bigger = _device({"model": ("string", "a")}, {"mem": "2Gi"})
    assert cache.matches(expr, D, bigger)
    assert not cache.matches(expr, "other.example.com", same[0])
    assert cache.evaluations == 4
    fresh = CelCache()
    assert [fresh.matches(expr, D, d) for d in (same[3], other, bigger)] == [True, False, True]


def test_find_runs_in_linear_time_like_go_regexp() -> None:
    """Kubernetes' ``find``/``findAll`` run on Go's regexp (RE2): ``(a+)+$`` against 36 'a's
    and a '!' is linear there, exponential on a backtracking engine (issue 15 repro 1, which
    ran past 60 s on Python's ``re``). RE2 answers at once: no match."""
    cache = CelCache()
    dev = _device({"s": ("string", "a" * 36 + "!")}, {})
    expr = 'device.attributes["dra.example.com"].s.find("^(a+)+$") == ""'
    assert cache.matches(expr, D, dev)
    expr_all = 'device.attributes["dra.example.com"].s.findAll("(a+)+$").size() == 0'
    assert cache.matches(expr_all, D, dev)


def test_find_and_find_all_results_match_go() -> None:
    """``FindString`` / ``FindAllString(s, n)`` results as in apiserver's regex library tests
    (``"abc 123".find('[0-9]+') == "123"``, ``findAll`` with a limit)."""
    cache = CelCache()
    dev = _device({"s": ("string", "abc 123 def 456")}, {})
    a = 'device.attributes["dra.example.com"].s'
    assert cache.matches(f"{a}.find('[0-9]+') == '123'", D, dev)
    assert cache.matches(f"{a}.find('xyz') == ''", D, dev)
    assert cache.matches(f"{a}.findAll('[0-9]+') == ['123', '456']", D, dev)
    assert cache.matches(f"{a}.findAll('[a-z]+', 1) == ['abc']", D, dev)
    # Go's \\d is ASCII-only, like RE2's; Python's re would also match Arabic-Indic digits.
    dev2 = _device({"s": ("string", "\u0661\u0662")}, {})
    assert cache.matches(f"{a}.find('\\\\d+') == ''", D, dev2)


# Go 1.24 regexp/syntax (parse.go, the ErrorCode texts and the text each error quotes), the
# parser of cel-go's matches and Kubernetes' find/findAll.
_GO_REGEXP_ERRORS = [  # (the pattern as Go sees it, Go's error after "error parsing regexp: ")
    (r"(a)\1", r"invalid escape sequence: `\1`"),
    ("(?=a)", "invalid or unsupported Perl syntax: `(?=`"),
    ("(?i", "invalid or unsupported Perl syntax: `(?i`"),
    ("(?<=a)b", "invalid named capture: `(?<=a)b`"),  # Go >= 1.22 reads (?<name>
    ("(?<!a)b>", "invalid named capture: `(?<!a)b>`"),
    ("(", "missing closing ): `(`"),
    (")", "unexpected ): `)`"),  # apiextensions validation_test.go: find(')')
    ("[a", "missing closing ]: `[a`"),
    ("[z-a]", "invalid character class range: `z-a`"),
    (r"\pX", r"invalid character class range: `\pX`"),
    ("*", "missing argument to repetition operator: `*`"),
    ("a**", "invalid nested repetition operator: `**`"),
    ("a{1001}", "invalid repeat count: `{1001}`"),
    ("a\\", "trailing backslash at end of expression: ``"),
    (r"\C", r"invalid escape sequence: `\C`"),  # RE2 takes \C, Go does not
]


@pytest.mark.parametrize(("pattern", "problem"), _GO_REGEXP_ERRORS)
@pytest.mark.parametrize(
    "call", ["{s}.matches('{p}')", "{s}.find('{p}') == ''", "{s}.findAll('{p}', 1) == []"]
)
def test_constant_regex_refused_at_program_creation(call: str, pattern: str, problem: str) -> None:
    """A constant pattern Go's regexp refuses is refused when the program is built:
    cel-go's MatchesRegexOptimization (OptOptimize, set by Kubernetes' base environment)
    and the regex library's Find/FindAllRegexOptimization return regexp.Compile's error,
    which DRA compile.go reports as ``program instantiation failed: <err>``
    (apiextensions-apiserver validation_test.go: ``find(')')`` gives ``program
    instantiation failed: error parsing regexp: unexpected ): `)```)."""
    expression = call.format(s="device.driver", p=pattern.replace("\\", "\\\\"))
    compiled = CelCache().compile(expression)
    assert compiled.error == f"program instantiation failed: error parsing regexp: {problem}"


@pytest.mark.parametrize(("pattern", "problem"), _GO_REGEXP_ERRORS)
def test_runtime_regex_errors_as_cel_go(pattern: str, problem: str) -> None:
    """A pattern known only at run time: Kubernetes' find returns ``Illegal regex: <Go's
    error>`` (library/regex.go); cel-go's matches wraps Go's error alone (types/string.go
    Match: ``WrapErr(err)``)."""
    literal = pattern.replace("\\\\", "\\")
    cache = CelCache()
    dev = _device({"s": ("string", "aa"), "p": ("string", literal)}, {})
    p = 'device.attributes["dra.example.com"].p'
    with pytest.raises(CelRuntimeError) as info:
        cache.matches(f'device.attributes["dra.example.com"].s.find({p}) == ""', D, dev)
    assert str(info.value) == f"Illegal regex: error parsing regexp: {problem}"
    if pattern.startswith(("(?<", "\\C")):
        return  # cel-cpp's own matches: RE2 takes \C; its message omits the rest after (?<
    with pytest.raises(CelRuntimeError) as info:
        cache.matches(f'device.attributes["dra.example.com"].s.matches({p})', D, dev)
    assert str(info.value) == f"error parsing regexp: {problem}"


def test_valid_go_regexps_compile() -> None:
    """Go 1.22+ takes ``(?<name>x)`` (regexp/syntax parse.go startsWithName); ``\\Q..\\E``
    quotes a ``\\C``."""
    cache = CelCache()
    dev = _device({"s": ("string", "ab\\C")}, {})
    s = 'device.attributes["dra.example.com"].s'
    assert cache.matches(f"{s}.matches('(?<n>a)b')", D, dev)
    assert cache.matches(f"{s}.find('\\\\Q\\\\C\\\\E') == '\\\\C'", D, dev)


_N = 'device.attributes["dra.example.com"].n'  # 0, unknown to the checker (dyn)
_S = 'device.attributes["dra.example.com"].s'  # "abc"


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        # common/types/err.go (cel-go v0.26.0, vendored by Kubernetes 1.34): errDivideByZero,
        # errModulusByZero, errIntOverflow, errUintOverflow; overflow.go's checked
        # conversions return the latter two
        (f"1 / {_N} == 1", "division by zero"),
        (f"1u / uint({_N}) == 1u", "division by zero"),
        (f"1 % {_N} == 1", "modulus by zero"),
        (f"9223372036854775807 + {_N} + 1 == 1", "integer overflow"),
        (f"uint({_N} - 1) == 1u", "unsigned integer overflow"),  # int64ToUint64Checked
        (f"int(18446744073709551615u + uint({_N})) == 1", "integer overflow"),  # uint64ToInt64
        (f"int(1e100 + double({_N})) == 1", "integer overflow"),  # doubleToInt64Checked
        (f"uint(-1.0 + double({_N})) == 1u", "unsigned integer overflow"),
        # string.go String.ConvertToType, which the stdlib's int/uint/double/bool/duration/
        # timestamp overloads of a string call (stdlib/standard.go convertToType)
        (f"int({_S}) == 1", "type conversion error from 'string' to 'int'"),
        (f"uint({_S}) == 1u", "type conversion error from 'string' to 'uint'"),
        (f"double({_S}) == 1.0", "type conversion error from 'string' to 'double'"),
        (f"bool({_S})", "type conversion error from 'string' to 'bool'"),
        (
            f'duration({_S}) == duration("1s")',
            "type conversion error from 'string' to 'google.protobuf.Duration'",
        ),
        (
            f"timestamp({_S}) == timestamp(0)",
            "type conversion error from 'string' to 'google.protobuf.Timestamp'",
        ),
        # list.go baseList.Get and IndexOrError
        (f"[1, 2][{_N} + 5] == 1", "index '5' out of range in list size '2'"),
        (f"[1, 2][{_N} - 1] == 1", "index '-1' out of range in list size '2'"),
        (f"dyn([1])[{_S}] == 1", "unsupported index type 'string' in list"),
        # map.go baseMap.Get: ValOrErr(v, "no such key: %v", key)
        (f'{{"a": 1}}[{_S}] == 1', "no such key: abc"),
        # already alike in both: optional.go, ext/strings.go indexOf
        (f"optional.none().value() == {_N}", "optional.none() dereference"),
        (f'{_S}.indexOf("a", 10) == 0', "index out of range: 10"),
    ],
)
def test_runtime_errors_read_as_cel_go_writes_them(expression: str, message: str) -> None:
    """cel-cpp's runtime errors in cel-go's words, where both mean the same failure (the
    Kubernetes allocator puts cel-go's text after ``CEL runtime error: ``)."""
    cache = CelCache()
    dev = _device({"n": ("int", 0), "s": ("string", "abc")}, {})
    with pytest.raises(CelRuntimeError) as info:
        cache.matches(expression, D, dev)
    assert str(info.value) == message


def test_runtime_errors_without_a_certain_cel_go_wording_are_kept() -> None:
    """ext/strings.go's charAt writes ``index out of range: <i>``, with the index that
    cel-cpp's message does not give: cel-cpp's text is kept."""
    cache = CelCache()
    dev = _device({"s": ("string", "abc")}, {})
    with pytest.raises(CelRuntimeError) as info:
        cache.matches('device.attributes["dra.example.com"].s.charAt(10) == "a"', D, dev)
    assert str(info.value) == "<string>.charAt(<pos>): <pos> is greater than <string>.size()"


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        # decls.go guardedBinaryOp / funcDispatch -> MaybeNoSuchOverload("find", args...):
        # "no such overload: %s(%s)" with the arguments' TypeName()
        (f"{_S}.find({_N}) == ''", "no such overload: find(string, int)"),
        (f"{_N}.find({_S}) == ''", "no such overload: find(int, string)"),
        (f"{_N}.findAll({_S}, 1) == []", "no such overload: findAll(int, string, int)"),
        # a constant pattern: library/regex.go FindRegexOptimization's own check,
        # types.MaybeNoSuchOverloadErr -> the bare message
        (f"{_N}.find('a') == ''", "no such overload"),
        (f"{_N}.findAll('a', 1) == []", "no such overload"),
        # stdlib _+_ is SingletonBinaryBinding over traits.AdderType: String.Add(Int)
        # answers MaybeNoSuchOverloadErr, the bare message
        (f"{_S} + 1 == 2", "no such overload"),
    ],
)
def test_no_such_overload_as_cel_go(expression: str, message: str) -> None:
    """cel-go v0.26's runtime wording for an argument no overload takes."""
    cache = CelCache()
    dev = _device({"n": ("int", 0), "s": ("string", "abc")}, {})
    with pytest.raises(CelRuntimeError) as info:
        cache.matches(expression, D, dev)
    assert str(info.value) == message
