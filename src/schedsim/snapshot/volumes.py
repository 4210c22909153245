"""`VolumeSnapshot`: the PersistentVolumes and PersistentVolumeClaims of a cluster snapshot.

kube-scheduler's VolumeBinding plugin keeps PVs and PVCs in assume caches: Reserve writes the
PV it chose for a WaitForFirstConsumer claim (its ``claimRef``) or the node it chose for
provisioning (the claim's ``volume.kubernetes.io/selected-node`` annotation) into them, so the
next pod sees the PV taken; Unreserve restores the informer's copy. The Cluster Autoscaler does
not model bindings. schedsim keeps PVs by name and PVCs by (namespace, name) in one `PatchSet`
each, beside the CSI and DRA snapshots: the writes of VolumeBinding's Reserve, Unreserve and
PreBind land in the top layer, fork/commit/revert act on them with the rest of the snapshot, and
what a reverted simulation bound is gone.

PVs and PVCs are only replaced, never added or removed (nothing in a simulation creates or
deletes them), so the class index of PVs (`list_persistent_volumes`) is built once.

Complexity (V PVs, C PVCs, N patches = forks + 1): fork O(1); commit and revert O(changes in
the top layer); get O(1) cached, O(N) otherwise; listing a class O(its PVs) lookups.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from schedsim.api.storage import PersistentVolume, PersistentVolumeClaim
from schedsim.framework.volume_listers import StorageListers, pvs_by_class
from schedsim.snapshot.patchset import PatchSet

__all__ = ["VolumeSnapshot"]


class VolumeSnapshot:
    """PVs and PVCs in forkable patch sets; the snapshot's ``SharedVolumeManager``.

    Args:
        persistent_volumes: the PVs (names unique).
        persistent_volume_claims: the PVCs ((namespace, name) unique).

    Raises:
        ValueError: a name given twice.
    """

    __slots__ = ("_by_class", "_pvcs", "_pvs")

    def __init__(
        self,
        persistent_volumes: Iterable[PersistentVolume] = (),
        persistent_volume_claims: Iterable[PersistentVolumeClaim] = (),
    ) -> None:
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
        self._by_class = pvs_by_class(pvs.values())
        self._pvs: PatchSet[str, PersistentVolume] = PatchSet.adopting(pvs)
        self._pvcs: PatchSet[tuple[str, str], PersistentVolumeClaim] = PatchSet.adopting(pvcs)

    @classmethod
    def from_listers(cls, listers: StorageListers) -> VolumeSnapshot:
        """The PVs and PVCs of ``listers`` (not copied: they are immutable). Time: O(V + C)."""
        return cls(listers.persistent_volumes.values(), listers.persistent_volume_claims.values())

    # ----------------------------------------------------------------- fork / commit / revert

    @property
    def depth(self) -> int:
        """Forks not yet committed or reverted."""
        return self._pvs.depth

    def fork(self) -> None:
        """Starts a layer of changes that `revert` can undo. Time: O(1)."""
        self._pvs.fork()
        self._pvcs.fork()

    def commit(self) -> None:
        """Merges the top layer into the one below; no-op when not forked.

        Time: O(changes in the top layer).
        """
        self._pvs.commit()
        self._pvcs.commit()

    def revert(self) -> None:
        """Drops the top layer and its changes; no-op when not forked.

        Time: O(changes in the top layer).
        """
        self._pvs.revert()
        self._pvcs.revert()

    def flattened(self) -> VolumeSnapshot:
        """An unforked copy of the current state. Time: O(V + C)."""
        return VolumeSnapshot(self._pvs.as_map().values(), self._pvcs.as_map().values())

    # ----------------------------------------------------------------- SharedVolumeManager

    def get_persistent_volume(self, name: str) -> PersistentVolume | None:
        """The PV ``name`` now, or None."""
        return self._pvs.find_value(name)

    def get_persistent_volume_claim(
        self, namespace: str, name: str
    ) -> PersistentVolumeClaim | None:
        """The PVC ``namespace/name`` now, or None."""
        return self._pvcs.find_value((namespace, name))

    def list_persistent_volumes(self, storage_class: str) -> Sequence[PersistentVolume]:
        """The PVs of class ``storage_class`` now, in input order."""
        find = self._pvs.find_value
        out = []
        for name in self._by_class.get(storage_class, ()):
            pv = find(name)
            if pv is not None:
                out.append(pv)
        return out

    def list_all_persistent_volumes(self) -> Sequence[PersistentVolume]:
        """Every PV now, in no particular order."""
        return list(self._pvs.as_map().values())

    def list_persistent_volume_claims(self) -> Sequence[PersistentVolumeClaim]:
        """Every PVC now, in no particular order."""
        return list(self._pvcs.as_map().values())

    def assume_persistent_volume(self, pv: PersistentVolume) -> None:
        """Replace the PV of the same name in the top layer.

        Raises:
            KeyError: no such PV (nothing is added).
        """
        if pv.name not in self._pvs:
            raise KeyError(f"persistentvolume {pv.name!r} not found")
        self._pvs.set_current(pv.name, pv)

    def assume_persistent_volume_claim(self, pvc: PersistentVolumeClaim) -> None:
        """Replace the PVC of the same namespace and name in the top layer.

        Raises:
            KeyError: no such PVC (nothing is added).
        """
        key = (pvc.namespace, pvc.name)
        if key not in self._pvcs:
            raise KeyError(f"persistentvolumeclaim {pvc.key!r} not found")
        self._pvcs.set_current(key, pvc)
