"""Node groups: the node-groups file and the sanitized template copies scale-up adds.

A node group is what a cloud provider can grow: a name, min/max size, its current size and a
template (a Node manifest, optionally its node-local ResourceSlices, its CSINode, and the
DaemonSet/static pods every node of the group runs, with their pod-owned ResourceClaims).
The file format is documented in ``docs/cli.md``.

Copies of the template are sanitized as Cluster Autoscaler does
(``simulator/node_info_utils.go`` ``createSanitizedNodeInfo`` and
``dynamicresources/utils/sanitize.go``): a unique node name with a new UID and hostname
label; slices renamed with their pools and pointed at the new node; pods renamed with a new
UID and bound to the new node, their pod-owned claims copied, renamed and re-pointed (owner,
reservation, allocated pools and node selector); the CSINode copied under the new name.
Nothing given is mutated: every copy is made with `attrs.evolve`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from schedsim.api import _decode as d
from schedsim.api.controllers import daemon_set_pod, daemon_set_should_run
from schedsim.api.core import (
    Node,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    OwnerReference,
    Pod,
)
from schedsim.api.errors import FieldError, ManifestError
from schedsim.api.loader import parse_text, read_documents, read_stdin
from schedsim.api.resource import (
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceSlice,
)
from schedsim.api.storage import CSINode
from schedsim.api.workloads import DaemonSet
from schedsim.snapshot.dra import claim_is_for_pod
from schedsim.snapshot.infos import NodeInfo, PodInfo

_INT64_MAX = 2**63 - 1  # Cluster Autoscaler node-group sizes are Go ints

__all__ = [
    "HOSTNAME_LABEL",
    "NodeGroup",
    "NodeGroupError",
    "NodeTemplate",
    "SanitizationError",
    "group_of_nodes",
    "load_node_groups",
    "parse_node_groups",
    "pod_claim_names",
    "sanitized_node_info",
    "sanitized_node_resource_slices",
    "sanitized_pod_resource_claims",
    "sanitized_resource_claim_refs",
    "template_node_info",
    "unknown_member_nodes",
]

HOSTNAME_LABEL = "kubernetes.io/hostname"

# Taints Cluster Autoscaler itself puts on nodes; a template copied from a real node must not
# carry them (``taints.SanitizeTaints``).
_CA_TAINTS = frozenset({"ToBeDeletedByClusterAutoscaler", "DeletionCandidateOfClusterAutoscaler"})


class NodeGroupError(ValueError):
    """The node groups do not fit the cluster (or their templates cannot be used).

    Attributes:
        field: where in the node-groups file, e.g. ``nodeGroups[1].nodeSelector``; "" when
            the objects did not come from a file.
        problem: what is wrong.
    """

    def __init__(self, problem: str, field: str = "") -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}" if field else problem)


class SanitizationError(NodeGroupError):
    """A template cannot be copied (a slice that is not node-local, a pod-owned claim
    allocated elsewhere or to a device the template does not publish, a claim found
    nowhere); CA returns an error from the same places."""


def _new_uid(kind: str, name: str) -> str:
    # Deterministic, so runs and tests are reproducible (CA uses uuid.NewUUID()).
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"schedsim:copy:{kind}:{name}"))


# --------------------------------------------------------------------------- the file


@attrs.frozen
class NodeTemplate:
    """What every new node of a group looks like.

    Attributes:
        node: the Node (its name names the copies: ``<name>-e-<i>``).
        pods: DaemonSet and static pods every node runs; bound to the template node.
        resource_slices: the node's node-local ResourceSlices (``spec.nodeName`` = the node).
        resource_claims: ResourceClaims the pods need: pod-owned claims (controller
            ownerReference = the pod) are copied per node; others are shared and kept as they
            are.
        csi_node: the node's CSINode (named like the node): its drivers' volume limits.
    """

    node: Node
    pods: tuple[Pod, ...] = ()
    resource_slices: tuple[ResourceSlice, ...] = ()
    resource_claims: tuple[ResourceClaim, ...] = ()
    csi_node: CSINode | None = None


@attrs.frozen
class NodeGroup:
    """One node group of the node-groups file.

    Attributes:
        name: unique in the file.
        min_size: scale-down never takes the group below this.
        max_size: scale-up never takes the group above this.
        template: the `NodeTemplate` of new nodes.
        node_selector: labels (all must match) that identify the group's existing nodes.
        nodes: names of existing nodes that belong to the group (besides those matching
            ``node_selector``); with neither, no cluster node belongs to the group.
        current_size: the group's size now; None: the number of member cluster nodes.
        price: the cost of one of its nodes per hour (``price`` in the file; what `schedsim
            replay` bills node-hours at), 0 when not given.
    """

    name: str
    min_size: int
    max_size: int
    template: NodeTemplate
    node_selector: Mapping[str, str] = attrs.field(factory=dict)
    current_size: int | None = None
    nodes: frozenset[str] = frozenset()
    price: float = 0.0

    def is_member(self, node: Node) -> bool:
        """``node`` is listed in ``nodes`` or carries every label of a non-empty
        ``node_selector``."""
        if node.name in self.nodes:
            return True
        sel = self.node_selector
        return bool(sel) and all(node.labels.get(k) == v for k, v in sel.items())

    def size(self, nodes: Iterable[Node]) -> int:
        """``current_size``, or the number of ``nodes`` that are members."""
        if self.current_size is not None:
            return self.current_size
        return sum(1 for n in nodes if self.is_member(n))


def _decode(decoder: Any, raw: Any, path: str, source: str, kind: str) -> Any:
    if not isinstance(raw, Mapping):
        raise ManifestError(f"{source}: {path}: expected a {kind} manifest (a mapping)")
    given = raw.get("kind")
    if given is not None and given != kind:
        raise ManifestError(f"{source}: {path}.kind: expected {kind}, got {given!r}")
    try:
        return decoder(raw)
    except FieldError as e:
        raise ManifestError(f"{source}: {path}.{e.field}: {e.problem}") from None


def _template(raw: Mapping[str, Any], path: str, source: str) -> NodeTemplate:
    known = {"node", "pods", "resourceSlices", "resourceClaims", "csiNode"}
    for key in raw:
        if key not in known:
            raise ManifestError(
                f"{source}: {path}.{key}: unknown field (expected {', '.join(sorted(known))})"
            )
    if raw.get("node") is None:
        raise ManifestError(f"{source}: {path}.node: required")
    node: Node = _decode(Node.from_manifest, raw["node"], f"{path}.node", source, "Node")

    def items(key: str) -> list[Any]:
        try:
            return d.get_list(raw, key, path)
        except FieldError as e:
            raise ManifestError(f"{source}: {e}") from None

    pods = []
    for i, p in enumerate(items("pods")):
        pod: Pod = _decode(Pod.from_manifest, p, f"{path}.pods[{i}]", source, "Pod")
        if pod.node_name not in ("", node.name):
            raise ManifestError(
                f"{source}: {path}.pods[{i}].spec.nodeName: must be empty or the template "
                f"node's name {node.name!r}, got {pod.node_name!r}"
            )
        pods.append(attrs.evolve(pod, node_name=node.name))
    slices = []
    for i, s in enumerate(items("resourceSlices")):
        sl: ResourceSlice = _decode(
            ResourceSlice.from_manifest, s, f"{path}.resourceSlices[{i}]", source, "ResourceSlice"
        )
        if sl.node_name != node.name:
            raise ManifestError(
                f"{source}: {path}.resourceSlices[{i}].spec.nodeName: must be the template "
                f"node's name {node.name!r} (only node-local slices can be copied)"
            )
        slices.append(sl)
    claims = [
        _decode(
            ResourceClaim.from_manifest, c, f"{path}.resourceClaims[{i}]", source, "ResourceClaim"
        )
        for i, c in enumerate(items("resourceClaims"))
    ]
    csi = raw.get("csiNode")
    csi_node: CSINode | None = None
    if csi is not None:
        csi_node = _decode(CSINode.from_manifest, csi, f"{path}.csiNode", source, "CSINode")
        assert csi_node is not None
        if csi_node.name != node.name:
            raise ManifestError(
                f"{source}: {path}.csiNode.metadata.name: must be the template node's name "
                f"{node.name!r}, got {csi_node.name!r}"
            )
    return NodeTemplate(node, tuple(pods), tuple(slices), tuple(claims), csi_node)


def parse_node_groups(doc: Any, source: str) -> list[NodeGroup]:
    """Decode a parsed node-groups document.

    Args:
        doc: the YAML/JSON document (a mapping with ``nodeGroups``).
        source: the file name used in messages.

    Returns:
        the groups, in file order.

    Raises:
        ManifestError: ``FILE: FIELD: problem`` for any malformed or inconsistent field
            (missing name/template, duplicate names, sizes not 0 <= min <= current <= max,
            a slice that is not the template node's, a node listed in two groups, an unknown
            field).
    """
    if not isinstance(doc, Mapping):
        raise ManifestError(
            f"{source}: expected a mapping with a nodeGroups list, got {d.type_name(doc)}"
        )
    kind = doc.get("kind")
    if kind is not None and kind != "NodeGroups":
        raise ManifestError(f"{source}: kind: expected NodeGroups, got {kind!r}")
    for key in doc:
        if key not in ("apiVersion", "kind", "nodeGroups"):
            raise ManifestError(f"{source}: {key}: unknown field (expected nodeGroups)")
    try:
        raw_groups = d.get_list(doc, "nodeGroups", "")
    except FieldError as e:
        raise ManifestError(f"{source}: {e}") from None
    if not raw_groups:
        raise ManifestError(f"{source}: nodeGroups: required (at least one node group)")
    groups: list[NodeGroup] = []
    seen: dict[str, int] = {}
    listed_in: dict[str, str] = {}  # node name -> the group whose `nodes` lists it
    for i in range(len(raw_groups)):
        path = f"nodeGroups[{i}]"
        try:
            g = d.get_mapping_item(raw_groups, i, "nodeGroups")
            known = {
                "name",
                "minSize",
                "maxSize",
                "currentSize",
                "nodeSelector",
                "nodes",
                "template",
                "price",
            }
            for key in g:
                if key not in known:
                    raise FieldError(
                        f"{path}.{key}", f"unknown field (expected {', '.join(sorted(known))})"
                    )
            name = d.get_str(g, "name", path)
            if not name:
                raise FieldError(f"{path}.name", "required")
            if name in seen:
                raise FieldError(
                    f"{path}.name",
                    f"duplicate node group {name!r} (first at nodeGroups[{seen[name]}])",
                )
            if g.get("maxSize") is None:
                raise FieldError(f"{path}.maxSize", "required")
            min_size = d.get_int(g, "minSize", path)
            max_size = d.get_int(g, "maxSize", path)
            current = None if g.get("currentSize") is None else d.get_int(g, "currentSize", path)
            for key, size in (
                ("minSize", min_size),
                ("maxSize", max_size),
                ("currentSize", current),
            ):
                if size is not None and size > _INT64_MAX:  # CA reads sizes as Go ints
                    raise FieldError(
                        f"{path}.{key}", f"{size} is out of range for a 64-bit integer"
                    )
            if min_size < 0:
                raise FieldError(f"{path}.minSize", f"must be >= 0, got {min_size}")
            if max_size < min_size:
                raise FieldError(
                    f"{path}.maxSize", f"must be >= minSize ({min_size}), got {max_size}"
                )
            if current is not None and not min_size <= current <= max_size:
                raise FieldError(
                    f"{path}.currentSize",
                    f"must be between minSize ({min_size}) and maxSize ({max_size}), got {current}",
                )
            price = g.get("price", 0)
            if isinstance(price, bool) or not isinstance(price, int | float) or not price >= 0:
                raise FieldError(f"{path}.price", f"must be a number >= 0, got {price!r}")
            selector = d.get_str_map(g, "nodeSelector", path)
            listed = d.get_str_list(g, "nodes", path)
            for j, node_name in enumerate(listed):
                owner = listed_in.get(node_name)
                if owner is not None and owner != name:
                    # CA: a node belongs to exactly one node group (NodeGroupForNode)
                    raise FieldError(
                        f"{path}.nodes[{j}]", f'node "{node_name}" is already in group "{owner}"'
                    )
            members = frozenset(listed)
            template_raw = d.get_map(g, "template", path)
        except FieldError as e:
            raise ManifestError(f"{source}: {e}") from None
        if not template_raw:
            raise ManifestError(f"{source}: {path}.template: required")
        template = _template(template_raw, f"{path}.template", source)
        seen[name] = i
        listed_in.update(dict.fromkeys(members, name))
        groups.append(
            NodeGroup(name, min_size, max_size, template, selector, current, members, float(price))
        )
    return groups


def load_node_groups(path: str, stdin_text: Callable[[], str] | None = None) -> list[NodeGroup]:
    """Read a node-groups file (YAML, or JSON for ``.json``), or ``-`` for standard input:
    one document.

    Args:
        path: the file, or ``-``.
        stdin_text: reads standard input (tests inject it); defaults to reading
            ``sys.stdin`` as UTF-8, as for manifests.

    Raises:
        ManifestError: ``FILE: problem`` (missing file, invalid YAML, several documents) or
            ``FILE: FIELD: problem`` (see `parse_node_groups`); FILE is ``<stdin>`` for ``-``.
    """
    if path == "-":
        source = "<stdin>"
        # the manifest loader's own stdin reader and parser (duplicate keys are errors)
        raw = parse_text((stdin_text or read_stdin)(), source)
    else:
        source = path
        raw = read_documents(path)
    docs = [doc for doc in raw if doc is not None]
    if len(docs) != 1:
        raise ManifestError(f"{source}: expected one YAML document, got {len(docs)}")
    return parse_node_groups(docs[0], source)


# --------------------------------------------------------------------------- templates


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


def group_of_nodes(groups: Sequence[NodeGroup], nodes: Iterable[Node]) -> dict[str, NodeGroup]:
    """Each cluster node's node group, for the nodes that are in one.

    In CA a node belongs to at most one node group (``CloudProvider.NodeGroupForNode``); a
    node two groups claim (by ``nodes`` or ``nodeSelector``) is an error.

    Raises:
        NodeGroupError: field ``nodeGroups[i].nodes`` or ``nodeGroups[i].nodeSelector`` of
            the second group claiming a node (``i`` is the position in ``groups``: the file's
            order for groups from `load_node_groups`).
    """
    out: dict[str, NodeGroup] = {}
    for n in nodes:
        for i, g in enumerate(groups):
            if not g.is_member(n):
                continue
            first = out.get(n.name)
            if first is not None:
                how = "nodes" if n.name in g.nodes else "nodeSelector"
                raise NodeGroupError(
                    f'node "{n.name}" is already in group "{first.name}"',
                    f"nodeGroups[{i}].{how}",
                )
            out[n.name] = g
    return out


def unknown_member_nodes(groups: Sequence[NodeGroup], nodes: Iterable[Node]) -> list[str]:
    """Warnings ``nodeGroups[i].nodes: node "X" is not in the cluster`` for listed member
    nodes the cluster lacks (in file order of the groups, names sorted)."""
    known = {n.name for n in nodes}
    return [
        f'nodeGroups[{i}].nodes: node "{name}" is not in the cluster'
        for i, g in enumerate(groups)
        for name in sorted(g.nodes - known)
    ]


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
