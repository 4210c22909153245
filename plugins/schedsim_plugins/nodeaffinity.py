"""NodeAffinity: mirrors the PreFilter/Filter of kube-scheduler's ``NodeAffinity`` plugin
(pkg/scheduler/framework/plugins/nodeaffinity) and the matching rules of
k8s.io/component-helpers/scheduling/corev1/nodeaffinity.

Selectors are compiled once (per pod in PreFilter, per profile for ``addedAffinity``) into
plain closures over ``(node labels, node name)``, so Filter only calls them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from schedsim.api.core import (
    NodeAffinity as NodeAffinitySpec,
)
from schedsim.api.core import (
    NodeSelectorTerm,
    Pod,
    PreferredSchedulingTerm,
)
from schedsim.api.nodeaffinity import (
    OBJECT_NAME_FIELD,
    Matcher,
    compile_node_selector,
    compile_term,
    match_all,
    required_node_affinity,
    required_terms,
)
from schedsim.framework import Code, CycleState, Handle, NodeInfo, PreFilterResult, StateKey, Status

__all__ = [
    "ERR_REASON_CONFLICT",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_POD",
    "PRE_FILTER_STATE_KEY",
    "Matcher",
    "NodeAffinity",
    "compile_node_selector",
    "decode_added_affinity",
    "required_node_affinity",
]

NAME = "NodeAffinity"

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
"""The pod's nodeSelector / required node affinity does not match (``ErrReasonPod``)."""
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
"""The plugin's ``addedAffinity`` does not match (``errReasonEnforced``)."""
ERR_REASON_CONFLICT = "pod affinity terms conflict"
"""Every term pins ``metadata.name`` to an empty set of nodes (``errReasonConflict``)."""

PRE_FILTER_STATE_KEY: StateKey[Matcher] = StateKey("PreFilter" + NAME)
"""The pod's compiled nodeSelector + required node affinity (``preFilterStateKey``)."""

_SKIP = Status(Code.Skip, (), NAME)
_POD_MISMATCH = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_POD,), NAME)
_ENFORCED_MISMATCH = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_ENFORCED,), NAME)
_CONFLICT = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_CONFLICT,), NAME)
_NODE_NOT_FOUND = Status(Code.Error, ("node not found",), NAME)


# ------------------------------------------------------------------------------ args

_ARGS_KEYS = frozenset({"apiVersion", "kind", "addedAffinity"})
_ADDED_KEYS = frozenset(
    {
        "requiredDuringSchedulingIgnoredDuringExecution",
        "preferredDuringSchedulingIgnoredDuringExecution",
    }
)


def _mapping(raw: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise ValueError(f"{path}: expected a mapping, got {type(raw).__name__}")
    return raw


def _list(raw: Any, path: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValueError(f"{path}: expected a list, got {type(raw).__name__}")
    return raw


def _no_unknown(raw: Mapping[str, Any], allowed: frozenset[str], path: str) -> None:
    unknown = sorted(str(k) for k in raw if k not in allowed)
    if unknown:
        raise ValueError(f"{path}: unknown field(s) {', '.join(unknown)}")


def decode_added_affinity(raw: Any, path: str = "addedAffinity") -> NodeAffinitySpec:
    """Decode NodeAffinityArgs' ``addedAffinity`` (a v1 NodeAffinity in manifest form) and
    validate it like ``ValidateNodeAffinityArgs``; raises ValueError naming the field."""
    raw = _mapping(raw, path)
    _no_unknown(raw, _ADDED_KEYS, path)
    required: tuple[NodeSelectorTerm, ...] | None = None
    rp = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
    req_raw = raw.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req_raw is not None:
        req_map = _mapping(req_raw, rp)
        _no_unknown(req_map, frozenset({"nodeSelectorTerms"}), rp)
        items = _list(req_map.get("nodeSelectorTerms"), f"{rp}.nodeSelectorTerms")
        required = tuple(
            NodeSelectorTerm.from_manifest(
                _mapping(item, f"{rp}.nodeSelectorTerms[{i}]"), f"{rp}.nodeSelectorTerms[{i}]"
            )
            for i, item in enumerate(items)
        )
        errs = compile_node_selector(required, rp)[1]
        if errs:
            raise ValueError("; ".join(errs))
    pp = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    preferred: list[PreferredSchedulingTerm] = []
    for i, item in enumerate(_list(raw.get("preferredDuringSchedulingIgnoredDuringExecution"), pp)):
        ip = f"{pp}[{i}]"
        item = _mapping(item, ip)
        _no_unknown(item, frozenset({"weight", "preference"}), ip)
        weight = item.get("weight", 0)
        if isinstance(weight, bool) or not isinstance(weight, int):
            raise ValueError(f"{ip}.weight: expected an integer, got {type(weight).__name__}")
        pref = item.get("preference")
        term = NodeSelectorTerm.from_manifest(
            _mapping({} if pref is None else pref, f"{ip}.preference"), f"{ip}.preference"
        )
        # NewPreferredSchedulingTerms skips weight-0 and empty terms without parsing them.
        if weight != 0:
            errs = compile_term(term, ip)[1]
            if errs:
                raise ValueError("; ".join(errs))
        preferred.append(PreferredSchedulingTerm(weight=weight, preference=term))
    return NodeAffinitySpec(required=required, preferred=tuple(preferred))


# ------------------------------------------------------------------------------ plugin


class NodeAffinity:
    """Mirrors kube-scheduler's ``NodeAffinity`` plugin (PreFilter and Filter).

    Filter: the node must match the plugin's ``addedAffinity`` required terms, else
    ``node(s) didn't match scheduler-enforced node affinity``; then the pod's
    ``spec.nodeSelector`` (every label equal) AND its required node affinity (terms ORed,
    requirements ANDed), else ``node(s) didn't match Pod's node affinity/selector``; both
    UnschedulableAndUnresolvable.

    PreFilter: Skip when the pod has no nodeSelector, no required node affinity and the
    plugin no ``addedAffinity``; else compile the pod's selector into the cycle state and, if
    every required term has ``matchFields metadata.name In`` requirements, return the union of
    those node names (intersected within a term) as a PreFilterResult, or
    UnschedulableAndUnresolvable ``pod affinity terms conflict`` when that union is empty.

    Args (NodeAffinityArgs): ``addedAffinity``, a v1 NodeAffinity every pod must also satisfy
    (its preferred terms are validated and kept in `added_preferred` for scoring).
    """

    name: ClassVar[str] = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        _no_unknown(args, _ARGS_KEYS, "args")
        kind = args.get("kind")
        if kind is not None and kind != "NodeAffinityArgs":
            raise ValueError(f"args.kind: expected NodeAffinityArgs, got {kind!r}")
        self.added_affinity: NodeAffinitySpec | None = None
        self._added_required: Matcher | None = None
        if args.get("addedAffinity") is not None:
            self.added_affinity = decode_added_affinity(args["addedAffinity"])
            if self.added_affinity.required is not None:
                self._added_required = compile_node_selector(self.added_affinity.required)[0]
        # Filter without PreFilter: the last pod's compiled selector, reused by identity.
        self._last_pod: Pod | None = None
        self._last_matcher: Matcher = match_all

    @property
    def added_preferred(self) -> tuple[PreferredSchedulingTerm, ...]:
        """The ``addedAffinity`` preferred terms (for a Score extension point)."""
        return () if self.added_affinity is None else self.added_affinity.preferred

    def schedsim_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | PreFilterResult | None:
        """PreFilter of upstream NodeAffinity (including ``getPreFilterResult`` narrowing)."""
        terms = required_terms(pod)
        if terms is None and self._added_required is None and not pod.node_selector:
            return _SKIP
        state[PRE_FILTER_STATE_KEY] = required_node_affinity(pod)
        if not terms:
            return None
        node_names: set[str] | None = None
        for term in terms:
            term_names: set[str] | None = None
            for req in term.match_fields:
                if req.key == OBJECT_NAME_FIELD and req.operator == "In":
                    values = set(req.values)
                    term_names = values if term_names is None else term_names & values
            if term_names is None:
                return None  # this term allows every node; terms are ORed
            node_names = term_names if node_names is None else node_names | term_names
        if not node_names:
            return _CONFLICT
        return PreFilterResult(frozenset(node_names))

    def schedsim_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter of upstream NodeAffinity."""
        node = node_info.node
        if node is None:
            return _NODE_NOT_FOUND
        labels = node.labels
        name = node.name
        added = self._added_required
        if added is not None and not added(labels, name):
            return _ENFORCED_MISMATCH
        matcher = state.get(PRE_FILTER_STATE_KEY)
        if matcher is None:
            if self._last_pod is not pod:
                self._last_matcher = required_node_affinity(pod)
                self._last_pod = pod
            matcher = self._last_matcher
        return None if matcher(labels, name) else _POD_MISMATCH
