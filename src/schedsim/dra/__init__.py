"""Dynamic Resource Allocation: the structured device allocator and the types it shares
with the DRA snapshot and the DynamicResources plugin.

Mirrors ``k8s.io/dynamic-resource-allocation/structured`` (Kubernetes 1.34): `Allocator`
(search, `schedsim.dra.allocator`), `AllocatedState` (devices already in use), `CelCache`
(compiled selectors and memoized results, `schedsim.dra.cel`), pool gathering
(`schedsim.dra.pools`) and consumable capacity (`schedsim.dra.capacity`).
"""

from schedsim.dra.allocator import AllocatedState, Allocator
from schedsim.dra.cel import CelCache
from schedsim.dra.types import AllocationError, AllocationTimeout, DeviceId, DraFeatures

__all__ = [
    "AllocatedState",
    "AllocationError",
    "AllocationTimeout",
    "Allocator",
    "CelCache",
    "DeviceId",
    "DraFeatures",
]
