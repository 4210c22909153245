"""The CSI driver objects: CSINode (drivers per node, their volume limits and topology keys),
CSIDriver (capabilities), CSIStorageCapacity (capacity per topology) and VolumeAttachment.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any, Final

import attrs

from schedsim.api.errors import FieldError
from schedsim.api.labels import LabelSelector
from schedsim.api.loading import decode as d
from schedsim.api.storage.fields import (
    MIGRATED_PLUGINS_ANNOTATION,
    STORAGE_V1,
    metadata_name,
    required_str,
)

_INT32_MAX: Final = 2**31 - 1


# --------------------------------------------------------------------------- CSINode


@attrs.frozen
class CSINodeDriver:
    """``spec.drivers[i]`` of a CSINode.

    Attributes:
        name: the CSI driver name (the key NodeVolumeLimits counts attachments under).
        node_id: the node's ID as the driver knows it.
        allocatable_count: ``allocatable.count``: the most volumes of this driver the node can
            attach; None when unset (no limit).
        topology_keys: topology label keys the driver reports.
    """

    name: str
    node_id: str = ""
    allocatable_count: int | None = None
    topology_keys: tuple[str, ...] = ()

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> CSINodeDriver:
        """Decode one driver entry.

        Raises:
            FieldError: no ``name``, or ``allocatable.count`` is not an integer >= 0 that fits
                the API's int32.
        """
        alloc = d.get_map(raw, "allocatable", path)
        ap = d.join(path, "allocatable")
        count: int | None = None
        if alloc.get("count") is not None:
            count = d.get_int(alloc, "count", ap)
            if count < 0:
                raise FieldError(f"{ap}.count", f"must be greater than or equal to 0, got {count}")
            if count > _INT32_MAX:  # an int32 field: the API server cannot decode it
                raise FieldError(
                    f"{ap}.count",
                    f"{count} is out of range for a 32-bit integer (max {_INT32_MAX})",
                )
        return cls(
            name=required_str(raw, "name", path),
            node_id=d.get_str(raw, "nodeID", path),
            allocatable_count=count,
            topology_keys=d.get_str_list(raw, "topologyKeys", path),
        )


@attrs.frozen
class CSINode:
    """A ``storage.k8s.io/v1`` CSINode: the CSI drivers installed on the node of the same name.

    Attributes:
        name: the node's name (a CSINode is named after its node).
        annotations: metadata.annotations (`MIGRATED_PLUGINS_ANNOTATION` is read).
        drivers: ``spec.drivers``.
    """

    name: str
    annotations: Mapping[str, str] = attrs.field(factory=dict)
    drivers: tuple[CSINodeDriver, ...] = ()

    @property
    def migrated_plugins(self) -> frozenset[str]:
        """In-tree plugin names listed in the migrated-plugins annotation."""
        value = self.annotations.get(MIGRATED_PLUGINS_ANNOTATION, "")
        return frozenset(value.split(",")) if value else frozenset()

    def volume_limits(self) -> dict[str, int]:
        """Driver name -> ``allocatable.count`` for the drivers that set one (the
        NodeVolumeLimits plugin's ``getVolumeLimits``). Time: O(drivers)."""
        return {
            drv.name: drv.allocatable_count
            for drv in self.drivers
            if drv.allocatable_count is not None
        }

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> CSINode:
        """Decode a CSINode; raises FieldError naming the bad field."""
        d.check_api_version(raw, "CSINode", STORAGE_V1)
        meta = d.get_map(raw, "metadata", "")
        spec = d.get_map(raw, "spec", "")
        items = d.get_list(spec, "drivers", "spec")
        drivers = tuple(
            CSINodeDriver.from_manifest(
                d.get_mapping_item(items, i, "spec.drivers"), f"spec.drivers[{i}]"
            )
            for i in range(len(items))
        )
        seen: set[str] = set()
        for i, drv in enumerate(drivers):
            if drv.name in seen:
                raise FieldError(f"spec.drivers[{i}].name", f"duplicate driver {drv.name!r}")
            seen.add(drv.name)
        return cls(
            name=metadata_name(meta),
            annotations=d.get_str_map(meta, "annotations", "metadata"),
            drivers=drivers,
        )


# --------------------------------------------------------------------------- VolumeAttachment


@attrs.frozen
class VolumeAttachment:
    """A ``storage.k8s.io/v1`` VolumeAttachment: a volume attached (or being attached) to a node.

    Attributes:
        name: the attachment name.
        attacher: the CSI driver that attaches the volume.
        node_name: the node it is attached to.
        persistent_volume_name: ``spec.source.persistentVolumeName``, or None (an inline volume
            spec, which NodeVolumeLimits does not count).
    """

    name: str
    attacher: str
    node_name: str
    persistent_volume_name: str | None = None

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> VolumeAttachment:
        """Decode a VolumeAttachment.

        Raises:
            FieldError: no ``spec.attacher`` or ``spec.nodeName``, or ``spec.source`` sets
                neither or both of ``persistentVolumeName`` and ``inlineVolumeSpec``.
        """
        d.check_api_version(raw, "VolumeAttachment", STORAGE_V1)
        meta = d.get_map(raw, "metadata", "")
        spec = d.get_map(raw, "spec", "")
        source = d.get_map(spec, "source", "spec")
        pv = source.get("persistentVolumeName")
        inline = source.get("inlineVolumeSpec") is not None
        if (pv is None) == (not inline):
            raise FieldError(
                "spec.source", "must specify exactly one of persistentVolumeName, inlineVolumeSpec"
            )
        return cls(
            name=metadata_name(meta),
            attacher=required_str(spec, "attacher", "spec"),
            node_name=required_str(spec, "nodeName", "spec"),
            persistent_volume_name=None
            if pv is None
            else required_str(source, "persistentVolumeName", "spec.source"),
        )


# --------------------------------------------------------------------------- CSIDriver


_LIFECYCLE_MODES: Final = ("Persistent", "Ephemeral")


@attrs.frozen
class CSIDriver:
    """A ``storage.k8s.io/v1`` CSIDriver: how Kubernetes treats a CSI driver's volumes.

    Attributes:
        name: the driver name (as in CSINode drivers and PV ``csi.driver``).
        attach_required: ``spec.attachRequired`` (default true): volumes need a
            VolumeAttachment.
        pod_info_on_mount: ``spec.podInfoOnMount`` (default false).
        storage_capacity: ``spec.storageCapacity`` (default false): VolumeBinding checks
            CSIStorageCapacity objects for the driver's late-binding classes.
        volume_lifecycle_modes: ``spec.volumeLifecycleModes`` (default ``("Persistent",)``).
    """

    name: str
    attach_required: bool = True
    pod_info_on_mount: bool = False
    storage_capacity: bool = False
    volume_lifecycle_modes: tuple[str, ...] = ("Persistent",)

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> CSIDriver:
        """Decode a CSIDriver with the API server's defaults; raises FieldError for an
        unknown volume lifecycle mode."""
        d.check_api_version(raw, "CSIDriver", STORAGE_V1)
        meta = d.get_map(raw, "metadata", "")
        spec = d.get_map(raw, "spec", "")
        modes = d.get_str_list(spec, "volumeLifecycleModes", "spec") or ("Persistent",)
        for i, mode in enumerate(modes):
            if mode not in _LIFECYCLE_MODES:
                raise FieldError(
                    f"spec.volumeLifecycleModes[{i}]",
                    f'unsupported value "{mode}": supported values: "Ephemeral", "Persistent"',
                )
        attach = spec.get("attachRequired")
        return cls(
            name=metadata_name(meta),
            attach_required=True if attach is None else d.get_bool(spec, "attachRequired", "spec"),
            pod_info_on_mount=d.get_bool(spec, "podInfoOnMount", "spec"),
            storage_capacity=d.get_bool(spec, "storageCapacity", "spec"),
            volume_lifecycle_modes=modes,
        )


# --------------------------------------------------------------------------- CSIStorageCapacity


@attrs.frozen
class CSIStorageCapacity:
    """A ``storage.k8s.io/v1`` CSIStorageCapacity: storage a driver can provision for one
    StorageClass in one topology segment.

    Attributes:
        name: the object name.
        namespace: its namespace (the driver's; default ``default``).
        storage_class_name: ``storageClassName`` (required).
        node_topology: ``nodeTopology``; None: the capacity is reachable from no node.
        capacity: ``capacity`` (bytes), or None when unknown.
        maximum_volume_size: ``maximumVolumeSize`` (bytes), or None.
    """

    name: str
    storage_class_name: str
    namespace: str = "default"
    node_topology: LabelSelector | None = None
    capacity: Fraction | None = None
    maximum_volume_size: Fraction | None = None

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> CSIStorageCapacity:
        """Decode a CSIStorageCapacity; raises FieldError naming the field (no
        ``storageClassName``, a bad selector or quantity)."""
        d.check_api_version(raw, "CSIStorageCapacity", STORAGE_V1)
        meta = d.get_map(raw, "metadata", "")
        topology = None
        if raw.get("nodeTopology") is not None:
            topology = LabelSelector.from_manifest(
                d.get_map(raw, "nodeTopology", ""), "nodeTopology"
            )
        quantities = _quantities(raw)
        return cls(
            name=metadata_name(meta),
            namespace=d.get_str(meta, "namespace", "metadata") or "default",
            storage_class_name=required_str(raw, "storageClassName", ""),
            node_topology=topology,
            capacity=quantities.get("capacity"),
            maximum_volume_size=quantities.get("maximumVolumeSize"),
        )


def _quantities(raw: Mapping[str, Any]) -> dict[str, Fraction]:
    """``capacity`` and ``maximumVolumeSize`` as exact non-negative quantities."""
    given = {k: raw[k] for k in ("capacity", "maximumVolumeSize") if raw.get(k) is not None}
    try:
        return d.get_resource_list({"q": given}, "q", "")
    except FieldError as e:
        raise FieldError(e.field.removeprefix("q."), e.problem) from None
