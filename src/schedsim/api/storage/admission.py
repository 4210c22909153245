"""The API server's DefaultStorageClass admission, applied to the PersistentVolumeClaims read.

A claim created without a class (``spec.storageClassName`` unset, not ``""``, and no
``volume.beta.kubernetes.io/storage-class`` annotation: ``PersistentVolumeClaimHasClass``)
gets the name of the cluster's default StorageClass (plugin/pkg/admission/storage/storageclass/
setdefault). Since Kubernetes 1.28 the PV controller does the same for unbound claims that
already exist (retroactive default StorageClass assignment, KEP-3333: ``syncUnboundClaim`` ->
``assignDefaultStorageClass``), so admission-at-creation and an existing unbound claim end the
same way.

The default class (``GetDefaultClass``, pkg/volume/util/storageclass.go) is the class annotated
``storageclass.kubernetes.io/is-default-class: "true"`` (or the beta
``storageclass.beta.kubernetes.io/is-default-class``); with several, the newest by
``creationTimestamp``, ties broken by name ascending. A class without a ``creationTimestamp``
(hand-written) counts as created when the manifests are applied, i.e. newer than every class
that has one.

Which claims are defaulted: the input is treated as ``kubectl apply`` of the files, so every
claim without a class is admitted as at creation, including a claim pre-bound to a PV by
``spec.volumeName`` (upstream's own advice for reserving a classless PV is to set
``storageClassName: ""``; a pre-bound claim defaulted to a class its PV lacks does not bind,
as in a cluster, and a warning says so). The exception is a claim the PV controller has
already fully bound (``spec.volumeName`` and ``pv.kubernetes.io/bind-completed``): that is a
live cluster's state, admitted when it was created; the retroactive assignment skips bound
claims, and the scheduler reads the PV of a bound claim, not its class, so it is left as read.

The same pass warns about each claim whose class names a StorageClass absent from the input:
``IsDelayBindingMode`` returns false for a class that is not found, so kube-scheduler's
VolumeBinding treats the claim as immediate binding. A claim that is bound once the PV
controller has settled the input (`schedsim.api.storage.pvcontroller.complete_bindings`, the
rule the volume listers apply: ``spec.volumeName`` naming a PV free or reserved for it by
``claimRef`` that satisfies it) is not warned about: VolumeBinding reads its PV, not its
class. It also warns about a class whose default-class annotation has a value other than ``"true"``
(``"True"``, ``"yes"``, ``"1"``): ``IsDefaultAnnotation`` accepts exactly ``"true"``, so the
class is not the default.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

import attrs

from schedsim.api.errors import first_few
from schedsim.api.meta import as_utc
from schedsim.api.storage.fields import BETA_STORAGE_CLASS_ANNOTATION
from schedsim.api.storage.pv import PersistentVolume, PersistentVolumeClaim
from schedsim.api.storage.pvcontroller import complete_bindings
from schedsim.api.storage.storage_class import StorageClass

__all__ = ["admit_claims", "default_storage_class", "has_class"]


def has_class(claim: PersistentVolumeClaim) -> bool:
    """Whether the claim asked for a class, ``""`` included (``PersistentVolumeClaimHasClass``:
    the beta annotation is present or ``spec.storageClassName`` is set)."""
    return (
        BETA_STORAGE_CLASS_ANNOTATION in claim.annotations or claim.storage_class_name is not None
    )


def _newest_first(sc: StorageClass) -> tuple[bool, float, str]:
    """Sort key of `default_storage_class`: no timestamp first (applied now, the newest), then
    the newest timestamp, then the name ascending."""
    ts = sc.creation_timestamp
    return (ts is not None, -_seconds(ts) if ts is not None else 0.0, sc.name)


def _seconds(ts: datetime) -> float:
    """Seconds since the epoch; a timestamp without a zone is read as UTC (YAML loaders parse
    ``2024-01-02 03:04:05`` without one)."""
    return as_utc(ts).timestamp()


def default_storage_class(classes: Sequence[StorageClass]) -> StorageClass | None:
    """The cluster's default StorageClass, or None when no class is marked default.

    Mirrors ``GetDefaultClass`` (pkg/volume/util/storageclass.go): among the classes with
    ``is_default``, the newest by ``creationTimestamp``, ties by name ascending. A class
    without a timestamp is newer than any with one (see the module docstring).

    Time: O(classes).
    """
    defaults = [sc for sc in classes if sc.is_default]
    return min(defaults, key=_newest_first) if defaults else None


def admit_claims(
    claims: Sequence[PersistentVolumeClaim],
    classes: Sequence[StorageClass],
    volumes: Sequence[PersistentVolume],
    source_of: Callable[[PersistentVolumeClaim | StorageClass], str],
) -> tuple[list[PersistentVolumeClaim], list[str]]:
    """The claims after DefaultStorageClass admission, and the warnings it leads to.

    Args:
        claims: the claims read (and made for StatefulSet ``volumeClaimTemplates``); not
            modified.
        classes: the StorageClasses read.
        volumes: the PersistentVolumes read (a pre-bound claim's PV is checked against the
            class it was given).
        source_of: the file a claim or class came from (for warnings).

    Returns:
        ``(claims, warnings)``: the claims in the same order, a new object only for a claim
        that got the default class (the others as given); warning lines
        ``FILE: StorageClass NAME: metadata.annotations: ...`` for a default-class annotation
        whose value is not exactly ``"true"``, and
        ``FILE: PersistentVolumeClaim NS/NAME: spec.storageClassName: ...`` for a pre-bound
        claim whose PV lacks the default class it got, and for claims naming a StorageClass
        the input does not have that are not bound once the PV controller has settled them
        (one line per file and class when several claims name it).

    Time: O(claims + classes + volumes).
    """
    warnings = [
        f"{source_of(sc)}: StorageClass {sc.name}: metadata.annotations: {key}: "
        f'"{value}" is not "true": this class is not the default '
        '(kube-apiserver and the PV controller accept exactly "true")'
        for sc in classes
        for key, value in sc.not_default_values
    ]
    default = default_storage_class(classes)
    pv_class = {pv.name: pv.storage_class for pv in volumes}
    out: list[PersistentVolumeClaim] = []
    for claim in claims:
        if default is not None and not has_class(claim) and not claim.is_fully_bound:
            claim = attrs.evolve(claim, storage_class_name=default.name)
            bound_to = pv_class.get(claim.volume_name)
            if bound_to is not None and bound_to != default.name:
                warnings.append(
                    f"{source_of(claim)}: PersistentVolumeClaim {claim.key}: "
                    f"spec.storageClassName: unset, so DefaultStorageClass admission sets the "
                    f'default "{default.name}", which PersistentVolume "{claim.volume_name}" '
                    f'(class "{bound_to}") does not have: the claim does not bind to it '
                    '(set storageClassName: "" to reserve a PV without a class)'
                )
        out.append(claim)
    _, settled = complete_bindings(volumes, out)
    unbound = [claim for claim in settled if not claim.is_fully_bound]
    warnings.extend(_missing_class_warnings(unbound, {sc.name for sc in classes}, source_of))
    return out, warnings


def _missing_class_warnings(
    claims: Sequence[PersistentVolumeClaim],
    known: set[str],
    source_of: Callable[[PersistentVolumeClaim | StorageClass], str],
) -> list[str]:
    """One line per (unbound) claim naming an absent StorageClass; claims of one file naming
    the same absent class share a line when there are several."""
    missing: dict[tuple[str, str], list[str]] = {}
    for claim in claims:
        cls = claim.storage_class
        if cls and cls not in known:
            missing.setdefault((source_of(claim), cls), []).append(claim.key)
    out = []
    for (source, cls), keys in missing.items():
        problem = f'spec.storageClassName: StorageClass "{cls}" not found'
        if len(keys) == 1:
            out.append(
                f"{source}: PersistentVolumeClaim {keys[0]}: {problem}; kube-scheduler treats "
                "the claim as immediate binding"
            )
        else:
            out.append(
                f"{source}: {len(keys)} PersistentVolumeClaims ({first_few(keys)}): {problem}; "
                "kube-scheduler treats the claims as immediate binding"
            )
    return out
