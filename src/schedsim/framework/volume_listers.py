"""What the volume plugins read besides NodeInfos: CSINodes from the snapshot, and the cluster's
PersistentVolumes, PersistentVolumeClaims, StorageClasses and VolumeAttachments.

kube-scheduler's NodeVolumeLimits plugin reads PVs, PVCs, StorageClasses and VolumeAttachments
through informer listers (the live cluster), and CSINodes through the shared ``CSIManager``
(which CA points at its CSI snapshot, so CSINodes of nodes added in a fork are seen). schedsim
does the same: `StorageListers` holds the objects read from the input (they do not change
during a simulation, like an informer cache between events), and the snapshot, which owns the
CSINodes, is the handle's `SharedCsiManager`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

import attrs

from schedsim.api.storage import (
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)

__all__ = ["SharedCsiManager", "StorageListers"]


class SharedCsiManager(Protocol):
    """The CSINodes a snapshot shares with plugins during a cycle (``CSIManager.CSINodes()``).

    This is a Protocol: implementations don't inherit from it.
    """

    def get_csi_node(self, name: str) -> CSINode | None:
        """The CSINode named ``name`` (named like its node), or None."""
        ...

    def list_csi_nodes(self) -> Sequence[CSINode]:
        """Every CSINode in the snapshot."""
        ...


@attrs.frozen
class StorageListers:
    """The cluster's storage objects, indexed the way the plugin's listers look them up.

    Mirrors the informer listers NodeVolumeLimits uses: ``PersistentVolumes().Get(name)``,
    ``PersistentVolumeClaims(ns).Get(name)``, ``StorageClasses().Get(name)`` and the
    VolumeAttachment indexer by ``spec.nodeName``. Lookups are O(1).

    Attributes:
        persistent_volumes: PV name -> PV.
        persistent_volume_claims: (namespace, name) -> PVC.
        storage_classes: class name -> StorageClass.
        volume_attachments: node name -> VolumeAttachments whose ``spec.nodeName`` is it, in
            input order.
    """

    persistent_volumes: Mapping[str, PersistentVolume] = attrs.field(factory=dict)
    persistent_volume_claims: Mapping[tuple[str, str], PersistentVolumeClaim] = attrs.field(
        factory=dict
    )
    storage_classes: Mapping[str, StorageClass] = attrs.field(factory=dict)
    volume_attachments: Mapping[str, tuple[VolumeAttachment, ...]] = attrs.field(factory=dict)

    @classmethod
    def from_objects(
        cls,
        persistent_volumes: Iterable[PersistentVolume] = (),
        persistent_volume_claims: Iterable[PersistentVolumeClaim] = (),
        storage_classes: Iterable[StorageClass] = (),
        volume_attachments: Iterable[VolumeAttachment] = (),
    ) -> StorageListers:
        """Index the given objects.

        Raises:
            ValueError: two objects of one kind share a name (within a namespace for PVCs).

        Time: O(objects).
        """
        pvs: dict[str, PersistentVolume] = {}
        for pv in persistent_volumes:
            if pv.name in pvs:
                raise ValueError(f"PersistentVolume {pv.name} given twice")
            pvs[pv.name] = pv
        pvcs: dict[tuple[str, str], PersistentVolumeClaim] = {}
        for pvc in persistent_volume_claims:
            key = (pvc.namespace, pvc.name)
            if key in pvcs:
                raise ValueError(f"PersistentVolumeClaim {pvc.key} given twice")
            pvcs[key] = pvc
        classes: dict[str, StorageClass] = {}
        for sc in storage_classes:
            if sc.name in classes:
                raise ValueError(f"StorageClass {sc.name} given twice")
            classes[sc.name] = sc
        by_node: dict[str, list[VolumeAttachment]] = {}
        names: set[str] = set()
        for va in volume_attachments:
            if va.name in names:
                raise ValueError(f"VolumeAttachment {va.name} given twice")
            names.add(va.name)
            by_node.setdefault(va.node_name, []).append(va)
        return cls(pvs, pvcs, classes, {k: tuple(v) for k, v in by_node.items()})

    def persistent_volume(self, name: str) -> PersistentVolume | None:
        """The PV ``name``, or None."""
        return self.persistent_volumes.get(name)

    def persistent_volume_claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        """The PVC ``namespace/name``, or None."""
        return self.persistent_volume_claims.get((namespace, name))

    def storage_class(self, name: str) -> StorageClass | None:
        """The StorageClass ``name``, or None."""
        return self.storage_classes.get(name)

    def volume_attachments_on(self, node_name: str) -> tuple[VolumeAttachment, ...]:
        """VolumeAttachments with ``spec.nodeName == node_name``."""
        return self.volume_attachments.get(node_name, ())
