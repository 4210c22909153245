"""Sanitized copies of a node group's template: the nodes scale-up adds.

Copies are made as Cluster Autoscaler makes them (``simulator/node_info_utils.go``
``createSanitizedNodeInfo`` and ``dynamicresources/utils/sanitize.go``): a unique node name
with a new UID and hostname label; slices renamed with their pools and pointed at the new
node; pods renamed with a new UID and bound to the new node, their pod-owned claims copied,
renamed and re-pointed (owner, reservation, allocated pools and node selector); the CSINode
copied under the new name. Nothing given is mutated: every copy is made with `attrs.evolve`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from schedsim.api.apps.daemonset_pods import daemon_set_pod, daemon_set_should_run
from schedsim.api.apps.workloads import DaemonSet
from schedsim.api.core import (
    Node,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    OwnerReference,
    Pod,
)
from schedsim.api.resource import (
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceSlice,
)
from schedsim.autoscaler.nodegroups import NodeGroupError, NodeTemplate
from schedsim.snapshot.dra import claim_is_for_pod
from schedsim.snapshot.infos import NodeInfo, PodInfo

__all__ = [
    "HOSTNAME_LABEL",
    "SanitizationError",
    "pod_claim_names",
    "sanitized_node_info",
    "sanitized_node_resource_slices",
    "sanitized_pod_resource_claims",
    "sanitized_resource_claim_refs",
    "template_node_info",
]

HOSTNAME_LABEL = "kubernetes.io/hostname"

# Taints Cluster Autoscaler itself puts on nodes; a template copied from a real node must not
# carry them (``taints.SanitizeTaints``).
_CA_TAINTS = frozenset({"ToBeDeletedByClusterAutoscaler", "DeletionCandidateOfClusterAutoscaler"})


class SanitizationError(NodeGroupError):
    """A template cannot be copied (a slice that is not node-local, a pod-owned claim
    allocated elsewhere or to a device the template does not publish, a claim found
    nowhere); CA returns an error from the same places."""


def _new_uid(kind: str, name: str) -> str:
    # Deterministic, so runs and tests are reproducible (CA uses uuid.NewUUID()).
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"schedsim:copy:{kind}:{name}"))


def _claim_refs(pod: Pod) -> list[tuple[int, str]]:
    """``(index in spec.resourceClaims, claim name)`` for the references that name a claim."""
    out = []
    for k, ref in enumerate(pod.resource_claims):
        if ref.resource_claim_name is not None:
            out.append((k, ref.resource_claim_name))
        else:
            name = pod.resource_claim_statuses.get(ref.name)
            if name:
                out.append((k, name))
    return out


def pod_claim_names(pod: Pod) -> list[str]:
    """Names of the ResourceClaims ``pod`` references: ``resourceClaimName``, else the name
    recorded for a template reference in ``status.resourceClaimStatuses`` (references
    without one need no claim)."""
    return [name for _, name in _claim_refs(pod)]


def _check_owned_claim(
    claim: ResourceClaim, template: NodeTemplate, field: str, group: str
) -> None:
    """A pod-owned template claim that is allocated must be allocated on the template node,
    from its slices' pools, to devices those slices publish.

    CA's sanitization (``SanitizedPodResourceClaims``) rejects the first two; the third cannot
    happen with a template CA takes from a real node (the scheduler only allocates published
    devices), and a copy allocated to a device that does not exist would leave a real device
    free on every new node, so it is rejected too.
    """
    alloc = claim.status.allocation
    if alloc is None:
        return
    node_name = template.node.name
    of = f"claim {claim.namespace}/{claim.name}" + (f" (node group {group})" if group else "")
    if _single_node(alloc.node_selector) != node_name:
        raise SanitizationError(
            f"{of} is allocated, but not node-local on {node_name} - can't be sanitized",
            f"{field}.status.allocation.nodeSelector",
        )
    pools = {s.pool.name for s in template.resource_slices}
    devices = {
        (s.driver, s.pool.name, dev.name) for s in template.resource_slices for dev in s.devices
    }
    for i, r in enumerate(alloc.results):
        where = f"{field}.status.allocation.devices.results[{i}]"
        if r.pool not in pools:
            raise SanitizationError(
                f"{of} has an allocation {r.request} from pool {r.pool!r}, which isn't "
                f"node-local on {node_name} - can't be sanitized",
                f"{where}.pool",
            )
        if (r.driver, r.pool, r.device) not in devices:
            raise SanitizationError(
                f'{of} is allocated device "{r.device}", which the template\'s '
                f"resourceSlices do not have (driver {r.driver}, pool {r.pool})",
                f"{where}.device",
            )


def template_node_info(
    template: NodeTemplate,
    shared_claims: Iterable[ResourceClaim] = (),
    *,
    pod_level_resources: bool = True,
    path: str = "template",
    group: str = "",
    daemon_sets: Sequence[DaemonSet] = (),
) -> NodeInfo:
    """The template as a NodeInfo: its node, slices, CSINode and pods, each pod with the
    claims it needs (CA's ``TemplateNodeInfo`` of a node group), plus the pods of the
    cluster's DaemonSets that would run on the node and have none among the template's pods
    (CA ``TemplateNodeInfoFromNodeGroupTemplate`` with ``forceDaemonSets``: its
    ``GetDaemonSetPodsForNode``), bound to the template node.

    Args:
        template: the group's template.
        shared_claims: cluster claims that template pods may reference by name.
        pod_level_resources: the PodLevelResources gate for pod request sums.
        path: where the template is in the node-groups file (``nodeGroups[i].template``),
            for the field of errors.
        group: the group's name, for messages.
        daemon_sets: the cluster's DaemonSets (DaemonSets whose pods need ResourceClaims are
            left to the template's own pods).

    Raises:
        SanitizationError: with the field that is wrong: a template pod references a claim
            found neither in the template nor in ``shared_claims``
            (``PATH.pods[j].spec.resourceClaims[k]``); a pod-owned claim is allocated but
            not on the template node, from a pool of no template slice, or to a device no
            template slice has (``PATH.resourceClaims[m].status.allocation...``).
    """
    by_key = {(c.namespace, c.name): c for c in shared_claims}
    by_key.update({(c.namespace, c.name): c for c in template.resource_claims})
    index = {(c.namespace, c.name): m for m, c in enumerate(template.resource_claims)}
    pods = []
    for j, pod in enumerate(template.pods):
        claims = []
        for k, name in _claim_refs(pod):
            ref_field = f"{path}.pods[{j}].spec.resourceClaims[{k}]"
            claim = by_key.get((pod.namespace, name))
            if claim is None:
                raise SanitizationError(
                    f"pod {pod.key} references ResourceClaim {pod.namespace}/{name}, "
                    "which is neither in resourceClaims nor in the cluster",
                    ref_field,
                )
            if claim_is_for_pod(pod, claim):
                m = index.get((claim.namespace, claim.name))
                field = ref_field if m is None else f"{path}.resourceClaims[{m}]"
                _check_owned_claim(claim, template, field, group)
            claims.append(claim)
        pods.append(PodInfo(pod, claims, pod_level_resources=pod_level_resources))
    node = template.node
    have = {
        (p.namespace, r.name)
        for p in template.pods
        for r in p.owner_references
        if r.controller and r.kind == "DaemonSet"
    }
    for ds in daemon_sets:
        if (ds.namespace, ds.name) in have or ds.template.pod.resource_claims:
            continue
        if daemon_set_should_run(ds, node):
            pod = attrs.evolve(daemon_set_pod(ds, node.name), node_name=node.name)
            pods.append(PodInfo(pod, [], pod_level_resources=pod_level_resources))
    return NodeInfo(node, template.resource_slices, template.csi_node, pods)


def sanitized_node_resource_slices(
    slices: Sequence[ResourceSlice], new_node_name: str, suffix: str
) -> tuple[list[ResourceSlice], set[str]]:
    """Copies of node-local slices for a copy of their node (CA ``SanitizedNodeResourceSlices``):
    name and pool name get ``-<suffix>`` (pool names are unique per driver), new UID,
    ``spec.nodeName`` = ``new_node_name``.

    Returns:
        the copies and the original pool names (for `sanitized_pod_resource_claims`).

    Raises:
        SanitizationError: a slice is not node-local.
    """
    out = []
    pools: set[str] = set()
    for s in slices:
        if not s.node_name:
            raise SanitizationError(f"can't sanitize slice {s.name} because it isn't node-local")
        name = f"{s.name}-{suffix}"
        out.append(
            attrs.evolve(
                s,
                name=name,
                uid=_new_uid("ResourceSlice", name),
                pool=attrs.evolve(s.pool, name=f"{s.pool.name}-{suffix}"),
                node_name=new_node_name,
            )
        )
        pools.add(s.pool.name)
    return out, pools


def _single_node(terms: Sequence[NodeSelectorTerm] | None) -> str:
    """The node name of a ``metadata.name In [name]`` selector, else ''."""
    if terms is None or len(terms) != 1:
        return ""
    term = terms[0]
    if term.match_expressions or len(term.match_fields) != 1:
        return ""
    f = term.match_fields[0]
    if f.key != "metadata.name" or f.operator != "In" or len(f.values) != 1:
        return ""
    return f.values[0]


def _node_selector_for(node_name: str) -> tuple[NodeSelectorTerm, ...]:
    return (
        NodeSelectorTerm(
            match_fields=(NodeSelectorRequirement("metadata.name", "In", (node_name,)),)
        ),
    )


def sanitized_pod_resource_claims(
    new_owner: Pod,
    old_owner: Pod,
    claims: Sequence[ResourceClaim],
    suffix: str,
    new_node_name: str,
    old_node_name: str,
    old_pools: set[str],
) -> list[ResourceClaim]:
    """Claims for a copy of ``old_owner`` (CA ``SanitizedPodResourceClaims``).

    Claims owned by ``old_owner`` are copied: name ``<name>-<suffix>``, new UID, owned by
    ``new_owner``; an unallocated copy has no reservations; an allocated one must be
    node-local on ``old_node_name`` from ``old_pools``, and its copy is allocated from the
    renamed pools on ``new_node_name`` and reserved for ``new_owner``. Other claims (shared)
    are returned unchanged.

    Raises:
        SanitizationError: an owned claim is allocated but not node-local on the old node, or
            from a pool that is not the old node's.
    """
    out = []
    for claim in claims:
        if not claim_is_for_pod(old_owner, claim):
            out.append(claim)
            continue
        name = f"{claim.name}-{suffix}"
        owner = OwnerReference("v1", "Pod", new_owner.name, new_owner.uid, controller=True)
        alloc = claim.status.allocation
        if alloc is None:
            status = attrs.evolve(claim.status, reserved_for=())
        else:
            if _single_node(alloc.node_selector) != old_node_name or not old_node_name:
                raise SanitizationError(
                    f"claim {claim.namespace}/{claim.name} is allocated, but not node-local on "
                    f"{old_node_name} - can't be sanitized"
                )
            results = []
            for r in alloc.results:
                if r.pool not in old_pools:
                    raise SanitizationError(
                        f"claim {claim.namespace}/{claim.name} has an allocation {r.request}, "
                        f"from a pool that isn't node-local on {old_node_name} - can't be "
                        "sanitized"
                    )
                results.append(attrs.evolve(r, pool=f"{r.pool}-{suffix}"))
            status = attrs.evolve(
                claim.status,
                allocation=attrs.evolve(
                    alloc, results=tuple(results), node_selector=_node_selector_for(new_node_name)
                ),
                reserved_for=(
                    ResourceClaimConsumerReference("pods", new_owner.name, new_owner.uid),
                ),
            )
        out.append(
            attrs.evolve(
                claim,
                name=name,
                uid=_new_uid("ResourceClaim", f"{claim.namespace}/{name}"),
                owner_references=(owner,),
                status=status,
            )
        )
    return out


def sanitized_resource_claim_refs(pod: Pod, suffix: str) -> Pod:
    """``pod`` with ``-<suffix>`` appended to every claim name in
    ``status.resourceClaimStatuses`` (the pod-owned claims; CA ``SanitizedResourceClaimRefs``)."""
    if not pod.resource_claim_statuses:
        return pod
    return attrs.evolve(
        pod,
        resource_claim_statuses={
            k: (f"{v}-{suffix}" if v else v) for k, v in pod.resource_claim_statuses.items()
        },
    )


def _sanitized_csi_node(csi_node: Any, node: Node) -> Any:
    """A copy of the CSINode named after ``node`` with a new UID, owned by the node
    (CA ``CreateSanitizedCSINode``); fields it lacks are left alone."""
    if csi_node is None:
        return None
    if not attrs.has(type(csi_node)):
        raise SanitizationError(f"can't copy CSINode of type {type(csi_node).__name__}")
    fields = {f.name for f in attrs.fields(type(csi_node))}
    changes: dict[str, Any] = {"name": node.name}
    if "uid" in fields:
        changes["uid"] = _new_uid("CSINode", node.name)
    if "owner_references" in fields:
        changes["owner_references"] = (OwnerReference("v1", "Node", node.name, node.uid),)
    return attrs.evolve(csi_node, **changes)


def sanitized_node_info(
    template: NodeInfo,
    new_name: str,
    suffix: str,
    *,
    pod_level_resources: bool = True,
    strip_autoscaler_taints: bool = False,
) -> NodeInfo:
    """A copy of ``template`` that can sit beside it in a snapshot (CA
    ``createSanitizedNodeInfo``; binpacking calls it with suffix ``e-<i>``).

    Args:
        template: the node to copy (not modified).
        new_name: the copy's node name; also its ``kubernetes.io/hostname`` label.
        suffix: appended (``-<suffix>``) to pod, pod-owned claim, slice and pool names.
        pod_level_resources: the PodLevelResources gate for the copied PodInfos.
        strip_autoscaler_taints: drop CA's own taints (ToBeDeletedByClusterAutoscaler,
            DeletionCandidateOfClusterAutoscaler), as CA does when it builds a template from a
            real node.

    Returns:
        a new NodeInfo; Node, pods, claims, slices and CSINode are new objects where they
        change, shared where they do not.

    Raises:
        SanitizationError: a slice is not node-local or a pod-owned claim is allocated
            elsewhere than on the template node.
    """
    old = template.node
    if old is None:
        raise SanitizationError("template has no Node")
    labels = dict(old.labels)
    labels[HOSTNAME_LABEL] = new_name
    taints = old.taints
    if strip_autoscaler_taints:
        taints = tuple(t for t in taints if t.key not in _CA_TAINTS)
    node = attrs.evolve(
        old, name=new_name, uid=_new_uid("Node", new_name), labels=labels, taints=taints
    )
    slices, pools = sanitized_node_resource_slices(template.local_resource_slices, new_name, suffix)
    pods = []
    for pi in template.pods:
        pod = pi.pod
        name = f"{pod.name}-{suffix}"
        new_pod = attrs.evolve(
            sanitized_resource_claim_refs(pod, suffix),
            name=name,
            uid=_new_uid("Pod", f"{pod.namespace}/{name}"),
            node_name=new_name,
        )
        claims = sanitized_pod_resource_claims(
            new_pod, pod, pi.needed_resource_claims, suffix, new_name, old.name, pools
        )
        pods.append(PodInfo(new_pod, claims, pod_level_resources=pod_level_resources))
    return NodeInfo(node, slices, _sanitized_csi_node(template.csi_node, node), pods)
