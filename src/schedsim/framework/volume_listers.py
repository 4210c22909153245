"""What the volume plugins read besides NodeInfos: CSINodes from the snapshot, and the cluster's
PersistentVolumes, PersistentVolumeClaims, StorageClasses and VolumeAttachments.

PVs and PVCs change during a simulation: VolumeBinding's Reserve binds a WaitForFirstConsumer
claim to a PV or selects a node for its provisioning, as kube-scheduler's assume caches do.
The snapshot keeps them (`SharedVolumeManager`, ``Handle.volume_manager``) so forks and
reverts undo bindings; `VolumeState` is the unforked stand-in plugins use when no snapshot
owns the handle.

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
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)
from schedsim.api.storage.pvcontroller import complete_bindings

__all__ = ["SharedCsiManager", "SharedVolumeManager", "StorageListers", "VolumeState"]


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
        csi_drivers: CSIDriver name -> CSIDriver (VolumeBinding's capacity check).
        csi_storage_capacities: every CSIStorageCapacity, in input order (VolumeBinding lists
            them all, in every namespace, as upstream does).
    """

    persistent_volumes: Mapping[str, PersistentVolume] = attrs.field(factory=dict)
    persistent_volume_claims: Mapping[tuple[str, str], PersistentVolumeClaim] = attrs.field(
        factory=dict
    )
    storage_classes: Mapping[str, StorageClass] = attrs.field(factory=dict)
    volume_attachments: Mapping[str, tuple[VolumeAttachment, ...]] = attrs.field(factory=dict)
    csi_drivers: Mapping[str, CSIDriver] = attrs.field(factory=dict)
    csi_storage_capacities: tuple[CSIStorageCapacity, ...] = ()

    @classmethod
    def from_objects(
        cls,
        persistent_volumes: Iterable[PersistentVolume] = (),
        persistent_volume_claims: Iterable[PersistentVolumeClaim] = (),
        storage_classes: Iterable[StorageClass] = (),
        volume_attachments: Iterable[VolumeAttachment] = (),
        *,
        csi_drivers: Iterable[CSIDriver] = (),
        csi_storage_capacities: Iterable[CSIStorageCapacity] = (),
        pv_controller: bool = False,
    ) -> StorageListers:
        """Index the given objects.

        Args:
            pv_controller: first settle pre-bound claims and PV phases as the PV controller
                would (`schedsim.api.storage.pvcontroller.complete_bindings`): for clusters
                read from hand-written manifests. False: the objects as stored (Kubernetes'
                test cases).

        Raises:
            ValueError: two objects of one kind share a name (within a namespace for PVCs).

        Time: O(objects).
        """
        if pv_controller:
            persistent_volumes, persistent_volume_claims = complete_bindings(
                list(persistent_volumes), list(persistent_volume_claims)
            )
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
        drivers: dict[str, CSIDriver] = {}
        for drv in csi_drivers:
            if drv.name in drivers:
                raise ValueError(f"CSIDriver {drv.name} given twice")
            drivers[drv.name] = drv
        return cls(
            pvs,
            pvcs,
            classes,
            {k: tuple(v) for k, v in by_node.items()},
            drivers,
            tuple(csi_storage_capacities),
        )

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

    def csi_driver(self, name: str) -> CSIDriver | None:
        """The CSIDriver ``name``, or None."""
        return self.csi_drivers.get(name)


class SharedVolumeManager(Protocol):
    """PersistentVolumes and PersistentVolumeClaims as the scheduler sees them now, bindings
    assumed by VolumeBinding included (kube-scheduler's PV and PVC assume caches).

    This is a Protocol: implementations don't inherit from it. ``PredicateSnapshot`` is one
    (its writes fork, commit and revert with the rest of the snapshot); `VolumeState` is the
    unforked one.
    """

    def get_persistent_volume(self, name: str) -> PersistentVolume | None:
        """The PV ``name``, or None."""
        ...

    def get_persistent_volume_claim(
        self, namespace: str, name: str
    ) -> PersistentVolumeClaim | None:
        """The PVC ``namespace/name``, or None."""
        ...

    def list_persistent_volumes(self, storage_class: str) -> Sequence[PersistentVolume]:
        """The PVs of class ``storage_class`` (``""``: PVs without a class), in input order
        (the assume cache's ``ListPVs``)."""
        ...

    def assume_persistent_volume(self, pv: PersistentVolume) -> None:
        """Replace the PV of the same name (``pvCache.Assume``); raises KeyError if absent."""
        ...

    def assume_persistent_volume_claim(self, pvc: PersistentVolumeClaim) -> None:
        """Replace the PVC of the same namespace and name (``pvcCache.Assume``); raises
        KeyError if absent."""
        ...


class VolumeState:
    """PVs and PVCs in plain dicts over a `StorageListers`, without forks: the
    `SharedVolumeManager` a plugin uses when no snapshot set ``Handle.volume_manager``.

    Args:
        listers: the loaded objects; never modified (assumed objects go into this state's
            own dicts).

    Time: construction O(PVs + PVCs); lookups and assumes O(1); listing a class O(its PVs).
    """

    __slots__ = ("_by_class", "_pvcs", "_pvs")

    def __init__(self, listers: StorageListers) -> None:
        self._pvs: dict[str, PersistentVolume] = dict(listers.persistent_volumes)
        self._pvcs: dict[tuple[str, str], PersistentVolumeClaim] = dict(
            listers.persistent_volume_claims
        )
        self._by_class = pvs_by_class(self._pvs.values())

    def get_persistent_volume(self, name: str) -> PersistentVolume | None:
        """The PV ``name``, or None."""
        return self._pvs.get(name)

    def get_persistent_volume_claim(
        self, namespace: str, name: str
    ) -> PersistentVolumeClaim | None:
        """The PVC ``namespace/name``, or None."""
        return self._pvcs.get((namespace, name))

    def list_persistent_volumes(self, storage_class: str) -> Sequence[PersistentVolume]:
        """The PVs of class ``storage_class``."""
        return [self._pvs[n] for n in self._by_class.get(storage_class, ())]

    def assume_persistent_volume(self, pv: PersistentVolume) -> None:
        """Replace the PV of the same name; raises KeyError if absent."""
        if pv.name not in self._pvs:
            raise KeyError(f"persistentvolume {pv.name!r} not found")
        self._pvs[pv.name] = pv

    def assume_persistent_volume_claim(self, pvc: PersistentVolumeClaim) -> None:
        """Replace the PVC of the same namespace and name; raises KeyError if absent."""
        key = (pvc.namespace, pvc.name)
        if key not in self._pvcs:
            raise KeyError(f"persistentvolumeclaim {pvc.key!r} not found")
        self._pvcs[key] = pvc


def pvs_by_class(pvs: Iterable[PersistentVolume]) -> dict[str, tuple[str, ...]]:
    """Class name -> names of its PVs, in the given order (the PV assume cache's class index).

    A PV's class never changes when it is bound, so the index is built once per load.
    """
    out: dict[str, list[str]] = {}
    for pv in pvs:
        out.setdefault(pv.storage_class, []).append(pv.name)
    return {k: tuple(v) for k, v in out.items()}
