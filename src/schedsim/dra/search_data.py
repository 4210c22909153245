"""What the allocator's search works with: one request's data (`Request`), a tentatively
allocated device (`Pick`), the claim constraints (`MatchAttribute`, `DistinctAttribute`)
and the search's two early exits.

Mirrors ``requestData``, ``internalDeviceResult`` and the ``constraint`` implementations of
``k8s.io/dynamic-resource-allocation/structured`` (experimental allocator, 1.34); split out
of `schedsim.dra.allocator` (see its docstring for the deliberate differences).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

import attrs

from schedsim.api.resource import (
    Device,
    DeviceAttribute,
    DeviceClass,
    DeviceConstraint,
    DeviceSelector,
    DeviceToleration,
    ResourceSlice,
)
from schedsim.dra.types import DeviceId

__all__ = [
    "MAX_DEVICES_PER_CLAIM",
    "Constraint",
    "DistinctAttribute",
    "MatchAttribute",
    "MaxSizeExceeded",
    "Pick",
    "Request",
    "SearchBudgetExceeded",
    "applies",
    "same_value",
]

MAX_DEVICES_PER_CLAIM = 32
"""``resourceapi.AllocationResultsMaxSize``: at most 32 devices per claim."""


# ============================================================================ request data


@attrs.define
class Request:
    """One request without subrequests, or one subrequest (``requestData``)."""

    name: str  # request name, or subrequest name
    parent: str | None  # the request name of a subrequest
    device_class: DeviceClass
    selectors: tuple[DeviceSelector, ...]
    mode: str
    num_devices: int
    admin_access: bool
    tolerations: tuple[DeviceToleration, ...]
    capacity_requests: Mapping[str, Fraction]
    all_devices: list[tuple[DeviceId, Device, ResourceSlice]] = attrs.field(factory=list)

    @property
    def result_name(self) -> str:
        return self.name if self.parent is None else f"{self.parent}/{self.name}"


@attrs.define
class Pick:
    """One tentatively allocated device."""

    request: Request
    did: DeviceId
    device: Device
    slice: ResourceSlice
    shared: bool = False  # a shared allocation (its shareID is set in the output)
    consumed: Mapping[str, Fraction] | None = None
    ordinal: int = -1  # position of the device in the search's iteration order


class SearchBudgetExceeded(Exception):
    """The search tried more devices than its budget allows (the filterTimeout)."""


class MaxSizeExceeded(Exception):
    """A branch would put more than 32 devices into one claim
    (``errAllocationResultMaxSizeExceeded``)."""


# ============================================================================ constraints


def applies(requests: frozenset[str], request: Request) -> bool:
    if not requests:
        return True
    if request.parent is None:
        return request.name in requests
    return request.parent in requests or request.result_name in requests


def same_value(a: DeviceAttribute, b: DeviceAttribute) -> bool:
    return a.kind == b.kind and a.value == b.value


class MatchAttribute:
    """``matchAttribute``: all devices of the covered requests share one value."""

    def __init__(self, constraint: DeviceConstraint, attribute: str) -> None:
        self.requests = frozenset(constraint.requests)
        self.attribute = attribute
        self.value: DeviceAttribute | None = None
        self.count = 0

    def add(self, request: Request, did: DeviceId, device: Device) -> bool:
        if not applies(self.requests, request):
            return True
        value = device.attribute(did.driver, self.attribute)
        if value is None:
            return False
        if self.count == 0:
            self.value = value
        elif self.value is None or not same_value(value, self.value):
            return False
        self.count += 1
        return True

    def remove(self, request: Request, did: DeviceId, device: Device) -> None:
        if applies(self.requests, request):
            self.count -= 1
            if self.count == 0:
                self.value = None


class DistinctAttribute:
    """``distinctAttribute`` (alpha): the covered devices' values are pairwise different."""

    def __init__(self, constraint: DeviceConstraint, attribute: str) -> None:
        self.requests = frozenset(constraint.requests)
        self.attribute = attribute
        self.values: list[DeviceAttribute] = []

    def add(self, request: Request, did: DeviceId, device: Device) -> bool:
        if not applies(self.requests, request):
            return True
        value = device.attribute(did.driver, self.attribute)
        if value is None or any(same_value(value, v) for v in self.values):
            return False
        self.values.append(value)
        return True

    def remove(self, request: Request, did: DeviceId, device: Device) -> None:
        if applies(self.requests, request):
            value = device.attribute(did.driver, self.attribute)
            for i in range(len(self.values) - 1, -1, -1):
                if value is not None and same_value(self.values[i], value):
                    del self.values[i]
                    break


Constraint = MatchAttribute | DistinctAttribute
