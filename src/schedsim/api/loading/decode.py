"""Small typed accessors for decoding manifest dicts; each raises FieldError naming the field."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any, Final

from schedsim.api.errors import FieldError
from schedsim.api.quantity import QuantityError, parse_quantity

PERCENT_PROBLEM: Final = (
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  "
    "or '93%', regex used for validation is '[0-9]+%')"
)
"""``IsValidPercent``'s message (what ``ValidatePositiveIntOrPercent`` says of a string)."""


def get_map(d: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any]:
    """Return ``d[key]`` as a mapping; absent or null gives an empty mapping."""
    v = d.get(key)
    if v is None:
        return {}
    if not isinstance(v, Mapping):
        raise FieldError(join(path, key), f"expected a mapping, got {type_name(v)}")
    return v


def get_list(d: Mapping[str, Any], key: str, path: str) -> list[Any]:
    """Return ``d[key]`` as a list; absent or null gives an empty list."""
    v = d.get(key)
    if v is None:
        return []
    if not isinstance(v, list):
        raise FieldError(join(path, key), f"expected a list, got {type_name(v)}")
    return v


def get_str(d: Mapping[str, Any], key: str, path: str, default: str = "") -> str:
    """Return ``d[key]`` as a string; absent or null gives ``default``."""
    v = d.get(key)
    if v is None:
        return default
    if not isinstance(v, str):
        raise FieldError(join(path, key), f"expected a string, got {type_name(v)}")
    return v


def get_int(d: Mapping[str, Any], key: str, path: str, default: int = 0) -> int:
    """Return ``d[key]`` as an int; absent or null gives ``default``."""
    v = d.get(key)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int):
        raise FieldError(join(path, key), f"expected an integer, got {type_name(v)}")
    return v


def get_bool(d: Mapping[str, Any], key: str, path: str) -> bool:
    """Return ``d[key]`` as a bool; absent or null gives False."""
    v = d.get(key)
    if v is None:
        return False
    if not isinstance(v, bool):
        raise FieldError(join(path, key), f"expected true or false, got {type_name(v)}")
    return v


def get_str_map(d: Mapping[str, Any], key: str, path: str) -> dict[str, str]:
    """Return a string-to-string map such as labels; values must be strings."""
    out: dict[str, str] = {}
    for k, v in get_map(d, key, path).items():
        if not isinstance(v, str):
            raise FieldError(
                key_path(join(path, key), str(k)), f"expected a string, got {type_name(v)}"
            )
        out[str(k)] = v
    return out


def get_str_list(d: Mapping[str, Any], key: str, path: str) -> tuple[str, ...]:
    """Return a list of strings."""
    items = get_list(d, key, path)
    for i, v in enumerate(items):
        if not isinstance(v, str):
            raise FieldError(f"{join(path, key)}[{i}]", f"expected a string, got {type_name(v)}")
    return tuple(items)


def get_resource_list(d: Mapping[str, Any], key: str, path: str) -> dict[str, Fraction]:
    """Return a ResourceList (resource name -> exact quantity); a negative quantity is an
    error, as in the API server's validation."""
    out: dict[str, Fraction] = {}
    for name, raw in get_map(d, key, path).items():
        if isinstance(raw, bool) or not isinstance(raw, str | int | float):
            raise FieldError(
                key_path(join(path, key), name),
                f'expected a quantity (a string such as "100m" or a number), got {type_name(raw)}',
            )
        try:
            q = parse_quantity(raw)
        except QuantityError as e:
            raise FieldError(key_path(join(path, key), name), str(e)) from None
        if q < 0:
            raise FieldError(
                key_path(join(path, key), name),
                f'quantity "{raw}": must be greater than or equal to 0',
            )
        out[str(name)] = q
    return out


def get_mapping_item(items: list[Any], i: int, path: str) -> Mapping[str, Any]:
    """Return ``items[i]`` checked to be a mapping."""
    v = items[i]
    if not isinstance(v, Mapping):
        raise FieldError(f"{path}[{i}]", f"expected a mapping, got {type_name(v)}")
    return v


_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def dns1123_label_problem(value: str) -> str | None:
    """apimachinery ``IsDNS1123Label``'s first message for ``value`` (at most 63 characters,
    lower case alphanumerics or '-', starting and ending with an alphanumeric), or None."""
    if len(value) > 63:
        return "must be no more than 63 characters"
    if not _DNS1123_LABEL.fullmatch(value):
        return (
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
            "'-', and must start and end with an alphanumeric character (e.g. 'my-name', or "
            "'123-abc')"
        )
    return None


def dns1123_subdomain_problem(value: str) -> str | None:
    """apimachinery ``IsDNS1123Subdomain``'s first message for ``value`` (at most 253
    characters, dot-separated labels), or None."""
    if len(value) > 253:
        return "must be no more than 253 characters"
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        return (
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
            "'-' or '.', and must start and end with an alphanumeric character (e.g. "
            "'example.com')"
        )
    return None


def check_dns1123_label(value: str, field: str) -> None:
    """Raise FieldError unless ``value`` is an RFC 1123 label (`dns1123_label_problem`),
    with the API server's message."""
    problem = dns1123_label_problem(value)
    if problem is not None:
        raise FieldError(field, f"invalid value {value!r}: {problem}")


def check_dns1123_subdomain(value: str, field: str) -> None:
    """Raise FieldError unless ``value`` is an RFC 1123 subdomain
    (`dns1123_subdomain_problem`), with the API server's message."""
    problem = dns1123_subdomain_problem(value)
    if problem is not None:
        raise FieldError(field, f"invalid value {value!r}: {problem}")


def check_api_version(raw: Mapping[str, Any], kind: str, allowed: tuple[str, ...]) -> None:
    """Raise FieldError when ``apiVersion`` is set but is not one the API server serves
    ``kind`` under (an absent apiVersion is accepted, as in node-group templates).

    Args:
        raw: the object.
        kind: its kind, for the message.
        allowed: the served apiVersions, the preferred first.
    """
    version = raw.get("apiVersion")
    if version is None:
        return
    if not isinstance(version, str):
        raise FieldError("apiVersion", f"expected a string, got {type_name(version)}")
    if version not in allowed:
        others = f" (or {', '.join(allowed[1:])})" if len(allowed) > 1 else ""
        raise FieldError(
            "apiVersion", f"unsupported version {version} for {kind}; use {allowed[0]}{others}"
        )


def join(path: str, key: str) -> str:
    """The path of struct field ``key`` under ``path``, joined with a dot as apimachinery's
    ``field.Path.Child`` writes it (a map key is `key_path`'s)."""
    return f"{path}.{key}" if path else key


def key_path(path: str, key: str) -> str:
    """The path of map ``key`` under ``path``, as apimachinery's ``field.Path.Key`` writes
    it: the key in brackets (``metadata.annotations[schedsim.io/duration]``,
    ``spec.containers[0].resources.requests[cpu]``); a list index is ``path[i]``, a struct
    field `join`'s ``path.field``. With no ``path``, the key alone."""
    return f"{path}[{key}]" if path else key


def yaml_value(value: Any) -> str:
    """``value`` as YAML spells it in an error (``true``, ``null``, ``.inf``, ``-.inf``,
    ``.nan``, ``[1, true]``), not as Python does (``True``, ``None``, ``inf``); a string keeps
    its quotes."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else (".inf" if value > 0 else "-.inf")
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return repr(value)


def type_name(v: object) -> str:
    """Name a decoded YAML value's type the way a manifest author thinks of it."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int | float):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, Mapping):
        return "a mapping"
    return type(v).__name__
