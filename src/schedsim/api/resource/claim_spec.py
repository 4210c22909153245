"""A ResourceClaim's ``spec.devices``: requests (``exactly`` and ``firstAvailable``, with the
v1beta1 conversion), constraints and configuration; the device tolerations requests carry
and the checks of references to requests (``req`` or ``req/subreq``).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import attrs

from schedsim.api.errors import FieldError
from schedsim.api.loading import decode as d
from schedsim.api.resource.device_class import (
    DeviceSelector,
    OpaqueDeviceConfiguration,
    decode_selectors,
)
from schedsim.api.resource.fields import (
    ALLOCATION_MODES,
    DEVICE_TAINT_EFFECTS,
    MAX_CONFIGS,
    MAX_CONSTRAINTS,
    MAX_REQUESTS,
    MAX_SUBREQUESTS,
    MAX_TOLERATIONS,
    TOLERATION_OPERATORS,
    check_fully_qualified_name,
    check_qualified_name,
    check_unique,
    decode_items,
    optional_bool,
    optional_map,
    quantity_map,
    request_name,
    required_str,
    str_list,
)

if TYPE_CHECKING:
    from schedsim.api.resource.device import DeviceTaint


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


def decode_tolerations(raw: Mapping[str, Any], path: str) -> tuple[DeviceToleration, ...]:
    """``raw.tolerations`` decoded (at most MAX_TOLERATIONS); raises FieldError."""
    return decode_items(raw, "tolerations", path, DeviceToleration.from_manifest, MAX_TOLERATIONS)


def check_request_ref(name: str, field: str, requests: Mapping[str, frozenset[str]]) -> None:
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


def request_refs(
    raw: Mapping[str, Any], path: str, requests: Mapping[str, frozenset[str]]
) -> tuple[str, ...]:
    """``raw.requests``: references to requests of the claim, each ``req`` or
    ``req/subreq``, no duplicates; raises FieldError."""
    refs = str_list(raw, "requests", path, MAX_REQUESTS)
    for i, ref in enumerate(refs):
        check_request_ref(ref, f"{path}.requests[{i}]", requests)
    check_unique(list(refs), f"{path}.requests[{{i}}]", "request")
    return refs


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
    name = required_str(raw, "deviceClassName", path)
    return name


def _capacity_requests(raw: Mapping[str, Any], path: str) -> dict[str, Fraction]:
    capacity = optional_map(raw, "capacity", path)
    if capacity is None:
        return {}
    return quantity_map(capacity, "requests", d.join(path, "capacity"), check_qualified_name)


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
        selectors = decode_selectors(raw, path)
        mode, count = _allocation_mode(raw, path)
        return cls(
            device_class_name=class_name,
            selectors=selectors,
            allocation_mode=mode,
            count=count,
            admin_access=optional_bool(raw, "adminAccess", path),
            tolerations=decode_tolerations(raw, path),
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
        name = request_name(raw, path, subrequest=True)
        class_name = _device_class_name(raw, path)
        selectors = decode_selectors(raw, path)
        mode, count = _allocation_mode(raw, path)
        return cls(
            name=name,
            device_class_name=class_name,
            selectors=selectors,
            allocation_mode=mode,
            count=count,
            tolerations=decode_tolerations(raw, path),
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
        name = request_name(raw, path)
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
            exact_raw = optional_map(raw, "exactly", path)
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
        first = decode_items(
            raw, "firstAvailable", path, DeviceSubRequest.from_manifest, MAX_SUBREQUESTS
        )
        check_unique([s.name for s in first], f"{path}.firstAvailable[{{i}}].name")
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
        refs = request_refs(raw, path, requests)
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
        check_fully_qualified_name(attribute, f"{path}.{key}")
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
        refs = request_refs(raw, path, requests)
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
        requests = decode_items(
            devices,
            "requests",
            dp,
            lambda r, p: DeviceRequest.from_manifest(r, p, v1beta1),
            MAX_REQUESTS,
        )
        check_unique([r.name for r in requests], f"{dp}.requests[{{i}}].name")
        names = {r.name: frozenset(s.name for s in r.first_available) for r in requests}
        constraints = decode_items(
            devices,
            "constraints",
            dp,
            lambda c, p: DeviceConstraint.from_manifest(c, p, names),
            MAX_CONSTRAINTS,
        )
        config = decode_items(
            devices,
            "config",
            dp,
            lambda c, p: DeviceClaimConfiguration.from_manifest(c, p, names),
            MAX_CONFIGS,
        )
        return cls(requests=requests, constraints=constraints, config=config)
