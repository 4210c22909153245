"""Storage objects the scheduler's volume plugins read: CSINode, CSIDriver,
CSIStorageCapacity, StorageClass and VolumeAttachment (``storage.k8s.io/v1``),
PersistentVolume and PersistentVolumeClaim
(``core/v1``).

Only the fields volume scheduling depends on are decoded; the rest is ignored like any unknown
field. Decoding applies the parts of the API server's defaulting and validation that matter
here: a StorageClass's ``volumeBindingMode`` defaults to ``Immediate`` and must be
``Immediate`` or ``WaitForFirstConsumer``; a CSINode driver's ``allocatable.count`` must not be
negative; names, drivers, provisioners, attachers and nodes are required where the API requires
them.

Objects are immutable (`attrs.frozen`). Decoders raise `FieldError` naming the field; the loader
turns it into ``FILE: KIND NS/NAME: FIELD: problem``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from fractions import Fraction
from typing import Any, Final

import attrs

from schedsim.api import _decode as d
from schedsim.api.core import (
    NodeSelectorTerm,
    OwnerReference,
    decode_owner_references,
    parse_timestamp,
)
from schedsim.api.errors import FieldError
from schedsim.api.labels import LabelSelector
from schedsim.api.nodeaffinity import compile_node_selector
from schedsim.api.volumes import (
    CSIPersistentVolumeSource,
    InTreeVolumeSource,
    decode_csi_persistent_source,
    decode_in_tree_source,
)

__all__ = [
    "ACCESS_MODES",
    "BETA_STORAGE_CLASS_ANNOTATION",
    "BIND_COMPLETED_ANNOTATION",
    "BOUND_BY_CONTROLLER_ANNOTATION",
    "MIGRATED_PLUGINS_ANNOTATION",
    "NOT_SUPPORTED_PROVISIONER",
    "SELECTED_NODE_ANNOTATION",
    "VOLUME_BINDING_MODES",
    "VOLUME_MODES",
    "CSIDriver",
    "CSINode",
    "CSINodeDriver",
    "CSIStorageCapacity",
    "ClaimReference",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "TopologySelectorTerm",
    "VolumeAttachment",
]

MIGRATED_PLUGINS_ANNOTATION: Final = "storage.alpha.kubernetes.io/migrated-plugins"
"""CSINode annotation listing the in-tree plugins migrated on the node, comma separated
(``v1.MigratedPluginsAnnotationKey``)."""

BETA_STORAGE_CLASS_ANNOTATION: Final = "volume.beta.kubernetes.io/storage-class"
"""PVC annotation that wins over ``spec.storageClassName`` (``v1.BetaStorageClassAnnotation``)."""

VOLUME_BINDING_MODES: Final = frozenset({"Immediate", "WaitForFirstConsumer"})
"""Valid StorageClass ``volumeBindingMode`` values."""

ACCESS_MODES: Final = frozenset(
    {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"}
)
"""Valid PV and PVC ``accessModes`` values."""

VOLUME_MODES: Final = frozenset({"Filesystem", "Block"})
"""Valid PV and PVC ``volumeMode`` values (unset means ``Filesystem``)."""

BIND_COMPLETED_ANNOTATION: Final = "pv.kubernetes.io/bind-completed"
"""PVC annotation the PV controller sets once a claim is fully bound (``AnnBindCompleted``)."""

BOUND_BY_CONTROLLER_ANNOTATION: Final = "pv.kubernetes.io/bound-by-controller"
"""PV/PVC annotation: the binding was made by the controller (``AnnBoundByController``)."""

SELECTED_NODE_ANNOTATION: Final = "volume.kubernetes.io/selected-node"
"""PVC annotation naming the node a WaitForFirstConsumer claim is provisioned for
(``AnnSelectedNode``); the scheduler sets it when it chooses dynamic provisioning."""

NOT_SUPPORTED_PROVISIONER: Final = "kubernetes.io/no-provisioner"
"""The provisioner of classes without dynamic provisioning (``NotSupportedProvisioner``)."""


# apiVersions served in 1.34: storage.k8s.io/v1beta1 of CSINode, StorageClass and
# VolumeAttachment is no longer served since 1.22 (deprecation guide); PV and PVC are core/v1.
_STORAGE_V1: Final = ("storage.k8s.io/v1",)
_CORE_V1: Final = ("v1",)
_INT32_MAX: Final = 2**31 - 1


def _name(meta: Mapping[str, Any]) -> str:
    name = d.get_str(meta, "name", "metadata")
    if not name:
        raise FieldError("metadata.name", "required")
    return name


def _required(raw: Mapping[str, Any], key: str, path: str) -> str:
    value = d.get_str(raw, key, path)
    if not value:
        raise FieldError(d.join(path, key), "required")
    return value


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
            name=_required(raw, "name", path),
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
        d.check_api_version(raw, "CSINode", _STORAGE_V1)
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
            name=_name(meta),
            annotations=d.get_str_map(meta, "annotations", "metadata"),
            drivers=drivers,
        )


# --------------------------------------------------------------------------- StorageClass


@attrs.frozen
class TopologySelectorTerm:
    """One ``allowedTopologies`` entry of a StorageClass: its label requirements ANDed.

    Attributes:
        match_label_expressions: ``(key, values)`` pairs: the node label ``key`` must have one
            of ``values`` (``TopologySelectorLabelRequirement``).
    """

    match_label_expressions: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether node ``labels`` satisfy every requirement; an empty term selects nothing
        (``MatchTopologySelectorTerms``)."""
        if not self.match_label_expressions:
            return False
        for key, values in self.match_label_expressions:
            if labels.get(key) not in values:
                return False
        return True

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> TopologySelectorTerm:
        """Decode one term.

        Raises:
            FieldError: a requirement without a key or without values, or a key given twice
                (``ValidateTopologySelectorTerm``).
        """
        items = d.get_list(raw, "matchLabelExpressions", path)
        p = d.join(path, "matchLabelExpressions")
        exprs: list[tuple[str, tuple[str, ...]]] = []
        seen: set[str] = set()
        for i in range(len(items)):
            item = d.get_mapping_item(items, i, p)
            ip = f"{p}[{i}]"
            key = _required(item, "key", ip)
            values = d.get_str_list(item, "values", ip)
            if not values:
                raise FieldError(f"{ip}.values", "Required value: must specify as least one value")
            if key in seen:
                raise FieldError(f"{ip}.key", f"Duplicate value: {key!r}")
            seen.add(key)
            exprs.append((key, values))
        return cls(tuple(exprs))


@attrs.frozen
class StorageClass:
    """A ``storage.k8s.io/v1`` StorageClass.

    Attributes:
        name: the class name.
        provisioner: the provisioner (a CSI driver name or an in-tree plugin name;
            `NOT_SUPPORTED_PROVISIONER` for classes without dynamic provisioning).
        volume_binding_mode: ``Immediate`` (the default) or ``WaitForFirstConsumer``.
        parameters: provisioner parameters.
        allowed_topologies: ``allowedTopologies`` (ORed); empty: any node can provision.
    """

    name: str
    provisioner: str
    volume_binding_mode: str = "Immediate"
    parameters: Mapping[str, str] = attrs.field(factory=dict)
    allowed_topologies: tuple[TopologySelectorTerm, ...] = ()

    def allows_topology(self, labels: Mapping[str, str]) -> bool:
        """Whether a node with ``labels`` satisfies ``allowedTopologies``
        (``v1helper.MatchTopologySelectorTerms``): True without terms, else some term
        matches."""
        if not self.allowed_topologies:
            return True
        return any(t.matches(labels) for t in self.allowed_topologies)

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any]) -> StorageClass:
        """Decode a StorageClass.

        Raises:
            FieldError: no ``provisioner``, an unknown ``volumeBindingMode``, or an invalid
                ``allowedTopologies`` term.
        """
        d.check_api_version(raw, "StorageClass", _STORAGE_V1)
        meta = d.get_map(raw, "metadata", "")
        mode = d.get_str(raw, "volumeBindingMode", "", "Immediate") or "Immediate"
        if mode not in VOLUME_BINDING_MODES:
            raise FieldError(
                "volumeBindingMode",
                f"unsupported value {mode!r}: want one of {sorted(VOLUME_BINDING_MODES)}",
            )
        terms = d.get_list(raw, "allowedTopologies", "")
        return cls(
            name=_name(meta),
            provisioner=_required(raw, "provisioner", ""),
            volume_binding_mode=mode,
            parameters=d.get_str_map(raw, "parameters", ""),
            allowed_topologies=tuple(
                TopologySelectorTerm.from_manifest(
                    d.get_mapping_item(terms, i, "allowedTopologies"), f"allowedTopologies[{i}]"
                )
                for i in range(len(terms))
            ),
        )


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
                name=_required(ref, "name", "spec.claimRef"),
                uid=d.get_str(ref, "uid", "spec.claimRef"),
            )
        return cls(
            name=_name(meta),
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
            name=_name(meta),
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
        d.check_api_version(raw, "VolumeAttachment", _STORAGE_V1)
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
            name=_name(meta),
            attacher=_required(spec, "attacher", "spec"),
            node_name=_required(spec, "nodeName", "spec"),
            persistent_volume_name=None
            if pv is None
            else _required(source, "persistentVolumeName", "spec.source"),
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
        d.check_api_version(raw, "CSIDriver", _STORAGE_V1)
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
            name=_name(meta),
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
        d.check_api_version(raw, "CSIStorageCapacity", _STORAGE_V1)
        meta = d.get_map(raw, "metadata", "")
        topology = None
        if raw.get("nodeTopology") is not None:
            topology = LabelSelector.from_manifest(
                d.get_map(raw, "nodeTopology", ""), "nodeTopology"
            )
        quantities = _quantities(raw)
        return cls(
            name=_name(meta),
            namespace=d.get_str(meta, "namespace", "metadata") or "default",
            storage_class_name=_required(raw, "storageClassName", ""),
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
