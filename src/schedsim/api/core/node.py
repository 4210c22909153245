"""core/v1 Node with the fields scheduling depends on: labels, taints, allocatable and
capacity (allocatable defaults to capacity), images, unschedulable.

`Node.from_manifest` raises `FieldError` naming the field.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from schedsim.api.core.taints import Taint
from schedsim.api.errors import FieldError
from schedsim.api.interning import shared, shared_map
from schedsim.api.loading import decode as d
from schedsim.api.loading.uids import default_uid
from schedsim.api.meta import ResourceList

__all__ = ["Node"]

# --------------------------------------------------------------------------- Node


@attrs.frozen
class Node:
    """A core/v1 Node as the scheduler sees it.

    Attributes:
        allocatable: status.allocatable (what scheduling checks against), exact quantities;
            the capacity when absent, as the API server defaults it.
        capacity: status.capacity (informational; kube-scheduler's Filter does not use it).
        images: status.images: each name of each image the node has -> the image's size in
            bytes (``sizeBytes``; ImageLocality scores with it).
        conditions: status.conditions as type -> status (``Ready`` -> ``"True"``, ...); the
            Cluster Autoscaler's readiness reads them.
    """

    name: str
    uid: str = ""
    labels: Mapping[str, str] = attrs.field(factory=dict)
    annotations: Mapping[str, str] = attrs.field(factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    allocatable: ResourceList = attrs.field(factory=dict)
    capacity: ResourceList = attrs.field(factory=dict)
    images: Mapping[str, int] = attrs.field(factory=dict)
    conditions: Mapping[str, str] = attrs.field(factory=dict)

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> Node:
        """Decode a Node manifest; raises FieldError naming the bad field (an apiVersion other
        than ``v1`` included)."""
        d.check_api_version(raw, "Node", ("v1",))
        meta = d.get_map(raw, "metadata", "")
        name = d.get_str(meta, "name", "metadata")
        if not name:
            raise FieldError("metadata.name", "required")
        spec = d.get_map(raw, "spec", "")
        status = d.get_map(raw, "status", "")
        taints_raw = d.get_list(spec, "taints", "spec")
        capacity = d.get_resource_list(status, "capacity", "status")
        # SetDefaults_NodeStatus: an absent allocatable is the capacity
        allocatable = (
            capacity
            if status.get("allocatable") is None
            else d.get_resource_list(status, "allocatable", "status")
        )
        taints = tuple(
            Taint.from_manifest(
                d.get_mapping_item(taints_raw, i, "spec.taints"), f"spec.taints[{i}]"
            )
            for i in range(len(taints_raw))
        )
        return cls(
            name=name,
            uid=d.get_str(meta, "uid", "metadata") or default_uid("Node", "", name),
            labels=shared_map(d.get_str_map(meta, "labels", "metadata")),
            annotations=shared_map(d.get_str_map(meta, "annotations", "metadata")),
            taints=shared(("taints", taints), taints) if taints else (),
            unschedulable=d.get_bool(spec, "unschedulable", "spec"),
            allocatable=shared_map(allocatable),
            capacity=shared_map(capacity),
            images=shared_map(_node_images(status)),
            conditions=shared_map(_node_conditions(status)),
        )


def _status_items(status: Mapping[str, Any], key: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """The items of the list ``status.<key>``, each with its field path. Raises FieldError."""
    items = d.get_list(status, key, "status")
    for i in range(len(items)):
        yield f"status.{key}[{i}]", d.get_mapping_item(items, i, f"status.{key}")


def _node_conditions(status: Mapping[str, Any]) -> dict[str, str]:
    """status.conditions as type -> status (the first of each type)."""
    out: dict[str, str] = {}
    for path, item in _status_items(status, "conditions"):
        out.setdefault(d.get_str(item, "type", path), d.get_str(item, "status", path))
    return out


def _node_images(status: Mapping[str, Any]) -> dict[str, int]:
    """status.images as name -> sizeBytes (every name of every image)."""
    out: dict[str, int] = {}
    for path, item in _status_items(status, "images"):
        size = d.get_int(item, "sizeBytes", path)
        for name in d.get_str_list(item, "names", path):
            out[name] = size
    return out
