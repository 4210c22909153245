"""What PodTopologySpread's extension points share (upstream common.go and plugin.go):
constraints as the plugin uses them, the default spreading selector, per-node matching-pod
counts, and the plugin's args.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from schedsim.api.core import Node, OwnerReference, Pod
from schedsim.api.core.nodeaffinity import Matcher
from schedsim.api.core.spread import SCHEDULE_ANYWAY, TopologySpreadConstraint
from schedsim.api.errors import FieldError
from schedsim.api.labels import LabelSelector, LabelSelectorRequirement
from schedsim.framework import NodeInfo, ObjectListers, PodInfo
from schedsim.framework.pod_index import NodeEntry, PodIndex, Signature

__all__ = [
    "LABEL_HOSTNAME",
    "LABEL_TOPOLOGY_ZONE",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "Constraint",
    "DomainCounts",
    "SelectorKey",
    "SpreadCounter",
    "count_pods_match_selector",
    "decode_args",
    "default_selector",
    "labels_match",
    "selector_key",
]

LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"

SYSTEM_DEFAULT_CONSTRAINTS: tuple[TopologySpreadConstraint, ...] = (
    TopologySpreadConstraint(3, LABEL_HOSTNAME, SCHEDULE_ANYWAY),
    TopologySpreadConstraint(5, LABEL_TOPOLOGY_ZONE, SCHEDULE_ANYWAY),
)
"""kube-scheduler's built-in soft constraints (``systemDefaultConstraints``)."""

_DO_NOT_SCHEDULE_EFFECTS = frozenset({"NoSchedule", "NoExecute"})

# ------------------------------------------------------------------------------ constraints


class Constraint:
    """A constraint as the plugin uses it (``topologySpreadConstraint`` upstream): the
    selector parsed (matchLabelKeys merged), minDomains and the node inclusion policies with
    their defaults applied. ``selector`` None selects nothing (an unset labelSelector)."""

    __slots__ = (
        "honor_node_affinity",
        "honor_node_taints",
        "max_skew",
        "min_domains",
        "selector",
        "selector_key",
        "topology_key",
    )

    def __init__(
        self,
        max_skew: int,
        topology_key: str,
        selector: LabelSelector | None,
        min_domains: int = 1,
        honor_node_affinity: bool = True,
        honor_node_taints: bool = False,
    ) -> None:
        self.max_skew = max_skew
        self.topology_key = topology_key
        self.selector = selector
        self.min_domains = min_domains
        self.honor_node_affinity = honor_node_affinity
        self.honor_node_taints = honor_node_taints
        self.selector_key = selector_key(selector)

    def __repr__(self) -> str:
        return f"Constraint({self.topology_key}, maxSkew={self.max_skew}, {self.selector})"

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether the selector selects ``labels``."""
        return self.selector is not None and self.selector.matches(labels)

    def includes_node(self, pod: Pod, node: Node, required: Matcher) -> bool:
        """``matchNodeInclusionPolicies``: Honor node affinity -> the pod's required node
        affinity must match; Honor taints -> no untolerated NoSchedule/NoExecute taint."""
        if self.honor_node_affinity and not required(node.labels, node.name):
            return False
        if self.honor_node_taints:
            for taint in node.taints:
                if taint.effect in _DO_NOT_SCHEDULE_EFFECTS and not any(
                    t.tolerates(taint) for t in pod.tolerations
                ):
                    return False
        return True


SelectorKey = tuple[Any, ...]


def selector_key(selector: LabelSelector | None) -> SelectorKey:
    """A hashable identity of a selector's requirements (for caches)."""
    if selector is None:
        return ("nothing",)
    return (
        tuple(sorted(selector.match_labels.items())),
        tuple(
            sorted((r.key, r.operator, tuple(sorted(r.values))) for r in selector.match_expressions)
        ),
    )


def labels_match(constraints: Sequence[Constraint], labels: Mapping[str, str]) -> bool:
    """``nodeLabelsMatchSpreadConstraints``: every topology key is a label of the node."""
    for c in constraints:
        if c.topology_key not in labels:
            return False
    return True


def default_selector(pod: Pod, listers: ObjectListers) -> LabelSelector:
    """The default spreading selector of ``pod`` (``helper.DefaultSelector``): the merged
    selectors of the Services in its namespace that select it, plus the selector of its
    controlling ReplicationController (``v1``), ReplicaSet or StatefulSet (``apps/v1``),
    looked up by the owner's name."""
    label_set: dict[str, str] = {}
    for svc in listers.services_in(pod.namespace):
        sel = svc.selector
        if sel is None:  # services with nil selectors match nothing, not everything
            continue
        if all(pod.labels.get(k) == v for k, v in sel.items()):
            label_set.update(sel)
    selector = LabelSelector(match_labels=dict(label_set))
    owner = _controller_of(pod)
    if owner is None:
        return selector
    if owner.api_version == "v1" and owner.kind == "ReplicationController":
        rc = listers.replication_controller(pod.namespace, owner.name)
        if rc is not None:
            # an RC's selector is a plain label map, merged into the Services' labels
            if rc.selector is not None:
                label_set.update(rc.selector.match_labels)
            selector = LabelSelector(match_labels=dict(label_set))
    elif owner.api_version == "apps/v1" and owner.kind in ("ReplicaSet", "StatefulSet"):
        wl = (
            listers.replica_set(pod.namespace, owner.name)
            if owner.kind == "ReplicaSet"
            else listers.stateful_set(pod.namespace, owner.name)
        )
        if wl is not None and wl.selector is not None:
            other = wl.selector
            extra = [
                LabelSelectorRequirement(k, "In", frozenset({v}))
                for k, v in other.match_labels.items()
            ]
            selector = selector.with_requirements((*extra, *other.match_expressions))
    return selector


def _controller_of(pod: Pod) -> OwnerReference | None:
    for ref in pod.owner_references:
        if ref.controller:
            return ref
    return None


# ------------------------------------------------------------------------------ counting


class SpreadCounter:
    """Counts a namespace's pods that a selector matches, per node, kept across pods.

    ``count(node_info, namespace, constraint)`` equals upstream ``countPodsMatchSelector``
    (terminating pods, i.e. with a deletionTimestamp, are not counted). Each (namespace,
    selector) keeps node name -> (node generation, count): a NodeInfo's generation changes on
    every mutation (and a reverted fork brings back the old object with its old generation),
    so a count is recomputed only for a node that changed since it was last counted.
    Memory: O(nodes) per distinct (namespace, selector) seen.
    """

    __slots__ = ("_cache",)

    def __init__(self) -> None:
        self._cache: dict[tuple[str, SelectorKey], dict[str, tuple[int, int]]] = {}

    def table(self, namespace: str, c: Constraint) -> dict[str, tuple[int, int]]:
        """The per-node table for (namespace, c's selector)."""
        key = (namespace, c.selector_key)
        t = self._cache.get(key)
        if t is None:
            t = self._cache[key] = {}
        return t

    @staticmethod
    def count(
        table: dict[str, tuple[int, int]],
        node_info: NodeInfo,
        name: str,
        namespace: str,
        c: Constraint,
    ) -> int:
        """Matching pods on ``node_info``, from ``table`` when the node is unchanged."""
        gen = node_info.generation
        hit = table.get(name)
        if hit is not None and hit[0] == gen:
            return hit[1]
        n = count_pods_match_selector(node_info.pods, c, namespace)
        table[name] = (gen, n)
        return n


class DomainCounts:
    """Matching pods per domain over a fixed set of eligible nodes, for one (namespace,
    selector), kept up to date from the `PodIndex`'s entry changes.

    ``domains`` is node name -> topology value of the eligible nodes (PodTopologySpread's
    per-constraint map, reused while the Node objects stay); `counts` returns value -> the
    pods of ``namespace``, not terminating, that ``selector`` selects on the eligible nodes
    of that domain (upstream ``countPodsMatchSelector`` summed per domain: what PreFilter's
    and PreScore's walks over every node add up). A domain whose count is 0 may be absent.

    Time: the first call O(matching signatures x their nodes); later calls with the same
    ``domains`` object O(nodes changed since), instead of O(nodes holding matching pods)
    per pod. Memory: O(domains + distinct signatures seen).
    """

    __slots__ = ("_counts", "_domains", "_matches", "_namespace", "_selector", "_token")

    def __init__(self, namespace: str, selector: LabelSelector, domains: Mapping[str, str]):
        self._namespace = namespace
        self._selector = selector
        self._domains = domains
        self._counts: dict[str, int] = {}
        self._matches: dict[Signature, bool] = {}
        self._token: object = None

    def follows(self, domains: Mapping[str, str]) -> bool:
        """Whether these counts are over ``domains`` (the same object)."""
        return self._domains is domains

    def counts(self, index: PodIndex) -> Mapping[str, int]:
        """Value -> matching pods, as of ``index``'s last refresh (read it, never change it)."""
        token, changes = index.entry_changes_since(self._token)
        if changes is None:
            self._rebuild(index)
            return self._counts
        domains, counts = self._domains, self._counts
        for name, old, new in changes:
            v = domains.get(name)
            if v is None:
                continue
            d = (self._matching(new) if new is not None else 0) - (
                self._matching(old) if old is not None else 0
            )
            if d:
                counts[v] = counts.get(v, 0) + d
        self._token = token
        return counts

    def _rebuild(self, index: PodIndex) -> None:
        self._token = index.entries()[0]
        counts: dict[str, int] = {}
        domains = self._domains
        for sig in index.signatures_for(self._selector):
            per_node = index.sig_nodes.get(sig)
            if not per_node or not self._match(sig):
                continue
            for name, cnt in per_node.items():
                v = domains.get(name)
                if v is not None:
                    counts[v] = counts.get(v, 0) + cnt
        self._counts = counts

    def _match(self, sig: Signature) -> bool:
        hit = self._matches.get(sig)
        if hit is None:
            # terminating pods and other namespaces are not counted
            hit = self._matches[sig] = (
                not sig[2] and sig[0] == self._namespace and self._selector.matches(dict(sig[1]))
            )
        return hit

    def _matching(self, e: NodeEntry) -> int:
        n = 0
        for sig, cnt in e.sigs.items():
            if self._match(sig):
                n += cnt
        return n


def count_pods_match_selector(pods: Sequence[PodInfo], c: Constraint, namespace: str) -> int:
    """``countPodsMatchSelector``: pods of ``namespace``, not terminating, that ``c`` selects."""
    sel = c.selector
    if sel is None:
        return 0
    n = 0
    for pi in pods:
        p = pi.pod
        if p.deletion_timestamp is not None or p.namespace != namespace:
            continue
        if sel.matches(p.labels):
            n += 1
    return n


# ------------------------------------------------------------------------------ args


_ARGS_KEYS = frozenset({"apiVersion", "kind", "defaultConstraints", "defaultingType"})


def decode_args(args: Mapping[str, Any]) -> tuple[tuple[TopologySpreadConstraint, ...], bool]:
    """PodTopologySpreadArgs -> (default constraints, system defaulted), validated like
    ``ValidatePodTopologySpreadArgs``; raises ValueError naming the field."""
    unknown = sorted(str(k) for k in args if k not in _ARGS_KEYS)
    if unknown:
        raise ValueError(f"args: unknown field(s) {', '.join(unknown)}")
    kind = args.get("kind")
    if kind is not None and kind != "PodTopologySpreadArgs":
        raise ValueError(f"args.kind: expected PodTopologySpreadArgs, got {kind!r}")
    defaulting = args.get("defaultingType") or "System"
    raw = args.get("defaultConstraints") or []
    if not isinstance(raw, list):
        raise ValueError(f"defaultConstraints: expected a list, got {type(raw).__name__}")
    if defaulting not in ("System", "List"):
        raise ValueError(
            f'defaultingType: Unsupported value: "{defaulting}": supported values: "System", "List"'
        )
    if defaulting == "System" and raw:
        raise ValueError(
            'defaultingType: Invalid value: "System": when .defaultConstraints are not empty'
        )
    out: list[TopologySpreadConstraint] = []
    seen: set[tuple[str, str]] = set()
    for i, item in enumerate(raw):
        path = f"defaultConstraints[{i}]"
        if not isinstance(item, Mapping):
            raise ValueError(f"{path}: expected a mapping, got {type(item).__name__}")
        if item.get("labelSelector") is not None:
            raise ValueError(
                f"{path}.labelSelector: Forbidden: constraint must not define a selector, as "
                "they deduced for each pod"
            )
        skew = item.get("maxSkew", 0)
        if isinstance(skew, int) and not isinstance(skew, bool) and skew <= 0:
            raise ValueError(f"{path}.maxSkew: Invalid value: {skew}: not in valid range (0, inf)")
        try:
            c = TopologySpreadConstraint.from_manifest(item, path)
        except FieldError as e:
            raise ValueError(str(e)) from None
        pair = (c.topology_key, c.when_unsatisfiable)
        if pair in seen:
            raise ValueError(
                f'defaultConstraints[{i}]: Duplicate value: "{{{pair[0]}, {pair[1]}}}"'
            )
        seen.add(pair)
        out.append(c)
    if defaulting == "System":
        return SYSTEM_DEFAULT_CONSTRAINTS, True
    return tuple(out), False
