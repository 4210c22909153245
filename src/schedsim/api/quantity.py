"""Exact Kubernetes resource quantities.

Mirrors ``k8s.io/apimachinery/pkg/api/resource`` (``Quantity`` / ``ParseQuantity``): a
quantity is an optional sign, a decimal number (``"1"``, ``"1.5"``, ``".5"``, ``"5."``) and
then either nothing, a binary SI suffix (``Ki Mi Gi Ti Pi Ei`` = 2**10 .. 2**60), a decimal
SI suffix (``n u m k M G T P E`` = 10**-9 .. 10**18; lowercase ``k``, ``m`` is milli and ``M``
mega) or a decimal exponent (``e``/``E`` and an optionally signed integer: ``"1e3"``,
``"1E-3"``, ``"12e+2"``). Suffixes are case-sensitive and no whitespace is allowed.

Values are kept as exact `fractions.Fraction` (cores for ``cpu``, bytes for memory and
storage, plain counts for ``pods`` and extended resources). Like apimachinery, non-zero
values are rounded away from zero to a multiple of 1n (10**-9), and binary-suffixed values
are capped at 2**63 - 1.

Deliberate differences from apimachinery:

* a quantity must contain at least one digit; apimachinery's fast path reads ``"Mi"``,
  ``"."``, ``"-"`` or ``"k"`` as zero (but rejects ``"Ei"``);
* decimal exponents above 1000 are rejected instead of being stored as huge numbers
  that `Quantity.Value` cannot return anyway (apimachinery also wraps exponents to int32);
* `value` / `milli_value` are true ceilings for negative values too (apimachinery rounds
  negative int64 amounts away from zero); negative requests are invalid in Kubernetes.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

__all__ = ["QuantityError", "format_quantity", "milli_value", "parse_quantity", "value"]


class QuantityError(ValueError):
    """A resource quantity cannot be parsed.

    The message is ``quantity "TEXT": problem``, e.g. ``quantity "1K": unknown suffix "K"``.
    """


_BINARY_SUFFIXES: dict[str, int] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIXES: dict[str, int] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_ALL_SUFFIXES = (*_BINARY_SUFFIXES, *_DECIMAL_SUFFIXES)

_QUANTITY_RE = re.compile(
    r"(?P<sign>[+-]?)(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?"
    r"(?:(?P<suffix>[KMGTPE]i|[numkMGTPE])|[eE](?P<exp>[+-]?[0-9]+))?"
)
_NUMBER_PREFIX_RE = re.compile(r"[+-]?[0-9]*(?:\.[0-9]*)?")

_NANO = 10**9
_MAX_INT64 = 2**63 - 1
_MAX_BINARY = Fraction(_MAX_INT64)
_MIN_EXPONENT = -(2**63)  # apimachinery parses the exponent with strconv.ParseInt(_, 10, 64)
_MAX_EXPONENT = 1000
_ZERO = Fraction(0)

# (power of ten, suffix), largest first, for format_quantity.
_FORMAT_DECIMAL = tuple(sorted([(e, s) for s, e in _DECIMAL_SUFFIXES.items()] + [(0, "")])[::-1])
_FORMAT_BINARY = tuple(sorted(((e, s) for s, e in _BINARY_SUFFIXES.items()), reverse=True))


def parse_quantity(value: str | int | float) -> Fraction:
    """Parse a Kubernetes resource quantity exactly, like apimachinery ``ParseQuantity``.

    Args:
        value: the quantity as written in a manifest: a string such as ``"100m"``,
            ``"1.5Gi"``, ``"5e3"``, or a YAML number (``110``, ``0.5``). A float is converted
            with `str` first, so ``0.1`` is exactly 1/10, as Kubernetes reads the JSON number.

    Returns:
        The exact value in base units (cores for cpu, bytes for memory, counts otherwise):
        ``"100m"`` -> ``Fraction(1, 10)``, ``"1Ki"`` -> ``Fraction(1024)``. Non-zero values
        are rounded away from zero to a multiple of 10**-9 and binary-suffixed values are
        capped at 2**63 - 1, as apimachinery does.

    Raises:
        QuantityError: ``value`` is a bool or not a str/int/float, is empty, contains
            whitespace, has no digits, is not a number, has an unknown (or wrongly cased)
            suffix or a malformed or out-of-range exponent.
    """
    if isinstance(value, str):
        return _parse_str(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise QuantityError(
            f"quantity {value!r}: expected a string or a number, got {type(value).__name__}"
        )
    if isinstance(value, int):
        return Fraction(value)
    return _parse_str(str(value))


@lru_cache(maxsize=4096)
def _parse_str(text: str) -> Fraction:
    m = _QUANTITY_RE.fullmatch(text) if text else None
    if m is None:
        raise QuantityError(f'quantity "{text}": {_diagnose(text)}')
    int_digits = m["int"]
    frac_digits = m["frac"] or ""
    digits = int_digits + frac_digits
    if not digits:
        raise QuantityError(f'quantity "{text}": no digits')
    try:
        mantissa = int(digits)
    except ValueError:  # more digits than int() accepts (sys.get_int_max_str_digits())
        raise QuantityError(f'quantity "{text}": too many digits') from None
    if mantissa == 0:
        return _ZERO

    exp10 = -len(frac_digits)
    binary = False
    suffix = m["suffix"]
    if suffix is not None:
        shift = _BINARY_SUFFIXES.get(suffix)
        if shift is not None:
            mantissa <<= shift
            binary = True
        else:
            exp10 += _DECIMAL_SUFFIXES[suffix]
    elif m["exp"] is not None:
        exp_text = m["exp"]
        if len(exp_text.lstrip("+-").lstrip("0")) > 19:  # beyond int64 (strconv.ParseInt)
            raise QuantityError(f'quantity "{text}": exponent {exp_text} out of range')
        exponent = int(exp_text)
        if exponent > _MAX_EXPONENT:
            raise QuantityError(
                f'quantity "{text}": exponent {exponent} too large (at most {_MAX_EXPONENT})'
            )
        if exponent < _MIN_EXPONENT:
            raise QuantityError(f'quantity "{text}": exponent {exponent} out of range')
        exp10 += exponent

    if exp10 >= 0:
        magnitude = Fraction(mantissa * 10**exp10)
    elif exp10 >= -9:
        magnitude = Fraction(mantissa, 10**-exp10)
    elif exp10 < -9 - len(digits):
        # |value| < 10**len(digits) * 10**exp10 < 1n: rounds up to 1n.
        magnitude = Fraction(1, _NANO)
    else:
        # Round away from zero to a multiple of 1n (inf.RoundUp at scale 9).
        nanos, rest = divmod(mantissa, 10 ** (-9 - exp10))
        magnitude = Fraction(nanos + (rest != 0), _NANO)
    if binary and magnitude > _MAX_BINARY:
        magnitude = _MAX_BINARY
    return -magnitude if m["sign"] == "-" else magnitude


def _diagnose(text: str) -> str:
    """Explain why ``text`` does not match the quantity grammar."""
    if not text:
        return "empty string"
    if any(c.isspace() for c in text):
        return "whitespace is not allowed"
    prefix = _NUMBER_PREFIX_RE.match(text)
    end = prefix.end() if prefix is not None else 0
    if not any(c in "0123456789" for c in text[:end]):
        return "not a number"
    rest = text[end:]
    if rest[0] in ".+-0123456789":
        return "not a number"
    if rest[0] in "eE":
        return f'malformed exponent "{rest}" (expected e or E and an optionally signed integer)'
    hint = [s for s in _ALL_SUFFIXES if s.lower() == rest.lower()]
    did_you_mean = f' (suffixes are case-sensitive: did you mean "{hint[0]}"?)' if hint else ""
    return (
        f'unknown suffix "{rest}"{did_you_mean}; expected one of Ki Mi Gi Ti Pi Ei, '
        "n u m k M G T P E, or an exponent such as e3"
    )


def milli_value(q: Fraction) -> int:
    """Return ``ceil(q * 1000)``, like apimachinery ``Quantity.MilliValue()``.

    Args:
        q: an exact quantity, e.g. CPU in cores from `parse_quantity`.

    Returns:
        The value in thousandths (milli-cores for CPU), rounded up toward +infinity:
        ``"1n"`` -> 1, ``"0.5"`` -> 500, ``"100m"`` -> 100.
    """
    if q.__class__ is Fraction:  # integer arithmetic, no Fraction made
        return -((-q.numerator * 1000) // q.denominator)
    return math.ceil(q * 1000)


def value(q: Fraction) -> int:
    """Return ``ceil(q)``, like apimachinery ``Quantity.Value()``.

    Args:
        q: an exact quantity, e.g. memory or ephemeral-storage bytes, pods or an
            extended resource count from `parse_quantity`.

    Returns:
        The value in base units rounded up toward +infinity: ``"0.5"`` -> 1, ``"1n"`` -> 1,
        ``"-1.5"`` -> -1.
    """
    if q.__class__ is Fraction:
        return -(-q.numerator // q.denominator)
    return math.ceil(q)


def format_quantity(q: Fraction) -> str:
    """Format an exact quantity as a short string that `parse_quantity` reads back exactly.

    Uses the largest decimal SI suffix that keeps an integer mantissa (``1000`` -> ``"1k"``,
    ``Fraction(1, 2)`` -> ``"500m"``, ``0`` -> ``"0"``), unless the value is an integer
    multiple of 1024 no larger than 2**63 - 1 whose largest exact binary suffix gives a
    string at most as long (``1073741824`` -> ``"1Gi"``, but ``10**18`` -> ``"1E"``, not
    ``"976562500000000Ki"``). Values that are not a multiple of 1n are first rounded away
    from zero to one, as `parse_quantity` would
    (``Fraction(1, 3)`` -> ``"333333334n"``).

    Args:
        q: an exact quantity (an int is accepted too).

    Returns:
        The formatted quantity, e.g. ``"-1500m"``, ``"123Mi"``, ``"129M"``.
    """
    q = Fraction(q)
    sign = "-" if q < 0 else ""
    scaled = abs(q) * _NANO
    nanos = scaled.numerator if scaled.denominator == 1 else math.ceil(scaled)
    if nanos == 0:
        return "0"
    decimal = ""
    for exp10, suffix in _FORMAT_DECIMAL:  # ends with (-9, "n"), which always divides
        step = 10 ** (exp10 + 9)
        if nanos % step == 0:
            decimal = f"{sign}{nanos // step}{suffix}"
            break
    units, rest = divmod(nanos, _NANO)
    if rest == 0 and units % 1024 == 0 and units <= _MAX_INT64:
        for shift, suffix in _FORMAT_BINARY:
            if units % (1 << shift) == 0:
                binary = f"{sign}{units >> shift}{suffix}"
                return binary if len(binary) <= len(decimal) else decimal
    return decimal
