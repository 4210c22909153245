"""The ResourceSlice object: the devices a driver publishes for one pool (``spec.pool``) and
the slice-level node selection.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from schedsim.api.core import (
    NodeSelectorTerm,
    OwnerReference,
)
from schedsim.api.errors import FieldError
from schedsim.api.loading import decode as d
from schedsim.api.resource.device import CounterSet, Device
from schedsim.api.resource.fields import (
    MAX_DEVICES_PER_SLICE,
    check_driver_name,
    check_unique,
    decode_items,
    decode_meta,
    is_v1beta1,
    node_selector_terms,
    optional_bool,
    required_str,
)

_SLICE_NODE_SELECTION = "`nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection`"


@attrs.frozen
class ResourcePool:
    """``spec.pool``: the pool a slice belongs to. Only slices of a pool's highest
    ``generation`` count; the pool is complete when that many slices exist as
    ``resource_slice_count``."""

    name: str
    generation: int = 0
    resource_slice_count: int = 1

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> ResourcePool:
        """Decode a pool; raises FieldError."""
        name = required_str(raw, "name", path)
        generation = d.get_int(raw, "generation", path)
        if generation < 0:
            raise FieldError(
                f"{path}.generation", f"must be greater than or equal to zero, got {generation}"
            )
        count = d.get_int(raw, "resourceSliceCount", path)
        if count <= 0:
            raise FieldError(
                f"{path}.resourceSliceCount", f"must be greater than zero, got {count}"
            )
        return cls(name=name, generation=generation, resource_slice_count=count)


@attrs.frozen
class ResourceSlice:
    """A cluster-scoped ResourceSlice: devices a driver publishes for one pool.

    Exactly one node-selection field is set: ``node_name`` (node-local devices),
    ``node_selector`` (exactly one term), ``all_nodes`` or ``per_device_node_selection``
    (each device says where it is available).

    Attributes:
        shared_counters: counter sets consumed by the devices (alpha partitionable devices).
    """

    name: str
    driver: str
    pool: ResourcePool
    uid: str = ""
    labels: Mapping[str, str] = attrs.field(factory=dict)
    annotations: Mapping[str, str] = attrs.field(factory=dict)
    owner_references: tuple[OwnerReference, ...] = ()
    node_name: str | None = None
    node_selector: tuple[NodeSelectorTerm, ...] | None = None
    all_nodes: bool = False
    per_device_node_selection: bool = False
    devices: tuple[Device, ...] = ()
    shared_counters: tuple[CounterSet, ...] = ()

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> ResourceSlice:
        """Decode a ResourceSlice (v1, v1beta2, or v1beta1 with ``basic:`` devices); raises
        FieldError."""
        v1beta1 = is_v1beta1(raw, "ResourceSlice")
        meta = decode_meta(raw, "ResourceSlice", namespaced=False)
        spec = d.get_map(raw, "spec", "")
        driver = d.get_str(spec, "driver", "spec")
        check_driver_name(driver, "spec.driver")
        pool = ResourcePool.from_manifest(d.get_map(spec, "pool", "spec"), "spec.pool")
        node_name, node_selector, all_nodes, per_device = _slice_node_selection(spec, v1beta1)
        devices = decode_items(
            spec,
            "devices",
            "spec",
            lambda r, p: Device.from_manifest(r, p, v1beta1, per_device),
            MAX_DEVICES_PER_SLICE,
        )
        check_unique([dev.name for dev in devices], "spec.devices[{i}].name")
        counters = decode_items(spec, "sharedCounters", "spec", CounterSet.from_manifest, 8)
        check_unique([c.name for c in counters], "spec.sharedCounters[{i}].name")
        return cls(
            name=meta.name,
            driver=driver,
            pool=pool,
            uid=meta.uid,
            labels=meta.labels,
            annotations=meta.annotations,
            owner_references=meta.owner_references,
            node_name=node_name,
            node_selector=node_selector,
            all_nodes=all_nodes,
            per_device_node_selection=per_device,
            devices=devices,
            shared_counters=counters,
        )


def _slice_node_selection(
    spec: Mapping[str, Any], v1beta1: bool
) -> tuple[str | None, tuple[NodeSelectorTerm, ...] | None, bool, bool]:
    node_name = None if spec.get("nodeName") is None else d.get_str(spec, "nodeName", "spec")
    all_nodes = optional_bool(spec, "allNodes", "spec")
    per_device = optional_bool(spec, "perDeviceNodeSelection", "spec")
    if v1beta1:
        # v1beta1 nodeName/allNodes are plain values: "" and false mean unset
        node_name = node_name or None
        all_nodes = all_nodes or None
    if node_name == "":
        raise FieldError("spec.nodeName", "must be either unset or set to a non-empty string")
    if all_nodes is False:
        raise FieldError("spec.allNodes", "must be either unset or set to true")
    if per_device is False:
        raise FieldError("spec.perDeviceNodeSelection", "must be either unset or set to true")
    node_selector = node_selector_terms(spec, "nodeSelector", "spec")
    if node_selector is not None and len(node_selector) != 1:
        raise FieldError(
            "spec.nodeSelector.nodeSelectorTerms", "must have exactly one node selector term"
        )
    given = [
        f"`{k}`"
        for k, v in (
            ("nodeName", node_name),
            ("nodeSelector", node_selector),
            ("allNodes", all_nodes),
            ("perDeviceNodeSelection", per_device),
        )
        if v is not None
    ]
    if not given:
        raise FieldError("spec", f"exactly one of {_SLICE_NODE_SELECTION} is required")
    if len(given) > 1:
        raise FieldError(
            "spec",
            f"exactly one of {_SLICE_NODE_SELECTION} is required, but multiple fields are set: "
            f"{', '.join(given)}",
        )
    return node_name, node_selector, bool(all_nodes), bool(per_device)
