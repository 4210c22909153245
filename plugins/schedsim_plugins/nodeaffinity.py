"""NodeAffinity: mirrors kube-scheduler's ``NodeAffinity`` plugin
(pkg/scheduler/framework/plugins/nodeaffinity: PreFilter, Filter, PreScore, Score,
NormalizeScore) and the matching rules of k8s.io/component-helpers/scheduling/corev1/nodeaffinity.

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
    Pod,
    PreferredSchedulingTerm,
)
from schedsim.api.core.nodeaffinity import (
    OBJECT_NAME_FIELD,
    Matcher,
    compile_node_selector,
    compile_term,
    match_all,
    required_node_affinity,
    required_terms,
)
from schedsim.framework import (
    MAX_NODE_SCORE,
    Code,
    CycleState,
    Handle,
    NodeInfo,
    PreFilterResult,
    StateKey,
    Status,
)
from schedsim.framework.args import NodeAffinityArgs
from schedsim_plugins.normalize import default_normalize_score

__all__ = [
    "ERR_REASON_CONFLICT",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_POD",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "Matcher",
    "NodeAffinity",
    "PreferredTerms",
    "compile_node_selector",
    "compile_preferred_terms",
    "preferred_score",
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

PreferredTerms = tuple[tuple[int, Matcher], ...]
"""Compiled preferred terms: ``(weight, matcher)`` for each term that counts."""

PRE_SCORE_STATE_KEY: StateKey[PreferredTerms] = StateKey("PreScore" + NAME)
"""The pod's compiled preferred node affinity terms (``preScoreStateKey``)."""

_SKIP = Status(Code.Skip, (), NAME)
_POD_MISMATCH = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_POD,), NAME)
_ENFORCED_MISMATCH = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_ENFORCED,), NAME)
_CONFLICT = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_CONFLICT,), NAME)
_NODE_NOT_FOUND = Status(Code.Error, ("node not found",), NAME)


# ------------------------------------------------------------------------------ scoring


def compile_preferred_terms(
    terms: Sequence[PreferredSchedulingTerm], path: str = ""
) -> tuple[PreferredTerms, list[str]]:
    """Compile preferred terms like ``nodeaffinity.NewPreferredSchedulingTerms``: terms with
    weight 0 or without requirements are left out; returns the terms and the parse errors
    (field paths under ``path``)."""
    out: list[tuple[int, Matcher]] = []
    errs: list[str] = []
    for i, t in enumerate(terms):
        if t.weight == 0:
            continue
        m, e = compile_term(t.preference, f"{path}[{i}]")
        errs += e
        if m is not None:
            out.append((t.weight, m))
    return tuple(out), errs


def preferred_score(terms: PreferredTerms, labels: Mapping[str, str], name: str) -> int:
    """The sum of the weights of the terms the node matches (``PreferredSchedulingTerms.Score``)."""
    score = 0
    for weight, matches in terms:
        if matches(labels, name):
            score += weight
    return score


def _pod_preferred(pod: Pod) -> tuple[PreferredTerms, list[str]]:
    """The pod's preferred node affinity, compiled once per (immutable) pod object."""
    affinity = pod.affinity
    na = None if affinity is None else affinity.node_affinity
    if na is None or not na.preferred:
        return (), []
    return pod.memo(
        (NAME, "preferred"),
        lambda: compile_preferred_terms(na.preferred),
    )


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

    PreScore: Skip when neither the pod nor ``addedAffinity`` has preferred terms (a pod
    whose list of preferred terms is empty counts as having none); else compile the pod's
    preferred terms into the cycle state (an invalid one is an Error). Score: the sum of the
    weights of the matching preferred terms, the pod's and ``addedAffinity``'s.
    NormalizeScore: ``DefaultNormalizeScore(100)``, ``100 * score / max``.

    Args (`NodeAffinityArgs`): ``addedAffinity``, a v1 NodeAffinity every pod must also
    satisfy (its preferred terms are validated and kept in `added_preferred` for scoring).

    Raises:
        ArgsError: invalid args (see `NodeAffinityArgs.from_mapping`).
    """

    name: ClassVar[str] = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.args = NodeAffinityArgs.from_mapping(args)
        self.added_affinity: NodeAffinitySpec | None = self.args.added_affinity
        self._added_required: Matcher | None = None
        if self.added_affinity is not None and self.added_affinity.required is not None:
            self._added_required = compile_node_selector(self.added_affinity.required)[0]
        self._added_preferred_terms = compile_preferred_terms(self.added_preferred)[0]
        # Filter without PreFilter: the last pod's compiled selector, reused by identity.
        self._last_pod: Pod | None = None
        self._last_matcher: Matcher = match_all

    @property
    def added_preferred(self) -> tuple[PreferredSchedulingTerm, ...]:
        """The ``addedAffinity`` preferred terms (for a Score extension point)."""
        return () if self.added_affinity is None else self.added_affinity.preferred

    def pre_filter_reusable(self, pod: Pod) -> bool:
        """PreFilter reads the pod's node selector and required terms and the plugin's
        ``addedAffinity`` only (`schedsim.framework.pre_filter_reuse`)."""
        del pod
        return True

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

    def schedsim_pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """PreScore of upstream NodeAffinity."""
        if not nodes:
            return None
        terms, errs = _pod_preferred(pod)
        if errs:
            return Status(Code.Error, ("; ".join(errs),), NAME)
        if not terms and not self.added_preferred and not _has_preferred(pod):
            return _SKIP
        state[PRE_SCORE_STATE_KEY] = terms
        return None

    def schedsim_score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        """Score of upstream NodeAffinity (without PreScore the pod's terms are compiled
        here)."""
        node = node_info.node
        if node is None:
            return _NODE_NOT_FOUND
        terms = state.get(PRE_SCORE_STATE_KEY)
        if terms is None:
            terms, errs = _pod_preferred(pod)
            if errs:
                return Status(Code.Error, ("; ".join(errs),), NAME)
        labels = node.labels
        score = preferred_score(terms, labels, node.name) if terms else 0
        if self._added_preferred_terms:
            score += preferred_score(self._added_preferred_terms, labels, node.name)
        return score

    def schedsim_normalize_score(
        self, state: CycleState, pod: Pod, scores: dict[str, int]
    ) -> Status | None:
        """NormalizeScore of upstream NodeAffinity: ``DefaultNormalizeScore(100, false)``."""
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None


def _has_preferred(pod: Pod) -> bool:
    affinity = pod.affinity
    na = None if affinity is None else affinity.node_affinity
    return na is not None and bool(na.preferred)
