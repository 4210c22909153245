"""Dynamic Resource Allocation: the structured device allocator and the types it shares
with the DRA snapshot and the DynamicResources plugin.

Mirrors ``k8s.io/dynamic-resource-allocation/structured`` (Kubernetes 1.34).
"""

from schedsim.dra.types import AllocationError, DeviceId, DraFeatures

__all__ = ["AllocationError", "DeviceId", "DraFeatures"]
