"""core/v1 objects the scheduler reads: the Pod here, with the parts of its spec that
scheduling depends on, and the types it is built from, defined in their own modules and
importable from here as before: `schedsim.api.core.node` (Node), `schedsim.api.core.taints` (Taint,
Toleration), `schedsim.api.core.affinity` (node and pod affinity), `schedsim.api.core.containers`
(Container, Volume, PodResourceClaim) and `schedsim.api.meta` (owner references,
timestamps, ``ResourceList``).

Objects are immutable (`attrs.frozen`) and built once when manifests are loaded; plugins
never allocate them on the hot path. Resource quantities are kept exact (`Fraction`) the way
apimachinery keeps `resource.Quantity`; conversion to milli-CPU / bytes happens where
kube-scheduler converts (the scheduler's `Resource`).

Decoders (`Node.from_manifest`, `Pod.from_manifest`) raise `FieldError` naming the field.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, TypeVar, cast

import attrs

from schedsim.api.core.affinity import NODE_SELECTOR_OPERATORS as NODE_SELECTOR_OPERATORS
from schedsim.api.core.affinity import (
    Affinity,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodAffinityTerm,
    PreferredSchedulingTerm,
    WeightedPodAffinityTerm,
)
from schedsim.api.core.containers import Container, ContainerPort, PodResourceClaim, Volume
from schedsim.api.core.node import Node
from schedsim.api.core.spread import (
    DO_NOT_SCHEDULE,
    TopologySpreadConstraint,
    decode_topology_spread_constraints,
)
from schedsim.api.core.taints import TAINT_EFFECTS as TAINT_EFFECTS
from schedsim.api.core.taints import Taint, Toleration
from schedsim.api.errors import FieldError
from schedsim.api.interning import shared, shared_map
from schedsim.api.loading import decode as d
from schedsim.api.loading.spec_memo import SpecMemo
from schedsim.api.loading.uids import default_uid
from schedsim.api.meta import OwnerReference, ResourceList
from schedsim.api.meta import decode_owner_references as decode_owner_references
from schedsim.api.meta import default_requests as default_requests
from schedsim.api.meta import parse_timestamp as parse_timestamp

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


# --------------------------------------------------------------------------- Pod


@attrs.frozen
class Pod:
    """A core/v1 Pod with the fields scheduling depends on.

    Attributes:
        namespace: defaults to ``"default"`` as the API server does.
        uid: metadata.uid; when absent a stable UUID derived from namespace/name (NodeInfo
            keys pods by UID, as kube-scheduler does).
        priority: spec.priority (0 when unset; loading resolves ``priorityClassName`` as the
            Priority admission plugin does, `schedsim.api.scheduling.priority`).
        priority_class_name: spec.priorityClassName ("" when unset).
        priority_given: spec.priority was in the input (a stored pod: admission already ran).
        overhead: spec.overhead (RuntimeClass overhead), added to the requests; loading sets
            it from the pod's RuntimeClass as admission does (`schedsim.api.runtimeclass`).
        runtime_class_name: spec.runtimeClassName ("" when unset).
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
        ready: False when status.conditions has a ``Ready`` condition whose status is not
            "True"; True without one (a hand-written pod is assumed running and ready).
        topology_spread_constraints: spec.topologySpreadConstraints, validated.
        hard_topology_spread_constraints: how many topologySpreadConstraints are
            ``DoNotSchedule``.
        containers: with ``spec.hostNetwork``, ports' hostPort defaults to containerPort.
        restart_policy: spec.restartPolicy ("" when unset: the API server's default is
            ``Always``); the Cluster Autoscaler's terminal-pod rule reads it.
        termination_grace_period_seconds: spec.terminationGracePeriodSeconds (None when
            unset: the API default is 30); the Cluster Autoscaler's long-terminating rule
            reads it.
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
    ready: bool = True
    scheduler_name: str = "default-scheduler"
    node_name: str = ""
    node_selector: Mapping[str, str] = attrs.field(factory=dict)
    affinity: Affinity | None = None
    tolerations: tuple[Toleration, ...] = ()
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    overhead: ResourceList = attrs.field(factory=dict)
    runtime_class_name: str = ""
    resources: ResourceList = attrs.field(factory=dict)
    volumes: tuple[Volume, ...] = ()
    resource_claims: tuple[PodResourceClaim, ...] = ()
    resource_claim_statuses: Mapping[str, str | None] = attrs.field(factory=dict)
    nominated_node_name: str = ""
    phase: str = ""
    scheduling_gates: tuple[str, ...] = ()
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    hard_topology_spread_constraints: int = 0
    restart_policy: str = ""
    termination_grace_period_seconds: int | None = None
    # Values derived from this immutable pod (request sums), computed once: simulations
    # schedule the same pod object many times (forks, what-if loops). Not part of equality;
    # attrs.evolve starts a copy with an empty memo. Made on first use (a stored pod that is
    # never scheduled has none).
    _memo: dict[Any, Any] | None = attrs.field(default=None, init=False, repr=False, eq=False)

    def memo_table(self) -> dict[Any, Any]:
        """The pod's memo (key -> derived value), made on first use; for callers that look a
        key up without a closure per call (`schedsim.api.parts_memo`). Values are shared:
        read-only."""
        memo = self._memo
        if memo is None:
            memo = {}
            object.__setattr__(self, "_memo", memo)  # frozen: the memo is not state
        return memo

    def memo(self, key: Any, compute: Callable[[], _T]) -> _T:
        """``compute()`` the first time ``key`` is asked for, the stored value afterwards.

        For values that depend on the pod only (it is immutable), e.g. its request vector in
        scheduler units. Callers must treat the value as read-only: it is shared.
        """
        memo = self.memo_table()
        try:
            return cast(_T, memo[key])
        except KeyError:
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
        and status once (`schedsim.api.loading.spec_memo`); the pods then share those parts.
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
        "runtime_class_name": sys.intern(d.get_str(spec, "runtimeClassName", "spec")),
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
        "restart_policy": sys.intern(d.get_str(spec, "restartPolicy", "spec")),
        "termination_grace_period_seconds": None
        if spec.get("terminationGracePeriodSeconds") is None
        else d.get_int(spec, "terminationGracePeriodSeconds", "spec"),
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
        "ready": _ready(status),
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


def _ready(status: Mapping[str, Any]) -> bool:
    """False when the first ``Ready`` condition's status is not "True" (``IsPodReady`` reads
    the first one); True when there is none (schedsim assumes a pod without a status is
    running and ready)."""
    items = d.get_list(status, "conditions", "status")
    for i in range(len(items)):
        c = d.get_mapping_item(items, i, "status.conditions")
        if d.get_str(c, "type", f"status.conditions[{i}]") == "Ready":
            return d.get_str(c, "status", f"status.conditions[{i}]") == "True"
    return True


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
