"""PersistentVolume and PersistentVolumeClaim (core/v1): the fields volume binding reads,
with the API server's validation of access modes, volume modes and PV node affinity.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from fractions import Fraction
from typing import Any, Final

import attrs

from schedsim.api.core import (
    NodeSelectorTerm,
    OwnerReference,
    decode_owner_references,
    parse_timestamp,
)
from schedsim.api.core.nodeaffinity import compile_node_selector
from schedsim.api.core.volumes import (
    CSIPersistentVolumeSource,
    InTreeVolumeSource,
    decode_csi_persistent_source,
    decode_in_tree_source,
)
from schedsim.api.errors import FieldError
from schedsim.api.labels import LabelSelector
from schedsim.api.loading import decode as d
from schedsim.api.storage.fields import (
    ACCESS_MODES,
    BETA_STORAGE_CLASS_ANNOTATION,
    BIND_COMPLETED_ANNOTATION,
    VOLUME_MODES,
    metadata_name,
    required_str,
)

_CORE_V1: Final = ("v1",)


# --------------------------------------------------------------------------- PV and PVC


def _access_modes(spec: Mapping[str, Any], path: str) -> tuple[str, ...]:
    modes = d.get_str_list(spec, "accessModes", path)
    for i, mode in enumerate(modes):
        if mode not in ACCESS_MODES:
            raise FieldError(
                f"{path}.accessModes[{i}]",
                f"Unsupported value: {mode!r}: supported values: {sorted(ACCESS_MODES)}",
            )
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        raise FieldError(
            f"{path}.accessModes", "may not use ReadWriteOncePod with other access modes"
        )
    return modes


def _volume_mode(spec: Mapping[str, Any], path: str) -> str:
    mode = d.get_str(spec, "volumeMode", path) or "Filesystem"
    if mode not in VOLUME_MODES:
        raise FieldError(
            f"{path}.volumeMode",
            f"Unsupported value: {mode!r}: supported values: {sorted(VOLUME_MODES)}",
        )
    return mode


def _pv_node_affinity(spec: Mapping[str, Any]) -> tuple[NodeSelectorTerm, ...] | None:
    """``spec.nodeAffinity.required.nodeSelectorTerms``, validated as the API server's
    ``validateVolumeNodeAffinity`` does; None when ``spec.nodeAffinity`` is unset."""
    if spec.get("nodeAffinity") is None:
        return None
    aff = d.get_map(spec, "nodeAffinity", "spec")
    if aff.get("required") is None:
        raise FieldError(
            "spec.nodeAffinity.required", "Required value: must specify required node constraints"
        )
    req = d.get_map(aff, "required", "spec.nodeAffinity")
    p = "spec.nodeAffinity.required.nodeSelectorTerms"
    items = d.get_list(req, "nodeSelectorTerms", "spec.nodeAffinity.required")
    if not items:
        raise FieldError(p, "Required value: must have at least one node selector term")
    terms = tuple(
        NodeSelectorTerm.from_manifest(d.get_mapping_item(items, i, p), f"{p}[{i}]")
        for i in range(len(items))
    )
    for i, term in enumerate(terms):  # ValidateNodeSelectorRequirement's wording first
        for j, expr in enumerate(term.match_expressions):
            vp = f"{p}[{i}].matchExpressions[{j}].values"
            if expr.operator in ("In", "NotIn") and not expr.values:
                raise FieldError(
                    vp, "Required value: must be specified when `operator` is 'In' or 'NotIn'"
                )
            if expr.operator in ("Exists", "DoesNotExist") and expr.values:
                raise FieldError(
                    vp,
                    "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
    _, errs = compile_node_selector(terms, "spec.nodeAffinity.required")
    if errs:
        field, _, problem = errs[0].partition(": ")
        raise FieldError(field, problem)
    return terms


def _storage_quantity(raw: Mapping[str, Any], key: str, path: str) -> Fraction | None:
    values = d.get_resource_list(raw, key, path)
    return values.get("storage")


@attrs.frozen
class ClaimReference:
    """A PV's ``spec.claimRef``: the claim it is bound (or pre-bound) to.

    Attributes:
        namespace: the claim's namespace.
        name: the claim's name.
        uid: the claim's UID ("" when the reference does not pin one).
    """

    namespace: str
    name: str
    uid: str = ""


@attrs.frozen
class PersistentVolume:
    """A core/v1 PersistentVolume (cluster-scoped).

    Attributes:
        name: the PV name.
        labels: metadata.labels (VolumeZone reads the zone and region labels; a claim's
            selector matches them; GCE PD translation reads the zone labels).
        annotations: metadata.annotations.
        csi: ``spec.csi``, or None.
        in_tree: the migratable in-tree source, or None.
        storage_class_name: ``spec.storageClassName``.
        source: the raw ``spec`` (for the volume sources not decoded).
        capacity: ``spec.capacity.storage`` in bytes (0 when unset).
        access_modes: ``spec.accessModes``.
        volume_mode: ``spec.volumeMode`` (``Filesystem`` when unset).
        node_affinity: ``spec.nodeAffinity.required.nodeSelectorTerms`` (ORed), or None.
        claim_ref: ``spec.claimRef``, or None.
        phase: ``status.phase`` ("" when unset; only ``Available`` PVs are bound to new
            claims).
        deletion_timestamp: set while the PV is being deleted.
    """

    name: str
    labels: Mapping[str, str] = attrs.field(factory=dict)
    csi: CSIPersistentVolumeSource | None = None
    in_tree: InTreeVolumeSource | None = None
    storage_class_name: str = ""
    source: Mapping[str, Any] = attrs.field(factory=dict)
    annotations: Mapping[str, str] = attrs.field(factory=dict)
    capacity: Fraction = Fraction(0)
    access_modes: tuple[str, ...] = ()
    volume_mode: str = "Filesystem"
    node_affinity: tuple[NodeSelectorTerm, ...] | None = None
    claim_ref: ClaimReference | None = None
    phase: str = ""
    deletion_timestamp: datetime | None = None

    @property
    def storage_class(self) -> str:
        """The PV's class (``GetPersistentVolumeClass``): the beta annotation
        ``volume.beta.kubernetes.io/storage-class`` if present, else ``spec.storageClassName``."""
        beta = self.annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
        if beta is not None:
            return beta
        return self.storage_class_name

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> PersistentVolume:
        """Decode a PersistentVolume.

        Raises:
            FieldError: a required field of ``spec.csi`` or of an in-tree source is missing,
                ``spec.csi`` and an in-tree source are both set, an access mode or volume mode
                is unknown, or ``spec.nodeAffinity`` is malformed (no ``required``, no terms,
                an invalid requirement: as the API server's validation rejects it).
        """
        d.check_api_version(raw, "PersistentVolume", _CORE_V1)
        meta = d.get_map(raw, "metadata", "")
        spec = d.get_map(raw, "spec", "")
        status = d.get_map(raw, "status", "")
        csi = decode_csi_persistent_source(spec, "spec")
        in_tree = decode_in_tree_source(spec, "spec")
        if csi is not None and in_tree is not None:
            raise FieldError(f"spec.{in_tree.field}", "may not specify more than 1 volume type")
        claim_ref = None
        if spec.get("claimRef") is not None:
            ref = d.get_map(spec, "claimRef", "spec")
            claim_ref = ClaimReference(
                namespace=d.get_str(ref, "namespace", "spec.claimRef"),
                name=required_str(ref, "name", "spec.claimRef"),
                uid=d.get_str(ref, "uid", "spec.claimRef"),
            )
        return cls(
            name=metadata_name(meta),
            labels=d.get_str_map(meta, "labels", "metadata"),
            csi=csi,
            in_tree=in_tree,
            storage_class_name=d.get_str(spec, "storageClassName", "spec"),
            source=spec,
            annotations=d.get_str_map(meta, "annotations", "metadata"),
            capacity=_storage_quantity(spec, "capacity", "spec") or Fraction(0),
            access_modes=_access_modes(spec, "spec"),
            volume_mode=_volume_mode(spec, "spec"),
            node_affinity=_pv_node_affinity(spec),
            claim_ref=claim_ref,
            phase=d.get_str(status, "phase", "status"),
            deletion_timestamp=parse_timestamp(
                meta.get("deletionTimestamp"), "metadata.deletionTimestamp"
            ),
        )


@attrs.frozen
class PersistentVolumeClaim:
    """A core/v1 PersistentVolumeClaim.

    Attributes:
        name: the claim name.
        namespace: defaults to ``default`` as the API server does.
        uid: metadata.uid.
        annotations: metadata.annotations.
        owner_references: who owns the claim (a generic ephemeral volume's PVC is controlled by
            its pod).
        volume_name: ``spec.volumeName``: the bound PV ("" when unbound).
        storage_class_name: ``spec.storageClassName``; None when unset (which differs from
            ``""``, "no class", for the API server's default-class admission; the scheduler
            treats both as no class).
        access_modes: ``spec.accessModes``.
        volume_mode: ``spec.volumeMode`` (``Filesystem`` when unset).
        requested_storage: ``spec.resources.requests.storage`` in bytes, None when unset.
        selector: ``spec.selector`` (a PV's labels must match it), or None.
        phase: ``status.phase`` ("" when unset; ``Lost`` when its PV is gone).
        deletion_timestamp: set while the claim is being deleted.
    """

    name: str
    namespace: str = "default"
    uid: str = ""
    annotations: Mapping[str, str] = attrs.field(factory=dict)
    owner_references: tuple[OwnerReference, ...] = ()
    volume_name: str = ""
    storage_class_name: str | None = None
    access_modes: tuple[str, ...] = ()
    volume_mode: str = "Filesystem"
    requested_storage: Fraction | None = None
    selector: LabelSelector | None = None
    phase: str = ""
    deletion_timestamp: datetime | None = None

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    @property
    def storage_class(self) -> str:
        """The claim's class (component-helpers ``GetPersistentVolumeClaimClass``): the beta
        annotation ``volume.beta.kubernetes.io/storage-class`` if present, else
        ``spec.storageClassName``, else ``""``."""
        beta = self.annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
        if beta is not None:
            return beta
        return self.storage_class_name or ""

    @property
    def is_fully_bound(self) -> bool:
        """``spec.volumeName`` is set and the PV controller finished binding (the
        ``pv.kubernetes.io/bind-completed`` annotation; the binder's ``isPVCFullyBound``)."""
        return bool(self.volume_name) and BIND_COMPLETED_ANNOTATION in self.annotations

    def is_controlled_by(self, uid: str) -> bool:
        """Whether the claim's controller (its first ownerReference with ``controller:
        true``) has ``uid`` (``metav1.IsControlledBy``)."""
        for ref in self.owner_references:
            if ref.controller:
                return ref.uid == uid
        return False

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> PersistentVolumeClaim:
        """Decode a PersistentVolumeClaim; raises FieldError naming the bad field (an unknown
        access or volume mode, a malformed selector or quantity)."""
        d.check_api_version(raw, "PersistentVolumeClaim", _CORE_V1)
        meta = d.get_map(raw, "metadata", "")
        spec = d.get_map(raw, "spec", "")
        status = d.get_map(raw, "status", "")
        sc = spec.get("storageClassName")
        resources = d.get_map(spec, "resources", "spec")
        selector = None
        if spec.get("selector") is not None:
            selector = LabelSelector.from_manifest(
                d.get_map(spec, "selector", "spec"), "spec.selector"
            )
        return cls(
            name=metadata_name(meta),
            namespace=d.get_str(meta, "namespace", "metadata") or "default",
            uid=d.get_str(meta, "uid", "metadata"),
            annotations=d.get_str_map(meta, "annotations", "metadata"),
            owner_references=decode_owner_references(meta),
            volume_name=d.get_str(spec, "volumeName", "spec"),
            storage_class_name=None if sc is None else d.get_str(spec, "storageClassName", "spec"),
            access_modes=_access_modes(spec, "spec"),
            volume_mode=_volume_mode(spec, "spec"),
            requested_storage=_storage_quantity(resources, "requests", "spec.resources"),
            selector=selector,
            phase=d.get_str(status, "phase", "status"),
            deletion_timestamp=parse_timestamp(
                meta.get("deletionTimestamp"), "metadata.deletionTimestamp"
            ),
        )
