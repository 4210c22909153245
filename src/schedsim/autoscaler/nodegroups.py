"""Node groups: the node-groups file and which cluster nodes belong to which group.

A node group is what a cloud provider can grow: a name, min/max size, its current size and a
template (a Node manifest, optionally its node-local ResourceSlices, its CSINode, and the
DaemonSet/static pods every node of the group runs, with their pod-owned ResourceClaims).
The file format is documented in ``docs/cli.md``. The copies of a template that scale-up adds
are made in `schedsim.autoscaler.sanitize`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from schedsim.api.core import Node, Pod
from schedsim.api.errors import FieldError, ManifestError
from schedsim.api.loading import decode as d
from schedsim.api.loading.loader import parse_text, read_documents, read_stdin
from schedsim.api.resource import ResourceClaim, ResourceSlice
from schedsim.api.storage import CSINode
from schedsim.api.validation import validate_object
from schedsim.api.validation.common import Problems, validate_labels

_INT64_MAX = 2**63 - 1  # Cluster Autoscaler node-group sizes are Go ints

__all__ = [
    "NodeGroup",
    "NodeGroupError",
    "NodeTemplate",
    "group_of_nodes",
    "load_node_groups",
    "parse_node_groups",
    "templates_without_pods",
    "unknown_member_nodes",
]


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
        raise ManifestError(f"{source}: {path}.kind: expected {kind}, got {d.yaml_value(given)}")
    try:
        obj = decoder(raw)
    except FieldError as e:
        raise ManifestError(f"{source}: {path}.{e.field}: {e.problem}") from None
    # The API server's rules, as for the same object in a manifest: a template the API
    # server would refuse would give copies no real cluster could have.
    problems = validate_object(raw, kind)
    if problems.errors:
        field, problem = problems.errors[0]
        raise ManifestError(f"{source}: {path}.{field}: {problem}")
    return obj


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
        raise ManifestError(f"{source}: kind: expected NodeGroups, got {d.yaml_value(kind)}")
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
            if (
                isinstance(price, bool)
                or not isinstance(price, int | float)
                or not 0 <= price < math.inf  # .inf would make costs (and JSON) infinite
            ):
                raise FieldError(
                    f"{path}.price", f"must be a finite number >= 0, got {d.yaml_value(price)}"
                )
            selector = d.get_str_map(g, "nodeSelector", path)
            problems = Problems()
            validate_labels(selector, f"{path}.nodeSelector", problems)
            if problems.errors:
                raise FieldError(*problems.errors[0])
            listed = d.get_str_list(g, "nodes", path)
            for j, node_name in enumerate(listed):
                d.check_dns1123_subdomain(node_name, f"{path}.nodes[{j}]")
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


def templates_without_pods(groups: Sequence[NodeGroup]) -> list[str]:
    """Warnings for templates whose Node has no ``pods`` in ``status.allocatable``.

    kube-scheduler reads a missing ``pods`` as 0 allowed pods (NodeInfo.Allocatable.
    AllowedPodNumber), so NodeResourcesFit refuses every pod on such a node with
    ``Too many pods``, and no scale-up of the group helps; a real kubelet always reports it
    (110 by default), so a template without it is most likely a slip.
    """
    return [
        f'nodeGroups[{i}].template.status.allocatable: no "pods": kube-scheduler allows '
        "no pod on such a node (NodeResourcesFit: Too many pods); a kubelet reports "
        'pods: "110" by default'
        for i, g in enumerate(groups)
        if "pods" not in g.template.node.allocatable
    ]
