"""An incremental index of a snapshot's pods for PodTopologySpread and InterPodAffinity,
kept across the pods a framework schedules.

Upstream counts matching pods by walking every pod of every node in every PreFilter (spread
counts, InterPodAffinity's incoming (anti-)affinity) and every pod with required
anti-affinity (existing pods' anti-affinity), so the cost per pod grows with the pods already
placed. `PodIndex` keeps, per node name, what the plugin
needs from the node together with the NodeInfo's generation (bumped on every mutation; a
reverted fork brings back the old object with its old generation), and rebuilds a node's
entry only when the generation differs. Global tables aggregate the entries:

* pod signatures ``(namespace, labels, terminating)`` -> node name -> how many pods (a
  terminating pod has a deletionTimestamp; PodTopologySpread does not count it); pods with one
  signature are alike for every label selector, so a selector is evaluated once per
  signature, and only for the signatures that carry one of its ``matchLabels`` pairs (or one
  value of a single-key ``In``) when it has one;
* existing pods' required anti-affinity terms, grouped by their content -> node name -> how
  many pods carry them, indexed the same way by the label pairs their selectors require;
* per node, the pods whose terms PreScore reads from existing pods (required affinity with
  a hard weight, preferred affinity or anti-affinity).

A PreFilter then costs O(nodes) generation checks (O(changed nodes) when the snapshot's
lister keeps a change journal, see `PodIndex.refresh`) plus the matching signatures and terms,
not O(pods). Memory: O(pods' distinct signatures and terms + nodes).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from operator import attrgetter

from schedsim.api.labels import LabelSelector
from schedsim.api.positions import differences
from schedsim.framework.interface import NodeInfo, NodeInfoLister, PodInfo
from schedsim.framework.types import AffinityTerm

__all__ = [
    "EntryChange",
    "NodeEntry",
    "PodIndex",
    "Signature",
    "TermKey",
    "index_pairs",
    "term_key",
    "term_matches",
]

Signature = tuple[str, frozenset[tuple[str, str]], bool]
"""``(namespace, labels, terminating)`` of a pod."""

TermKey = tuple[object, ...]
"""A hashable identity of an affinity term's content."""

_NO_LABELS: Mapping[str, str] = {}
_GENERATION = attrgetter("generation")
_LOG_LIMIT = 1 << 16


def term_key(t: AffinityTerm) -> TermKey:
    """The content of ``t`` as a hashable value (terms of sibling pods are equal)."""
    return (
        t.namespaces,
        _selector_key(t.selector),
        t.topology_key,
        _selector_key(t.namespace_selector),
    )


def _selector_key(s: LabelSelector | None) -> object:
    if s is None:
        return None
    return (
        tuple(sorted(s.match_labels.items())),
        tuple(sorted((r.key, r.operator, tuple(sorted(r.values))) for r in s.match_expressions)),
    )


def index_pairs(selector: LabelSelector | None) -> list[tuple[str, str]] | None:
    """Label pairs of which a pod the selector selects carries at least one, or None when the
    selector requires none (a selector of None selects nothing: ``[]``)."""
    if selector is None:
        return []
    for k, v in selector.match_labels.items():
        return [(k, v)]
    for r in selector.match_expressions:
        if r.operator == "In":
            return [(r.key, v) for v in r.values]
    return None


def term_matches(
    t: AffinityTerm, namespace: str, labels: Mapping[str, str], ns_labels: Mapping[str, str]
) -> bool:
    """``AffinityTerm.Matches`` for a pod given by its namespace and labels."""
    in_ns = namespace in t.namespaces or (
        t.namespace_selector is not None and t.namespace_selector.matches(ns_labels)
    )
    return in_ns and t.selector is not None and t.selector.matches(labels)


class NodeEntry:
    """What the index holds for one node (read-only for readers of `PodIndex.entries`):
    ``labels`` (the Node's), ``sigs`` (pod signature -> how many pods), ``anti`` (required
    anti-affinity term key -> (term, pods)), ``score_pods`` (the pods with terms InterPod-
    Affinity's PreScore reads from existing pods), ``gen`` (the NodeInfo generation)."""

    __slots__ = ("anti", "gen", "labels", "score_pods", "sigs")

    def __init__(self, ni: NodeInfo) -> None:
        node = ni.node
        self.gen = ni.generation
        self.labels: Mapping[str, str] = node.labels if node is not None else _NO_LABELS
        sigs: dict[Signature, int] = {}
        for pi in ni.pods:
            p = pi.pod
            sig = (p.namespace, frozenset(p.labels.items()), p.deletion_timestamp is not None)
            sigs[sig] = sigs.get(sig, 0) + 1
        self.sigs = sigs
        anti: dict[TermKey, tuple[AffinityTerm, int]] = {}
        for pi in ni.pods_with_required_anti_affinity:
            for t in pi.required_anti_affinity_terms:
                k = term_key(t)
                hit = anti.get(k)
                anti[k] = (t, 1 if hit is None else hit[1] + 1)
        self.anti = anti
        self.score_pods: tuple[PodInfo, ...] = tuple(
            pi
            for pi in ni.pods_with_affinity
            if pi.required_affinity_terms
            or pi.preferred_affinity_terms
            or pi.preferred_anti_affinity_terms
        )


EntryChange = tuple[str, NodeEntry | None, NodeEntry | None]
"""``(node name, entry before, entry after)``; None before: a node newly indexed, None after:
a node removed."""


class PodIndex:
    """The pods of the nodes last refreshed, aggregated for InterPodAffinity (see module)."""

    __slots__ = (
        "_anti_by_pair",
        "_anti_scan",
        "_entries",
        "_gens",
        "_journal",
        "_log",
        "_log_stamp",
        "_score_entries",
        "_sig_by_pair",
        "anti_terms",
        "node_labels",
        "sig_labels",
        "sig_nodes",
    )

    def __init__(self) -> None:
        self._entries: dict[str, NodeEntry] = {}
        self._gens: list[int] = []
        # the lister's change-journal token the entries are up to date with (None: unknown)
        self._journal: object = None
        self._score_entries: dict[str, tuple[PodInfo, ...]] = {}
        self.node_labels: dict[str, Mapping[str, str]] = {}
        self.sig_nodes: dict[Signature, dict[str, int]] = {}
        self.sig_labels: dict[Signature, Mapping[str, str]] = {}
        self._sig_by_pair: dict[tuple[str, str], set[Signature]] = {}
        self.anti_terms: dict[TermKey, tuple[AffinityTerm, dict[str, int]]] = {}
        self._anti_by_pair: dict[tuple[str, str], set[TermKey]] = {}
        self._anti_scan: set[TermKey] = set()
        # every entry replaced, for readers that keep aggregates of their own
        # (`entry_changes_since`); restarted with a new stamp past _LOG_LIMIT
        self._log: list[EntryChange] = []
        self._log_stamp = object()

    # ------------------------------------------------------------------ upkeep

    def refresh(self, nodes: Sequence[NodeInfo], lister: NodeInfoLister | None = None) -> None:
        """Bring the index up to ``nodes`` (every node of the snapshot).

        With ``lister``, the snapshot's NodeInfo lister ``nodes`` comes from, keeping a change
        journal (``changes_since``, the delta store's) and the index up to date with an
        earlier token of it, only the nodes the journal names are looked at: O(changes).

        Otherwise the generations of ``nodes`` are compared position by position with those
        of the last call (a list comparison in C); entries are rebuilt, by node name, where
        they differ. A generation identifies one state of one node (it is drawn from a
        process-wide counter on every mutation; copies keep it), so equal generations mean
        equal contents, whatever the order of the list.

        Time: O(changed nodes) with the journal, else O(len(nodes)) at C speed; + O(pods of
        the changed nodes).
        """
        changes = None if lister is None else getattr(lister, "changes_since", None)
        if changes is not None and lister is not None and nodes is lister.list():
            token, written = changes(self._journal)
            if written is not None:
                for name in set(written):
                    ni = lister.get(name)
                    e = self._entries.get(name)
                    if e is None or e.gen != ni.generation:
                        self._rebuild(name, ni, e)
                self._journal = token
                self._gens = []  # positions not compared: the next scan compares them all
                return
            self._scan(nodes)
            self._journal = token
            return
        self._journal = None
        self._scan(nodes)

    def _scan(self, nodes: Sequence[NodeInfo]) -> None:
        gens = list(map(_GENERATION, nodes))
        prev = self._gens
        if gens == prev:  # nothing changed since the last call (e.g. PreFilter, then PreScore)
            return
        changed: Iterable[int]
        if len(gens) == len(prev):
            found: list[int] = []
            differences(gens, prev, 0, len(gens), found)
            changed = found
        else:
            changed = range(len(gens))
        self._gens = gens
        entries = self._entries
        for i in changed:
            ni = nodes[i]
            node = ni.node
            if node is None:
                continue
            name = node.name
            e = entries.get(name)
            if e is not None and e.gen == gens[i]:
                continue
            self._rebuild(name, ni, e)
        if len(entries) > len(gens):  # nodes were removed
            present = {ni.node.name for ni in nodes if ni.node is not None}
            for name in [n for n in entries if n not in present]:
                gone = entries.pop(name)
                self._apply(name, gone, -1)
                self._logged(name, gone, None)
                del self.node_labels[name]
                self._score_entries.pop(name, None)

    def _rebuild(self, name: str, ni: NodeInfo, old: NodeEntry | None) -> None:
        if old is not None:
            self._apply(name, old, -1)
        e = NodeEntry(ni)
        self._entries[name] = e
        if e.score_pods:
            self._score_entries[name] = e.score_pods
        else:
            self._score_entries.pop(name, None)
        self.node_labels[name] = e.labels
        self._apply(name, e, 1)
        self._logged(name, old, e)

    def _logged(self, name: str, old: NodeEntry | None, new: NodeEntry | None) -> None:
        log = self._log
        log.append((name, old, new))
        if len(log) > _LOG_LIMIT:
            self._log = []
            self._log_stamp = object()

    def _apply(self, name: str, e: NodeEntry, sign: int) -> None:
        for sig, n in e.sigs.items():
            per_node = self.sig_nodes.get(sig)
            if per_node is None:
                per_node = self.sig_nodes[sig] = {}
                self.sig_labels[sig] = dict(sig[1])
                for pair in sig[1]:
                    self._sig_by_pair.setdefault(pair, set()).add(sig)
            _add(per_node, name, n * sign)
        for k, (t, n) in e.anti.items():
            hit = self.anti_terms.get(k)
            if hit is None:
                hit = self.anti_terms[k] = (t, {})
                pairs = index_pairs(t.selector)
                if pairs is None:
                    self._anti_scan.add(k)
                else:
                    for pair in pairs:
                        self._anti_by_pair.setdefault(pair, set()).add(k)
            _add(hit[1], name, n * sign)

    # ------------------------------------------------------------------ queries

    def entries(self) -> tuple[object, Mapping[str, NodeEntry]]:
        """A token for "now" (for `entry_changes_since`) and node name -> entry, as of the
        last refresh. Time: O(1) (the index's own mapping: read it, never change it)."""
        return (self._log_stamp, len(self._log)), self._entries

    def entry_changes_since(self, token: object) -> tuple[object, list[EntryChange] | None]:
        """The entries replaced since ``token`` (from `entries` or an earlier call), oldest
        first, and a new token; None for the changes when they are not known any more (the
        log restarted past 65,536 changes): the reader starts again from `entries`.
        Time: O(1) + O(changes returned)."""
        now = (self._log_stamp, len(self._log))
        if not isinstance(token, tuple) or len(token) != 2 or token[0] is not self._log_stamp:
            return now, None
        return now, self._log[token[1] :]

    def signatures_for(self, selector: LabelSelector | None) -> Iterable[Signature]:
        """Signatures that may match ``selector`` (a superset; callers still match)."""
        pairs = index_pairs(selector)
        if pairs is None:
            return list(self.sig_nodes)
        out: set[Signature] = set()
        for pair in pairs:
            out.update(self._sig_by_pair.get(pair, ()))
        return out

    def anti_terms_for(self, labels: Mapping[str, str]) -> Iterable[TermKey]:
        """Existing anti-affinity terms that may select a pod with ``labels``."""
        out = set(self._anti_scan)
        by_pair = self._anti_by_pair
        for pair in labels.items():
            keys = by_pair.get(pair)
            if keys:
                out.update(keys)
        return out

    def score_pods(self) -> Iterable[tuple[str, PodInfo]]:
        """(node name, pod) for the pods with terms PreScore reads from existing pods, node by
        node in the order the nodes were first indexed (O(such pods): nodes without any are
        not visited)."""
        for name, pods in self._score_entries.items():
            for pi in pods:
                yield name, pi


def _add(m: dict[str, int], key: str, delta: int) -> None:
    n = m.get(key, 0) + delta
    if n:
        m[key] = n
    else:
        m.pop(key, None)
