"""resource.k8s.io (DRA) validation as the API server does it, for what the allocator reads.

Mirrors ``pkg/apis/resource/validation`` (Kubernetes 1.34): ``validateDriverName`` (a driver
name is at most 63 characters and, lower-cased, a DNS subdomain) for a ResourceSlice's
``spec.driver``, and a device's capacity values, which are quantities that may not be
negative (``validateDeviceCapacity``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from schedsim.api.loading.decode import key_path
from schedsim.api.quantity import QuantityError, parse_quantity
from schedsim.api.validation.common import Problems, dns1123_subdomain_problem, invalid

__all__ = ["DRIVER_NAME_MAX_LENGTH", "validate_driver_name", "validate_resource_slice"]

DRIVER_NAME_MAX_LENGTH: Final = 63
"""resource.DriverNameMaxLength."""


def validate_driver_name(name: object, field: str, out: Problems) -> None:
    """``validateDriverName`` (an empty name is the decoder's error)."""
    if not isinstance(name, str) or not name:
        return
    if len(name) > DRIVER_NAME_MAX_LENGTH:
        out.error(field, f"too long: may not be more than {DRIVER_NAME_MAX_LENGTH} bytes")
    problem = dns1123_subdomain_problem(name.lower())
    if problem is not None:
        out.error(field, invalid(name, problem))


def validate_resource_slice(obj: Mapping[str, Any], out: Problems) -> None:
    """A ResourceSlice's driver name and its devices' capacity values."""
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        return
    validate_driver_name(spec.get("driver"), "spec.driver", out)
    devices = spec.get("devices")
    if not isinstance(devices, list):
        return
    for i, dev in enumerate(devices):
        capacity = dev.get("capacity") if isinstance(dev, Mapping) else None
        if not isinstance(capacity, Mapping):
            continue
        for name, cap in capacity.items():
            raw = cap.get("value") if isinstance(cap, Mapping) else None
            if raw is None or isinstance(raw, bool):
                continue
            try:
                q = parse_quantity(raw)
            except (QuantityError, TypeError):
                continue  # the decoder reports it
            if q < 0:
                out.error(
                    key_path(f"spec.devices[{i}].capacity", str(name)) + ".value",
                    invalid(raw, "must be greater than or equal to 0"),
                )
