"""What the PersistentVolume controller settles within seconds of objects being created, applied
once when a cluster is read from hand-written manifests.

The scheduler's VolumeBinding plugin only counts a claim as bound when the PV controller has
finished binding it (``spec.volumeName`` plus the ``pv.kubernetes.io/bind-completed``
annotation), and only binds WaitForFirstConsumer claims to PVs in phase ``Available``. Manifests
exported from a cluster (``kubectl get -o yaml``) carry both; manifests written by hand usually
carry neither, and in a live cluster the controller (pkg/controller/volume/persistentvolume,
``syncUnboundClaim`` / ``syncVolume``) would fill them in before the scheduler looks. This module
does that part of its work, and nothing else (no provisioning, no ``Lost`` or ``Released``
transitions for bound claims, no unbinding).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from schedsim.api.storage import (
    BIND_COMPLETED_ANNOTATION,
    ClaimReference,
    PersistentVolume,
    PersistentVolumeClaim,
)

__all__ = ["complete_bindings"]


def _satisfies(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> bool:
    """``checkVolumeSatisfyClaim``: capacity, volume mode, class and access modes."""
    if pvc.requested_storage is not None and pv.capacity < pvc.requested_storage:
        return False
    if pv.volume_mode != pvc.volume_mode or pv.storage_class != pvc.storage_class:
        return False
    return all(mode in pv.access_modes for mode in pvc.access_modes)


def complete_bindings(
    pvs: Sequence[PersistentVolume], pvcs: Sequence[PersistentVolumeClaim]
) -> tuple[list[PersistentVolume], list[PersistentVolumeClaim]]:
    """The PVs and PVCs as the PV controller leaves them once it has synced them.

    * A claim that names a PV (``spec.volumeName``) but is not fully bound is bound to it
      when the PV exists, is free or already reserved for this claim (its ``claimRef``), and
      satisfies the claim (capacity, volume mode, class, access modes): the claim gets the
      bind-completed annotation and phase ``Bound``, the PV the claim's ``claimRef`` and phase
      ``Bound``. Otherwise the claim stays as it is (pending, as the controller leaves it).
    * A PV without ``status.phase`` gets ``Available`` (``Bound`` when bound above).

    Objects that need no change are returned as given (they are immutable); order is kept.

    Time: O(PVs + PVCs).
    """
    by_name = {pv.name: pv for pv in pvs}
    out_pvcs: list[PersistentVolumeClaim] = []
    for pvc in pvcs:
        pv = by_name.get(pvc.volume_name) if pvc.volume_name else None
        if pv is None or pvc.is_fully_bound:
            out_pvcs.append(pvc)
            continue
        ref = pv.claim_ref
        free = ref is None or (
            ref.namespace == pvc.namespace
            and ref.name == pvc.name
            and (not ref.uid or ref.uid == pvc.uid)
        )
        if not free or not _satisfies(pv, pvc):
            out_pvcs.append(pvc)
            continue
        by_name[pv.name] = attrs.evolve(
            pv, claim_ref=ClaimReference(pvc.namespace, pvc.name, pvc.uid), phase="Bound"
        )
        out_pvcs.append(
            attrs.evolve(
                pvc,
                annotations={**pvc.annotations, BIND_COMPLETED_ANNOTATION: "yes"},
                phase="Bound",
            )
        )
    out_pvs = []
    for pv in pvs:
        new = by_name[pv.name]
        if not new.phase:
            new = attrs.evolve(new, phase="Available")
        out_pvs.append(new)
    return out_pvs, out_pvcs
