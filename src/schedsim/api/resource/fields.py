"""The field vocabulary shared by the resource.k8s.io kinds (DRA): accepted apiVersions, enum
values and the list limits of 1.34, attribute/capacity name rules, and the decoding helpers
every kind uses (required strings, lists with limits, quantities, JSON, node selectors,
object metadata with a stable default UID).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from datetime import datetime
from fractions import Fraction
from typing import Any, TypeVar

import attrs

from schedsim.api.core import (
    NodeSelectorTerm,
    OwnerReference,
    decode_owner_references,
    parse_timestamp,
)
from schedsim.api.errors import FieldError
from schedsim.api.loading import decode as d
from schedsim.api.loading.decode import key_path
from schedsim.api.quantity import QuantityError, parse_quantity

API_VERSIONS = ("resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1")
"""apiVersions accepted for the DRA kinds (v1 first; the betas are converted to it)."""

ALLOCATION_MODES = ("All", "ExactCount")
DEVICE_TAINT_EFFECTS = ("NoExecute", "NoSchedule")
TOLERATION_OPERATORS = ("Equal", "Exists")
CONFIG_SOURCES = ("FromClaim", "FromClass")
CONDITION_STATUSES = ("False", "True", "Unknown")

# List and size limits of resource.k8s.io/v1 in 1.34 (k8s.io/api/resource/v1/types.go).
MAX_REQUESTS = 32
MAX_SUBREQUESTS = 8
MAX_SELECTORS = 32
MAX_CONSTRAINTS = 32
MAX_CONFIGS = 32
MAX_TOLERATIONS = 16
MAX_RESULTS = 32
MAX_RESERVED_FOR = 256
MAX_DEVICES_PER_SLICE = 128
MAX_ATTRIBUTES_AND_CAPACITIES = 32
MAX_TAINTS = 4
MAX_BINDING_CONDITIONS = 4
MAX_ATTRIBUTE_VALUE_LENGTH = 64
MAX_CEL_EXPRESSION_LENGTH = 10 * 1024

_T = TypeVar("_T")


# --------------------------------------------------------------------------- names


def qualified_name(driver: str, name: str) -> str:
    """The fully qualified form of an attribute or capacity name.

    Upstream rule: a name without a domain belongs to the domain of the driver that
    publishes the device.

    Args:
        driver: the ResourceSlice's ``spec.driver``.
        name: a key of ``attributes``/``capacity`` as written (``model`` or
            ``gpu.example.com/model``).

    Returns:
        ``<driver>/<name>`` for a bare name; a name with a domain unchanged.
    """
    return name if "/" in name else f"{driver}/{name}"


def split_qualified_name(driver: str, name: str) -> tuple[str, str]:
    """``(domain, id)`` of an attribute or capacity name; a bare name gets the driver's
    domain (the CEL ``device.attributes[domain][id]`` lookup)."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def request_name(raw: Mapping[str, Any], path: str, subrequest: bool = False) -> str:
    """A (sub)request name: required, without '/' (results and constraints name subrequests
    ``<request>/<subrequest>``). A request name must be a DNS label, as the API server's
    ``validateRequestName`` requires. The API server requires that of subrequest names too,
    but upstream's own allocator tests (transcribed as cases) use ``subReq-0``, so for
    subrequests only the '/' rule is enforced."""
    name = required_str(raw, "name", path)
    if "/" in name:
        raise FieldError(
            f"{path}.name",
            f"invalid name {name!r}: must not contain '/' (subrequests are referred to as "
            "<request>/<subrequest>)",
        )
    if not subrequest:
        d.check_dns1123_label(name, f"{path}.name")
    return name


def check_driver_name(value: str, field: str) -> None:
    """A driver name: required, without '/' (it is the domain of bare attribute names)."""
    if not value:
        raise FieldError(field, "required")
    if "/" in value:
        raise FieldError(field, f"invalid driver name {value!r}: must not contain '/'")


def check_qualified_name(name: str, field: str) -> None:
    """An attribute or capacity name: ``id`` or ``domain/id`` (validateQualifiedName's
    structure; the C-identifier rule for ``id`` is not enforced, as upstream's allocator tests
    use names like ``capacity-0``)."""
    parts = name.split("/")
    if len(parts) > 2:
        raise FieldError(field, f"invalid name {name!r}: must not contain more than one slash")
    if len(parts) == 2 and not parts[0]:
        raise FieldError(field, f"invalid name {name!r}: the domain must not be empty")
    if not parts[-1]:
        raise FieldError(field, f"invalid name {name!r}: the name must not be empty")


def check_fully_qualified_name(name: str, field: str) -> None:
    """An attribute name that must be ``domain/id`` (constraints); raises FieldError."""
    if "/" not in name:
        raise FieldError(
            field,
            f"invalid name {name!r}: a fully qualified name must be a domain and a name "
            "separated by a slash",
        )
    check_qualified_name(name, field)


# --------------------------------------------------------------------------- decode helpers


def required_str(raw: Mapping[str, Any], key: str, path: str) -> str:
    """``raw[key]`` as a non-empty string; raises FieldError (``required``) otherwise."""
    value = d.get_str(raw, key, path)
    if not value:
        raise FieldError(d.join(path, key), "required")
    return value


def optional_bool(raw: Mapping[str, Any], key: str, path: str) -> bool | None:
    """``raw[key]`` as a bool, or None when absent or null; raises FieldError."""
    return None if raw.get(key) is None else d.get_bool(raw, key, path)


def optional_map(raw: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any] | None:
    """``raw[key]`` as a mapping, or None when absent or null (unlike `d.get_map`, an
    explicitly empty mapping stays distinguishable from an absent one)."""
    if raw.get(key) is None:
        return None
    return d.get_map(raw, key, path)


def decode_items(
    raw: Mapping[str, Any],
    key: str,
    path: str,
    decode: Callable[[Mapping[str, Any], str], _T],
    max_items: int | None = None,
) -> tuple[_T, ...]:
    """Decode a list of mappings with ``decode(item, item_path)``."""
    items = d.get_list(raw, key, path)
    p = d.join(path, key)
    if max_items is not None and len(items) > max_items:
        raise FieldError(p, f"must have at most {max_items} items, got {len(items)}")
    return tuple(decode(d.get_mapping_item(items, i, p), f"{p}[{i}]") for i in range(len(items)))


def str_list(
    raw: Mapping[str, Any], key: str, path: str, max_items: int | None = None
) -> tuple[str, ...]:
    """``raw[key]`` as a tuple of strings with at most ``max_items``; raises FieldError."""
    values = d.get_str_list(raw, key, path)
    if max_items is not None and len(values) > max_items:
        raise FieldError(
            d.join(path, key), f"must have at most {max_items} items, got {len(values)}"
        )
    return values


def check_unique(names: list[str], path: str, what: str = "name") -> None:
    """Raise for the second occurrence of a name; ``path`` is a format with ``{i}``."""
    first: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in first:
            raise FieldError(
                path.format(i=i),
                f"duplicate {what} {name!r} (first at {path.format(i=first[name])})",
            )
        first[name] = i


def decode_quantity(raw: Any, field: str) -> Fraction:
    """A quantity (a string such as ``"1Gi"`` or a number) as an exact Fraction;
    raises FieldError naming ``field``."""
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise FieldError(
            field,
            f'expected a quantity (a string such as "1Gi" or a number), got {d.type_name(raw)}',
        )
    try:
        return parse_quantity(raw)
    except QuantityError as e:
        raise FieldError(field, str(e)) from None


def optional_quantity(raw: Mapping[str, Any], key: str, path: str) -> Fraction | None:
    """``raw[key]`` as an exact quantity, or None when absent or null."""
    v = raw.get(key)
    return None if v is None else decode_quantity(v, d.join(path, key))


def quantity_map(
    raw: Mapping[str, Any], key: str, path: str, check_key: Callable[[str, str], None]
) -> dict[str, Fraction]:
    """A map of name -> quantity (capacity requests, consumed capacity)."""
    p = d.join(path, key)
    out: dict[str, Fraction] = {}
    for name, value in d.get_map(raw, key, path).items():
        name = str(name)
        check_key(name, key_path(p, name))
        out[name] = decode_quantity(value, key_path(p, name))
    return out


def decode_counters(raw: Mapping[str, Any], key: str, path: str) -> dict[str, Fraction]:
    """``counters: {name: {value: quantity}}`` -> name -> quantity; at least one counter."""
    p = d.join(path, key)
    counters = d.get_map(raw, key, path)
    if not counters:
        raise FieldError(p, "required")
    out: dict[str, Fraction] = {}
    for name, counter in counters.items():
        name = str(name)
        cp = key_path(p, name)
        if not isinstance(counter, Mapping):
            raise FieldError(cp, f"expected a mapping, got {d.type_name(counter)}")
        if counter.get("value") is None:
            raise FieldError(f"{cp}.value", "required")
        out[name] = decode_quantity(counter["value"], f"{cp}.value")
    return out


def json_copy(value: Any, field: str) -> Any:
    """A deep copy of JSON data (opaque parameters, device status data)."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise FieldError(
                    field, f"expected a JSON object (string keys), got key {k!r} ({d.type_name(k)})"
                )
            out[k] = json_copy(v, key_path(field, str(k)))
        return out
    if isinstance(value, list):
        return [json_copy(v, f"{field}[{i}]") for i, v in enumerate(value)]
    return value


def json_object(raw: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any]:
    """A required JSON object (RawExtension), deep-copied."""
    p = d.join(path, key)
    value = raw.get(key)
    if value is None:
        raise FieldError(p, "required")
    if not isinstance(value, Mapping):
        raise FieldError(p, f"must be a JSON object (a mapping), got {d.type_name(value)}")
    copied: Mapping[str, Any] = json_copy(value, p)
    return copied


def node_selector_terms(
    raw: Mapping[str, Any], key: str, path: str
) -> tuple[NodeSelectorTerm, ...] | None:
    """A core NodeSelector as its terms (ORed); None when unset. At least one term."""
    sel = optional_map(raw, key, path)
    if sel is None:
        return None
    p = d.join(path, key)
    terms = decode_items(sel, "nodeSelectorTerms", p, NodeSelectorTerm.from_manifest)
    if not terms:
        raise FieldError(f"{p}.nodeSelectorTerms", "must have at least one node selector term")
    return terms


def default_uid(kind: str, namespace: str, name: str) -> str:
    """A stable UID for an object without ``metadata.uid`` (uuid5 of kind and
    namespace/name)."""
    # The same stable scheme as core's Node/Pod UIDs, so output is reproducible.
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"schedsim:{kind}:{namespace}/{name}"))


def is_v1beta1(raw: Mapping[str, Any], kind: str) -> bool:
    """Check apiVersion; True for the v1beta1 shape."""
    version = raw.get("apiVersion")
    if version is not None and not isinstance(version, str):
        raise FieldError("apiVersion", f"expected a string, got {d.type_name(version)}")
    if not version:
        raise FieldError(
            "apiVersion", f"required for {kind}; use resource.k8s.io/v1 (or v1beta1/v1beta2)"
        )
    if version not in API_VERSIONS:
        raise FieldError(
            "apiVersion",
            f"unsupported version {version} for {kind}; use resource.k8s.io/v1 "
            "(or v1beta1/v1beta2)",
        )
    return version == "resource.k8s.io/v1beta1"


@attrs.frozen
class ResourceMeta:
    """The metadata fields the resource.k8s.io kinds keep (from `decode_meta`)."""

    name: str
    namespace: str
    uid: str
    generate_name: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    owner_references: tuple[OwnerReference, ...]
    finalizers: tuple[str, ...]
    creation_timestamp: datetime | None
    deletion_timestamp: datetime | None


def decode_meta(raw: Mapping[str, Any], kind: str, namespaced: bool) -> ResourceMeta:
    """``metadata`` of a DRA object: name required, namespace defaulted to
    ``default`` when ``namespaced``, uid defaulted by `default_uid`; raises FieldError."""
    meta = d.get_map(raw, "metadata", "")
    name = required_str(meta, "name", "metadata")
    namespace = (d.get_str(meta, "namespace", "metadata") or "default") if namespaced else ""
    return ResourceMeta(
        name=name,
        namespace=namespace,
        uid=d.get_str(meta, "uid", "metadata") or default_uid(kind, namespace, name),
        generate_name=d.get_str(meta, "generateName", "metadata"),
        labels=d.get_str_map(meta, "labels", "metadata"),
        annotations=d.get_str_map(meta, "annotations", "metadata"),
        owner_references=decode_owner_references(meta),
        finalizers=d.get_str_list(meta, "finalizers", "metadata"),
        creation_timestamp=parse_timestamp(
            meta.get("creationTimestamp"), "metadata.creationTimestamp"
        ),
        deletion_timestamp=parse_timestamp(
            meta.get("deletionTimestamp"), "metadata.deletionTimestamp"
        ),
    )


def decode_binding_conditions(
    raw: Mapping[str, Any], path: str
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``bindingConditions`` and ``bindingFailureConditions`` (each at most
    MAX_BINDING_CONDITIONS; one requires the other); raises FieldError."""
    conditions = str_list(raw, "bindingConditions", path, MAX_BINDING_CONDITIONS)
    failures = str_list(raw, "bindingFailureConditions", path, MAX_BINDING_CONDITIONS)
    if failures and not conditions:
        raise FieldError(
            f"{path}.bindingConditions",
            "bindingConditions are required to use bindingFailureConditions",
        )
    if conditions and not failures:
        raise FieldError(
            f"{path}.bindingFailureConditions",
            "bindingFailureConditions are required to use bindingConditions",
        )
    return conditions, failures
