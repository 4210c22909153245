"""Tests for `schedsim.api.quantity` against Kubernetes' documented and tested behaviour.

Expected values come from the Kubernetes docs page "Resource units in Kubernetes"
(kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/ and
kubernetes.io/docs/concepts/configuration/manage-resources-containers/) and from
k8s.io/apimachinery/pkg/api/resource/quantity_test.go (TestQuantityParse,
TestQuantityRoundUp, TestScaledValue, TestMilliNewSet), where ``decQuantity(v, s, _)``
means ``v * 10**s``.
"""

from __future__ import annotations

import math
import random
import re
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedsim.api.quantity import (
    QuantityError,
    format_quantity,
    milli_value,
    parse_quantity,
    value,
)

F = Fraction
MAX_INT64 = 2**63 - 1


def dec(v: int, scale: int) -> Fraction:
    """apimachinery's ``decQuantity(v, scale, _)``: v * 10**scale."""
    return F(v) * F(10) ** scale


# TestQuantityParse table of quantity_test.go (input, expected exact value).
APIMACHINERY_PARSE: list[tuple[str, Fraction]] = [
    ("0", dec(0, 0)),
    ("0n", dec(0, 0)),
    ("0u", dec(0, 0)),
    ("0m", dec(0, 0)),
    ("0Ki", dec(0, 0)),
    ("0k", dec(0, 0)),
    ("0Mi", dec(0, 0)),
    ("0M", dec(0, 0)),
    ("0Gi", dec(0, 0)),
    ("0G", dec(0, 0)),
    ("0Ti", dec(0, 0)),
    ("0T", dec(0, 0)),
    # Quantity less numbers are allowed
    ("1", dec(1, 0)),
    # Binary suffixes
    ("1Ki", dec(1024, 0)),
    ("8Ki", dec(8 * 1024, 0)),
    ("7Mi", dec(7 * 1024**2, 0)),
    ("6Gi", dec(6 * 1024**3, 0)),
    ("5Ti", dec(5 * 1024**4, 0)),
    ("4Pi", dec(4 * 1024**5, 0)),
    ("3Ei", dec(3 * 1024**6, 0)),
    ("10Ti", dec(10 * 1024**4, 0)),
    ("100Ti", dec(100 * 1024**4, 0)),
    # Decimal suffixes
    ("5n", dec(5, -9)),
    ("4u", dec(4, -6)),
    ("3m", dec(3, -3)),
    ("9", dec(9, 0)),
    ("8k", dec(8, 3)),
    ("50k", dec(5, 4)),
    ("7M", dec(7, 6)),
    ("6G", dec(6, 9)),
    ("5T", dec(5, 12)),
    ("40T", dec(4, 13)),
    ("300T", dec(3, 14)),
    ("2P", dec(2, 15)),
    ("1E", dec(1, 18)),
    # Decimal exponents
    ("1E-3", dec(1, -3)),
    ("1e3", dec(1, 3)),
    ("1E6", dec(1, 6)),
    ("1e9", dec(1, 9)),
    ("1E12", dec(1, 12)),
    ("1e15", dec(1, 15)),
    ("1E18", dec(1, 18)),
    # Nonstandard but still parsable
    ("1e14", dec(1, 14)),
    ("1e13", dec(1, 13)),
    ("100.035k", dec(100035, 0)),
    # Things that look like floating point
    ("0.001", dec(1, -3)),
    ("0.0005k", dec(5, -1)),
    ("0.005", dec(5, -3)),
    ("0.05", dec(5, -2)),
    ("0.5", dec(5, -1)),
    ("0.00050k", dec(5, -1)),
    ("0.00500", dec(5, -3)),
    ("0.05000", dec(5, -2)),
    ("0.50000", dec(5, -1)),
    ("0.5e0", dec(5, -1)),
    ("0.5e-1", dec(5, -2)),
    ("0.5e-2", dec(5, -3)),
    ("10.035M", dec(10035, 3)),
    ("1.2e3", dec(12, 2)),
    ("1.3E+6", dec(13, 5)),
    ("1.40e9", dec(14, 8)),
    ("1.53E12", dec(153, 10)),
    ("1.6e15", dec(16, 14)),
    ("1.7E18", dec(17, 17)),
    ("9.01", dec(901, -2)),
    ("8.1k", dec(81, 2)),
    ("7.123456M", dec(7123456, 0)),
    ("6.987654321G", dec(6987654321, 0)),
    ("5.444T", dec(5444, 9)),
    ("40.1T", dec(401, 11)),
    ("300.2T", dec(3002, 11)),
    ("2.5P", dec(25, 14)),
    ("1.01E", dec(101, 16)),
    # Things that saturate/round
    ("3.001n", dec(4, -9)),
    ("1.1E-9", dec(2, -9)),
    ("0.0000000001", dec(1, -9)),
    ("0.0000000005", dec(1, -9)),
    ("0.00000000050", dec(1, -9)),
    ("0.5e-9", dec(1, -9)),
    ("0.9n", dec(1, -9)),
    ("0.00000012345", dec(124, -9)),
    ("0.00000012354", dec(124, -9)),
    ("9Ei", F(MAX_INT64)),
    ("9223372036854775807Ki", F(MAX_INT64)),
    ("12E", dec(12, 18)),
    # We'll accept fractional binary stuff, too.
    ("100.035Ki", dec(10243584, -2)),
    ("0.5Mi", dec(1024 * 1024 // 2, 0)),
    ("0.05Gi", dec(536870912, -1)),
    ("0.025Ti", dec(274877906944, -1)),
    # Things written by trolls
    ("0.000000000001Ki", dec(2, -9)),  # rounds up
    (".001", dec(1, -3)),
    (".0001k", dec(100, -3)),
    ("1.", dec(1, 0)),
    ("1.G", dec(1, 9)),
]

# Further cases from the brief and the Kubernetes docs.
EXTRA_PARSE: list[tuple[str, Fraction]] = [
    ("1.5Gi", F(3 * 2**29)),
    ("5e3", F(5000)),
    ("100m", F(1, 10)),
    ("0.1", F(1, 10)),  # docs: cpu "0.1" is equivalent to "100m"
    ("400m", F(2, 5)),  # docs: 400m of memory is 0.4 bytes
    ("128974848", F(128974848)),
    ("129e6", F(129_000_000)),
    ("129M", F(129_000_000)),
    ("128974848000m", F(128974848)),
    ("123Mi", F(128974848)),
    (".5", F(1, 2)),
    ("5.", F(5)),
    ("12e+2", F(1200)),
    ("1E-3", F(1, 1000)),
    ("1e-10", F(1, 10**9)),  # rounds up to 1n
    ("1e-1000", F(1, 10**9)),
    ("1Ei", F(2**60)),
    ("1Pi", F(2**50)),
    ("00012", F(12)),
    ("-0", F(0)),
    ("+0.0", F(0)),
    ("110", F(110)),
    ("1e1000", F(10**1000)),
]

PARSE_CASES = APIMACHINERY_PARSE + EXTRA_PARSE


@pytest.mark.parametrize(("text", "expected"), PARSE_CASES)
def test_parse(text: str, expected: Fraction) -> None:
    got = parse_quantity(text)
    assert got == expected
    assert isinstance(got, Fraction)


@pytest.mark.parametrize(("text", "expected"), [c for c in PARSE_CASES if c[0][0] not in "+-"])
def test_parse_signed(text: str, expected: Fraction) -> None:
    """quantity_test.go re-parses every valid case with a leading "-" and "+"."""
    assert parse_quantity("-" + text) == -expected
    assert parse_quantity("+" + text) == expected


def test_docs_memory_examples_are_roughly_equal() -> None:
    """Docs: "128974848, 129e6, 129M, 128974848000m, 123Mi" are roughly the same value."""
    values = [parse_quantity(s) for s in ("128974848", "129e6", "129M", "128974848000m", "123Mi")]
    assert values[0] == values[3] == values[4] == 123 * 2**20
    assert values[1] == values[2] == 129 * 10**6
    assert max(values) / min(values) < F(101, 100)


def test_docs_cpu_units() -> None:
    """Docs: 1 CPU = 1000m; "0.1" and "100m" are the same; "0.5" is half a core."""
    assert parse_quantity("0.1") == parse_quantity("100m")
    assert milli_value(parse_quantity("0.5")) == 500
    assert milli_value(parse_quantity("1")) == 1000


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (110, F(110)),  # YAML `pods: 110`
        (0, F(0)),
        (-3, F(-3)),
        (2**70, F(2**70)),
        (0.5, F(1, 2)),  # YAML `cpu: 0.5`
        (0.1, F(1, 10)),  # exact 1/10, not the binary float
        (1.5, F(3, 2)),
        (2.0, F(2)),
        (1e-05, F(1, 100000)),  # str() gives "1e-05"
        (1e20, F(10**20)),  # str() gives "1e+20"
        (-0.25, F(-1, 4)),
    ],
)
def test_parse_numbers(raw: int | float, expected: Fraction) -> None:
    assert parse_quantity(raw) == expected


INVALID: list[str] = [
    # quantity_test.go invalid list
    "1.1.M",
    "1+1.0M",
    "0.1mi",
    "0.1am",
    "aoeu",
    ".5i",
    "1i",
    "-3.01i",
    "-3.01e-",
    " 1",  # whitespace is forbidden
    "1 ",
    # the brief / grammar
    "",
    "Mi",
    "1.2.3",
    "1 Gi",
    "1gi",
    "1K",
    "1mi",
    "--1",
    "+-1",
    "-",
    "+",
    ".",
    "-.",
    "k",
    "e3",
    "abc",
    "1e",
    "1E+",
    "1e3.5",
    "1e3i",
    "1Ki3",
    "1Kib",
    "1.1M-1",
    "1.1m+",
    "1KB",
    "1b",
    "0x10",
    "1_000",
    "1,5",
    "\t1",
    "1\n",
    "١",  # non-ASCII digit (ARABIC-INDIC ONE)
    "inf",
    "nan",
    "1e1001",  # exponent too large
    "1e-99999999999999999999",  # exponent beyond int64 (apimachinery: ParseInt fails)
]


@pytest.mark.parametrize("text", INVALID)
def test_invalid(text: str) -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity(text)
    assert str(info.value).startswith(f'quantity "{text}": ')
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "empty"),
        ("abc", "not a number"),
        ("Mi", "no digits"),
        ("1.2.3", "not a number"),
        ("--1", "not a number"),
        ("1 Gi", "whitespace"),
        ("1K", 'unknown suffix "K"'),
        ("1K", 'did you mean "k"'),
        ("1gi", 'did you mean "Gi"'),
        ("1mi", 'did you mean "Mi"'),
        ("1e", "exponent"),
        ("1e1001", "exponent"),
    ],
)
def test_error_messages(text: str, problem: str) -> None:
    with pytest.raises(QuantityError, match=re.escape(f'quantity "{text}": ')) as info:
        parse_quantity(text)
    assert str(info.value).startswith(f'quantity "{text}": ')
    assert problem in str(info.value)


@pytest.mark.parametrize(
    "raw", [True, False, None, [1], {"a": 1}, b"1", float("inf"), float("nan")]
)
def test_invalid_types(raw: object) -> None:
    with pytest.raises(QuantityError, match=r"^quantity "):
        parse_quantity(raw)  # type: ignore[arg-type]


def test_too_many_digits() -> None:
    with pytest.raises(QuantityError, match="too many digits"):
        parse_quantity("1" * 100_000)
    with pytest.raises(QuantityError, match="exponent"):
        parse_quantity("1e-" + "1" * 100_000)
    assert parse_quantity("1e-" + "0" * 30 + "3") == F(1, 1000)


@pytest.mark.parametrize(
    ("text", "milli", "whole"),
    [
        ("1n", 1, 1),
        ("1u", 1, 1),
        ("1m", 1, 1),
        ("0.5", 500, 1),
        ("100m", 100, 1),
        ("1", 1000, 1),
        ("1234", 1234000, 1234),  # TestMilliNewSet
        ("1k", 1_000_000, 1000),
        ("9.01", 9010, 10),  # TestQuantityRoundUp: 9.01 at scale 0 -> 10
        ("1.5Gi", 1610612736000, 1610612736),
        ("0", 0, 0),
        ("1.0001m", 2, 1),
        ("-1.5", -1500, -1),  # ceiling toward +infinity
        ("-0.5m", 0, 0),
        ("-9.01", -9010, -9),
    ],
)
def test_milli_value_and_value(text: str, milli: int, whole: int) -> None:
    q = parse_quantity(text)
    assert milli_value(q) == milli
    assert value(q) == whole
    assert isinstance(milli_value(q), int)
    assert isinstance(value(q), int)


@pytest.mark.parametrize(
    ("scale", "to_milli", "to_unit"),
    [(-9, 1, 1), (-6, 1, 1), (-3, 1, 1), (0, 1000, 1), (2, 100_000, 100)],
)
def test_scaled_value(scale: int, to_milli: int, to_unit: int) -> None:
    """TestScaledValue: NewScaledQuantity(1, scale).ScaledValue(Milli / 0)."""
    q = dec(1, scale)
    assert milli_value(q) == to_milli
    assert value(q) == to_unit


@pytest.mark.parametrize(
    ("q", "text"),
    [
        (F(0), "0"),
        (F(1, 2), "500m"),
        (F(1, 10), "100m"),
        (F(1073741824), "1Gi"),
        (F(1000), "1k"),
        (F(1024), "1Ki"),
        (F(1536 * 2**20), "1536Mi"),
        (F(128974848), "123Mi"),
        (F(129_000_000), "129M"),
        (F(10**18), "1E"),  # binary would be "976562500000000Ki"
        (F(2**60), "1Ei"),
        (F(2**63), "9223372036854775808"),  # binary would be capped on parse
        (F(1, 10**9), "1n"),
        (F(3, 2), "1500m"),
        (F(-3, 2), "-1500m"),
        (F(-(2**30)), "-1Gi"),
        (F(1, 3), "333333334n"),  # rounded up to 1n, as parse_quantity would
        (F(-1, 3), "-333333334n"),
        (F(1, 10**12), "1n"),
        (F(12), "12"),
        (F(1_000_000), "1M"),
    ],
)
def test_format(q: Fraction, text: str) -> None:
    assert format_quantity(q) == text


def test_format_accepts_int() -> None:
    assert format_quantity(2048) == "2Ki"  # type: ignore[arg-type]


@pytest.mark.parametrize(("text", "expected"), PARSE_CASES)
def test_format_round_trips_parsed_values(text: str, expected: Fraction) -> None:
    assert parse_quantity(format_quantity(expected)) == expected


_SCALES = st.one_of(
    st.integers(min_value=-9, max_value=24).map(lambda k: F(10) ** k),
    st.integers(min_value=-9, max_value=70).map(lambda k: F(2) ** k),
)


@given(numerator=st.integers(min_value=-(10**22), max_value=10**22), scale=_SCALES)
def test_format_round_trip_property(numerator: int, scale: Fraction) -> None:
    q = numerator * scale
    text = format_quantity(q)
    assert parse_quantity(text) == q
    assert format_quantity(parse_quantity(text)) == text


@given(st.fractions(min_value=F(-(10**12)), max_value=F(10**12), max_denominator=10**12))
def test_format_rounds_like_parse(q: Fraction) -> None:
    """Any value round-trips to itself rounded away from zero to a multiple of 1n."""
    got = parse_quantity(format_quantity(q))
    expected = F(math.ceil(abs(q) * 10**9), 10**9)
    assert got == (-expected if q < 0 else expected)
    assert abs(got) >= abs(q)
    assert abs(got - q) < F(1, 10**9)


@given(st.integers(min_value=-(10**30), max_value=10**30))
def test_integers_parse_as_themselves(n: int) -> None:
    assert parse_quantity(n) == n
    assert parse_quantity(str(n)) == n
    assert value(F(n)) == n
    assert milli_value(F(n)) == 1000 * n


@given(q=st.fractions(max_denominator=10**12))
def test_value_is_ceiling(q: Fraction) -> None:
    assert value(q) == math.ceil(q)
    assert milli_value(q) == math.ceil(q * 1000)
    assert value(q) - 1 < q <= value(q)


def test_milli_value_and_value_round_up_exactly() -> None:
    """``MilliValue()`` and ``Value()`` round toward +infinity (apimachinery
    ``Quantity.MilliValue``/``Value``, e.g. ``"1n"`` -> 1 milli, ``"-1.5"`` -> -1): the
    integer arithmetic on numerator and denominator agrees with ``math.ceil`` on the exact
    value, for positive and negative values and every denominator."""
    rng = random.Random(7)
    values = [Fraction(0), Fraction(5), Fraction(-3), Fraction(1, 10**9), Fraction(-3, 2)]
    for _ in range(2000):
        den = rng.choice((1, 2, 3, 7, 1000, 1024, 10**9, rng.randint(1, 10**6)))
        values.append(Fraction(rng.randint(-(10**12), 10**12), den))
    for q in values:
        assert milli_value(q) == math.ceil(q * 1000)
        assert value(q) == math.ceil(q)
    assert milli_value(parse_quantity("1n")) == 1
    assert value(parse_quantity("-1.5")) == -1
