"""A ResourceClaim's ``status``: the allocation (device results, copied configuration, node
selector), the consumers it is reserved for, and the drivers' per-device status.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from fractions import Fraction
from typing import Any

import attrs

from schedsim.api.core import (
    NodeSelectorTerm,
    parse_timestamp,
)
from schedsim.api.errors import FieldError
from schedsim.api.loading import decode as d
from schedsim.api.resource.claim_spec import (
    DeviceToleration,
    check_request_ref,
    decode_tolerations,
    request_refs,
)
from schedsim.api.resource.device_class import OpaqueDeviceConfiguration
from schedsim.api.resource.fields import (
    CONDITION_STATUSES,
    CONFIG_SOURCES,
    MAX_CONFIGS,
    MAX_RESERVED_FOR,
    MAX_RESULTS,
    check_driver_name,
    check_qualified_name,
    check_unique,
    decode_binding_conditions,
    decode_items,
    json_object,
    node_selector_terms,
    optional_bool,
    optional_map,
    quantity_map,
    required_str,
)


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
        request = required_str(raw, "request", path)
        check_request_ref(request, f"{path}.request", requests)
        driver = d.get_str(raw, "driver", path)
        check_driver_name(driver, f"{path}.driver")
        pool = required_str(raw, "pool", path)
        device = required_str(raw, "device", path)
        conditions, failure_conditions = decode_binding_conditions(raw, path)
        share_id = raw.get("shareID")
        return cls(
            request=request,
            driver=driver,
            pool=pool,
            device=device,
            admin_access=optional_bool(raw, "adminAccess", path),
            tolerations=decode_tolerations(raw, path),
            binding_conditions=conditions,
            binding_failure_conditions=failure_conditions,
            share_id=None if share_id is None else d.get_str(raw, "shareID", path),
            consumed_capacity=quantity_map(raw, "consumedCapacity", path, check_qualified_name),
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
        source = required_str(raw, "source", path)
        if source not in CONFIG_SOURCES:
            raise FieldError(
                f"{path}.source",
                f"unsupported value {source!r}: want one of {list(CONFIG_SOURCES)}",
            )
        refs = request_refs(raw, path, requests)
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
            results=decode_items(
                devices,
                "results",
                dp,
                lambda r, p: DeviceRequestAllocationResult.from_manifest(r, p, requests),
                MAX_RESULTS,
            ),
            config=decode_items(
                devices,
                "config",
                dp,
                lambda c, p: DeviceAllocationConfiguration.from_manifest(c, p, requests),
                2 * MAX_CONFIGS,
            ),
            node_selector=node_selector_terms(raw, "nodeSelector", path),
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
            resource=required_str(raw, "resource", path),
            name=required_str(raw, "name", path),
            uid=required_str(raw, "uid", path),
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
            type=required_str(raw, "type", path),
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
        check_driver_name(driver, f"{path}.driver")
        pool = required_str(raw, "pool", path)
        device = required_str(raw, "device", path)
        share_id = raw.get("shareID")
        network = optional_map(raw, "networkData", path)
        np = f"{path}.networkData"
        return cls(
            driver=driver,
            pool=pool,
            device=device,
            share_id=None if share_id is None else d.get_str(raw, "shareID", path),
            conditions=decode_items(raw, "conditions", path, Condition.from_manifest, 8),
            data=None if raw.get("data") is None else json_object(raw, "data", path),
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
        alloc = optional_map(raw, "allocation", path)
        allocation = (
            None
            if alloc is None
            else AllocationResult.from_manifest(alloc, d.join(path, "allocation"), requests)
        )
        reserved = decode_items(
            raw,
            "reservedFor",
            path,
            ResourceClaimConsumerReference.from_manifest,
            MAX_RESERVED_FOR,
        )
        rp = d.join(path, "reservedFor")
        check_unique([r.uid for r in reserved], f"{rp}[{{i}}].uid", "uid")
        if reserved and allocation is None:
            raise FieldError(rp, "may not be specified when `allocation` is not set")
        return cls(
            allocation=allocation,
            reserved_for=reserved,
            devices=decode_items(raw, "devices", path, AllocatedDeviceStatus.from_manifest),
        )
