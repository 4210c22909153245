"""NodeAffinity: mirrors the PreFilter/Filter of kube-scheduler's ``NodeAffinity`` plugin
(pkg/scheduler/framework/plugins/nodeaffinity) and the matching rules of
k8s.io/component-helpers/scheduling/corev1/nodeaffinity.

Selectors are compiled once (per pod in PreFilter, per profile for ``addedAffinity``) into
plain closures over ``(node labels, node name)``, so Filter only calls them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from schedsim.api.core import (
    NodeAffinity as NodeAffinitySpec,
)
from schedsim.api.core import (
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PreferredSchedulingTerm,
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

_OBJECT_NAME_FIELD = "metadata.name"
"""metav1.ObjectNameField: the only field a Node exposes to ``matchFields``."""

Matcher = Callable[[Mapping[str, str], str], bool]
"""A compiled selector: ``matcher(node_labels, node_name) -> matches``."""

PRE_FILTER_STATE_KEY: StateKey[Matcher] = StateKey("PreFilter" + NAME)
"""The pod's compiled nodeSelector + required node affinity (``preFilterStateKey``)."""

_SKIP = Status(Code.Skip, (), NAME)
_POD_MISMATCH = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_POD,), NAME)
_ENFORCED_MISMATCH = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_ENFORCED,), NAME)
_CONFLICT = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_CONFLICT,), NAME)
_NODE_NOT_FOUND = Status(Code.Error, ("node not found",), NAME)


def _match_all(labels: Mapping[str, str], name: str) -> bool:
    return True


def _match_nothing(labels: Mapping[str, str], name: str) -> bool:
    return False


# ------------------------------------------------------------------------------ validation
# apimachinery's label validation, as labels.NewRequirement applies it.

_NAME_RE = re.compile(r"(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_SUBDOMAIN_RE = re.compile(
    r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*"
)
_INT_RE = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _parse_int64(s: str) -> int | None:
    """``strconv.ParseInt(s, 10, 64)``: None when Go would fail."""
    if not _INT_RE.fullmatch(s):
        return None
    n = int(s)
    return n if _INT64_MIN <= n <= _INT64_MAX else None


def _label_key_problem(key: str) -> str | None:
    """``validation.IsQualifiedName``: ``[prefix/]name``."""
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return "prefix part must be non-empty"
        if len(prefix) > 253 or not _DNS1123_SUBDOMAIN_RE.fullmatch(prefix):
            return "prefix part must be a lowercase RFC 1123 subdomain"
    else:
        return "a qualified name must have at most one '/'"
    if not name:
        return "name part must be non-empty"
    if len(name) > 63:
        return "name part must be no more than 63 characters"
    if not _NAME_RE.fullmatch(name):
        return (
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character"
        )
    return None


def _label_value_ok(value: str) -> bool:
    """``validation.IsValidLabelValue``."""
    return not value or (len(value) <= 63 and _NAME_RE.fullmatch(value) is not None)


# ------------------------------------------------------------------------------ compiling


def _label_matcher(req: NodeSelectorRequirement, path: str) -> tuple[Matcher | None, list[str]]:
    """One ``matchExpressions`` entry (nodeSelectorRequirementsAsSelector + NewRequirement)."""
    errs: list[str] = []
    key, op, values = req.key, req.operator, req.values
    problem = _label_key_problem(key)
    if problem is not None:
        errs.append(f"{path}.key: Invalid value: {key!r}: {problem}")
    bound = 0
    invalid = f"{path}.values: Invalid value"
    if op in ("In", "NotIn"):
        if not values:
            errs.append(f"{invalid}: for 'in', 'notin' operators, values set can't be empty")
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(f"{invalid}: values set must be empty for exists and does not exist")
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(f"{invalid}: for 'Gt', 'Lt' operators, exactly one value is required")
        for i, v in enumerate(values):
            n = _parse_int64(v)
            if n is None:
                errs.append(
                    f"{path}.values[{i}]: Invalid value: {v!r}: for 'Gt', 'Lt' operators, "
                    "the value must be an integer"
                )
            else:
                bound = n
    else:
        return None, [f"{path}.operator: Unsupported value: {op!r}"]
    for i, v in enumerate(values):
        if not _label_value_ok(v):
            errs.append(f"{path}.values[{i}]: Invalid value: {v!r}: not a valid label value")
    if errs:
        return None, errs

    if op == "In":
        in_set = frozenset(values)
        return (lambda labels, name: labels.get(key) in in_set), []
    if op == "NotIn":
        out_set = frozenset(values)
        return (lambda labels, name: labels.get(key) not in out_set), []
    if op == "Exists":
        return (lambda labels, name: key in labels), []
    if op == "DoesNotExist":
        return (lambda labels, name: key not in labels), []

    greater = op == "Gt"

    def compare(labels: Mapping[str, str], name: str) -> bool:
        raw = labels.get(key)
        if raw is None:
            return False
        n = _parse_int64(raw)
        if n is None:
            return False
        return n > bound if greater else n < bound

    return compare, []


def _field_matcher(req: NodeSelectorRequirement, path: str) -> tuple[Matcher | None, list[str]]:
    """One ``matchFields`` entry (nodeSelectorRequirementsAsFieldSelector).

    In/NotIn with exactly one value; a Node only has ``metadata.name``, other keys read as
    ``""``. A node without a name skips field requirements, as upstream does.
    """
    op = req.operator
    if op not in ("In", "NotIn"):
        return None, [
            f"{path}.operator: Unsupported value: {op!r}: supported values: 'In', 'NotIn'"
        ]
    if len(req.values) != 1:
        return None, [f"{path}.values: Invalid value: {list(req.values)!r}: must have one element"]
    want = req.values[0]
    if req.key == _OBJECT_NAME_FIELD:
        if op == "In":
            return (lambda labels, name: not name or name == want), []
        return (lambda labels, name: not name or name != want), []
    # The field is absent on a Node, so it reads as "": the outcome is fixed.
    fixed = (want == "") == (op == "In")
    return (_match_all if fixed else (lambda labels, name: not name)), []


def _all_of(matchers: Sequence[Matcher]) -> Matcher:
    if len(matchers) == 1:
        return matchers[0]
    ms = tuple(matchers)

    def all_match(labels: Mapping[str, str], name: str) -> bool:
        for m in ms:
            if not m(labels, name):
                return False
        return True

    return all_match


def _any_of(matchers: Sequence[Matcher]) -> Matcher:
    if not matchers:
        return _match_nothing
    if len(matchers) == 1:
        return matchers[0]
    ms = tuple(matchers)

    def any_match(labels: Mapping[str, str], name: str) -> bool:
        for m in ms:
            if m(labels, name):
                return True
        return False

    return any_match


def _compile_term(term: NodeSelectorTerm, path: str) -> tuple[Matcher | None, list[str]]:
    """One NodeSelectorTerm (newNodeSelectorTerm): its requirements ANDed.

    Returns ``(None, [])`` for an empty term and ``(None, errors)`` for an invalid one.
    """
    if not term.match_expressions and not term.match_fields:
        return None, []
    matchers: list[Matcher] = []
    errs: list[str] = []
    for i, req in enumerate(term.match_expressions):
        m, e = _label_matcher(req, f"{path}.matchExpressions[{i}]")
        errs += e
        if m is not None:
            matchers.append(m)
    for i, req in enumerate(term.match_fields):
        m, e = _field_matcher(req, f"{path}.matchFields[{i}]")
        errs += e
        if m is not None:
            matchers.append(m)
    if errs:
        return None, errs
    return _all_of(matchers), []


def compile_node_selector(
    terms: Sequence[NodeSelectorTerm], path: str = ""
) -> tuple[Matcher, list[str]]:
    """Compile ``nodeSelectorTerms`` (terms ORed) like ``NewLazyErrorNodeSelector``.

    Empty terms (no requirements) and terms with parse errors never match; zero usable terms
    match no node. Returns the matcher and the parse errors (field paths under ``path``), which
    a strict caller (``NewNodeSelector``) turns into an error.
    """
    matchers: list[Matcher] = []
    errs: list[str] = []
    for i, term in enumerate(terms):
        m, e = _compile_term(
            term, f"{path}.nodeSelectorTerms[{i}]" if path else f"nodeSelectorTerms[{i}]"
        )
        errs += e
        if m is not None:
            matchers.append(m)
    return _any_of(matchers), errs


def _required_terms(pod: Pod) -> tuple[NodeSelectorTerm, ...] | None:
    affinity = pod.affinity
    if affinity is None or affinity.node_affinity is None:
        return None
    return affinity.node_affinity.required


def required_node_affinity(pod: Pod) -> Matcher:
    """The pod's ``spec.nodeSelector`` AND required node affinity, compiled
    (``nodeaffinity.GetRequiredNodeAffinity``; parse errors make a term never match)."""
    selector = tuple(pod.node_selector.items())
    terms = _required_terms(pod)
    affinity = None if terms is None else compile_node_selector(terms)[0]
    if not selector:
        return _match_all if affinity is None else affinity
    if len(selector) == 1:
        ((k, v),) = selector

        def selector_match(labels: Mapping[str, str], name: str) -> bool:
            return labels.get(k) == v

    else:

        def selector_match(labels: Mapping[str, str], name: str) -> bool:
            for k, v in selector:
                if labels.get(k) != v:
                    return False
            return True

    if affinity is None:
        return selector_match
    return _all_of((selector_match, affinity))


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
            errs = _compile_term(term, ip)[1]
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
        self._last_matcher: Matcher = _match_all

    @property
    def added_preferred(self) -> tuple[PreferredSchedulingTerm, ...]:
        """The ``addedAffinity`` preferred terms (for a Score extension point)."""
        return () if self.added_affinity is None else self.added_affinity.preferred

    def schedsim_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | PreFilterResult | None:
        """PreFilter of upstream NodeAffinity (including ``getPreFilterResult`` narrowing)."""
        terms = _required_terms(pod)
        if terms is None and self._added_required is None and not pod.node_selector:
            return _SKIP
        state[PRE_FILTER_STATE_KEY] = required_node_affinity(pod)
        if not terms:
            return None
        node_names: set[str] | None = None
        for term in terms:
            term_names: set[str] | None = None
            for req in term.match_fields:
                if req.key == _OBJECT_NAME_FIELD and req.operator == "In":
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
