"""One device of a ResourceSlice (``spec.devices[i]``, ``basic:`` in v1beta1): typed
attributes, capacity with request policies, counter consumption, taints, per-device node
selection and binding conditions; also the slice's counter sets.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from fractions import Fraction
from typing import Any, Literal, TypeVar

import attrs

from schedsim.api.core import (
    NodeSelectorTerm,
    parse_timestamp,
)
from schedsim.api.errors import FieldError
from schedsim.api.loading import decode as d
from schedsim.api.loading.decode import key_path
from schedsim.api.resource.fields import (
    DEVICE_TAINT_EFFECTS,
    MAX_ATTRIBUTE_VALUE_LENGTH,
    MAX_ATTRIBUTES_AND_CAPACITIES,
    MAX_TAINTS,
    check_qualified_name,
    check_unique,
    decode_binding_conditions,
    decode_counters,
    decode_items,
    decode_quantity,
    node_selector_terms,
    optional_bool,
    optional_map,
    optional_quantity,
    qualified_name,
    required_str,
)

AttributeType = Literal["int", "bool", "string", "version"]
"""The type of a device attribute value, as written (``int``, ``bool``, ``string``,
``version``)."""

_ATTRIBUTE_TYPES: tuple[AttributeType, ...] = ("int", "bool", "string", "version")
_LIST_ATTRIBUTE_TYPES = ("ints", "bools", "strings", "versions")

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
_DEVICE_NODE_SELECTION = "`nodeName`, `nodeSelector`, or `allNodes`"

_NUM = r"(0|[1-9][0-9]*)"
_PRE = r"(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD = r"[0-9a-zA-Z-]+"
_SEMVER = re.compile(rf"{_NUM}\.{_NUM}\.{_NUM}(-{_PRE}(\.{_PRE})*)?(\+{_BUILD}(\.{_BUILD})*)?")


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
        default = optional_quantity(raw, "default", path)
        vp = f"{path}.validValues"
        values_raw = d.get_list(raw, "validValues", path)
        values = tuple(decode_quantity(v, f"{vp}[{i}]") for i, v in enumerate(values_raw))
        rng = optional_map(raw, "validRange", path)
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
            low = optional_quantity(rng, "min", rp)
            if low is None:
                raise FieldError(f"{rp}.min", "required when validRange is defined")
            high = optional_quantity(rng, "max", rp)
            if high is not None and high < low:
                raise FieldError(f"{rp}.max", "must not be less than min")
            step = optional_quantity(rng, "step", rp)
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
        counter_set = required_str(raw, "counterSet", path)
        return cls(counter_set=counter_set, counters=decode_counters(raw, "counters", path))


@attrs.frozen
class CounterSet:
    """``spec.sharedCounters[i]`` (alpha partitionable devices): named counters that the
    slice's devices consume."""

    name: str
    counters: Mapping[str, Fraction] = attrs.field(factory=dict)

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> CounterSet:
        """Decode one counter set; raises FieldError."""
        name = required_str(raw, "name", path)
        return cls(name=name, counters=decode_counters(raw, "counters", path))


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
        key = required_str(raw, "key", path)
        effect = required_str(raw, "effect", path)
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
        name = required_str(raw, "name", path)
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
        consumes = decode_items(
            body, "consumesCounters", bp, DeviceCounterConsumption.from_manifest
        )
        check_unique([c.counter_set for c in consumes], f"{bp}.consumesCounters[{{i}}].counterSet")
        node_name, node_selector, all_nodes = _device_node_selection(
            body, bp, per_device_node_selection
        )
        taints = decode_items(body, "taints", bp, DeviceTaint.from_manifest, MAX_TAINTS)
        conditions, failures = decode_binding_conditions(body, bp)
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
        check_qualified_name(name, key_path(p, name))
        out[name] = DeviceAttribute.from_manifest(value, key_path(p, name))
    return out


def _capacity(raw: Mapping[str, Any], path: str, allow_multiple: bool) -> dict[str, DeviceCapacity]:
    p = d.join(path, "capacity")
    out: dict[str, DeviceCapacity] = {}
    for name, value in d.get_map(raw, "capacity", path).items():
        name = str(name)
        cp = key_path(p, name)
        check_qualified_name(name, cp)
        if not isinstance(value, Mapping):
            raise FieldError(cp, f"expected a mapping, got {d.type_name(value)}")
        if value.get("value") is None:
            raise FieldError(f"{cp}.value", "required")
        policy_raw = optional_map(value, "requestPolicy", cp)
        policy = None
        if policy_raw is not None:
            if not allow_multiple:
                raise FieldError(f"{cp}.requestPolicy", "allowMultipleAllocations must be true")
            policy = CapacityRequestPolicy.from_manifest(policy_raw, f"{cp}.requestPolicy")
        out[name] = DeviceCapacity(
            value=decode_quantity(value["value"], f"{cp}.value"), request_policy=policy
        )
    return out


def _device_node_selection(
    raw: Mapping[str, Any], path: str, per_device: bool
) -> tuple[str | None, tuple[NodeSelectorTerm, ...] | None, bool]:
    node_name = None if raw.get("nodeName") is None else d.get_str(raw, "nodeName", path)
    node_selector = node_selector_terms(raw, "nodeSelector", path)
    all_nodes_raw = optional_bool(raw, "allNodes", path)
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
