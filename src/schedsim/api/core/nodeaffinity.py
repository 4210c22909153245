"""Node selector matching, mirroring k8s.io/component-helpers/scheduling/corev1/nodeaffinity.

Selectors are compiled once into plain closures over ``(node labels, node name)``: the
NodeAffinity plugin calls them per node, the DRA snapshot uses them for allocation node
selectors. Invalid requirements make their term never match (``NewLazyErrorNodeSelector``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from schedsim.api.core import NodeSelectorRequirement, NodeSelectorTerm, Pod
from schedsim.api.errors import go_value
from schedsim.api.labels import label_value_ok, qualified_name_problem

__all__ = [
    "OBJECT_NAME_FIELD",
    "Matcher",
    "compile_node_selector",
    "compile_term",
    "match_all",
    "node_matches",
    "required_node_affinity",
    "required_terms",
]

OBJECT_NAME_FIELD = "metadata.name"
"""metav1.ObjectNameField: the only field a Node exposes to ``matchFields``."""

Matcher = Callable[[Mapping[str, str], str], bool]
"""A compiled selector: ``matcher(node_labels, node_name) -> matches``."""


def match_all(labels: Mapping[str, str], name: str) -> bool:
    """The matcher of an absent selector: every node."""
    return True


def _match_nothing(labels: Mapping[str, str], name: str) -> bool:
    return False


# ------------------------------------------------------------------------------ validation
# apimachinery's label validation, as labels.NewRequirement applies it.

_INT_RE = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _parse_int64(s: str) -> int | None:
    """``strconv.ParseInt(s, 10, 64)``: None when Go would fail."""
    if not _INT_RE.fullmatch(s):
        return None
    n = int(s)
    return n if _INT64_MIN <= n <= _INT64_MAX else None


# ------------------------------------------------------------------------------ compiling


def _label_matcher(req: NodeSelectorRequirement, path: str) -> tuple[Matcher | None, list[str]]:
    """One ``matchExpressions`` entry (nodeSelectorRequirementsAsSelector + NewRequirement)."""
    errs: list[str] = []
    key, op, values = req.key, req.operator, req.values
    problem = qualified_name_problem(key)
    if problem is not None:
        errs.append(f"{path}.key: Invalid value: {go_value(key)}: {problem}")
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
                    f"{path}.values[{i}]: Invalid value: {go_value(v)}: for 'Gt', 'Lt' operators, "
                    "the value must be an integer"
                )
            else:
                bound = n
    else:
        return None, [f"{path}.operator: Unsupported value: {go_value(op)}"]
    for i, v in enumerate(values):
        if not label_value_ok(v):
            errs.append(
                f"{path}.values[{i}]: Invalid value: {go_value(v)}: not a valid label value"
            )
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
            f'{path}.operator: Unsupported value: {go_value(op)}: supported values: "In", "NotIn"'
        ]
    if len(req.values) != 1:
        values = ", ".join(go_value(v) for v in req.values)
        return None, [f"{path}.values: Invalid value: []string{{{values}}}: must have one element"]
    want = req.values[0]
    if req.key == OBJECT_NAME_FIELD:
        if op == "In":
            return (lambda labels, name: not name or name == want), []
        return (lambda labels, name: not name or name != want), []
    # The field is absent on a Node, so it reads as "": the outcome is fixed.
    fixed = (want == "") == (op == "In")
    return (match_all if fixed else (lambda labels, name: not name)), []


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


def compile_term(term: NodeSelectorTerm, path: str) -> tuple[Matcher | None, list[str]]:
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
        m, e = compile_term(
            term, f"{path}.nodeSelectorTerms[{i}]" if path else f"nodeSelectorTerms[{i}]"
        )
        errs += e
        if m is not None:
            matchers.append(m)
    return _any_of(matchers), errs


def required_terms(pod: Pod) -> tuple[NodeSelectorTerm, ...] | None:
    """The pod's required node affinity terms, or None when it sets none."""
    affinity = pod.affinity
    if affinity is None or affinity.node_affinity is None:
        return None
    return affinity.node_affinity.required


def required_node_affinity(pod: Pod) -> Matcher:
    """The pod's ``spec.nodeSelector`` AND required node affinity, compiled
    (``nodeaffinity.GetRequiredNodeAffinity``; parse errors make a term never match)."""
    selector = tuple(pod.node_selector.items())
    terms = required_terms(pod)
    affinity = None if terms is None else compile_node_selector(terms)[0]
    if not selector:
        return match_all if affinity is None else affinity
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


def node_matches(terms: Sequence[NodeSelectorTerm], labels: Mapping[str, str], name: str) -> bool:
    """Whether a node (its labels and name) matches ``terms`` (``MatchNodeSelectorTerms``).

    Compiles on every call: for repeated use keep the matcher of `compile_node_selector`.
    """
    return compile_node_selector(terms)[0](labels, name)
