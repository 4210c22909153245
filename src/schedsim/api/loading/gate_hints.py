"""Feature-gate hints: fields of the input that a disabled feature gate governs.

kube-scheduler 1.34 ignores (or refuses to allocate from) DRA fields whose alpha gate is
off, so an input that uses them schedules differently from what its author expects. Each gate
the input needs is named once, with the ``--feature-gates`` setting that enables it and the
first object that uses it:

=============================  =========================================================
gate                           fields
=============================  =========================================================
DRAPartitionableDevices        ResourceSlice ``sharedCounters``, ``perDeviceNodeSelection``;
                               device ``consumesCounters``, ``nodeName``/``nodeSelector``/
                               ``allNodes``
DRAExtendedResource            DeviceClass ``extendedResourceName``
DRAConsumableCapacity          device ``allowMultipleAllocations``, capacity
                               ``requestPolicy``; request ``capacity.requests``
DRADeviceTaints                device ``taints``; request ``tolerations``
DRADeviceBindingConditions     device ``bindingConditions``, ``bindingFailureConditions``,
                               ``bindsToNode``
=============================  =========================================================
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from schedsim.api.resource import (
    Device,
    DeviceClass,
    DeviceRequest,
    DeviceSubRequest,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)

__all__ = ["feature_gate_hints"]


def _device_gates(device: Device) -> list[tuple[str, str]]:
    out = []
    if device.consumes_counters:
        out.append(("DRAPartitionableDevices", "consumesCounters"))
    if device.node_name is not None or device.node_selector is not None or device.all_nodes:
        out.append(("DRAPartitionableDevices", "per-device node selection"))
    if device.allow_multiple_allocations:
        out.append(("DRAConsumableCapacity", "allowMultipleAllocations"))
    if any(c.request_policy is not None for c in device.capacity.values()):
        out.append(("DRAConsumableCapacity", "capacity requestPolicy"))
    if device.taints:
        out.append(("DRADeviceTaints", "taints"))
    if device.binding_conditions or device.binding_failure_conditions or device.binds_to_node:
        out.append(("DRADeviceBindingConditions", "bindingConditions/bindsToNode"))
    return out


def _request_gates(request: DeviceRequest) -> list[tuple[str, str]]:
    out = []
    parts: list[ExactDeviceRequest | DeviceSubRequest] = list(request.first_available)
    if request.exactly is not None:
        parts.insert(0, request.exactly)
    for part in parts:
        if part.capacity_requests:
            out.append(("DRAConsumableCapacity", "capacity.requests"))
        if part.tolerations:
            out.append(("DRADeviceTaints", "tolerations"))
    return out


def feature_gate_hints(
    enabled: Callable[[str], bool],
    *,
    device_classes: Sequence[DeviceClass] = (),
    resource_slices: Sequence[ResourceSlice] = (),
    resource_claims: Sequence[ResourceClaim] = (),
    resource_claim_templates: Sequence[ResourceClaimTemplate] = (),
) -> list[str]:
    """One line per disabled gate the input uses (module docstring), in gate-name order,
    e.g. ``ResourceSlice n1-gpus uses sharedCounters, which feature gate
    DRAPartitionableDevices governs (disabled); --feature-gates
    DRAPartitionableDevices=true enables it``.

    Args:
        enabled: whether a gate is on (``FeatureGates.enabled``).
        device_classes, resource_slices, resource_claims, resource_claim_templates: the
            input's DRA objects.

    Returns:
        the hint lines (empty when every gate the input uses is on). Time: O(objects).
    """
    first: dict[str, str] = {}

    def note(gates: Iterable[tuple[str, str]], where: str) -> None:
        for gate, field in gates:
            if gate not in first and not enabled(gate):
                first[gate] = f"{where} uses {field}"

    for dc in device_classes:
        if dc.extended_resource_name is not None:
            note([("DRAExtendedResource", "extendedResourceName")], f"DeviceClass {dc.name}")
    for sl in resource_slices:
        where = f"ResourceSlice {sl.name}"
        if sl.shared_counters:
            note([("DRAPartitionableDevices", "sharedCounters")], where)
        if sl.per_device_node_selection:
            note([("DRAPartitionableDevices", "perDeviceNodeSelection")], where)
        for device in sl.devices:
            note(_device_gates(device), f"{where} device {device.name}")
    claims: list[tuple[str, ResourceClaim | ResourceClaimTemplate]] = [
        *(("ResourceClaim", c) for c in resource_claims),
        *(("ResourceClaimTemplate", t) for t in resource_claim_templates),
    ]
    for kind, obj in claims:
        for request in obj.spec.requests:
            note(
                _request_gates(request),
                f"{kind} {obj.namespace}/{obj.name} request {request.name}",
            )
    return [
        f"{first[gate]}, which feature gate {gate} governs (disabled); --feature-gates "
        f"{gate}=true enables it"
        for gate in sorted(first)
    ]
