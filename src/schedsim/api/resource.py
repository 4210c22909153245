"""resource.k8s.io objects for Dynamic Resource Allocation (DRA): DeviceClass, ResourceClaim,
ResourceClaimTemplate and ResourceSlice, in the shape of ``resource.k8s.io/v1`` (Kubernetes 1.34).

``v1`` is read natively. ``v1beta2`` has the same shape for every field read here.
``v1beta1`` is converted the way the API server converts it: a request's fields
(``deviceClassName``, ``selectors``, ``allocationMode``, ``count``, ``adminAccess``,
``tolerations``, ``capacity``) sit on the request itself and become ``exactly``; a slice's
device fields sit under ``basic:``; a slice's ``nodeName: ""`` / ``allNodes: false`` mean
unset. Errors name the field as written in the input (``spec.devices.requests[0].count`` for
v1beta1, ``spec.devices.requests[0].exactly.count`` for v1).

Decoding applies the API server's defaulting (``allocationMode`` defaults to ``ExactCount``,
``count`` to 1 for ``ExactCount``, a toleration's ``operator`` to ``Equal``) and the cheap
parts of its validation that the allocator relies on: allocation modes and counts, exactly one
of ``exactly``/``firstAvailable``, exactly one node-selection field per slice, exactly one
value type per attribute (versions are semver), required names and the structure of the names
the allocator splits (no '/' in request and driver names; attribute and capacity names are
``id`` or ``domain/id``; constraint attributes are fully qualified), references from
constraints, configs and results to requests, and the list limits of 1.34. Name *formats*
(DNS labels, C identifiers) are not enforced: upstream's own allocator tests use names such as
``subReq-0`` and ``capacity-0``. Fields newer than 1.34 are ignored like any unknown field,
except list-typed attribute values (``ints``, ...), which are rejected.

Objects are immutable (`attrs.frozen`; lists are tuples, maps are read-only `Mapping`s).
Quantities are exact `Fraction`s (`schedsim.api.quantity`). Attribute and capacity names stay
as written: a name without a domain belongs to the driver's domain (`qualified_name`,
`Device.attribute`, `Device.qualified_attributes`).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime
from fractions import Fraction
from typing import Any, Literal, TypeVar

import attrs

from schedsim.api import _decode as d
from schedsim.api.core import (
    NodeSelectorTerm,
    OwnerReference,
    decode_owner_references,
    parse_timestamp,
)
from schedsim.api.errors import FieldError
from schedsim.api.quantity import QuantityError, parse_quantity
from schedsim.api.resources import is_extended_resource_name

__all__ = [
    "ALLOCATION_MODES",
    "API_VERSIONS",
    "AllocatedDeviceStatus",
    "AllocationResult",
    "AttributeType",
    "CapacityRequestPolicy",
    "CapacityRequestPolicyRange",
    "Condition",
    "CounterSet",
    "Device",
    "DeviceAllocationConfiguration",
    "DeviceAttribute",
    "DeviceCapacity",
    "DeviceClaimConfiguration",
    "DeviceClass",
    "DeviceConstraint",
    "DeviceCounterConsumption",
    "DeviceRequest",
    "DeviceRequestAllocationResult",
    "DeviceSelector",
    "DeviceSubRequest",
    "DeviceTaint",
    "DeviceToleration",
    "ExactDeviceRequest",
    "NetworkDeviceData",
    "OpaqueDeviceConfiguration",
    "ResourceClaim",
    "ResourceClaimConsumerReference",
    "ResourceClaimSpec",
    "ResourceClaimStatus",
    "ResourceClaimTemplate",
    "ResourcePool",
    "ResourceSlice",
    "qualified_name",
    "split_qualified_name",
]

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

AttributeType = Literal["int", "bool", "string", "version"]
"""The type of a device attribute value, as written (``int``, ``bool``, ``string``,
``version``)."""

_ATTRIBUTE_TYPES: tuple[AttributeType, ...] = ("int", "bool", "string", "version")
_LIST_ATTRIBUTE_TYPES = ("ints", "bools", "strings", "versions")

# v1beta1 puts these fields of `exactly` on the request itself.
_BETA1_REQUEST_FIELDS = (
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
    "capacity",
)
# v1beta1 puts these device fields under `basic:`.
_DEVICE_FIELDS = (
    "attributes",
    "capacity",
    "consumesCounters",
    "nodeName",
    "nodeSelector",
    "allNodes",
    "taints",
    "bindsToNode",
    "bindingConditions",
    "bindingFailureConditions",
    "allowMultipleAllocations",
)
_SLICE_NODE_SELECTION = "`nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection`"
_DEVICE_NODE_SELECTION = "`nodeName`, `nodeSelector`, or `allNodes`"

_NUM = r"(0|[1-9][0-9]*)"
_PRE = r"(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD = r"[0-9a-zA-Z-]+"
_SEMVER = re.compile(rf"{_NUM}\.{_NUM}\.{_NUM}(-{_PRE}(\.{_PRE})*)?(\+{_BUILD}(\.{_BUILD})*)?")

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


def _request_name(raw: Mapping[str, Any], path: str, subrequest: bool = False) -> str:
    """A (sub)request name: required, without '/' (results and constraints name subrequests
    ``<request>/<subrequest>``). A request name must be a DNS label, as the API server's
    ``validateRequestName`` requires. The API server requires that of subrequest names too,
    but upstream's own allocator tests (transcribed as cases) use ``subReq-0``, so for
    subrequests only the '/' rule is enforced."""
    name = _required_str(raw, "name", path)
    if "/" in name:
        raise FieldError(
            f"{path}.name",
            f"invalid name {name!r}: must not contain '/' (subrequests are referred to as "
            "<request>/<subrequest>)",
        )
    if not subrequest:
        d.check_dns1123_label(name, f"{path}.name")
    return name


def _driver_name(value: str, field: str) -> None:
    """A driver name: required, without '/' (it is the domain of bare attribute names)."""
    if not value:
        raise FieldError(field, "required")
    if "/" in value:
        raise FieldError(field, f"invalid driver name {value!r}: must not contain '/'")


def _check_qualified_name(name: str, field: str) -> None:
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


def _check_fully_qualified_name(name: str, field: str) -> None:
    if "/" not in name:
        raise FieldError(
            field,
            f"invalid name {name!r}: a fully qualified name must be a domain and a name "
            "separated by a slash",
        )
    _check_qualified_name(name, field)


# --------------------------------------------------------------------------- decode helpers


def _required_str(raw: Mapping[str, Any], key: str, path: str) -> str:
    value = d.get_str(raw, key, path)
    if not value:
        raise FieldError(d.join(path, key), "required")
    return value


def _optional_bool(raw: Mapping[str, Any], key: str, path: str) -> bool | None:
    return None if raw.get(key) is None else d.get_bool(raw, key, path)


def _optional_map(raw: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any] | None:
    """``raw[key]`` as a mapping, or None when absent or null (unlike `d.get_map`, an
    explicitly empty mapping stays distinguishable from an absent one)."""
    if raw.get(key) is None:
        return None
    return d.get_map(raw, key, path)


def _items(
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


def _str_list(
    raw: Mapping[str, Any], key: str, path: str, max_items: int | None = None
) -> tuple[str, ...]:
    values = d.get_str_list(raw, key, path)
    if max_items is not None and len(values) > max_items:
        raise FieldError(
            d.join(path, key), f"must have at most {max_items} items, got {len(values)}"
        )
    return values


def _unique(names: list[str], path: str, what: str = "name") -> None:
    """Raise for the second occurrence of a name; ``path`` is a format with ``{i}``."""
    first: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in first:
            raise FieldError(
                path.format(i=i),
                f"duplicate {what} {name!r} (first at {path.format(i=first[name])})",
            )
        first[name] = i


def _quantity(raw: Any, field: str) -> Fraction:
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise FieldError(
            field,
            f'expected a quantity (a string such as "1Gi" or a number), got {d.type_name(raw)}',
        )
    try:
        return parse_quantity(raw)
    except QuantityError as e:
        raise FieldError(field, str(e)) from None


def _optional_quantity(raw: Mapping[str, Any], key: str, path: str) -> Fraction | None:
    v = raw.get(key)
    return None if v is None else _quantity(v, d.join(path, key))


def _quantity_map(
    raw: Mapping[str, Any], key: str, path: str, check_key: Callable[[str, str], None]
) -> dict[str, Fraction]:
    """A map of name -> quantity (capacity requests, consumed capacity)."""
    p = d.join(path, key)
    out: dict[str, Fraction] = {}
    for name, value in d.get_map(raw, key, path).items():
        name = str(name)
        check_key(name, f"{p}.{name}")
        out[name] = _quantity(value, f"{p}.{name}")
    return out


def _counters(raw: Mapping[str, Any], key: str, path: str) -> dict[str, Fraction]:
    """``counters: {name: {value: quantity}}`` -> name -> quantity; at least one counter."""
    p = d.join(path, key)
    counters = d.get_map(raw, key, path)
    if not counters:
        raise FieldError(p, "required")
    out: dict[str, Fraction] = {}
    for name, counter in counters.items():
        name = str(name)
        cp = f"{p}.{name}"
        if not isinstance(counter, Mapping):
            raise FieldError(cp, f"expected a mapping, got {d.type_name(counter)}")
        if counter.get("value") is None:
            raise FieldError(f"{cp}.value", "required")
        out[name] = _quantity(counter["value"], f"{cp}.value")
    return out


def _json(value: Any, field: str) -> Any:
    """A deep copy of JSON data (opaque parameters, device status data)."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise FieldError(
                    field, f"expected a JSON object (string keys), got key {k!r} ({d.type_name(k)})"
                )
            out[k] = _json(v, f"{field}.{k}")
        return out
    if isinstance(value, list):
        return [_json(v, f"{field}[{i}]") for i, v in enumerate(value)]
    return value


def _json_object(raw: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any]:
    """A required JSON object (RawExtension), deep-copied."""
    p = d.join(path, key)
    value = raw.get(key)
    if value is None:
        raise FieldError(p, "required")
    if not isinstance(value, Mapping):
        raise FieldError(p, f"must be a JSON object (a mapping), got {d.type_name(value)}")
    copied: Mapping[str, Any] = _json(value, p)
    return copied


def _node_selector(
    raw: Mapping[str, Any], key: str, path: str
) -> tuple[NodeSelectorTerm, ...] | None:
    """A core NodeSelector as its terms (ORed); None when unset. At least one term."""
    sel = _optional_map(raw, key, path)
    if sel is None:
        return None
    p = d.join(path, key)
    terms = _items(sel, "nodeSelectorTerms", p, NodeSelectorTerm.from_manifest)
    if not terms:
        raise FieldError(f"{p}.nodeSelectorTerms", "must have at least one node selector term")
    return terms


def _default_uid(kind: str, namespace: str, name: str) -> str:
    # The same stable scheme as core's Node/Pod UIDs, so output is reproducible.
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"schedsim:{kind}:{namespace}/{name}"))


def _is_v1beta1(raw: Mapping[str, Any], kind: str) -> bool:
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
class _Meta:
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


def _meta(raw: Mapping[str, Any], kind: str, namespaced: bool) -> _Meta:
    meta = d.get_map(raw, "metadata", "")
    name = _required_str(meta, "name", "metadata")
    namespace = (d.get_str(meta, "namespace", "metadata") or "default") if namespaced else ""
    return _Meta(
        name=name,
        namespace=namespace,
        uid=d.get_str(meta, "uid", "metadata") or _default_uid(kind, namespace, name),
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


# --------------------------------------------------------------------------- shared parts


@attrs.frozen
class DeviceSelector:
    """``selectors[i]``: a CEL expression over ``device`` that must evaluate to true
    (``cel.expression``, the only selector type)."""

    expression: str

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> DeviceSelector:
        """Decode one selector; raises FieldError when ``cel.expression`` is missing."""
        cel = _optional_map(raw, "cel", path)
        if cel is None:
            raise FieldError(f"{path}.cel", "required")
        expression = _required_str(cel, "expression", f"{path}.cel")
        if len(expression) > MAX_CEL_EXPRESSION_LENGTH:
            raise FieldError(
                f"{path}.cel.expression",
                f"must have at most {MAX_CEL_EXPRESSION_LENGTH} bytes, got {len(expression)}",
            )
        return cls(expression=expression)


def _selectors(raw: Mapping[str, Any], path: str) -> tuple[DeviceSelector, ...]:
    return _items(raw, "selectors", path, DeviceSelector.from_manifest, MAX_SELECTORS)


@attrs.frozen
class OpaqueDeviceConfiguration:
    """``opaque``: driver-specific parameters, passed through to the driver unchanged."""

    driver: str
    parameters: Mapping[str, Any] = attrs.field(factory=dict)

    @classmethod
    def from_config(cls, raw: Mapping[str, Any], path: str) -> OpaqueDeviceConfiguration:
        """Decode the ``opaque`` member of a configuration entry (required)."""
        opaque = _optional_map(raw, "opaque", path)
        p = d.join(path, "opaque")
        if opaque is None:
            raise FieldError(p, "required")
        driver = d.get_str(opaque, "driver", p)
        _driver_name(driver, f"{p}.driver")
        return cls(driver=driver, parameters=_json_object(opaque, "parameters", p))


@attrs.frozen
class DeviceToleration:
    """A request's toleration of device taints (alpha DRADeviceTaints)."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> DeviceToleration:
        """Decode one toleration (operator defaults to Equal); raises FieldError."""
        operator = d.get_str(raw, "operator", path) or "Equal"
        if operator not in TOLERATION_OPERATORS:
            raise FieldError(
                f"{path}.operator",
                f"unsupported value {operator!r}: want one of {list(TOLERATION_OPERATORS)}",
            )
        value = d.get_str(raw, "value", path)
        if operator == "Exists" and value:
            raise FieldError(f"{path}.value", "must be empty for operator `Exists`")
        effect = d.get_str(raw, "effect", path)
        if effect and effect not in DEVICE_TAINT_EFFECTS:
            raise FieldError(
                f"{path}.effect",
                f"unsupported value {effect!r}: want one of {list(DEVICE_TAINT_EFFECTS)}",
            )
        seconds = raw.get("tolerationSeconds")
        return cls(
            key=d.get_str(raw, "key", path),
            operator=operator,
            value=value,
            effect=effect,
            toleration_seconds=None
            if seconds is None
            else d.get_int(raw, "tolerationSeconds", path),
        )

    def tolerates(self, taint: DeviceTaint) -> bool:
        """Whether this toleration tolerates ``taint``: an empty effect matches all effects,
        an empty key with ``Exists`` matches every taint, ``Exists`` ignores the value,
        ``Equal`` compares values (resourceclaim ``ToleratesTaint``)."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value


def _tolerations(raw: Mapping[str, Any], path: str) -> tuple[DeviceToleration, ...]:
    return _items(raw, "tolerations", path, DeviceToleration.from_manifest, MAX_TOLERATIONS)


def _request_ref(name: str, field: str, requests: Mapping[str, frozenset[str]]) -> None:
    """A reference to ``req`` or ``req/subreq`` of the claim (constraints, configs,
    results)."""
    main, sep, sub = name.partition("/")
    known = main in requests and (not sep or sub in requests[main])
    if not known:
        raise FieldError(
            field,
            f"{name!r} must be the name of a request in the claim or the name of a request and "
            "a subrequest separated by '/'",
        )


def _request_refs(
    raw: Mapping[str, Any], path: str, requests: Mapping[str, frozenset[str]]
) -> tuple[str, ...]:
    refs = _str_list(raw, "requests", path, MAX_REQUESTS)
    for i, ref in enumerate(refs):
        _request_ref(ref, f"{path}.requests[{i}]", requests)
    _unique(list(refs), f"{path}.requests[{{i}}]", "request")
    return refs


# --------------------------------------------------------------------------- DeviceClass


@attrs.frozen
class DeviceClass:
    """A cluster-scoped DeviceClass: selectors every device of the class must pass (ANDed)
    and configuration copied into allocations (``FromClass``).

    Attributes:
        extended_resource_name: ``spec.extendedResourceName`` (alpha DRAExtendedResource);
            the implicit name ``deviceclass.resource.kubernetes.io/<name>`` is not added here.
    """

    name: str
    uid: str = ""
    labels: Mapping[str, str] = attrs.field(factory=dict)
    annotations: Mapping[str, str] = attrs.field(factory=dict)
    selectors: tuple[DeviceSelector, ...] = ()
    config: tuple[OpaqueDeviceConfiguration, ...] = ()
    extended_resource_name: str | None = None

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> DeviceClass:
        """Decode a DeviceClass (v1, v1beta2 or v1beta1); raises FieldError."""
        _is_v1beta1(raw, "DeviceClass")
        meta = _meta(raw, "DeviceClass", namespaced=False)
        spec = d.get_map(raw, "spec", "")
        ext = spec.get("extendedResourceName")
        extended = None
        if ext is not None:
            extended = d.get_str(spec, "extendedResourceName", "spec")
            if not is_extended_resource_name(extended):
                raise FieldError(
                    "spec.extendedResourceName",
                    f"invalid value {extended!r}: must be a valid extended resource name "
                    "(a domain outside kubernetes.io, '/', and a name, e.g. example.com/gpu)",
                )
        return cls(
            name=meta.name,
            uid=meta.uid,
            labels=meta.labels,
            annotations=meta.annotations,
            selectors=_selectors(spec, "spec"),
            config=_items(
                spec, "config", "spec", OpaqueDeviceConfiguration.from_config, MAX_CONFIGS
            ),
            extended_resource_name=extended,
        )


# --------------------------------------------------------------------------- claims


def _allocation_mode(raw: Mapping[str, Any], path: str) -> tuple[str, int]:
    """allocationMode (default ExactCount) and count (default 1 for ExactCount)."""
    mode = d.get_str(raw, "allocationMode", path) or "ExactCount"
    if mode not in ALLOCATION_MODES:
        raise FieldError(
            f"{path}.allocationMode",
            f"unsupported value {mode!r}: want one of {list(ALLOCATION_MODES)}",
        )
    count = d.get_int(raw, "count", path)
    if mode == "All":
        if count != 0:
            raise FieldError(f"{path}.count", "must not be specified when allocationMode is 'All'")
    elif count == 0:
        count = 1
    elif count < 0:
        raise FieldError(f"{path}.count", f"must be greater than zero, got {count}")
    elif count >= 2**63:  # an int64 field: the API server cannot decode it
        raise FieldError(f"{path}.count", f"{count} is out of range for a 64-bit integer")
    return mode, count


def _device_class_name(raw: Mapping[str, Any], path: str) -> str:
    name = _required_str(raw, "deviceClassName", path)
    return name


def _capacity_requests(raw: Mapping[str, Any], path: str) -> dict[str, Fraction]:
    capacity = _optional_map(raw, "capacity", path)
    if capacity is None:
        return {}
    return _quantity_map(capacity, "requests", d.join(path, "capacity"), _check_qualified_name)


@attrs.frozen
class ExactDeviceRequest:
    """``requests[i].exactly`` (in v1beta1 these fields sit on the request itself).

    Attributes:
        allocation_mode: ``ExactCount`` (the default) or ``All``.
        count: devices wanted for ``ExactCount`` (default 1); 0 for ``All``.
        admin_access: ``adminAccess`` as written (None when unset).
        capacity_requests: ``capacity.requests`` (alpha consumable capacity).
    """

    device_class_name: str
    selectors: tuple[DeviceSelector, ...] = ()
    allocation_mode: str = "ExactCount"
    count: int = 1
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity_requests: Mapping[str, Fraction] = attrs.field(factory=dict)

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> ExactDeviceRequest:
        """Decode the exact-request fields found in ``raw`` (``path`` names where they sit);
        applies the API defaults; raises FieldError."""
        class_name = _device_class_name(raw, path)
        selectors = _selectors(raw, path)
        mode, count = _allocation_mode(raw, path)
        return cls(
            device_class_name=class_name,
            selectors=selectors,
            allocation_mode=mode,
            count=count,
            admin_access=_optional_bool(raw, "adminAccess", path),
            tolerations=_tolerations(raw, path),
            capacity_requests=_capacity_requests(raw, path),
        )


@attrs.frozen
class DeviceSubRequest:
    """``requests[i].firstAvailable[j]``: one alternative of a prioritized list (beta
    DRAPrioritizedList). Results name it ``<request>/<subrequest>``."""

    name: str
    device_class_name: str
    selectors: tuple[DeviceSelector, ...] = ()
    allocation_mode: str = "ExactCount"
    count: int = 1
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity_requests: Mapping[str, Fraction] = attrs.field(factory=dict)

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> DeviceSubRequest:
        """Decode one subrequest; applies the API defaults; raises FieldError."""
        name = _request_name(raw, path, subrequest=True)
        class_name = _device_class_name(raw, path)
        selectors = _selectors(raw, path)
        mode, count = _allocation_mode(raw, path)
        return cls(
            name=name,
            device_class_name=class_name,
            selectors=selectors,
            allocation_mode=mode,
            count=count,
            tolerations=_tolerations(raw, path),
            capacity_requests=_capacity_requests(raw, path),
        )


def _exactly_given_beta1(raw: Mapping[str, Any]) -> bool:
    """v1beta1 conversion: any request field set -> the request has ``exactly``."""
    for key in _BETA1_REQUEST_FIELDS:
        v = raw.get(key)
        if v is None:
            continue
        if key in ("deviceClassName", "allocationMode") and v == "":
            continue
        if key == "count" and not isinstance(v, bool) and v == 0:
            continue
        return True
    return False


@attrs.frozen
class DeviceRequest:
    """``spec.devices.requests[i]``: exactly one of ``exactly`` and ``first_available``."""

    name: str
    exactly: ExactDeviceRequest | None = None
    first_available: tuple[DeviceSubRequest, ...] = ()

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str, v1beta1: bool) -> DeviceRequest:
        """Decode one request in the v1 (``exactly:``) or v1beta1 (fields on the request)
        shape; raises FieldError."""
        name = _request_name(raw, path)
        if v1beta1:
            if raw.get("exactly") is not None:
                raise FieldError(
                    f"{path}.exactly",
                    "not a field of resource.k8s.io/v1beta1 requests: set its fields on the "
                    "request itself, or use apiVersion resource.k8s.io/v1",
                )
            exact_raw: Mapping[str, Any] | None = raw if _exactly_given_beta1(raw) else None
            exact_path = path
        else:
            for key in _BETA1_REQUEST_FIELDS:
                if raw.get(key) is not None:
                    raise FieldError(
                        f"{path}.{key}",
                        "not a field of the request in this apiVersion: put it under `exactly` "
                        "(fields directly on the request are the resource.k8s.io/v1beta1 form)",
                    )
            exact_raw = _optional_map(raw, "exactly", path)
            exact_path = f"{path}.exactly"
        subs = d.get_list(raw, "firstAvailable", path)
        if exact_raw is not None and subs:
            raise FieldError(
                path,
                "exactly one of `exactly` or `firstAvailable` is required, but multiple fields "
                "are set",
            )
        if exact_raw is None and not subs:
            raise FieldError(path, "exactly one of `exactly` or `firstAvailable` is required")
        if exact_raw is not None:
            return cls(name=name, exactly=ExactDeviceRequest.from_manifest(exact_raw, exact_path))
        first = _items(raw, "firstAvailable", path, DeviceSubRequest.from_manifest, MAX_SUBREQUESTS)
        _unique([s.name for s in first], f"{path}.firstAvailable[{{i}}].name")
        return cls(name=name, first_available=first)


@attrs.frozen
class DeviceConstraint:
    """``spec.devices.constraints[i]``: ``match_attribute`` (equal values) or
    ``distinct_attribute`` (alpha; pairwise different values) over the devices of
    ``requests`` (``req`` or ``req/subreq``; empty = all requests). Attribute names are
    fully qualified."""

    requests: tuple[str, ...] = ()
    match_attribute: str | None = None
    distinct_attribute: str | None = None

    @classmethod
    def from_manifest(
        cls, raw: Mapping[str, Any], path: str, requests: Mapping[str, frozenset[str]]
    ) -> DeviceConstraint:
        """Decode one constraint; raises FieldError."""
        refs = _request_refs(raw, path, requests)
        match = raw.get("matchAttribute")
        distinct = raw.get("distinctAttribute")
        if match is not None and distinct is not None:
            raise FieldError(
                path,
                "exactly one of `matchAttribute` or `distinctAttribute` is required, but "
                "multiple fields are set",
            )
        if match is None and distinct is None:
            raise FieldError(
                path, "exactly one of `matchAttribute` or `distinctAttribute` is required"
            )
        key = "matchAttribute" if match is not None else "distinctAttribute"
        attribute = d.get_str(raw, key, path)
        _check_fully_qualified_name(attribute, f"{path}.{key}")
        return cls(
            requests=refs,
            match_attribute=attribute if match is not None else None,
            distinct_attribute=attribute if distinct is not None else None,
        )


@attrs.frozen
class DeviceClaimConfiguration:
    """``spec.devices.config[i]``: opaque configuration for ``requests`` (empty = all)."""

    opaque: OpaqueDeviceConfiguration
    requests: tuple[str, ...] = ()

    @classmethod
    def from_manifest(
        cls, raw: Mapping[str, Any], path: str, requests: Mapping[str, frozenset[str]]
    ) -> DeviceClaimConfiguration:
        """Decode one claim configuration; raises FieldError."""
        refs = _request_refs(raw, path, requests)
        return cls(opaque=OpaqueDeviceConfiguration.from_config(raw, path), requests=refs)


@attrs.frozen
class ResourceClaimSpec:
    """A claim's ``spec`` (= ``spec.devices``; also a template's ``spec.spec``)."""

    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[DeviceConstraint, ...] = ()
    config: tuple[DeviceClaimConfiguration, ...] = ()

    def request_names(self) -> dict[str, frozenset[str]]:
        """Request name -> its subrequest names (empty for an ``exactly`` request)."""
        return {r.name: frozenset(s.name for s in r.first_available) for r in self.requests}

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str, v1beta1: bool) -> ResourceClaimSpec:
        """Decode a claim spec (the mapping holding ``devices``); raises FieldError."""
        devices = d.get_map(raw, "devices", path)
        dp = d.join(path, "devices")
        requests = _items(
            devices,
            "requests",
            dp,
            lambda r, p: DeviceRequest.from_manifest(r, p, v1beta1),
            MAX_REQUESTS,
        )
        _unique([r.name for r in requests], f"{dp}.requests[{{i}}].name")
        names = {r.name: frozenset(s.name for s in r.first_available) for r in requests}
        constraints = _items(
            devices,
            "constraints",
            dp,
            lambda c, p: DeviceConstraint.from_manifest(c, p, names),
            MAX_CONSTRAINTS,
        )
        config = _items(
            devices,
            "config",
            dp,
            lambda c, p: DeviceClaimConfiguration.from_manifest(c, p, names),
            MAX_CONFIGS,
        )
        return cls(requests=requests, constraints=constraints, config=config)


@attrs.frozen
class DeviceRequestAllocationResult:
    """``status.allocation.devices.results[i]``: one allocated device.

    Attributes:
        request: ``req`` or ``req/subreq`` (prioritized list).
        admin_access: as written (None when unset).
        share_id: set for devices with ``allowMultipleAllocations`` (consumable capacity).
    """

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    share_id: str | None = None
    consumed_capacity: Mapping[str, Fraction] = attrs.field(factory=dict)

    @classmethod
    def from_manifest(
        cls, raw: Mapping[str, Any], path: str, requests: Mapping[str, frozenset[str]]
    ) -> DeviceRequestAllocationResult:
        """Decode one result; raises FieldError."""
        request = _required_str(raw, "request", path)
        _request_ref(request, f"{path}.request", requests)
        driver = d.get_str(raw, "driver", path)
        _driver_name(driver, f"{path}.driver")
        pool = _required_str(raw, "pool", path)
        device = _required_str(raw, "device", path)
        conditions, failure_conditions = _binding_conditions(raw, path)
        share_id = raw.get("shareID")
        return cls(
            request=request,
            driver=driver,
            pool=pool,
            device=device,
            admin_access=_optional_bool(raw, "adminAccess", path),
            tolerations=_tolerations(raw, path),
            binding_conditions=conditions,
            binding_failure_conditions=failure_conditions,
            share_id=None if share_id is None else d.get_str(raw, "shareID", path),
            consumed_capacity=_quantity_map(raw, "consumedCapacity", path, _check_qualified_name),
        )


@attrs.frozen
class DeviceAllocationConfiguration:
    """``status.allocation.devices.config[i]``: configuration copied from the class
    (``FromClass``) or the claim (``FromClaim``)."""

    source: str
    opaque: OpaqueDeviceConfiguration
    requests: tuple[str, ...] = ()

    @classmethod
    def from_manifest(
        cls, raw: Mapping[str, Any], path: str, requests: Mapping[str, frozenset[str]]
    ) -> DeviceAllocationConfiguration:
        """Decode one allocation configuration; raises FieldError."""
        source = _required_str(raw, "source", path)
        if source not in CONFIG_SOURCES:
            raise FieldError(
                f"{path}.source",
                f"unsupported value {source!r}: want one of {list(CONFIG_SOURCES)}",
            )
        refs = _request_refs(raw, path, requests)
        return cls(
            source=source, opaque=OpaqueDeviceConfiguration.from_config(raw, path), requests=refs
        )


@attrs.frozen
class AllocationResult:
    """``status.allocation``.

    Attributes:
        node_selector: the nodes where the devices are available (terms are ORed); None means
            every node.
        allocation_timestamp: set by the scheduler when binding conditions are used.
    """

    results: tuple[DeviceRequestAllocationResult, ...] = ()
    config: tuple[DeviceAllocationConfiguration, ...] = ()
    node_selector: tuple[NodeSelectorTerm, ...] | None = None
    allocation_timestamp: datetime | None = None

    @classmethod
    def from_manifest(
        cls, raw: Mapping[str, Any], path: str, requests: Mapping[str, frozenset[str]]
    ) -> AllocationResult:
        """Decode an allocation; raises FieldError."""
        devices = d.get_map(raw, "devices", path)
        dp = d.join(path, "devices")
        return cls(
            results=_items(
                devices,
                "results",
                dp,
                lambda r, p: DeviceRequestAllocationResult.from_manifest(r, p, requests),
                MAX_RESULTS,
            ),
            config=_items(
                devices,
                "config",
                dp,
                lambda c, p: DeviceAllocationConfiguration.from_manifest(c, p, requests),
                2 * MAX_CONFIGS,
            ),
            node_selector=_node_selector(raw, "nodeSelector", path),
            allocation_timestamp=parse_timestamp(
                raw.get("allocationTimestamp"), d.join(path, "allocationTimestamp")
            ),
        )


@attrs.frozen
class ResourceClaimConsumerReference:
    """``status.reservedFor[i]``: who uses the claim (``resource: pods`` and the pod's
    name and UID; ``api_group`` is empty for pods)."""

    resource: str
    name: str
    uid: str
    api_group: str = ""

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> ResourceClaimConsumerReference:
        """Decode one consumer reference; raises FieldError."""
        return cls(
            api_group=d.get_str(raw, "apiGroup", path),
            resource=_required_str(raw, "resource", path),
            name=_required_str(raw, "name", path),
            uid=_required_str(raw, "uid", path),
        )


@attrs.frozen
class Condition:
    """A metav1.Condition (``status.devices[i].conditions``)."""

    type: str
    status: str
    reason: str = ""
    message: str = ""
    last_transition_time: datetime | None = None
    observed_generation: int = 0

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> Condition:
        """Decode one condition; raises FieldError for a missing type or a bad status."""
        status = d.get_str(raw, "status", path)
        if status not in CONDITION_STATUSES:
            raise FieldError(
                f"{path}.status",
                f"unsupported value {status!r}: want one of {list(CONDITION_STATUSES)}",
            )
        return cls(
            type=_required_str(raw, "type", path),
            status=status,
            reason=d.get_str(raw, "reason", path),
            message=d.get_str(raw, "message", path),
            last_transition_time=parse_timestamp(
                raw.get("lastTransitionTime"), f"{path}.lastTransitionTime"
            ),
            observed_generation=d.get_int(raw, "observedGeneration", path),
        )


@attrs.frozen
class NetworkDeviceData:
    """``status.devices[i].networkData``."""

    interface_name: str = ""
    ips: tuple[str, ...] = ()
    hardware_address: str = ""


@attrs.frozen
class AllocatedDeviceStatus:
    """``status.devices[i]``: what the driver reports about an allocated device (binding
    conditions are checked against ``conditions``)."""

    driver: str
    pool: str
    device: str
    share_id: str | None = None
    conditions: tuple[Condition, ...] = ()
    data: Mapping[str, Any] | None = None
    network_data: NetworkDeviceData | None = None

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> AllocatedDeviceStatus:
        """Decode one device status; raises FieldError."""
        driver = d.get_str(raw, "driver", path)
        _driver_name(driver, f"{path}.driver")
        pool = _required_str(raw, "pool", path)
        device = _required_str(raw, "device", path)
        share_id = raw.get("shareID")
        network = _optional_map(raw, "networkData", path)
        np = f"{path}.networkData"
        return cls(
            driver=driver,
            pool=pool,
            device=device,
            share_id=None if share_id is None else d.get_str(raw, "shareID", path),
            conditions=_items(raw, "conditions", path, Condition.from_manifest, 8),
            data=None if raw.get("data") is None else _json_object(raw, "data", path),
            network_data=None
            if network is None
            else NetworkDeviceData(
                interface_name=d.get_str(network, "interfaceName", np),
                ips=d.get_str_list(network, "ips", np),
                hardware_address=d.get_str(network, "hardwareAddress", np),
            ),
        )


@attrs.frozen
class ResourceClaimStatus:
    """A claim's ``status``; ``allocation`` None means not allocated."""

    allocation: AllocationResult | None = None
    reserved_for: tuple[ResourceClaimConsumerReference, ...] = ()
    devices: tuple[AllocatedDeviceStatus, ...] = ()

    @classmethod
    def from_manifest(
        cls, raw: Mapping[str, Any], path: str, requests: Mapping[str, frozenset[str]]
    ) -> ResourceClaimStatus:
        """Decode a claim status; raises FieldError."""
        alloc = _optional_map(raw, "allocation", path)
        allocation = (
            None
            if alloc is None
            else AllocationResult.from_manifest(alloc, d.join(path, "allocation"), requests)
        )
        reserved = _items(
            raw,
            "reservedFor",
            path,
            ResourceClaimConsumerReference.from_manifest,
            MAX_RESERVED_FOR,
        )
        rp = d.join(path, "reservedFor")
        _unique([r.uid for r in reserved], f"{rp}[{{i}}].uid", "uid")
        if reserved and allocation is None:
            raise FieldError(rp, "may not be specified when `allocation` is not set")
        return cls(
            allocation=allocation,
            reserved_for=reserved,
            devices=_items(raw, "devices", path, AllocatedDeviceStatus.from_manifest),
        )


@attrs.frozen
class ResourceClaim:
    """A namespaced ResourceClaim.

    Attributes:
        namespace: defaults to ``"default"`` as the API server does.
        uid: metadata.uid; when absent a stable UUID derived from namespace/name.
        owner_references: a pod-owned claim (from a template) has the pod as controller.
        deletion_timestamp: set while the claim is being deleted.
        spec: the requested devices (immutable in the API).
        status: allocation, reservations and device status.
    """

    name: str
    namespace: str = "default"
    uid: str = ""
    generate_name: str = ""
    labels: Mapping[str, str] = attrs.field(factory=dict)
    annotations: Mapping[str, str] = attrs.field(factory=dict)
    owner_references: tuple[OwnerReference, ...] = ()
    finalizers: tuple[str, ...] = ()
    creation_timestamp: datetime | None = None
    deletion_timestamp: datetime | None = None
    spec: ResourceClaimSpec = attrs.field(factory=ResourceClaimSpec)
    status: ResourceClaimStatus = attrs.field(factory=ResourceClaimStatus)

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> ResourceClaim:
        """Decode a ResourceClaim (v1, v1beta2 or v1beta1); raises FieldError."""
        v1beta1 = _is_v1beta1(raw, "ResourceClaim")
        meta = _meta(raw, "ResourceClaim", namespaced=True)
        spec = ResourceClaimSpec.from_manifest(d.get_map(raw, "spec", ""), "spec", v1beta1)
        status = ResourceClaimStatus.from_manifest(
            d.get_map(raw, "status", ""), "status", spec.request_names()
        )
        return cls(
            name=meta.name,
            namespace=meta.namespace,
            uid=meta.uid,
            generate_name=meta.generate_name,
            labels=meta.labels,
            annotations=meta.annotations,
            owner_references=meta.owner_references,
            finalizers=meta.finalizers,
            creation_timestamp=meta.creation_timestamp,
            deletion_timestamp=meta.deletion_timestamp,
            spec=spec,
            status=status,
        )


@attrs.frozen
class ResourceClaimTemplate:
    """A namespaced ResourceClaimTemplate: the claim controller creates one claim per pod
    from it.

    Attributes:
        claim_labels: ``spec.metadata.labels``, copied to the created claims.
        claim_annotations: ``spec.metadata.annotations``, copied to the created claims.
        spec: ``spec.spec``, the created claims' spec.
    """

    name: str
    namespace: str = "default"
    uid: str = ""
    labels: Mapping[str, str] = attrs.field(factory=dict)
    annotations: Mapping[str, str] = attrs.field(factory=dict)
    claim_labels: Mapping[str, str] = attrs.field(factory=dict)
    claim_annotations: Mapping[str, str] = attrs.field(factory=dict)
    spec: ResourceClaimSpec = attrs.field(factory=ResourceClaimSpec)

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> ResourceClaimTemplate:
        """Decode a ResourceClaimTemplate (v1, v1beta2 or v1beta1); raises FieldError."""
        v1beta1 = _is_v1beta1(raw, "ResourceClaimTemplate")
        meta = _meta(raw, "ResourceClaimTemplate", namespaced=True)
        spec = d.get_map(raw, "spec", "")
        claim_meta = d.get_map(spec, "metadata", "spec")
        return cls(
            name=meta.name,
            namespace=meta.namespace,
            uid=meta.uid,
            labels=meta.labels,
            annotations=meta.annotations,
            claim_labels=d.get_str_map(claim_meta, "labels", "spec.metadata"),
            claim_annotations=d.get_str_map(claim_meta, "annotations", "spec.metadata"),
            spec=ResourceClaimSpec.from_manifest(
                d.get_map(spec, "spec", "spec"), "spec.spec", v1beta1
            ),
        )


# --------------------------------------------------------------------------- slices


@attrs.frozen
class DeviceAttribute:
    """A typed attribute value: exactly one of ``int``, ``bool``, ``string``, ``version``.

    ``kind`` keeps the type (a ``version`` is a semver string, compared as a version; an
    ``int`` 1 is not the ``bool`` true).
    """

    kind: AttributeType
    value: int | bool | str

    @classmethod
    def from_manifest(cls, raw: Any, path: str) -> DeviceAttribute:
        """Decode one attribute value; raises FieldError unless exactly one type is set."""
        if not isinstance(raw, Mapping):
            raise FieldError(path, f"expected a mapping, got {d.type_name(raw)}")
        given = [t for t in _ATTRIBUTE_TYPES if raw.get(t) is not None]
        lists = [t for t in _LIST_ATTRIBUTE_TYPES if raw.get(t) is not None]
        if lists and not given:
            raise FieldError(
                f"{path}.{lists[0]}",
                "list-typed attribute values are not supported (schedsim follows Kubernetes "
                "1.34: one of int, bool, string, version)",
            )
        if len(given) + len(lists) != 1:
            got = ", ".join(given + lists) if given or lists else "none"
            raise FieldError(
                path,
                f"exactly one value must be specified (one of int, bool, string, version), "
                f"got {got}",
            )
        kind = given[0]
        field = f"{path}.{kind}"
        value: int | bool | str
        if kind == "int":
            number = d.get_int(raw, "int", path)
            if not -(2**63) <= number < 2**63:
                raise FieldError(field, f"{number} is out of range for a 64-bit integer")
            value = number
        elif kind == "bool":
            value = d.get_bool(raw, "bool", path)
        else:
            value = d.get_str(raw, kind, path)
            if len(value) > MAX_ATTRIBUTE_VALUE_LENGTH:
                raise FieldError(
                    field,
                    f"must have at most {MAX_ATTRIBUTE_VALUE_LENGTH} bytes, got {len(value)}",
                )
            if kind == "version" and not _SEMVER.fullmatch(value):
                raise FieldError(
                    field,
                    f"invalid version {value!r}: must be a string compatible with semver.org "
                    "spec 2.0.0 (e.g. 1.2.3)",
                )
        return cls(kind=kind, value=value)


@attrs.frozen
class CapacityRequestPolicyRange:
    """``requestPolicy.validRange``: ``min`` (required), optional ``max`` and ``step``."""

    min: Fraction
    max: Fraction | None = None
    step: Fraction | None = None


@attrs.frozen
class CapacityRequestPolicy:
    """``capacity.<name>.requestPolicy`` (alpha consumable capacity): how a request for this
    capacity is rounded; at most one of ``valid_values`` (ascending) and ``valid_range``."""

    default: Fraction | None = None
    valid_values: tuple[Fraction, ...] = ()
    valid_range: CapacityRequestPolicyRange | None = None

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> CapacityRequestPolicy:
        """Decode a request policy; raises FieldError."""
        default = _optional_quantity(raw, "default", path)
        vp = f"{path}.validValues"
        values_raw = d.get_list(raw, "validValues", path)
        values = tuple(_quantity(v, f"{vp}[{i}]") for i, v in enumerate(values_raw))
        rng = _optional_map(raw, "validRange", path)
        if values and rng is not None:
            raise FieldError(
                path,
                'exactly one policy can be specified, cannot specify "validValues" and '
                '"validRange" at the same time',
            )
        for i in range(1, len(values)):
            if values[i] < values[i - 1]:
                raise FieldError(f"{vp}[{i}]", "values must be sorted in ascending order")
        valid_range = None
        if rng is not None:
            rp = f"{path}.validRange"
            low = _optional_quantity(rng, "min", rp)
            if low is None:
                raise FieldError(f"{rp}.min", "required when validRange is defined")
            high = _optional_quantity(rng, "max", rp)
            if high is not None and high < low:
                raise FieldError(f"{rp}.max", "must not be less than min")
            step = _optional_quantity(rng, "step", rp)
            if step is not None and step <= 0:
                raise FieldError(f"{rp}.step", "must be greater than zero")
            valid_range = CapacityRequestPolicyRange(min=low, max=high, step=step)
        if (values or valid_range is not None) and default is None:
            which = "validValues" if values else "validRange"
            raise FieldError(f"{path}.default", f"required when {which} is defined")
        return cls(default=default, valid_values=values, valid_range=valid_range)


@attrs.frozen
class DeviceCapacity:
    """``capacity.<name>``: an exact quantity and, for devices with
    ``allowMultipleAllocations``, an optional request policy."""

    value: Fraction
    request_policy: CapacityRequestPolicy | None = None


@attrs.frozen
class DeviceCounterConsumption:
    """``consumesCounters[i]`` (alpha partitionable devices): counters this device takes from
    the slice's counter set ``counter_set`` when allocated."""

    counter_set: str
    counters: Mapping[str, Fraction] = attrs.field(factory=dict)

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> DeviceCounterConsumption:
        """Decode one counter consumption; raises FieldError."""
        counter_set = _required_str(raw, "counterSet", path)
        return cls(counter_set=counter_set, counters=_counters(raw, "counters", path))


@attrs.frozen
class CounterSet:
    """``spec.sharedCounters[i]`` (alpha partitionable devices): named counters that the
    slice's devices consume."""

    name: str
    counters: Mapping[str, Fraction] = attrs.field(factory=dict)

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> CounterSet:
        """Decode one counter set; raises FieldError."""
        name = _required_str(raw, "name", path)
        return cls(name=name, counters=_counters(raw, "counters", path))


@attrs.frozen
class DeviceTaint:
    """``devices[i].taints[j]`` (alpha DRADeviceTaints)."""

    key: str
    effect: str
    value: str = ""
    time_added: datetime | None = None

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> DeviceTaint:
        """Decode one device taint; raises FieldError for a missing key or a bad effect."""
        key = _required_str(raw, "key", path)
        effect = _required_str(raw, "effect", path)
        if effect not in DEVICE_TAINT_EFFECTS:
            raise FieldError(
                f"{path}.effect",
                f"unsupported value {effect!r}: want one of {list(DEVICE_TAINT_EFFECTS)}",
            )
        return cls(
            key=key,
            effect=effect,
            value=d.get_str(raw, "value", path),
            time_added=parse_timestamp(raw.get("timeAdded"), f"{path}.timeAdded"),
        )


def _binding_conditions(
    raw: Mapping[str, Any], path: str
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    conditions = _str_list(raw, "bindingConditions", path, MAX_BINDING_CONDITIONS)
    failures = _str_list(raw, "bindingFailureConditions", path, MAX_BINDING_CONDITIONS)
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


@attrs.frozen
class Device:
    """``spec.devices[i]`` of a ResourceSlice (in v1beta1 the fields after ``name`` sit
    under ``basic:``).

    Attributes:
        attributes: name as written (bare or ``domain/id``) -> typed value.
        capacity: name as written -> exact quantity (and request policy).
        consumes_counters: counters taken from the slice's shared counter sets.
        node_name, node_selector, all_nodes: per-device node selection, only with the
            slice's ``perDeviceNodeSelection`` (exactly one of them then).
        taints: device taints (alpha).
        binds_to_node, binding_conditions, binding_failure_conditions: binding
            conditions (alpha).
        allow_multiple_allocations: consumable capacity (alpha).
    """

    name: str
    attributes: Mapping[str, DeviceAttribute] = attrs.field(factory=dict)
    capacity: Mapping[str, DeviceCapacity] = attrs.field(factory=dict)
    consumes_counters: tuple[DeviceCounterConsumption, ...] = ()
    node_name: str | None = None
    node_selector: tuple[NodeSelectorTerm, ...] | None = None
    all_nodes: bool = False
    taints: tuple[DeviceTaint, ...] = ()
    binds_to_node: bool = False
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    allow_multiple_allocations: bool = False

    def attribute(self, driver: str, name: str) -> DeviceAttribute | None:
        """Look up an attribute by fully qualified name as the allocator does for
        ``matchAttribute``: the exact key, else the bare id when the domain is ``driver``.

        Args:
            driver: the slice's driver.
            name: ``domain/id``.
        """
        attr = self.attributes.get(name)
        if attr is not None:
            return attr
        domain, sep, ident = name.partition("/")
        if not sep or domain != driver:
            return None
        return self.attributes.get(ident)

    def qualified_attributes(self, driver: str) -> dict[str, DeviceAttribute]:
        """Attributes keyed by fully qualified name (bare names get ``driver/``); when both
        ``id`` and ``driver/id`` are given, the qualified one wins."""
        return _qualified(self.attributes, driver)

    def qualified_capacity(self, driver: str) -> dict[str, DeviceCapacity]:
        """Capacity keyed by fully qualified name, like `qualified_attributes`."""
        return _qualified(self.capacity, driver)

    @classmethod
    def from_manifest(
        cls, raw: Mapping[str, Any], path: str, v1beta1: bool, per_device_node_selection: bool
    ) -> Device:
        """Decode one device (v1 shape, or v1beta1 with ``basic:``); raises FieldError."""
        name = _required_str(raw, "name", path)
        d.check_dns1123_label(name, f"{path}.name")  # validateDeviceName
        if v1beta1:
            for key in _DEVICE_FIELDS:
                if raw.get(key) is not None:
                    raise FieldError(
                        f"{path}.{key}",
                        "not a field of resource.k8s.io/v1beta1 devices: put it under `basic`, "
                        "or use apiVersion resource.k8s.io/v1",
                    )
            body = d.get_map(raw, "basic", path)
            bp = f"{path}.basic"
        else:
            if raw.get("basic") is not None:
                raise FieldError(
                    f"{path}.basic",
                    "not a field of devices in this apiVersion: put its fields on the device "
                    "itself (`basic` is the resource.k8s.io/v1beta1 form)",
                )
            body, bp = raw, path
        attributes = _attributes(body, bp)
        allow_multiple = d.get_bool(body, "allowMultipleAllocations", bp)
        capacity = _capacity(body, bp, allow_multiple)
        if len(attributes) + len(capacity) > MAX_ATTRIBUTES_AND_CAPACITIES:
            raise FieldError(
                bp,
                f"the total number of attributes and capacities must not exceed "
                f"{MAX_ATTRIBUTES_AND_CAPACITIES}, got {len(attributes) + len(capacity)}",
            )
        consumes = _items(body, "consumesCounters", bp, DeviceCounterConsumption.from_manifest)
        _unique([c.counter_set for c in consumes], f"{bp}.consumesCounters[{{i}}].counterSet")
        node_name, node_selector, all_nodes = _device_node_selection(
            body, bp, per_device_node_selection
        )
        taints = _items(body, "taints", bp, DeviceTaint.from_manifest, MAX_TAINTS)
        conditions, failures = _binding_conditions(body, bp)
        return cls(
            name=name,
            attributes=attributes,
            capacity=capacity,
            consumes_counters=consumes,
            node_name=node_name,
            node_selector=node_selector,
            all_nodes=all_nodes,
            taints=taints,
            binds_to_node=d.get_bool(body, "bindsToNode", bp),
            binding_conditions=conditions,
            binding_failure_conditions=failures,
            allow_multiple_allocations=allow_multiple,
        )


_V = TypeVar("_V")


def _qualified(values: Mapping[str, _V], driver: str) -> dict[str, _V]:
    out = {qualified_name(driver, k): v for k, v in values.items() if "/" not in k}
    out.update((k, v) for k, v in values.items() if "/" in k)
    return out


def _attributes(raw: Mapping[str, Any], path: str) -> dict[str, DeviceAttribute]:
    p = d.join(path, "attributes")
    out: dict[str, DeviceAttribute] = {}
    for name, value in d.get_map(raw, "attributes", path).items():
        name = str(name)
        _check_qualified_name(name, f"{p}.{name}")
        out[name] = DeviceAttribute.from_manifest(value, f"{p}.{name}")
    return out


def _capacity(raw: Mapping[str, Any], path: str, allow_multiple: bool) -> dict[str, DeviceCapacity]:
    p = d.join(path, "capacity")
    out: dict[str, DeviceCapacity] = {}
    for name, value in d.get_map(raw, "capacity", path).items():
        name = str(name)
        cp = f"{p}.{name}"
        _check_qualified_name(name, cp)
        if not isinstance(value, Mapping):
            raise FieldError(cp, f"expected a mapping, got {d.type_name(value)}")
        if value.get("value") is None:
            raise FieldError(f"{cp}.value", "required")
        policy_raw = _optional_map(value, "requestPolicy", cp)
        policy = None
        if policy_raw is not None:
            if not allow_multiple:
                raise FieldError(f"{cp}.requestPolicy", "allowMultipleAllocations must be true")
            policy = CapacityRequestPolicy.from_manifest(policy_raw, f"{cp}.requestPolicy")
        out[name] = DeviceCapacity(
            value=_quantity(value["value"], f"{cp}.value"), request_policy=policy
        )
    return out


def _device_node_selection(
    raw: Mapping[str, Any], path: str, per_device: bool
) -> tuple[str | None, tuple[NodeSelectorTerm, ...] | None, bool]:
    node_name = None if raw.get("nodeName") is None else d.get_str(raw, "nodeName", path)
    node_selector = _node_selector(raw, "nodeSelector", path)
    all_nodes_raw = _optional_bool(raw, "allNodes", path)
    if not per_device:
        if node_name is not None or node_selector is not None or all_nodes_raw is not None:
            raise FieldError(
                path,
                "`nodeName`, `nodeSelector` and `allNodes` can only be set if "
                "`perDeviceNodeSelection` is set to true in the ResourceSlice spec",
            )
        return None, None, False
    if node_name == "":
        raise FieldError(f"{path}.nodeName", "must not be empty")
    if all_nodes_raw is False:
        raise FieldError(f"{path}.allNodes", "must be either unset or set to true")
    given = [
        f"`{k}`"
        for k, v in (
            ("nodeName", node_name),
            ("nodeSelector", node_selector),
            ("allNodes", all_nodes_raw),
        )
        if v is not None
    ]
    if len(given) != 1:
        problem = f"exactly one of {_DEVICE_NODE_SELECTION} is required when "
        problem += "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"
        if given:
            problem += f", but multiple fields are set: {', '.join(given)}"
        raise FieldError(path, problem)
    return node_name, node_selector, bool(all_nodes_raw)


@attrs.frozen
class ResourcePool:
    """``spec.pool``: the pool a slice belongs to. Only slices of a pool's highest
    ``generation`` count; the pool is complete when that many slices exist as
    ``resource_slice_count``."""

    name: str
    generation: int = 0
    resource_slice_count: int = 1

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> ResourcePool:
        """Decode a pool; raises FieldError."""
        name = _required_str(raw, "name", path)
        generation = d.get_int(raw, "generation", path)
        if generation < 0:
            raise FieldError(
                f"{path}.generation", f"must be greater than or equal to zero, got {generation}"
            )
        count = d.get_int(raw, "resourceSliceCount", path)
        if count <= 0:
            raise FieldError(
                f"{path}.resourceSliceCount", f"must be greater than zero, got {count}"
            )
        return cls(name=name, generation=generation, resource_slice_count=count)


@attrs.frozen
class ResourceSlice:
    """A cluster-scoped ResourceSlice: devices a driver publishes for one pool.

    Exactly one node-selection field is set: ``node_name`` (node-local devices),
    ``node_selector`` (exactly one term), ``all_nodes`` or ``per_device_node_selection``
    (each device says where it is available).

    Attributes:
        shared_counters: counter sets consumed by the devices (alpha partitionable devices).
    """

    name: str
    driver: str
    pool: ResourcePool
    uid: str = ""
    labels: Mapping[str, str] = attrs.field(factory=dict)
    annotations: Mapping[str, str] = attrs.field(factory=dict)
    owner_references: tuple[OwnerReference, ...] = ()
    node_name: str | None = None
    node_selector: tuple[NodeSelectorTerm, ...] | None = None
    all_nodes: bool = False
    per_device_node_selection: bool = False
    devices: tuple[Device, ...] = ()
    shared_counters: tuple[CounterSet, ...] = ()

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> ResourceSlice:
        """Decode a ResourceSlice (v1, v1beta2, or v1beta1 with ``basic:`` devices); raises
        FieldError."""
        v1beta1 = _is_v1beta1(raw, "ResourceSlice")
        meta = _meta(raw, "ResourceSlice", namespaced=False)
        spec = d.get_map(raw, "spec", "")
        driver = d.get_str(spec, "driver", "spec")
        _driver_name(driver, "spec.driver")
        pool = ResourcePool.from_manifest(d.get_map(spec, "pool", "spec"), "spec.pool")
        node_name, node_selector, all_nodes, per_device = _slice_node_selection(spec, v1beta1)
        devices = _items(
            spec,
            "devices",
            "spec",
            lambda r, p: Device.from_manifest(r, p, v1beta1, per_device),
            MAX_DEVICES_PER_SLICE,
        )
        _unique([dev.name for dev in devices], "spec.devices[{i}].name")
        counters = _items(spec, "sharedCounters", "spec", CounterSet.from_manifest, 8)
        _unique([c.name for c in counters], "spec.sharedCounters[{i}].name")
        return cls(
            name=meta.name,
            driver=driver,
            pool=pool,
            uid=meta.uid,
            labels=meta.labels,
            annotations=meta.annotations,
            owner_references=meta.owner_references,
            node_name=node_name,
            node_selector=node_selector,
            all_nodes=all_nodes,
            per_device_node_selection=per_device,
            devices=devices,
            shared_counters=counters,
        )


def _slice_node_selection(
    spec: Mapping[str, Any], v1beta1: bool
) -> tuple[str | None, tuple[NodeSelectorTerm, ...] | None, bool, bool]:
    node_name = None if spec.get("nodeName") is None else d.get_str(spec, "nodeName", "spec")
    all_nodes = _optional_bool(spec, "allNodes", "spec")
    per_device = _optional_bool(spec, "perDeviceNodeSelection", "spec")
    if v1beta1:
        # v1beta1 nodeName/allNodes are plain values: "" and false mean unset
        node_name = node_name or None
        all_nodes = all_nodes or None
    if node_name == "":
        raise FieldError("spec.nodeName", "must be either unset or set to a non-empty string")
    if all_nodes is False:
        raise FieldError("spec.allNodes", "must be either unset or set to true")
    if per_device is False:
        raise FieldError("spec.perDeviceNodeSelection", "must be either unset or set to true")
    node_selector = _node_selector(spec, "nodeSelector", "spec")
    if node_selector is not None and len(node_selector) != 1:
        raise FieldError(
            "spec.nodeSelector.nodeSelectorTerms", "must have exactly one node selector term"
        )
    given = [
        f"`{k}`"
        for k, v in (
            ("nodeName", node_name),
            ("nodeSelector", node_selector),
            ("allNodes", all_nodes),
            ("perDeviceNodeSelection", per_device),
        )
        if v is not None
    ]
    if not given:
        raise FieldError("spec", f"exactly one of {_SLICE_NODE_SELECTION} is required")
    if len(given) > 1:
        raise FieldError(
            "spec",
            f"exactly one of {_SLICE_NODE_SELECTION} is required, but multiple fields are set: "
            f"{', '.join(given)}",
        )
    return node_name, node_selector, bool(all_nodes), bool(per_device)
