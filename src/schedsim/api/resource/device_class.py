"""DeviceClass and the device-selection parts it shares with claims: CEL selectors
(``selectors[i]``) and opaque driver configuration (``opaque``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from schedsim.api.core.resources import is_extended_resource_name
from schedsim.api.errors import FieldError
from schedsim.api.loading import decode as d
from schedsim.api.resource.fields import (
    MAX_CEL_EXPRESSION_LENGTH,
    MAX_CONFIGS,
    MAX_SELECTORS,
    check_driver_name,
    decode_items,
    decode_meta,
    is_v1beta1,
    json_object,
    optional_map,
    required_str,
)

# --------------------------------------------------------------------------- shared parts


@attrs.frozen
class DeviceSelector:
    """``selectors[i]``: a CEL expression over ``device`` that must evaluate to true
    (``cel.expression``, the only selector type)."""

    expression: str

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> DeviceSelector:
        """Decode one selector; raises FieldError when ``cel.expression`` is missing."""
        cel = optional_map(raw, "cel", path)
        if cel is None:
            raise FieldError(f"{path}.cel", "required")
        expression = required_str(cel, "expression", f"{path}.cel")
        if len(expression) > MAX_CEL_EXPRESSION_LENGTH:
            raise FieldError(
                f"{path}.cel.expression",
                f"must have at most {MAX_CEL_EXPRESSION_LENGTH} bytes, got {len(expression)}",
            )
        return cls(expression=expression)


def decode_selectors(raw: Mapping[str, Any], path: str) -> tuple[DeviceSelector, ...]:
    """``raw.selectors`` decoded (at most MAX_SELECTORS); raises FieldError."""
    return decode_items(raw, "selectors", path, DeviceSelector.from_manifest, MAX_SELECTORS)


@attrs.frozen
class OpaqueDeviceConfiguration:
    """``opaque``: driver-specific parameters, passed through to the driver unchanged."""

    driver: str
    parameters: Mapping[str, Any] = attrs.field(factory=dict)

    @classmethod
    def from_config(cls, raw: Mapping[str, Any], path: str) -> OpaqueDeviceConfiguration:
        """Decode the ``opaque`` member of a configuration entry (required)."""
        opaque = optional_map(raw, "opaque", path)
        p = d.join(path, "opaque")
        if opaque is None:
            raise FieldError(p, "required")
        driver = d.get_str(opaque, "driver", p)
        check_driver_name(driver, f"{p}.driver")
        return cls(driver=driver, parameters=json_object(opaque, "parameters", p))


# --------------------------------------------------------------------------- DeviceClass


@attrs.frozen
class DeviceClass:
    """A cluster-scoped DeviceClass: selectors every device of the class must pass (ANDed)
    and configuration copied into allocations (``FromClass``).

    Attributes:
        extended_resource_name: ``spec.extendedResourceName`` (alpha DRAExtendedResource);
            the implicit name ``deviceclass.resource.kubernetes.io/<name>`` is not added here.
    """

    name: str
    uid: str = ""
    labels: Mapping[str, str] = attrs.field(factory=dict)
    annotations: Mapping[str, str] = attrs.field(factory=dict)
    selectors: tuple[DeviceSelector, ...] = ()
    config: tuple[OpaqueDeviceConfiguration, ...] = ()
    extended_resource_name: str | None = None

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> DeviceClass:
        """Decode a DeviceClass (v1, v1beta2 or v1beta1); raises FieldError."""
        is_v1beta1(raw, "DeviceClass")
        meta = decode_meta(raw, "DeviceClass", namespaced=False)
        spec = d.get_map(raw, "spec", "")
        ext = spec.get("extendedResourceName")
        extended = None
        if ext is not None:
            extended = d.get_str(spec, "extendedResourceName", "spec")
            if not is_extended_resource_name(extended):
                raise FieldError(
                    "spec.extendedResourceName",
                    f"invalid value {extended!r}: must be a valid extended resource name "
                    "(a domain outside kubernetes.io, '/', and a name, e.g. example.com/gpu)",
                )
        return cls(
            name=meta.name,
            uid=meta.uid,
            labels=meta.labels,
            annotations=meta.annotations,
            selectors=decode_selectors(spec, "spec"),
            config=decode_items(
                spec, "config", "spec", OpaqueDeviceConfiguration.from_config, MAX_CONFIGS
            ),
            extended_resource_name=extended,
        )
