"""The manager views of a `schedsim.snapshot.predicate.PredicateSnapshot`: what plugins read
and write through the framework handle's ``SharedCsiManager``, ``SharedVolumeManager`` and
``SharedDraManager``, each call answered by the snapshot's CSI, volume or DRA part as it is
now (forks and bindings included).

A mixin of `PredicateSnapshot` (kept apart so that each module stays one concept): the
snapshot holds ``csi_snapshot``, ``volume_snapshot`` and ``dra_snapshot``.
"""

from __future__ import annotations

from collections.abc import Sequence

from schedsim.api.resource import DeviceClass, ResourceClaim, ResourceSlice
from schedsim.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim
from schedsim.dra.types import DeviceId
from schedsim.snapshot.csi import CsiSnapshot
from schedsim.snapshot.dra import DraSnapshot
from schedsim.snapshot.volumes import VolumeSnapshot

__all__ = ["SnapshotManagers"]


class SnapshotManagers:
    """The CSI, volume and DRA manager methods of a PredicateSnapshot."""

    csi_snapshot: CsiSnapshot
    volume_snapshot: VolumeSnapshot
    dra_snapshot: DraSnapshot

    # ------------------------------------------------------------------ SharedCsiManager

    def get_csi_node(self, name: str) -> CSINode | None:
        """The CSINode ``name`` now (the plugins' ``CSIManager``), or None."""
        return self.csi_snapshot.get_csi_node(name)

    def list_csi_nodes(self) -> Sequence[CSINode]:
        """Every CSINode now."""
        return self.csi_snapshot.list()

    # ------------------------------------------------------------------ SharedVolumeManager

    def get_persistent_volume(self, name: str) -> PersistentVolume | None:
        """The PV ``name`` now (bindings made in the snapshot included), or None."""
        return self.volume_snapshot.get_persistent_volume(name)

    def get_persistent_volume_claim(
        self, namespace: str, name: str
    ) -> PersistentVolumeClaim | None:
        """The PVC ``namespace/name`` now, or None."""
        return self.volume_snapshot.get_persistent_volume_claim(namespace, name)

    def list_persistent_volumes(self, storage_class: str) -> Sequence[PersistentVolume]:
        """The PVs of class ``storage_class`` now, in input order."""
        return self.volume_snapshot.list_persistent_volumes(storage_class)

    def assume_persistent_volume(self, pv: PersistentVolume) -> None:
        """Replace a PV (VolumeBinding's Reserve/PreBind); undone by `revert`. Raises
        KeyError for an unknown PV."""
        self.volume_snapshot.assume_persistent_volume(pv)

    def assume_persistent_volume_claim(self, pvc: PersistentVolumeClaim) -> None:
        """Replace a PVC (VolumeBinding's Reserve/PreBind); undone by `revert`. Raises
        KeyError for an unknown PVC."""
        self.volume_snapshot.assume_persistent_volume_claim(pvc)

    # ------------------------------------------------------------------ SharedDraManager

    def get_resource_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        """The claim ``namespace/name`` now, or None."""
        return self.dra_snapshot.resource_claim(namespace, name)

    def list_resource_claims(self) -> Sequence[ResourceClaim]:
        """Every claim."""
        return self.dra_snapshot.list_resource_claims()

    def list_all_allocated_devices(self) -> frozenset[DeviceId]:
        """Devices allocated to any claim (admin-access results excluded)."""
        return self.dra_snapshot.list_all_allocated_devices()

    def claim_changes_since(self, token: object) -> tuple[object, Sequence[tuple[str, str]] | None]:
        """The DRA snapshot's claim change feed (`DraSnapshot.claim_changes_since`)."""
        return self.dra_snapshot.claim_changes_since(token)

    def slices_stamp(self) -> int:
        """The DRA snapshot's `DraSnapshot.slices_stamp`."""
        return self.dra_snapshot.slices_stamp()

    def device_classes_stamp(self) -> int:
        """The DRA snapshot's `DraSnapshot.device_classes_stamp`."""
        return self.dra_snapshot.device_classes_stamp()

    def signal_claim_pending_allocation(
        self, claim_uid: str, allocated_claim: ResourceClaim
    ) -> None:
        """Write the allocation Reserve made into the DRA snapshot; raises DraSnapshotError."""
        self.dra_snapshot.signal_claim_pending_allocation(claim_uid, allocated_claim)

    def update_resource_claim(self, claim: ResourceClaim) -> None:
        """Replace a claim (PreBind / PostFilter writes); raises DraSnapshotError."""
        self.dra_snapshot.update_claim(claim)

    def create_resource_claim(self, claim: ResourceClaim) -> None:
        """Add a claim made by a plugin; raises DraSnapshotError if it exists."""
        self.dra_snapshot.add_claims((claim,))

    def delete_resource_claim(self, namespace: str, name: str) -> None:
        """Remove a claim; raises DraSnapshotError if it is unknown."""
        self.dra_snapshot.remove_claim(namespace, name)

    def list_resource_slices(self) -> Sequence[ResourceSlice]:
        """Every ResourceSlice."""
        return self.dra_snapshot.list_resource_slices()

    def get_device_class(self, name: str) -> DeviceClass | None:
        """The DeviceClass ``name``, or None."""
        return self.dra_snapshot.device_class(name)

    def list_device_classes(self) -> Sequence[DeviceClass]:
        """Every DeviceClass."""
        return self.dra_snapshot.list_device_classes()
