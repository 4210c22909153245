"""InterPodAffinity PreScore keeps one topology score map per class of incoming pod and
updates it by the nodes that changed (issue 29). It must give exactly upstream's map: the
walk of kube-scheduler 1.34 ``interpodaffinity/scoring.go`` PreScore (every pod of every node
when the pod has preferred terms, else the pods with affinity; ``processExistingPod``: the
pod's preferred (anti-)affinity terms against each existing pod, each existing pod's
required affinity terms with ``hardPodAffinityWeight`` and preferred (anti-)affinity terms
against the pod; nodes without labels skipped; Skip when nothing was added). Checked here
after every step of seeded random walks over both stores, with forks, commits, reverts and
node removals, and incoming pods drawn from a few classes so cached maps are reused."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from schedsim.api.core import Node, Pod
from schedsim.framework import Code, CycleState, Framework, Handle, NodeInfo, Profile
from schedsim.framework.pod_index import term_matches
from schedsim.snapshot import PredicateSnapshot
from schedsim.testing import StoreFactory
from schedsim_plugins.interpodaffinity import (
    PRE_SCORE_STATE_KEY,
    InterPodAffinity,
    incoming_terms,
)

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
APPS = ("a", "b", "c")


def _node(i: int) -> Node:
    labels = {HOST: f"n{i}", ZONE: f"z{i % 3}"}
    if i % 5 == 4:
        del labels[ZONE]
    if i % 7 == 6:
        labels = {}  # a node without labels: processExistingPod skips it
    return Node.from_manifest(
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": labels}}
    )


def _term(rng: random.Random) -> dict[str, Any]:
    return {
        "topologyKey": rng.choice((HOST, ZONE)),
        "labelSelector": {"matchLabels": {"app": rng.choice(APPS)}},
    }


def _pod(rng: random.Random, name: str, node: str = "") -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": "c"}], "nodeName": node}
    roll = rng.random()
    affinity: dict[str, Any] = {}
    if roll < 0.25:
        affinity["podAffinity"] = {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": rng.choice((1, 5)), "podAffinityTerm": _term(rng)}
            ]
        }
    elif roll < 0.45:
        affinity["podAntiAffinity"] = {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": rng.choice((2, 7)), "podAffinityTerm": _term(rng)}
            ]
        }
    elif roll < 0.55:
        affinity["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [_term(rng)]}
    if affinity:
        spec["affinity"] = affinity
    meta = {"name": name, "labels": {"app": rng.choice(APPS)}}
    return Pod.from_manifest({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


def _walk(
    pod: Pod, nodes: Sequence[NodeInfo], fw: Framework, hard_weight: int
) -> tuple[dict[str, dict[str, int]], int]:
    """Upstream PreScore's map (zero entries dropped) and how many additions made it."""
    listers = fw.handle.object_listers
    _, _, preferred, preferred_anti = incoming_terms(pod, listers)
    ns_labels: Mapping[str, str] = listers.namespace_labels(pod.namespace) or {}
    has_constraints = bool(preferred or preferred_anti)
    score: dict[str, dict[str, int]] = {}
    adds = 0

    def add(labels: Mapping[str, str], key: str, value: int) -> None:
        nonlocal adds
        if key in labels:
            adds += 1
            m = score.setdefault(key, {})
            m[labels[key]] = m.get(labels[key], 0) + value

    for ni in nodes:
        labels = ni.node.labels if ni.node is not None else {}
        if not labels:
            continue
        for epi in ni.pods if has_constraints else ni.pods_with_affinity:
            ep = epi.pod
            for w in preferred:
                if term_matches(w.term, ep.namespace, ep.labels, {}):
                    add(labels, w.term.topology_key, w.weight)
            for w in preferred_anti:
                if term_matches(w.term, ep.namespace, ep.labels, {}):
                    add(labels, w.term.topology_key, -w.weight)
            if hard_weight > 0:
                for t in epi.required_affinity_terms:
                    if term_matches(t, pod.namespace, pod.labels, ns_labels):
                        add(labels, t.topology_key, hard_weight)
            for w in epi.preferred_affinity_terms:
                if term_matches(w.term, pod.namespace, pod.labels, ns_labels):
                    add(labels, w.term.topology_key, w.weight)
            for w in epi.preferred_anti_affinity_terms:
                if term_matches(w.term, pod.namespace, pod.labels, ns_labels):
                    add(labels, w.term.topology_key, -w.weight)
    return _nonzero(score), adds


def _nonzero(score: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, int]]:
    out = {k: {v: n for v, n in m.items() if n} for k, m in score.items()}
    return {k: m for k, m in out.items() if m}


def _check(snap: PredicateSnapshot, classes: list[Pod], hard_weight: int) -> None:
    fw = snap.framework
    ipa = fw.plugins["InterPodAffinity"]
    assert isinstance(ipa, InterPodAffinity)
    with snap.bound():
        nodes = snap.list_node_infos()
        for pod in classes:
            s = CycleState()
            status = ipa.schedsim_pre_score(s, pod, nodes)
            want, adds = _walk(pod, nodes, fw, hard_weight)
            if adds == 0:
                assert status is not None and status.code == Code.Skip
            else:
                assert status is None
                assert _nonzero(s.get(PRE_SCORE_STATE_KEY).topology_score) == want  # type: ignore[union-attr]


@pytest.mark.parametrize(("seed", "hard_weight"), [(1, 1), (2, 0), (3, 10)])
def test_class_score_maps_equal_the_walk(store: StoreFactory, seed: int, hard_weight: int) -> None:
    rng = random.Random(seed)
    fw = Framework(
        Profile(
            plugins={"preScore": ("InterPodAffinity",), "reserve": ()},
            plugin_args={"InterPodAffinity": {"hardPodAffinityWeight": hard_weight}},
        ),
        Handle(),
    )
    snap = PredicateSnapshot(fw, store())
    n = 10
    snap.set_cluster_state(
        [_node(i) for i in range(n)],
        [_pod(rng, f"p{i}", f"n{rng.randrange(n)}") for i in range(25)],
    )
    classes = [_pod(rng, f"incoming-{k}") for k in range(6)]
    _check(snap, classes, hard_weight)
    names = [f"n{i}" for i in range(n)]
    placed: list[tuple[Pod, str]] = []
    for step in range(120):
        op = rng.random()
        if op < 0.1:
            snap.fork()
        elif op < 0.17:
            snap.revert()
        elif op < 0.22:
            snap.commit()
        elif op < 0.25 and len(names) > 3:
            snap.remove_node_info(names.pop(rng.randrange(len(names))))
        elif op < 0.8 or not placed:
            p = _pod(rng, f"s{step}")
            node = rng.choice(names)
            snap.force_add_pod(p, node)
            placed.append((p, node))
        else:
            p, node = placed.pop(rng.randrange(len(placed)))
            try:
                snap.force_remove_pod(p.namespace, p.name, node)
            except LookupError:
                pass  # reverted away or its node removed
        names = [ni.node.name for ni in snap.list_node_infos() if ni.node is not None]
        _check(snap, rng.sample(classes, 3), hard_weight)
