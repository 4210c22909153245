"""Types shared by the allocator, the DRA snapshot and the DynamicResources plugin."""

from __future__ import annotations

from typing import NamedTuple, Protocol

import attrs

__all__ = ["AllocationError", "AllocationTimeout", "DeviceId", "DraFeatures"]


class DeviceId(NamedTuple):
    """A device, as the allocator identifies it (``structured.DeviceID``): driver, pool and
    device name, as in ``status.allocation.devices.results``."""

    driver: str
    pool: str
    device: str

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


class AllocationTimeout(Exception):
    """`Allocator.allocate` gave up: its search budget (``max_steps``, the DynamicResources
    plugin's ``filterTimeout``) ran out before it found an allocation or proved there is
    none (upstream: ``context.DeadlineExceeded``)."""


class AllocationError(ValueError):
    """The allocator was given input it cannot work with (invalid CEL, a missing DeviceClass,
    a feature used while its gate is off, more than 32 devices in a claim, ...): upstream's
    ``Allocate`` returning an error, which the DynamicResources plugin turns into an Error
    status. "No allocation exists on this node" is not an error (``allocate`` returns None)."""


class _Gates(Protocol):
    """What `DraFeatures.from_gates` reads (`schedsim.framework.FeatureGates` is one; dra sits
    below framework, so it names only the method it needs)."""

    def enabled(self, name: str) -> bool: ...


@attrs.frozen
class DraFeatures:
    """The DRA feature gates the allocator and the plugin look at (``structured.Features``).

    Defaults are kube-scheduler 1.34's (see `schedsim.framework.features`).
    """

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = False
    device_taints: bool = False
    device_binding_conditions: bool = False
    device_status: bool = True
    consumable_capacity: bool = False
    extended_resource: bool = False

    @classmethod
    def from_gates(cls, gates: _Gates) -> DraFeatures:
        """The DRA features of a scheduler's feature gates."""
        return cls(
            admin_access=gates.enabled("DRAAdminAccess"),
            prioritized_list=gates.enabled("DRAPrioritizedList"),
            partitionable_devices=gates.enabled("DRAPartitionableDevices"),
            device_taints=gates.enabled("DRADeviceTaints"),
            device_binding_conditions=gates.enabled("DRADeviceBindingConditions"),
            device_status=gates.enabled("DRAResourceClaimDeviceStatus"),
            consumable_capacity=gates.enabled("DRAConsumableCapacity"),
            extended_resource=gates.enabled("DRAExtendedResource"),
        )
