"""InterPodAffinity: mirrors kube-scheduler's ``InterPodAffinity`` plugin
(pkg/scheduler/framework/plugins/interpodaffinity: filtering.go, scoring.go, plugin.go) at
1.34: PreFilter (+ AddPod/RemovePod), Filter, PreScore, Score, NormalizeScore.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from schedsim.api.core import Node, Pod, PodAffinityTerm, WeightedPodAffinityTerm
from schedsim.framework import (
    AffinityTerm,
    Code,
    CycleState,
    Handle,
    NodeInfo,
    ObjectListers,
    PodInfo,
    StateKey,
    Status,
    WeightedAffinityTerm,
)
from schedsim.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    as_kind,
    pod_events_by_assignment,
)
from schedsim.framework.pod_index import (
    NodeEntry,
    PodIndex,
    Signature,
    TermKey,
    term_key,
    term_matches,
)

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "InterPodAffinity",
    "incoming_terms",
    "pre_filter_state_by_walk",
]

NAME = "InterPodAffinity"

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)
"""Filter: an existing pod's required anti-affinity selects the pod in the node's domain."""
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
"""Filter: the pod's required affinity finds no matching pod in the node's domain."""
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
"""Filter: the pod's required anti-affinity matches a pod in the node's domain."""

_MAX_NODE_SCORE = 100
_NO_LABELS: Mapping[str, str] = {}
_PAIR_COUNTS_LIMIT = 1024  # terms counted before starting over

_SKIP = Status(Code.Skip, (), NAME)
_AFFINITY = Status(Code.UnschedulableAndUnresolvable, (ERR_REASON_AFFINITY_RULES_NOT_MATCH,), NAME)
_ANTI_AFFINITY = Status(Code.Unschedulable, (ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,), NAME)
_EXISTING_ANTI_AFFINITY = Status(
    Code.Unschedulable, (ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,), NAME
)

TopologyPair = tuple[str, str]
Counts = dict[TopologyPair, int]


# ------------------------------------------------------------------------------ terms


def _term(pod: Pod, t: PodAffinityTerm, listers: ObjectListers) -> AffinityTerm:
    """An incoming pod's term as PreFilter/PreScore use it: ``newAffinityTerm`` (no
    namespaces and no namespaceSelector = the pod's namespace) followed by
    ``mergeAffinityTermNamespacesIfNotEmpty`` (a non-empty namespaceSelector is turned into
    the names of the namespaces it selects now, then selects nothing more)."""
    namespaces = set(t.namespaces)
    if not t.namespaces and t.namespace_selector is None:
        namespaces.add(pod.namespace)
    ns_selector = t.namespace_selector
    if ns_selector is not None and not ns_selector.is_empty:
        namespaces.update(listers.namespaces_matching(ns_selector))
        ns_selector = None
    return AffinityTerm(frozenset(namespaces), t.label_selector, t.topology_key, ns_selector)


def incoming_terms(
    pod: Pod, listers: ObjectListers
) -> tuple[
    tuple[AffinityTerm, ...],
    tuple[AffinityTerm, ...],
    tuple[WeightedAffinityTerm, ...],
    tuple[WeightedAffinityTerm, ...],
]:
    """The pod's required affinity, required anti-affinity, preferred affinity and preferred
    anti-affinity terms with their namespace selectors resolved (see `_term`)."""
    aff = pod.affinity
    if aff is None:
        return (), (), (), ()

    def weighted(ts: Sequence[WeightedPodAffinityTerm]) -> tuple[WeightedAffinityTerm, ...]:
        return tuple(WeightedAffinityTerm(_term(pod, w.term, listers), w.weight) for w in ts)

    return (
        tuple(_term(pod, t, listers) for t in aff.pod_affinity_required),
        tuple(_term(pod, t, listers) for t in aff.pod_anti_affinity_required),
        weighted(aff.pod_affinity_preferred),
        weighted(aff.pod_anti_affinity_preferred),
    )


def _term_problem(t: PodAffinityTerm) -> str | None:
    """``newAffinityTerm``'s error: its label selector's, then its namespace selector's
    ``LabelSelectorAsSelector`` failure (a nil selector parses)."""
    for sel in (t.label_selector, t.namespace_selector):
        if sel is not None and sel.problem is not None:
            return sel.problem
    return None


def pod_parse_error(pod: Pod) -> str | None:
    """The error ``framework.NewPodInfo`` returns for ``pod``, or None: per term list the
    first term that fails to parse (``GetAffinityTerms`` / ``getWeightedAffinityTerms`` stop
    there), prefixed with the list's name, aggregated (``utilerrors.NewAggregate``). Only
    stored selector values that are not valid label values fail (the rest is refused when the
    pod is decoded); the messages were kept on the selectors then, so this reads no values."""
    aff = pod.affinity
    if aff is None:
        return None
    errs: list[str] = []
    for name, terms in (
        ("requiredAffinityTerms", aff.pod_affinity_required),
        ("requiredAntiAffinityTerms", aff.pod_anti_affinity_required),
        ("preferredAffinityTerms", [w.term for w in aff.pod_affinity_preferred]),
        ("preferredAntiAffinityTerms", [w.term for w in aff.pod_anti_affinity_preferred]),
    ):
        for t in terms:
            problem = _term_problem(t)
            if problem is not None:
                msg = f"{name}: {problem}"
                if msg not in errs:
                    errs.append(msg)
                break
    if not errs:
        return None
    return errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"


def _matches_all(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    """``podMatchesAllAffinityTerms`` (the incoming pod's namespace selectors are resolved,
    so no namespace labels are needed)."""
    if not terms:
        return False
    for t in terms:
        if not t.matches(pod, _NO_LABELS):
            return False
    return True


def _update(m: Counts, node: Node, key: str, value: int) -> None:
    """``topologyToMatchedTermCount.update``: entries that reach 0 are removed."""
    tv = node.labels.get(key)
    if tv is None:
        return
    pair = (key, tv)
    n = m.get(pair, 0) + value
    if n:
        m[pair] = n
    else:
        m.pop(pair, None)


def _update_with_affinity_terms(
    m: Counts, terms: Sequence[AffinityTerm], pod: Pod, node: Node, value: int
) -> None:
    if _matches_all(terms, pod):
        for t in terms:
            _update(m, node, t.topology_key, value)


def _update_with_anti_affinity_terms(
    m: Counts,
    terms: Sequence[AffinityTerm],
    pod: Pod,
    ns_labels: Mapping[str, str],
    node: Node,
    value: int,
) -> None:
    for t in terms:
        if t.matches(pod, ns_labels):
            _update(m, node, t.topology_key, value)


# ------------------------------------------------------------------------------ states


class PreFilterState:
    """What PreFilter leaves for Filter (``preFilterState``): topology pair -> count of
    existing pods whose required anti-affinity selects the pod, of existing pods matching
    all the pod's required affinity terms, and of existing pods its anti-affinity selects."""

    __slots__ = (
        "affinity",
        "affinity_counts",
        "anti_affinity",
        "anti_affinity_counts",
        "existing_anti_affinity_counts",
        "namespace_labels",
        "pod",
    )

    def __init__(
        self,
        pod: Pod,
        affinity: tuple[AffinityTerm, ...],
        anti_affinity: tuple[AffinityTerm, ...],
        namespace_labels: Mapping[str, str],
    ) -> None:
        self.pod = pod
        self.affinity = affinity
        self.anti_affinity = anti_affinity
        self.namespace_labels = namespace_labels
        self.existing_anti_affinity_counts: Counts = {}
        self.affinity_counts: Counts = {}
        self.anti_affinity_counts: Counts = {}

    def clone(self) -> PreFilterState:
        """A copy whose counts can be updated independently."""
        c = PreFilterState(self.pod, self.affinity, self.anti_affinity, self.namespace_labels)
        c.existing_anti_affinity_counts = dict(self.existing_anti_affinity_counts)
        c.affinity_counts = dict(self.affinity_counts)
        c.anti_affinity_counts = dict(self.anti_affinity_counts)
        return c

    def update_with_pod(self, pod_info: PodInfo, node: Node | None, multiplier: int) -> None:
        """``updateWithPod``: account for ``pod_info`` running on (leaving) ``node``."""
        if node is None:
            return
        _update_with_anti_affinity_terms(
            self.existing_anti_affinity_counts,
            pod_info.required_anti_affinity_terms,
            self.pod,
            self.namespace_labels,
            node,
            multiplier,
        )
        _update_with_affinity_terms(
            self.affinity_counts, self.affinity, pod_info.pod, node, multiplier
        )
        _update_with_anti_affinity_terms(
            self.anti_affinity_counts,
            self.anti_affinity,
            pod_info.pod,
            _NO_LABELS,
            node,
            multiplier,
        )


class PreScoreState:
    """What PreScore leaves for Score (``preScoreState``): topology key -> value -> score."""

    __slots__ = ("topology_score",)

    def __init__(self, topology_score: dict[str, dict[str, int]]) -> None:
        self.topology_score = topology_score


class _PairCounts:
    """(topology key, value) -> pods over every node of the `PodIndex`, for one term: the
    existing pods carrying that required anti-affinity term (``existing``), or the existing
    pods an incoming term selects (by pod signature); kept up to date from the index's entry
    changes (each changed node's old entry taken out, its new one put in), so PreFilter
    costs O(nodes changed since the term was last counted) instead of O(nodes holding such
    pods). Pairs with no pods are absent, as in a count made from scratch."""

    __slots__ = ("_anti", "_key", "_matches", "_term", "counts", "token")

    def __init__(self, term: AffinityTerm, anti: TermKey | None) -> None:
        self._term = term
        self._key = term.topology_key
        self._anti = anti  # the existing pods' term key (existing mode), else None
        self._matches: dict[Signature, bool] = {}
        self.counts: Counts = {}
        self.token: object = None

    def current(self, index: PodIndex) -> Counts:
        """The counts as of ``index``'s last refresh (read them, never change them)."""
        token, changes = index.entry_changes_since(self.token)
        if changes is None:
            self.counts = {}
            self.token, entries = index.entries()
            for e in entries.values():
                self._apply(e, 1)
            return self.counts
        for _, old, new in changes:
            if old is not None:
                self._apply(old, -1)
            if new is not None:
                self._apply(new, 1)
        self.token = token
        return self.counts

    def _pods(self, e: NodeEntry) -> int:
        if self._anti is not None:
            hit = e.anti.get(self._anti)
            return 0 if hit is None else hit[1]
        n = 0
        matches = self._matches
        for sig, cnt in e.sigs.items():
            m = matches.get(sig)
            if m is None:
                m = matches[sig] = term_matches(self._term, sig[0], dict(sig[1]), _NO_LABELS)
            if m:
                n += cnt
        return n

    def _apply(self, e: NodeEntry, sign: int) -> None:
        n = self._pods(e)
        if not n:
            return
        tv = e.labels.get(self._key)
        if tv is None:
            return
        pair = (self._key, tv)
        v = self.counts.get(pair, 0) + sign * n
        if v:
            self.counts[pair] = v
        else:
            del self.counts[pair]


def _merge(into: Counts, counts: Counts) -> None:
    """Add ``counts`` into ``into``."""
    if not into:
        into.update(counts)
        return
    for pair, n in counts.items():
        into[pair] = into.get(pair, 0) + n


class _ScoreClass:
    """PreScore's topology score map for one class of incoming pods (namespace, labels, its
    namespace's labels, its preferred terms: everything the map depends on), kept up to date
    from the `PodIndex` entry changes since ``token``: each changed node's old contributions
    are taken out and its new ones put in, so a pod of a known class costs O(nodes changed
    since its class last scored), not O(existing pods with terms)."""

    __slots__ = ("contributions", "hits", "ns_labels", "pod", "preferred", "score", "token")

    def __init__(
        self,
        pod: Pod,
        ns_labels: Mapping[str, str],
        preferred: tuple[tuple[WeightedAffinityTerm, int], ...],
    ) -> None:
        self.pod = pod  # a pod of the class (its namespace and labels)
        self.ns_labels = ns_labels
        self.preferred = preferred  # (term, +1 affinity / -1 anti-affinity)
        self.score: dict[str, dict[str, int]] = {}
        # how many additions made `score` (upstream Skips when there were none, even if
        # they summed to zero)
        self.contributions = 0
        self.token: object = None
        # signature -> (topology key, signed weight) of the class's preferred terms that
        # select pods of that signature
        self.hits: dict[Signature, tuple[tuple[str, int], ...]] = {}

    def rebuild(self, index: PodIndex, hard_weight: int) -> None:
        self.score = {}
        self.contributions = 0
        self.token, entries = index.entries()
        for e in entries.values():
            self.apply(e, 1, hard_weight)

    def update(self, index: PodIndex, hard_weight: int) -> None:
        token, changes = index.entry_changes_since(self.token)
        if changes is None:
            self.rebuild(index, hard_weight)
            return
        for _, old, new in changes:
            if old is not None:
                self.apply(old, -1, hard_weight)
            if new is not None:
                self.apply(new, 1, hard_weight)
        self.token = token

    def _hits(self, sig: Signature) -> tuple[tuple[str, int], ...]:
        hits = self.hits.get(sig)
        if hits is None:
            labels = dict(sig[1])
            hits = self.hits[sig] = tuple(
                (w.term.topology_key, w.weight * sign)
                for w, sign in self.preferred
                if term_matches(w.term, sig[0], labels, _NO_LABELS)
            )
        return hits

    def apply(self, e: NodeEntry, sign: int, hard_weight: int) -> None:
        """Add (``sign`` 1) or take out (-1) the contributions of one node's entry: the
        class's preferred terms against the node's pods (by signature), and the node's pods'
        terms selecting the class (processExistingPod; a node without labels adds nothing)."""
        labels = e.labels
        if not labels:
            return
        score = self.score
        n = 0

        def add(key: str, value: int) -> None:
            nonlocal n
            tv = labels.get(key)
            if tv is not None:
                n += 1
                m = score.get(key)
                if m is None:
                    m = score[key] = {}
                v = m.get(tv, 0) + value
                if v:
                    m[tv] = v
                else:
                    del m[tv]
                    if not m:
                        del score[key]

        if self.preferred:
            for sig, cnt in e.sigs.items():
                for key, value in self._hits(sig):
                    add(key, sign * value * cnt)
        if e.score_pods:
            pod = self.pod
            pod_ns, pod_labels, ns_labels = pod.namespace, pod.labels, self.ns_labels
            for epi in e.score_pods:
                if hard_weight > 0:
                    for t in epi.required_affinity_terms:
                        if term_matches(t, pod_ns, pod_labels, ns_labels):
                            add(t.topology_key, sign * hard_weight)
                for w in epi.preferred_affinity_terms:
                    if term_matches(w.term, pod_ns, pod_labels, ns_labels):
                        add(w.term.topology_key, sign * w.weight)
                for w in epi.preferred_anti_affinity_terms:
                    if term_matches(w.term, pod_ns, pod_labels, ns_labels):
                        add(w.term.topology_key, -sign * w.weight)
        self.contributions += sign * n


_SCORE_CLASSES = 64  # classes of incoming pods whose score maps are kept (least recent out)

PRE_FILTER_STATE_KEY: StateKey[PreFilterState] = StateKey("PreFilter" + NAME)
PRE_SCORE_STATE_KEY: StateKey[PreScoreState] = StateKey("PreScore" + NAME)

_NO_PRE_FILTER_STATE = Status(
    Code.Error, (f'error reading "{PRE_FILTER_STATE_KEY.name}" from cycleState: not found',), NAME
)
_NO_PRE_SCORE_STATE = Status(
    Code.Error, (f'error reading "{PRE_SCORE_STATE_KEY.name}" from cycleState: not found',), NAME
)


# ------------------------------------------------------------------------------ args

_ARGS_KEYS = frozenset(
    {"apiVersion", "kind", "hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"}
)


def _decode_args(args: Mapping[str, Any]) -> tuple[int, bool]:
    """InterPodAffinityArgs -> (hardPodAffinityWeight, ignorePreferredTermsOfExistingPods),
    with the v1 defaults (1, false) and ``ValidateInterPodAffinityArgs``; raises ValueError."""
    unknown = sorted(str(k) for k in args if k not in _ARGS_KEYS)
    if unknown:
        raise ValueError(f"args: unknown field(s) {', '.join(unknown)}")
    kind = args.get("kind")
    if kind is not None and kind != "InterPodAffinityArgs":
        raise ValueError(f"args.kind: expected InterPodAffinityArgs, got {kind!r}")
    weight = args.get("hardPodAffinityWeight")
    if weight is None:
        weight = 1
    if isinstance(weight, bool) or not isinstance(weight, int):
        raise ValueError(f"hardPodAffinityWeight: expected an integer, got {type(weight).__name__}")
    if not 0 <= weight <= 100:
        raise ValueError(
            f"hardPodAffinityWeight: Invalid value: {weight}: not in valid range [0, 100]"
        )
    ignore = args.get("ignorePreferredTermsOfExistingPods", False)
    if not isinstance(ignore, bool):
        raise ValueError(
            f"ignorePreferredTermsOfExistingPods: expected a boolean, got {type(ignore).__name__}"
        )
    return weight, ignore


# ------------------------------------------------------------------------------ plugin


class InterPodAffinity:
    """Mirrors kube-scheduler's ``InterPodAffinity`` plugin (1.34).

    Terms: a term without namespaces and namespaceSelector applies to the pod's own
    namespace; the incoming pod's non-empty namespaceSelectors are resolved to namespace
    names (an empty one selects every namespace); existing pods' terms are matched with the
    incoming pod's namespace labels. matchLabelKeys/mismatchLabelKeys are already merged into
    the label selectors when pods are read (the API server does it at creation in 1.34).

    PreFilter: counts, per topology pair, existing pods whose required anti-affinity selects
    the pod, pods matching all the pod's required affinity terms, and pods its required
    anti-affinity selects; Skip when the pod has no required terms and no existing pod's
    anti-affinity selects it. Filter, in this order: a node lacking an affinity topology key,
    or whose domain has no matching pod (unless no pod matches anywhere and the pod matches
    its own terms) -> UnschedulableAndUnresolvable "node(s) didn't match pod affinity rules";
    a matching pod in the domain of an anti-affinity term -> Unschedulable "node(s) didn't
    match pod anti-affinity rules"; the node in the domain of an existing pod's anti-affinity
    that selects the pod -> Unschedulable "node(s) didn't satisfy existing pods anti-affinity
    rules". AddPod/RemovePod update the counts for preemption's dry runs.

    Score: per topology pair, + weight for each existing pod matching a preferred affinity
    term of the pod, - weight for each matching a preferred anti-affinity term; + the
    existing pods' preferred (anti-)affinity weights for terms selecting the pod and
    ``hardPodAffinityWeight`` for their required affinity terms selecting it. PreScore Skips
    when there is nothing to score. NormalizeScore: ``100 * (s - min) / (max - min)``
    truncated (0 for all when max == min).

    Args (InterPodAffinityArgs): ``hardPodAffinityWeight`` (0-100, default 1),
    ``ignorePreferredTermsOfExistingPods`` (default false: with true, a pod without
    preferred terms is not scored).
    """

    name: ClassVar[str] = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.hard_pod_affinity_weight, self.ignore_preferred_terms_of_existing_pods = _decode_args(
            args
        )
        self._handle = handle
        # shared with the other plugins of the framework: refreshed once per pod
        self.index = handle.pod_index
        # PreScore's score maps by class of incoming pod (`_ScoreClass`), least recent first
        self._score_classes: dict[tuple[object, ...], _ScoreClass] = {}
        # PreFilter's (anti-)affinity counts per term (`_PairCounts`)
        self._pairs: dict[tuple[str, TermKey], _PairCounts] = {}

    # -------------------------------------------------------------- queueing hints

    def events_to_register(self) -> tuple[ClusterEventWithHint, ...]:
        """``EventsToRegister`` (plugin.go, 1.34, SchedulerQueueingHints on): pod Add,
        UpdatePodLabel and Delete with `is_schedulable_after_pod_change`, Node Add and
        UpdateNodeLabel with `is_schedulable_after_node_change`.

        Upstream registers ``Pod`` and its hint skips a pod without ``spec.nodeName``; a pod
        the simulation placed keeps an empty ``spec.nodeName`` (its node is the snapshot's),
        so schedsim registers the assigned and the unscheduled pods' events apart:
        ``AssignedPod`` with the hint, ``UnscheduledPod`` with
        `is_schedulable_after_unscheduled_pod_change` (only the pending pod itself)."""
        pod_actions = ActionType.Add | ActionType.UpdatePodLabel | ActionType.Delete
        return (
            *pod_events_by_assignment(
                pod_actions,
                self.is_schedulable_after_pod_change,
                self.is_schedulable_after_unscheduled_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
                self.is_schedulable_after_node_change,
            ),
        )

    def is_schedulable_after_pod_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """``isSchedulableAfterPodChange`` for an assigned pod: an added pod queues when it
        matches all of the pending pod's required affinity terms; an update when it starts
        matching them all, or stops matching all of its required anti-affinity terms; a
        deletion when the deleted pod matched all the anti-affinity terms, or one of its own
        required anti-affinity terms selected the pending pod. An object of the wrong type:
        Queue."""
        typed = as_kind(Pod, old, new)
        if typed is None:
            return QueueingHint.Queue
        original, modified = typed
        listers = self._handle.object_listers
        terms, anti_terms, _, _ = incoming_terms(pod, listers)
        if isinstance(original, Pod) and isinstance(modified, Pod):
            if not _matches_all(terms, original) and _matches_all(terms, modified):
                return QueueingHint.Queue
            if _matches_all(anti_terms, original) and not _matches_all(anti_terms, modified):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
        if isinstance(modified, Pod):
            return QueueingHint.Queue if _matches_all(terms, modified) else QueueingHint.QueueSkip
        assert isinstance(original, Pod)
        if _matches_all(anti_terms, original):
            return QueueingHint.Queue
        _, its_anti_terms, _, _ = incoming_terms(original, listers)
        if any(t.matches(pod, _NO_LABELS) for t in its_anti_terms):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_unscheduled_pod_change(
        self, pod: Pod, old: object, new: object
    ) -> QueueingHint:
        """``isSchedulableAfterPodChange`` for an unscheduled pod: only the pending pod's own
        update (same UID) queues (its labels changed, so other pods' anti-affinity may no
        longer select it); another unscheduled pod takes no place in any domain."""
        typed = as_kind(Pod, old, new)
        if typed is None:
            return QueueingHint.Queue
        modified = typed[1]
        if isinstance(modified, Pod) and modified.uid == pod.uid:
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_node_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """``isSchedulableAfterNodeChange``: for a required affinity term, queue an added
        node with its topology key, or an update that adds the key or changes its value; for
        a required anti-affinity term, queue any added node, or an update that removes the
        key or changes its value. An object of the wrong type: Queue."""
        typed = as_kind(Node, old, new)
        if typed is None or typed[1] is None:
            return QueueingHint.Queue
        original, modified = typed
        assert isinstance(modified, Node)
        terms, anti_terms, _, _ = incoming_terms(pod, self._handle.object_listers)
        after = modified.labels
        before = original.labels if isinstance(original, Node) else None
        for t in terms:
            if before is None:
                if t.topology_key in after:
                    return QueueingHint.Queue
            elif t.topology_key in after and before.get(t.topology_key) != after[t.topology_key]:
                return QueueingHint.Queue
        for t in anti_terms:
            if before is None:
                return QueueingHint.Queue
            if t.topology_key in before and before[t.topology_key] != after.get(t.topology_key):
                return QueueingHint.Queue
        return QueueingHint.QueueSkip

    # -------------------------------------------------------------- PreFilter / Filter

    def schedsim_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """PreFilter of upstream InterPodAffinity, counted through the handle's `PodIndex`
        (the same counts as `pre_filter_state_by_walk`, without walking every pod)."""
        if pod.affinity is not None:
            err = pod_parse_error(pod)
            if err is not None:
                # framework.NewPodInfo fails: "parsing pod: %+v", before any Skip
                return Status(Code.UnschedulableAndUnresolvable, (f"parsing pod: {err}",), NAME)
        else:  # no terms: the Skip below, decided without building them (CA's simulations)
            bound = self._handle.shared_lister.delegate
            if (
                bound is not None
                and not bound.node_infos().have_pods_with_required_anti_affinity_list()
            ):
                return _SKIP
        listers = self._handle.object_listers
        affinity, anti_affinity, _, _ = incoming_terms(pod, listers)
        bound = self._handle.shared_lister.delegate
        if (
            not affinity
            and not anti_affinity
            and bound is not None
            and not bound.node_infos().have_pods_with_required_anti_affinity_list()
        ):
            # upstream counts existing anti-affinity over HavePodsWithRequiredAntiAffinityList
            # and Skips when nothing counts: no index refresh (the stores cache that list)
            return _SKIP
        ns_labels = listers.namespace_labels(pod.namespace) or _NO_LABELS
        s = PreFilterState(pod, affinity, anti_affinity, ns_labels)
        idx = self.index
        idx.refresh(nodes, None if bound is None else bound.node_infos())
        node_labels = idx.node_labels

        existing = s.existing_anti_affinity_counts
        for k in idx.anti_terms_for(pod.labels):
            t, holders = idx.anti_terms[k]
            if holders and term_matches(t, pod.namespace, pod.labels, ns_labels):
                _merge(existing, self._pair_counts(("existing", k), t, k))
        if affinity:
            aff_counts = s.affinity_counts
            for sig in idx.signatures_for(affinity[0].selector):
                per_node = idx.sig_nodes.get(sig)
                if not per_node:
                    continue
                labels = idx.sig_labels[sig]
                if all(term_matches(t, sig[0], labels, _NO_LABELS) for t in affinity):
                    for t in affinity:
                        _add_counts(aff_counts, t.topology_key, per_node, node_labels)
        for t in anti_affinity:
            _merge(s.anti_affinity_counts, self._pair_counts(("incoming", term_key(t)), t, None))
        if not existing and not affinity and not anti_affinity:
            return _SKIP
        state[PRE_FILTER_STATE_KEY] = s
        return None

    def _pair_counts(
        self, key: tuple[str, TermKey], t: AffinityTerm, anti: TermKey | None
    ) -> Counts:
        """`_PairCounts` of ``t`` (the existing pods' term ``anti``, or an incoming term),
        brought up to date with the refreshed index."""
        pc = self._pairs.get(key)
        if pc is None:
            if len(self._pairs) >= _PAIR_COUNTS_LIMIT:
                self._pairs.clear()
            pc = self._pairs[key] = _PairCounts(t, anti)
        return pc.current(self.index)

    def filter_topology_keys(self, state: CycleState) -> tuple[str, ...] | None:
        """The node labels Filter reads for this attempt, or None without a PreFilter state:
        the incoming terms' topology keys and those of the existing anti-affinity counts
        (a node fails on one of its label pairs that has a count). The verdict on a node is
        a function of those label values and ``state`` alone, which lets the scheduler's
        class cache run Filter once per distinct value tuple
        (`schedsim.scheduler.cache.ResultCache`)."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return None
        keys = {t.topology_key for t in s.affinity}
        keys.update(t.topology_key for t in s.anti_affinity)
        keys.update(k for k, _ in s.existing_anti_affinity_counts)
        return tuple(sorted(keys))

    def schedsim_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Filter of upstream InterPodAffinity."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return _NO_PRE_FILTER_STATE
        node = node_info.node
        labels = node.labels if node is not None else _NO_LABELS
        if not _satisfies_pod_affinity(s, labels):
            return _AFFINITY
        counts = s.anti_affinity_counts
        if counts:
            for t in s.anti_affinity:
                tv = labels.get(t.topology_key)
                if tv is not None and counts.get((t.topology_key, tv), 0) > 0:
                    return _ANTI_AFFINITY
        counts = s.existing_anti_affinity_counts
        if counts:
            for pair in labels.items():
                if counts.get(pair, 0) > 0:
                    return _EXISTING_ANTI_AFFINITY
        return None

    def schedsim_pre_filter_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status | None:
        """AddPod of upstream InterPodAffinity's PreFilterExtensions."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return _NO_PRE_FILTER_STATE
        s.update_with_pod(pod_info_to_add, node_info.node, 1)
        return None

    def schedsim_pre_filter_remove_pod(
        self,
        state: CycleState,
        pod_to_schedule: Pod,
        pod_info_to_remove: PodInfo,
        node_info: NodeInfo,
    ) -> Status | None:
        """RemovePod of upstream InterPodAffinity's PreFilterExtensions."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return _NO_PRE_FILTER_STATE
        s.update_with_pod(pod_info_to_remove, node_info.node, -1)
        return None

    # -------------------------------------------------------------- PreScore / Score

    def schedsim_pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        """PreScore of upstream InterPodAffinity, through the handle's `PodIndex`."""
        if not nodes:
            return _SKIP
        lister = self._handle.shared_lister
        aff = pod.affinity
        has_constraints = aff is not None and bool(
            aff.pod_affinity_preferred or aff.pod_anti_affinity_preferred
        )
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return _SKIP
        if aff is not None:
            err = pod_parse_error(pod)
            if err is not None:
                # framework.NewPodInfo fails (AsStatus: Error). Upstream lists the nodes first
                # and, without preferred terms, goes on with none rather than Skipping
                return Status(Code.Error, (f"failed to parse pod: {err}",), NAME)
        node_infos = lister.node_infos()
        if not has_constraints and not node_infos.have_pods_with_affinity_list():
            # upstream then visits only HavePodsWithAffinityList: no score, Skip (no refresh)
            return _SKIP
        idx = self.index
        idx.refresh(node_infos.list(), node_infos)
        listers = self._handle.object_listers
        _, _, preferred, preferred_anti = incoming_terms(pod, listers)
        ns_labels = listers.namespace_labels(pod.namespace) or _NO_LABELS
        key = (
            pod.namespace,
            frozenset(pod.labels.items()),
            frozenset(ns_labels.items()),
            tuple((term_key(w.term), w.weight) for w in preferred),
            tuple((term_key(w.term), w.weight) for w in preferred_anti),
        )
        classes = self._score_classes
        c = classes.pop(key, None)
        if c is None:
            terms = tuple((w, 1) for w in preferred) + tuple((w, -1) for w in preferred_anti)
            c = _ScoreClass(pod, ns_labels, terms)
            c.rebuild(idx, self.hard_pod_affinity_weight)
            if len(classes) >= _SCORE_CLASSES:
                del classes[next(iter(classes))]
        else:
            c.update(idx, self.hard_pod_affinity_weight)
        classes[key] = c  # most recent last
        if not c.contributions:
            return _SKIP
        # a copy: the class's map moves on with the next pods, the cycle's state must not
        state[PRE_SCORE_STATE_KEY] = PreScoreState({k: dict(v) for k, v in c.score.items()})
        return None

    def schedsim_score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        """Score of upstream InterPodAffinity: the sum of the node's topology pairs' scores."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return _NO_PRE_SCORE_STATE
        node = node_info.node
        if node is None:
            return 0
        labels = node.labels
        total = 0
        for key, values in s.topology_score.items():
            v = labels.get(key)
            if v is not None:
                total += values.get(v, 0)
        return total

    def schedsim_normalize_score(
        self, state: CycleState, pod: Pod, scores: dict[str, int]
    ) -> Status | None:
        """NormalizeScore of upstream InterPodAffinity (min-max to [0, 100], truncated)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return _NO_PRE_SCORE_STATE
        if not s.topology_score or not scores:
            return None
        lo = min(scores.values())
        hi = max(scores.values())
        diff = hi - lo
        for name, score in scores.items():
            scores[name] = int(_MAX_NODE_SCORE * ((score - lo) / diff)) if diff > 0 else 0
        return None


def pre_filter_state_by_walk(
    pod: Pod, nodes: Sequence[NodeInfo], listers: ObjectListers
) -> PreFilterState:
    """PreFilter's counts the way upstream computes them, walking every pod of every node
    (the reference `InterPodAffinity.schedsim_pre_filter`'s index must agree with)."""
    affinity, anti_affinity, _, _ = incoming_terms(pod, listers)
    ns_labels = listers.namespace_labels(pod.namespace) or _NO_LABELS
    s = PreFilterState(pod, affinity, anti_affinity, ns_labels)
    for ni in nodes:
        node = ni.node
        if node is None:
            continue
        for epi in ni.pods_with_required_anti_affinity:
            _update_with_anti_affinity_terms(
                s.existing_anti_affinity_counts,
                epi.required_anti_affinity_terms,
                pod,
                ns_labels,
                node,
                1,
            )
        for epi in ni.pods:
            _update_with_affinity_terms(s.affinity_counts, affinity, epi.pod, node, 1)
            _update_with_anti_affinity_terms(
                s.anti_affinity_counts, anti_affinity, epi.pod, _NO_LABELS, node, 1
            )
    return s


def _add_counts(
    m: Counts, key: str, per_node: Mapping[str, int], node_labels: Mapping[str, Mapping[str, str]]
) -> None:
    """Add each node's count to its (key, value) pair, for nodes with the key."""
    for name, cnt in per_node.items():
        tv = node_labels[name].get(key)
        if tv is not None:
            pair = (key, tv)
            m[pair] = m.get(pair, 0) + cnt


def _satisfies_pod_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    """``satisfyPodAffinity``."""
    pods_exist = True
    counts = s.affinity_counts
    for t in s.affinity:
        tv = labels.get(t.topology_key)
        if tv is None:
            return False  # all topology labels must exist on the node
        if counts.get((t.topology_key, tv), 0) <= 0:
            pods_exist = False
    if not pods_exist:
        # the first pod of a series with affinity to itself may go anywhere with the keys
        return not counts and _matches_all(s.affinity, s.pod)
    return True
