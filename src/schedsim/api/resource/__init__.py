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

The kinds live in one module each (`resource_class`, `resource_claim_spec`,
`resource_claim_status`, `resource_claim`, `resource_device`, `resource_slice`, with the
shared field rules in `resource_fields`); this module is their public face and re-exports
them, so ``from schedsim.api.resource import ResourceClaim`` keeps working.
"""

from __future__ import annotations

from schedsim.api.resource.claim import (
    ResourceClaim,
    ResourceClaimTemplate,
)
from schedsim.api.resource.claim_spec import (
    DeviceClaimConfiguration,
    DeviceConstraint,
    DeviceRequest,
    DeviceSubRequest,
    DeviceToleration,
    ExactDeviceRequest,
    ResourceClaimSpec,
)
from schedsim.api.resource.claim_status import (
    AllocatedDeviceStatus,
    AllocationResult,
    Condition,
    DeviceAllocationConfiguration,
    DeviceRequestAllocationResult,
    NetworkDeviceData,
    ResourceClaimConsumerReference,
    ResourceClaimStatus,
)
from schedsim.api.resource.device import (
    AttributeType,
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    CounterSet,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    DeviceCounterConsumption,
    DeviceTaint,
)
from schedsim.api.resource.device_class import (
    DeviceClass,
    DeviceSelector,
    OpaqueDeviceConfiguration,
)
from schedsim.api.resource.fields import (
    ALLOCATION_MODES,
    API_VERSIONS,
    CONDITION_STATUSES,
    CONFIG_SOURCES,
    DEVICE_TAINT_EFFECTS,
    MAX_ATTRIBUTE_VALUE_LENGTH,
    MAX_ATTRIBUTES_AND_CAPACITIES,
    MAX_BINDING_CONDITIONS,
    MAX_CEL_EXPRESSION_LENGTH,
    MAX_CONFIGS,
    MAX_CONSTRAINTS,
    MAX_DEVICES_PER_SLICE,
    MAX_REQUESTS,
    MAX_RESERVED_FOR,
    MAX_RESULTS,
    MAX_SELECTORS,
    MAX_SUBREQUESTS,
    MAX_TAINTS,
    MAX_TOLERATIONS,
    TOLERATION_OPERATORS,
    qualified_name,
    split_qualified_name,
)
from schedsim.api.resource.slice import (
    ResourcePool,
    ResourceSlice,
)

__all__ = [
    "ALLOCATION_MODES",
    "API_VERSIONS",
    "CONDITION_STATUSES",
    "CONFIG_SOURCES",
    "DEVICE_TAINT_EFFECTS",
    "MAX_ATTRIBUTES_AND_CAPACITIES",
    "MAX_ATTRIBUTE_VALUE_LENGTH",
    "MAX_BINDING_CONDITIONS",
    "MAX_CEL_EXPRESSION_LENGTH",
    "MAX_CONFIGS",
    "MAX_CONSTRAINTS",
    "MAX_DEVICES_PER_SLICE",
    "MAX_REQUESTS",
    "MAX_RESERVED_FOR",
    "MAX_RESULTS",
    "MAX_SELECTORS",
    "MAX_SUBREQUESTS",
    "MAX_TAINTS",
    "MAX_TOLERATIONS",
    "TOLERATION_OPERATORS",
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
