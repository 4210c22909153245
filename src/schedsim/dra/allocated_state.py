"""`AllocatedState`: the devices already in use cluster-wide, and `counters_left`, what a
slice's shared counters have left after them.

Mirrors ``structured.AllocatedState`` / ``GatherAllocatedState`` of
``k8s.io/dynamic-resource-allocation`` (Kubernetes 1.34); split out of
`schedsim.dra.allocator`, which re-exports both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from fractions import Fraction

import attrs

from schedsim.api.resource import (
    ResourceClaim,
    ResourceSlice,
    qualified_name,
)
from schedsim.dra.types import DeviceId, DraFeatures

__all__ = ["AllocatedState", "counters_left"]


# ============================================================================ allocated state


@attrs.frozen
class AllocatedState:
    """What is already in use cluster-wide (``structured.AllocatedState``).

    Attributes:
        devices: exclusively allocated devices (a frozenset, or the live view an
            `schedsim.dra.tracker.AllocatedStateTracker` keeps current).
        shared_device_ids: ``(device, shareID)`` of allocations of devices that allow
            multiple allocations (consumable capacity).
        consumed_capacity: per device, the capacity consumed by its shared allocations,
            summed, keyed by fully qualified capacity name (``<driver>/<name>`` for bare
            names).
        shared_devices: the devices of ``shared_device_ids`` when the caller keeps them
            (the tracker's live view); None: derived from ``shared_device_ids``.
    """

    devices: AbstractSet[DeviceId] = frozenset()
    shared_device_ids: AbstractSet[tuple[DeviceId, str]] = frozenset()
    consumed_capacity: Mapping[DeviceId, Mapping[str, Fraction]] = attrs.field(factory=dict)
    shared_devices: AbstractSet[DeviceId] | None = None

    @classmethod
    def from_claims(cls, claims: Iterable[ResourceClaim], features: DraFeatures) -> AllocatedState:
        """Gather what allocated claims use, as the DynamicResources plugin does in PreFilter.

        Results with ``adminAccess: true`` are skipped (admin access does not take a device).
        With DRAConsumableCapacity, results with a ``shareID`` are shared allocations
        (``GatherAllocatedState``: their consumed capacity is summed per device); without it
        every other result is an exclusive allocation (``foreachAllocatedDevice``).

        Args:
            claims: any claims; unallocated ones are ignored.
            features: the DRA feature gates.
        """
        devices: set[DeviceId] = set()
        shared: set[tuple[DeviceId, str]] = set()
        consumed: dict[DeviceId, dict[str, Fraction]] = {}
        for claim in claims:
            allocation = claim.status.allocation
            if allocation is None:
                continue
            for r in allocation.results:
                if r.admin_access:
                    continue
                did = DeviceId(r.driver, r.pool, r.device)
                if features.consumable_capacity and r.share_id is not None:
                    shared.add((did, r.share_id))
                    per_device = consumed.setdefault(did, {})
                    for name, value in r.consumed_capacity.items():
                        qname = qualified_name(r.driver, name)
                        per_device[qname] = per_device.get(qname, Fraction(0)) + value
                else:
                    devices.add(did)
        return cls(
            devices=frozenset(devices),
            shared_device_ids=frozenset(shared),
            consumed_capacity=consumed,
        )


def counters_left(
    slice_: ResourceSlice, *in_use: AbstractSet[DeviceId]
) -> dict[tuple[str, str], Fraction]:
    """The slice's shared counters, ``(counter set, counter) -> value``, minus what its
    devices in any of the ``in_use`` sets consume (a device's counters are consumed once
    while it is in use)."""
    left = {
        (cs.name, name): value
        for cs in slice_.shared_counters
        for name, value in cs.counters.items()
    }
    for dev in slice_.devices:
        if not dev.consumes_counters:
            continue
        did = DeviceId(slice_.driver, slice_.pool.name, dev.name)
        if not any(did in s for s in in_use):
            continue
        for use in dev.consumes_counters:
            for name, value in use.counters.items():
                k = (use.counter_set, name)
                if k in left:
                    left[k] -= value
    return left
