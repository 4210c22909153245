"""core/v1 objects the scheduler reads: Node and Pod, with the parts of their specs that
scheduling depends on.

Objects are immutable (`attrs.frozen`) and built once when manifests are loaded; plugins
never allocate them on the hot path. Resource quantities are kept exact (`Fraction`) the way
apimachinery keeps `resource.Quantity`; conversion to milli-CPU / bytes happens where
kube-scheduler converts (the scheduler's `Resource`).

Decoders (`Node.from_manifest`, `Pod.from_manifest`) raise `FieldError` naming the field.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from datetime import datetime
from fractions import Fraction
from typing import Any, TypeVar, cast

import attrs

from schedsim.api import _decode as d
from schedsim.api.errors import FieldError
from schedsim.api.interning import shared, shared_map
from schedsim.api.labels import LabelSelector, check_label_key
from schedsim.api.spec_memo import SpecMemo
from schedsim.api.spread import (
    DO_NOT_SCHEDULE,
    TopologySpreadConstraint,
    decode_topology_spread_constraints,
    label_key_requirements,
)
from schedsim.api.uids import default_uid
from schedsim.api.volumes import (
    IN_TREE_SOURCES,
    CSIVolumeSource,
    InTreeVolumeSource,
    decode_in_tree_source,
    decode_inline_csi_source,
)

_T = TypeVar("_T")

__all__ = [
    "Affinity",
    "Container",
    "ContainerPort",
    "Node",
    "NodeAffinity",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "OwnerReference",
    "Pod",
    "PodAffinityTerm",
    "PodResourceClaim",
    "PreferredSchedulingTerm",
    "ResourceList",
    "Taint",
    "Toleration",
    "Volume",
    "WeightedPodAffinityTerm",
]

ResourceList = Mapping[str, Fraction]
"""Resource name -> exact quantity (cores for ``cpu``, bytes for memory and storage)."""

TAINT_EFFECTS = frozenset({"NoSchedule", "PreferNoSchedule", "NoExecute"})
NODE_SELECTOR_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})

_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")


@attrs.frozen
class OwnerReference:
    """metadata.ownerReferences[i]: who owns an object (used for pod-owned claims and PVCs)."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool = False

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> OwnerReference:
        """Decode one owner reference; raises FieldError."""
        return cls(
            api_version=d.get_str(raw, "apiVersion", path),
            kind=d.get_str(raw, "kind", path),
            name=d.get_str(raw, "name", path),
            uid=d.get_str(raw, "uid", path),
            controller=d.get_bool(raw, "controller", path),
        )


def decode_owner_references(meta: Mapping[str, Any]) -> tuple[OwnerReference, ...]:
    """Decode ``metadata.ownerReferences``; raises FieldError."""
    items = d.get_list(meta, "ownerReferences", "metadata")
    path = "metadata.ownerReferences"
    return tuple(
        OwnerReference.from_manifest(d.get_mapping_item(items, i, path), f"{path}[{i}]")
        for i in range(len(items))
    )


def parse_timestamp(raw: Any, field: str) -> datetime | None:
    """Decode an RFC 3339 timestamp (``2024-01-02T03:04:05Z``); None stays None."""
    if raw is None:
        return None
    if isinstance(raw, datetime):  # YAML loaders may already have parsed it
        return raw
    if not isinstance(raw, str):
        raise FieldError(field, f"expected an RFC 3339 timestamp, got {d.type_name(raw)}")
    problem = f"invalid RFC 3339 timestamp {raw!r} (expected e.g. 2024-01-02T03:04:05Z)"
    # the form metav1.Time accepts (Go's time.RFC3339): fromisoformat alone also takes dates
    # without a time and times without a zone
    if _RFC3339.fullmatch(raw) is None:
        raise FieldError(field, problem)
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:  # e.g. month 13
        raise FieldError(field, problem) from None


def default_requests(requests: ResourceList, limits: ResourceList) -> ResourceList:
    """A request left unset defaults to its limit, as the API server's defaulting does."""
    if not limits or all(k in requests for k in limits):
        return requests
    out = dict(limits)
    out.update(requests)
    return out


# --------------------------------------------------------------------------- taints


@attrs.frozen
class Taint:
    """spec.taints[i] of a Node: ``{key, value, effect}``."""

    key: str
    effect: str
    value: str = ""

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> Taint:
        """Decode one taint; raises FieldError for a missing key or an unknown effect."""
        key = d.get_str(raw, "key", path)
        if not key:
            raise FieldError(f"{path}.key", "required")
        effect = d.get_str(raw, "effect", path)
        if effect not in TAINT_EFFECTS:
            raise FieldError(
                f"{path}.effect",
                f"unsupported value {effect!r}: want one of {sorted(TAINT_EFFECTS)}",
            )
        return cls(key=key, effect=effect, value=d.get_str(raw, "value", path))


@attrs.frozen
class Toleration:
    """spec.tolerations[i] of a Pod."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> Toleration:
        """Decode one toleration; raises FieldError."""
        operator = d.get_str(raw, "operator", path, "Equal") or "Equal"  # "" defaults to Equal
        if operator not in ("Equal", "Exists"):
            raise FieldError(f"{path}.operator", f"unsupported value {operator!r}")
        effect = d.get_str(raw, "effect", path)
        if effect and effect not in TAINT_EFFECTS:
            raise FieldError(f"{path}.effect", f"unsupported value {effect!r}")
        seconds = raw.get("tolerationSeconds")
        return cls(
            key=d.get_str(raw, "key", path),
            operator=operator,
            value=d.get_str(raw, "value", path),
            effect=effect,
            toleration_seconds=None
            if seconds is None
            else d.get_int(raw, "tolerationSeconds", path),
        )

    def tolerates(self, taint: Taint) -> bool:
        """Whether this toleration tolerates ``taint``.

        Mirrors k8s.io/api core/v1 ``Toleration.ToleratesTaint``: an empty effect matches all
        effects; an empty key with operator Exists matches every taint; Exists ignores the
        value; Equal compares values.
        """
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value


# --------------------------------------------------------------------------- node affinity


@attrs.frozen
class NodeSelectorRequirement:
    """One ``matchExpressions``/``matchFields`` entry of a NodeSelectorTerm."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> NodeSelectorRequirement:
        """Decode one requirement (operators In, NotIn, Exists, DoesNotExist, Gt, Lt);
        raises FieldError. A Gt/Lt value is not parsed here: the API server accepts any
        string and kube-scheduler matches no node when it is not an integer
        (`schedsim.api.nodeaffinity`); the value counts are checked by
        `schedsim.api.validation_pod`."""
        key = d.get_str(raw, "key", path)
        operator = d.get_str(raw, "operator", path)
        if operator not in NODE_SELECTOR_OPERATORS:
            raise FieldError(
                f"{path}.operator",
                f"unsupported value {operator!r}: want one of {sorted(NODE_SELECTOR_OPERATORS)}",
            )
        values = d.get_str_list(raw, "values", path)
        return cls(key=key, operator=operator, values=values)


@attrs.frozen
class NodeSelectorTerm:
    """One term of ``requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms``.

    Requirements within a term are ANDed; terms are ORed.
    """

    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> NodeSelectorTerm:
        """Decode one term; raises FieldError."""

        def reqs(key: str) -> tuple[NodeSelectorRequirement, ...]:
            items = d.get_list(raw, key, path)
            p = d.join(path, key)
            return tuple(
                NodeSelectorRequirement.from_manifest(d.get_mapping_item(items, i, p), f"{p}[{i}]")
                for i in range(len(items))
            )

        return cls(match_expressions=reqs("matchExpressions"), match_fields=reqs("matchFields"))


@attrs.frozen
class PreferredSchedulingTerm:
    """``preferredDuringSchedulingIgnoredDuringExecution[i]`` of a node affinity."""

    weight: int
    preference: NodeSelectorTerm


@attrs.frozen
class NodeAffinity:
    """spec.affinity.nodeAffinity. ``required`` None means no required terms were given."""

    required: tuple[NodeSelectorTerm, ...] | None = None
    preferred: tuple[PreferredSchedulingTerm, ...] = ()


@attrs.frozen
class PodAffinityTerm:
    """A pod (anti-)affinity term: pods matching ``label_selector`` in ``namespaces`` (or
    namespaces matching ``namespace_selector``) within the same ``topology_key`` domain.

    ``match_label_keys`` / ``mismatch_label_keys`` are kept as given; when the pod is decoded
    their ``key In/NotIn [pod's value]`` requirements are already merged into
    ``label_selector``, as the API server does at pod creation (MatchLabelKeysInPodAffinity,
    GA and locked on in 1.34; merging a stored pod again selects the same pods)."""

    label_selector: LabelSelector | None
    topology_key: str
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


@attrs.frozen
class WeightedPodAffinityTerm:
    """A preferred pod (anti-)affinity term with its weight (1-100)."""

    weight: int
    term: PodAffinityTerm


@attrs.frozen
class Affinity:
    """spec.affinity: node affinity and pod (anti-)affinity."""

    node_affinity: NodeAffinity | None = None
    pod_affinity_required: tuple[PodAffinityTerm, ...] = ()
    pod_affinity_preferred: tuple[WeightedPodAffinityTerm, ...] = ()
    pod_anti_affinity_required: tuple[PodAffinityTerm, ...] = ()
    pod_anti_affinity_preferred: tuple[WeightedPodAffinityTerm, ...] = ()

    @property
    def has_pod_affinity_or_anti_affinity(self) -> bool:
        """Whether any pod affinity or anti-affinity term is set (NodeInfo.pods_with_affinity)."""
        return bool(
            self.pod_affinity_required
            or self.pod_affinity_preferred
            or self.pod_anti_affinity_required
            or self.pod_anti_affinity_preferred
        )

    @classmethod
    def from_manifest(
        cls, raw: Mapping[str, Any], path: str, pod_labels: Mapping[str, str] | None = None
    ) -> Affinity:
        """Decode spec.affinity; raises FieldError. With ``pod_labels`` the pod (anti-)affinity
        terms' matchLabelKeys/mismatchLabelKeys are merged into their label selectors."""
        labels = pod_labels or {}
        na_raw = d.get_map(raw, "nodeAffinity", path)
        node_affinity = None
        if na_raw:
            na_path = d.join(path, "nodeAffinity")
            req_raw = na_raw.get("requiredDuringSchedulingIgnoredDuringExecution")
            required = None
            if req_raw is not None:
                rp = d.join(na_path, "requiredDuringSchedulingIgnoredDuringExecution")
                if not isinstance(req_raw, Mapping):
                    raise FieldError(rp, "expected a mapping")
                terms = d.get_list(req_raw, "nodeSelectorTerms", rp)
                tp = d.join(rp, "nodeSelectorTerms")
                required = tuple(
                    NodeSelectorTerm.from_manifest(d.get_mapping_item(terms, i, tp), f"{tp}[{i}]")
                    for i in range(len(terms))
                )
            pref = d.get_list(na_raw, "preferredDuringSchedulingIgnoredDuringExecution", na_path)
            pp = d.join(na_path, "preferredDuringSchedulingIgnoredDuringExecution")
            preferred = []
            for i in range(len(pref)):
                item = d.get_mapping_item(pref, i, pp)
                ip = f"{pp}[{i}]"
                preferred.append(
                    PreferredSchedulingTerm(
                        weight=d.get_int(item, "weight", ip),
                        preference=NodeSelectorTerm.from_manifest(
                            d.get_map(item, "preference", ip), d.join(ip, "preference")
                        ),
                    )
                )
            node_affinity = NodeAffinity(required=required, preferred=tuple(preferred))

        def pod_terms(
            kind: str,
        ) -> tuple[tuple[PodAffinityTerm, ...], tuple[WeightedPodAffinityTerm, ...]]:
            sect = d.get_map(raw, kind, path)
            sp = d.join(path, kind)
            req = d.get_list(sect, "requiredDuringSchedulingIgnoredDuringExecution", sp)
            rp = d.join(sp, "requiredDuringSchedulingIgnoredDuringExecution")
            required = tuple(
                _pod_affinity_term(d.get_mapping_item(req, i, rp), f"{rp}[{i}]", labels)
                for i in range(len(req))
            )
            pref = d.get_list(sect, "preferredDuringSchedulingIgnoredDuringExecution", sp)
            pp = d.join(sp, "preferredDuringSchedulingIgnoredDuringExecution")
            preferred = []
            for i in range(len(pref)):
                item = d.get_mapping_item(pref, i, pp)
                ip = f"{pp}[{i}]"
                weight = d.get_int(item, "weight", ip)
                if not 1 <= weight <= 100:
                    raise FieldError(d.join(ip, "weight"), f"{weight}: must be in the range 1-100")
                preferred.append(
                    WeightedPodAffinityTerm(
                        weight=weight,
                        term=_pod_affinity_term(
                            d.get_map(item, "podAffinityTerm", ip),
                            d.join(ip, "podAffinityTerm"),
                            labels,
                        ),
                    )
                )
            return required, tuple(preferred)

        aff_req, aff_pref = pod_terms("podAffinity")
        anti_req, anti_pref = pod_terms("podAntiAffinity")
        return cls(
            node_affinity=node_affinity,
            pod_affinity_required=aff_req,
            pod_affinity_preferred=aff_pref,
            pod_anti_affinity_required=anti_req,
            pod_anti_affinity_preferred=anti_pref,
        )


def _pod_affinity_term(
    raw: Mapping[str, Any], path: str, pod_labels: Mapping[str, str]
) -> PodAffinityTerm:
    """Decode and validate one pod affinity term (``validatePodAffinityTerm``: a non-empty
    qualified topologyKey, namespaces that are DNS labels, valid selectors, valid and disjoint
    matchLabelKeys/mismatchLabelKeys that need a labelSelector), merging the label keys."""
    sel = raw.get("labelSelector")
    ns_sel = raw.get("namespaceSelector")
    selector = (
        None
        if sel is None
        else LabelSelector.from_manifest(
            d.get_map(raw, "labelSelector", path), path + ".labelSelector"
        )
    )
    topology_key = d.get_str(raw, "topologyKey", path)
    if not topology_key:
        raise FieldError(d.join(path, "topologyKey"), "can not be empty")
    check_label_key(topology_key, d.join(path, "topologyKey"))
    namespaces = d.get_str_list(raw, "namespaces", path)
    for i, ns in enumerate(namespaces):
        d.check_dns1123_label(ns, f"{d.join(path, 'namespaces')}[{i}]")
    match_keys = d.get_str_list(raw, "matchLabelKeys", path)
    mismatch_keys = d.get_str_list(raw, "mismatchLabelKeys", path)
    for field, keys in (("matchLabelKeys", match_keys), ("mismatchLabelKeys", mismatch_keys)):
        fp = d.join(path, field)
        if keys and selector is None:
            raise FieldError(fp, "must not be specified when labelSelector is not set")
        for i, key in enumerate(keys):
            check_label_key(key, f"{fp}[{i}]")
            if selector is not None and key in selector.match_labels:
                raise FieldError(f"{fp}[{i}]", f"{key!r}: exists in both {field} and labelSelector")
    both = set(match_keys) & set(mismatch_keys)
    if both:
        key = sorted(both)[0]
        raise FieldError(
            d.join(path, "matchLabelKeys"),
            f"{key!r}: exists in both matchLabelKeys and mismatchLabelKeys",
        )
    if selector is not None and (match_keys or mismatch_keys):
        selector = selector.with_requirements(
            label_key_requirements(match_keys, pod_labels, "In")
            + label_key_requirements(mismatch_keys, pod_labels, "NotIn")
        )
    return PodAffinityTerm(
        label_selector=selector,
        topology_key=topology_key,
        namespaces=namespaces,
        namespace_selector=None
        if ns_sel is None
        else LabelSelector.from_manifest(
            d.get_map(raw, "namespaceSelector", path), path + ".namespaceSelector"
        ),
        match_label_keys=match_keys,
        mismatch_label_keys=mismatch_keys,
    )


# --------------------------------------------------------------------------- containers


@attrs.frozen
class ContainerPort:
    """ports[i] of a container; only entries with ``host_port > 0`` occupy node ports."""

    container_port: int
    host_port: int = 0
    protocol: str = "TCP"
    host_ip: str = ""


@attrs.frozen
class Container:
    """A container or init container: its image, resource requests and host ports.

    ``restart_policy == "Always"`` on an init container makes it a sidecar (restartable init
    container).
    """

    name: str
    requests: ResourceList = attrs.field(factory=dict)
    limits: ResourceList = attrs.field(factory=dict)
    ports: tuple[ContainerPort, ...] = ()
    restart_policy: str | None = None
    image: str = ""

    @property
    def is_restartable_init(self) -> bool:
        """True for a sidecar (init container with ``restartPolicy: Always``)."""
        return self.restart_policy == "Always"

    @classmethod
    def from_manifest(
        cls, raw: Mapping[str, Any], path: str, host_network: bool = False
    ) -> Container:
        """Decode one container; raises FieldError. With ``host_network`` an unset hostPort
        defaults to the containerPort, as the API server's defaulting does."""
        res = d.get_map(raw, "resources", path)
        rp = d.join(path, "resources")
        ports_raw = d.get_list(raw, "ports", path)
        pp = d.join(path, "ports")
        ports = []
        for i in range(len(ports_raw)):
            p = d.get_mapping_item(ports_raw, i, pp)
            ip = f"{pp}[{i}]"
            container_port = d.get_int(p, "containerPort", ip)
            host_port = d.get_int(p, "hostPort", ip)
            ports.append(
                ContainerPort(
                    container_port=container_port,
                    host_port=host_port or (container_port if host_network else 0),
                    protocol=d.get_str(p, "protocol", ip, "TCP") or "TCP",
                    host_ip=d.get_str(p, "hostIP", ip),
                )
            )
        policy = raw.get("restartPolicy")
        raw_limits = d.get_resource_list(res, "limits", rp)
        requests = shared_map(
            default_requests(d.get_resource_list(res, "requests", rp), raw_limits)
        )
        limits = shared_map(raw_limits)
        name = d.get_str(raw, "name", path)
        restart_policy = None if policy is None else d.get_str(raw, "restartPolicy", path)
        image = d.get_str(raw, "image", path)
        # equal containers (a template's) are one object; the shared maps are keyed by
        # identity, which is safe: the stored container holds them, so no other object can
        # reuse their ids while the entry exists
        key = ("Container", name, id(requests), id(limits), tuple(ports), restart_policy, image)
        return shared(
            key,
            cls(
                name=name,
                requests=requests,
                limits=limits,
                ports=key[4],
                restart_policy=restart_policy,
                image=image,
            ),
        )


_VOLUME_TYPES = (
    "persistentVolumeClaim",
    "ephemeral",
    "csi",
    *IN_TREE_SOURCES,
    "configMap",
    "secret",
    "emptyDir",
    "hostPath",
    "projected",
    "downwardAPI",
    "nfs",
    "iscsi",
    "azureFile",
    "portworxVolume",
)


@attrs.frozen
class Volume:
    """spec.volumes[i].

    The sources the scheduler's volume plugins read are decoded: ``persistentVolumeClaim``
    (the claim name), ``ephemeral`` (a generic ephemeral volume: its PVC is named
    ``<pod>-<volume>``), an inline ``csi`` volume, and the in-tree block sources that migrate to
    CSI (``awsElasticBlockStore``, ``gcePersistentDisk``, ``azureDisk``, ``cinder``,
    ``vsphereVolume``). ``source`` keeps the raw volume (without ``name``) for everything else
    (``configMap``, ``secret``, ``emptyDir``, ...).

    Attributes:
        name: the volume name.
        persistent_volume_claim: ``persistentVolumeClaim.claimName``, or None.
        ephemeral: whether this is a generic ephemeral volume.
        csi: the inline CSI source, or None.
        in_tree: the migratable in-tree source, or None.
        source: the raw volume without ``name``.
    """

    name: str
    persistent_volume_claim: str | None = None
    ephemeral: bool = False
    source: Mapping[str, Any] = attrs.field(factory=dict)
    csi: CSIVolumeSource | None = None
    in_tree: InTreeVolumeSource | None = None

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], path: str) -> Volume:
        """Decode one volume.

        Raises:
            FieldError: a required field of a decoded source is missing (``claimName``, an
                inline CSI ``driver``, an in-tree disk identifier), or more than one volume
                type is set (the API server's ``may not specify more than 1 volume type``).
        """
        types = [k for k in _VOLUME_TYPES if raw.get(k) is not None]
        if len(types) > 1:
            raise FieldError(d.join(path, types[1]), "may not specify more than 1 volume type")
        pvc = d.get_map(raw, "persistentVolumeClaim", path)
        claim = None
        if raw.get("persistentVolumeClaim") is not None:
            claim = d.get_str(pvc, "claimName", d.join(path, "persistentVolumeClaim"))
            if not claim:
                raise FieldError(f"{path}.persistentVolumeClaim.claimName", "required")
        ephemeral = raw.get("ephemeral") is not None
        if ephemeral:
            d.get_map(raw, "ephemeral", path)  # must be a mapping
        return cls(
            name=d.get_str(raw, "name", path),
            persistent_volume_claim=claim,
            ephemeral=ephemeral,
            source={k: v for k, v in raw.items() if k != "name"},
            csi=decode_inline_csi_source(raw, path),
            in_tree=decode_in_tree_source(raw, path),
        )


@attrs.frozen
class PodResourceClaim:
    """spec.resourceClaims[i]: a named reference to a ResourceClaim or a template."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


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
        )


def _node_images(status: Mapping[str, Any]) -> dict[str, int]:
    """status.images as name -> sizeBytes (every name of every image)."""
    items = d.get_list(status, "images", "status")
    out: dict[str, int] = {}
    for i in range(len(items)):
        path = f"status.images[{i}]"
        item = d.get_mapping_item(items, i, "status.images")
        size = d.get_int(item, "sizeBytes", path)
        for name in d.get_str_list(item, "names", path):
            out[name] = size
    return out


# --------------------------------------------------------------------------- Pod


@attrs.frozen
class Pod:
    """A core/v1 Pod with the fields scheduling depends on.

    Attributes:
        namespace: defaults to ``"default"`` as the API server does.
        uid: metadata.uid; when absent a stable UUID derived from namespace/name (NodeInfo
            keys pods by UID, as kube-scheduler does).
        priority: spec.priority (0 when unset; loading resolves ``priorityClassName`` as the
            Priority admission plugin does, `schedsim.api.priority`).
        priority_class_name: spec.priorityClassName ("" when unset).
        priority_given: spec.priority was in the input (a stored pod: admission already ran).
        overhead: spec.overhead (RuntimeClass overhead), added to the requests.
        resources: spec.resources.requests (pod-level resources).
        phase: status.phase; Succeeded/Failed pods hold no resources.
        scheduling_gates: spec.schedulingGates names; a gated pod is not scheduled.
        deletion_timestamp: metadata.deletionTimestamp (a terminating pod; PodTopologySpread
            does not count it).
        preemption_policy: spec.preemptionPolicy (``PreemptLowerPriority`` or ``Never``; ""
            when unset: loading fills it from the PriorityClass as admission does).
        start_time: status.startTime (preemption prefers victims that started last; None:
            not started, counted as "now").
        preempted_by_scheduler: status.conditions holds ``DisruptionTarget`` True with reason
            ``PreemptionByScheduler`` (a victim of an earlier preemption, still terminating).
        topology_spread_constraints: spec.topologySpreadConstraints, validated.
        hard_topology_spread_constraints: how many topologySpreadConstraints are
            ``DoNotSchedule``.
        containers: with ``spec.hostNetwork``, ports' hostPort defaults to containerPort.
    """

    name: str
    namespace: str = "default"
    uid: str = ""
    labels: Mapping[str, str] = attrs.field(factory=dict)
    annotations: Mapping[str, str] = attrs.field(factory=dict)
    owner_references: tuple[OwnerReference, ...] = ()
    creation_timestamp: datetime | None = None
    deletion_timestamp: datetime | None = None
    priority: int = 0
    priority_class_name: str = ""
    priority_given: bool = True
    preemption_policy: str = ""
    start_time: datetime | None = None
    preempted_by_scheduler: bool = False
    scheduler_name: str = "default-scheduler"
    node_name: str = ""
    node_selector: Mapping[str, str] = attrs.field(factory=dict)
    affinity: Affinity | None = None
    tolerations: tuple[Toleration, ...] = ()
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    overhead: ResourceList = attrs.field(factory=dict)
    resources: ResourceList = attrs.field(factory=dict)
    volumes: tuple[Volume, ...] = ()
    resource_claims: tuple[PodResourceClaim, ...] = ()
    resource_claim_statuses: Mapping[str, str | None] = attrs.field(factory=dict)
    nominated_node_name: str = ""
    phase: str = ""
    scheduling_gates: tuple[str, ...] = ()
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    hard_topology_spread_constraints: int = 0
    # Values derived from this immutable pod (request sums), computed once: simulations
    # schedule the same pod object many times (forks, what-if loops). Not part of equality;
    # attrs.evolve starts a copy with an empty memo. Made on first use (a stored pod that is
    # never scheduled has none).
    _memo: dict[Any, Any] | None = attrs.field(default=None, init=False, repr=False, eq=False)

    def memo(self, key: Any, compute: Callable[[], _T]) -> _T:
        """``compute()`` the first time ``key`` is asked for, the stored value afterwards.

        For values that depend on the pod only (it is immutable), e.g. its request vector in
        scheduler units. Callers must treat the value as read-only: it is shared.
        """
        memo = self._memo
        if memo is None:
            memo = {}
            object.__setattr__(self, "_memo", memo)  # frozen: the memo is not state
        else:
            try:
                return cast(_T, memo[key])
            except KeyError:
                pass
        value = memo[key] = compute()
        return value

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    @property
    def is_terminal(self) -> bool:
        """Succeeded or Failed: the pod no longer holds node resources."""
        return self.phase in ("Succeeded", "Failed")

    @classmethod
    def from_manifest(cls, raw: Mapping[str, Any], memo: SpecMemo | None = None) -> Pod:
        """Decode a Pod manifest; raises FieldError naming the bad field (an apiVersion other
        than ``v1`` included), the first one of the metadata, then of the spec and status.

        ``memo`` (the loader's, for manifests parsed from text) decodes each distinct spec
        and status once (`schedsim.api.spec_memo`); the pods then share those parts.
        """
        d.check_api_version(raw, "Pod", ("v1",))
        meta = d.get_map(raw, "metadata", "")
        name = d.get_str(meta, "name", "metadata")
        if not name:
            raise FieldError("metadata.name", "required")
        namespace = sys.intern(d.get_str(meta, "namespace", "metadata") or "default")
        spec = d.get_map(raw, "spec", "")
        status = d.get_map(raw, "status", "")
        labels = shared_map(d.get_str_map(meta, "labels", "metadata"))
        owners = decode_owner_references(meta)
        uid = d.get_str(meta, "uid", "metadata") or default_uid("Pod", namespace, name)
        annotations = shared_map(d.get_str_map(meta, "annotations", "metadata"))
        created = parse_timestamp(meta.get("creationTimestamp"), "metadata.creationTimestamp")
        deleted = parse_timestamp(meta.get("deletionTimestamp"), "metadata.deletionTimestamp")
        if memo is None:
            parts = _pod_parts(spec, status, labels)
        else:  # affinity reads the labels (matchLabelKeys), so they are part of its key
            key = (
                "Pod",
                memo.text(spec),
                memo.text(status),
                tuple(labels.items()) if "affinity" in spec else None,
            )
            parts = memo.get(key, lambda: _pod_parts(spec, status, labels))
        return cls(
            name=name,
            namespace=namespace,
            uid=uid,
            labels=labels,
            annotations=annotations,
            owner_references=shared(("owners", owners), owners) if owners else (),
            creation_timestamp=created,
            deletion_timestamp=deleted,
            **parts,
        )


def _pod_parts(
    spec: Mapping[str, Any], status: Mapping[str, Any], labels: Mapping[str, str]
) -> dict[str, Any]:
    """The `Pod` fields decoded from ``spec`` and ``status`` (``labels``: the pod's, for
    affinity's matchLabelKeys), by field name. Raises FieldError."""
    host_network = d.get_bool(spec, "hostNetwork", "spec")

    def containers(key: str) -> tuple[Container, ...]:
        items = d.get_list(spec, key, "spec")
        if not items:
            return ()
        p = f"spec.{key}"
        decoded = tuple(
            Container.from_manifest(d.get_mapping_item(items, i, p), f"{p}[{i}]", host_network)
            for i in range(len(items))
        )
        # the tuple holds the containers, so their ids cannot be reused while it is stored
        return shared(("containers", *map(id, decoded)), decoded)

    gates_raw = d.get_list(spec, "schedulingGates", "spec")
    gates = tuple(
        d.get_str(
            d.get_mapping_item(gates_raw, i, "spec.schedulingGates"),
            "name",
            f"spec.schedulingGates[{i}]",
        )
        for i in range(len(gates_raw))
    )
    spread = decode_topology_spread_constraints(spec)
    hard_spread = sum(1 for c in spread if c.when_unsatisfiable == DO_NOT_SCHEDULE)
    tol = d.get_list(spec, "tolerations", "spec")
    vols = d.get_list(spec, "volumes", "spec")
    claims = _pod_resource_claims(spec)
    claim_names = [c.name for c in claims]
    for key in ("containers", "initContainers"):
        items = d.get_list(spec, key, "spec")
        for i in range(len(items)):
            _check_container_claims(
                d.get_mapping_item(items, i, f"spec.{key}"), f"spec.{key}[{i}]", claim_names
            )
    affinity_raw = d.get_map(spec, "affinity", "spec")
    preemption_policy = d.get_str(spec, "preemptionPolicy", "spec")
    if preemption_policy not in ("", "PreemptLowerPriority", "Never"):
        raise FieldError(
            "spec.preemptionPolicy",
            f'unsupported value "{preemption_policy}": supported values: "Never", '
            '"PreemptLowerPriority"',
        )
    tolerations = tuple(
        Toleration.from_manifest(
            d.get_mapping_item(tol, i, "spec.tolerations"), f"spec.tolerations[{i}]"
        )
        for i in range(len(tol))
    )
    pod_resources = d.get_map(spec, "resources", "spec")
    spec_parts = {
        "priority": d.get_int(spec, "priority", "spec"),
        "priority_class_name": sys.intern(d.get_str(spec, "priorityClassName", "spec")),
        "priority_given": spec.get("priority") is not None,
        "preemption_policy": sys.intern(preemption_policy),
        "scheduler_name": sys.intern(d.get_str(spec, "schedulerName", "spec", "default-scheduler")),
        "node_name": sys.intern(d.get_str(spec, "nodeName", "spec")),
        "node_selector": shared_map(d.get_str_map(spec, "nodeSelector", "spec")),
        "affinity": Affinity.from_manifest(affinity_raw, "spec.affinity", labels)
        if affinity_raw
        else None,
        "tolerations": shared(("tolerations", tolerations), tolerations) if tolerations else (),
        "containers": containers("containers"),
        "init_containers": containers("initContainers"),
        "overhead": shared_map(d.get_resource_list(spec, "overhead", "spec")),
        "resources": shared_map(
            default_requests(
                d.get_resource_list(pod_resources, "requests", "spec.resources"),
                d.get_resource_list(pod_resources, "limits", "spec.resources"),
            )
        ),
        "volumes": tuple(
            Volume.from_manifest(d.get_mapping_item(vols, i, "spec.volumes"), f"spec.volumes[{i}]")
            for i in range(len(vols))
        ),
        "resource_claims": claims,
        "scheduling_gates": gates,
        "topology_spread_constraints": spread,
        "hard_topology_spread_constraints": hard_spread,
    }
    statuses_raw = d.get_list(status, "resourceClaimStatuses", "status")
    statuses: dict[str, str | None] = {}
    for i in range(len(statuses_raw)):
        s = d.get_mapping_item(statuses_raw, i, "status.resourceClaimStatuses")
        sp = f"status.resourceClaimStatuses[{i}]"
        statuses[d.get_str(s, "name", sp)] = d.get_str(s, "resourceClaimName", sp) or None
    return {
        **spec_parts,
        "resource_claim_statuses": shared_map(statuses),
        "start_time": parse_timestamp(status.get("startTime"), "status.startTime"),
        "preempted_by_scheduler": _preempted_by_scheduler(status),
        "nominated_node_name": sys.intern(d.get_str(status, "nominatedNodeName", "status")),
        "phase": sys.intern(d.get_str(status, "phase", "status")),
    }


def _preempted_by_scheduler(status: Mapping[str, Any]) -> bool:
    """Whether the first ``DisruptionTarget`` condition is True with reason
    ``PreemptionByScheduler`` (``podTerminatingByPreemption`` reads the first one)."""
    items = d.get_list(status, "conditions", "status")
    for i in range(len(items)):
        c = d.get_mapping_item(items, i, "status.conditions")
        if d.get_str(c, "type", f"status.conditions[{i}]") == "DisruptionTarget":
            return (
                d.get_str(c, "status", f"status.conditions[{i}]") == "True"
                and d.get_str(c, "reason", f"status.conditions[{i}]") == "PreemptionByScheduler"
            )
    return False


def _pod_resource_claims(spec: Mapping[str, Any]) -> tuple[PodResourceClaim, ...]:
    """Decode ``spec.resourceClaims`` with the API server's rules (core validation
    ``validatePodResourceClaim``): a name is required, unique and a DNS label; exactly one of
    ``resourceClaimName`` and ``resourceClaimTemplateName`` is set, and names a valid object
    name (a DNS subdomain). Raises FieldError."""
    items = d.get_list(spec, "resourceClaims", "spec")
    claims: list[PodResourceClaim] = []
    first: dict[str, int] = {}
    for i in range(len(items)):
        c = d.get_mapping_item(items, i, "spec.resourceClaims")
        cp = f"spec.resourceClaims[{i}]"
        name = d.get_str(c, "name", cp)
        if not name:
            raise FieldError(f"{cp}.name", "required")
        if name in first:
            raise FieldError(
                f"{cp}.name",
                f"duplicate name {name!r} (first at spec.resourceClaims[{first[name]}].name)",
            )
        first[name] = i
        d.check_dns1123_label(name, f"{cp}.name")
        claim = (
            None if c.get("resourceClaimName") is None else d.get_str(c, "resourceClaimName", cp)
        )
        template = (
            None
            if c.get("resourceClaimTemplateName") is None
            else d.get_str(c, "resourceClaimTemplateName", cp)
        )
        if claim is not None and template is not None:
            raise FieldError(
                cp,
                "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be "
                "specified",
            )
        if claim is None and template is None:
            raise FieldError(
                cp, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"
            )
        if claim is not None:
            d.check_dns1123_subdomain(claim, f"{cp}.resourceClaimName")
        if template is not None:
            d.check_dns1123_subdomain(template, f"{cp}.resourceClaimTemplateName")
        claims.append(
            PodResourceClaim(
                name=name, resource_claim_name=claim, resource_claim_template_name=template
            )
        )
    return tuple(claims)


def _check_container_claims(raw: Mapping[str, Any], path: str, pod_claims: list[str]) -> None:
    """Check a container's ``resources.claims`` as the API server does (core validation
    ``validateResourceClaimNames``): each entry names a ``spec.resourceClaims`` entry, once
    per (name, request); ``request``, when set, is a DNS label. Raises FieldError."""
    res = d.get_map(raw, "resources", path)
    rp = d.join(path, "resources")
    items = d.get_list(res, "claims", rp)
    seen: set[str] = set()
    for i in range(len(items)):
        c = d.get_mapping_item(items, i, f"{rp}.claims")
        cp = f"{rp}.claims[{i}]"
        name = d.get_str(c, "name", cp)
        if not name:
            raise FieldError(f"{cp}.name", "required")
        request = d.get_str(c, "request", cp)
        key = name
        if request:
            d.check_dns1123_label(request, f"{cp}.request")
            key = f"{name}/{request}"
        if key in seen:
            raise FieldError(cp, f"duplicate value {key!r}")
        seen.add(key)
        if name not in pod_claims:
            known = ": " + ", ".join(sorted(pod_claims)) if pod_claims else " which is empty"
            raise FieldError(
                cp,
                f"not found {name!r}: must be one of the names in pod.spec.resourceClaims{known}",
            )
