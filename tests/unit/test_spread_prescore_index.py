"""PodTopologySpread PreScore counts matching pods per domain through the `PodIndex` when
every node must carry every topology key (issue 29). The counts must be upstream's: the walk
of kube-scheduler 1.34 ``podtopologyspread/scoring.go`` PreScore over every node (required
node affinity, or the inclusion policies with NodeInclusionPolicyInPodTopologySpread; nodes
without all topology keys skipped; only domains of the nodes being scored;
``countPodsMatchSelector``: same namespace, not terminating, selected). PreFilter's counts
(kept per domain map, `DomainCounts`) must be ``filtering.go`` ``calPreFilterState``'s walk.
Score computed once per distinct topology value (``score_nodes``) must be ``Score`` node by
node, and NormalizeScore upstream's two loops. Checked here on seeded random clusters over
both stores, through forks, reverts, commits and node removals.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from schedsim.api.core import Node, Pod
from schedsim.api.core.nodeaffinity import required_node_affinity
from schedsim.framework import CycleState, Framework, Handle, Profile
from schedsim.snapshot import PredicateSnapshot
from schedsim.testing import StoreFactory
from schedsim_plugins.podtopologyspread import (
    PRE_FILTER_STATE_KEY,
    PRE_SCORE_STATE_KEY,
    PodTopologySpread,
    PreScoreState,
    count_pods_match_selector,
)
from schedsim_plugins.podtopologyspread_common import labels_match

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
RACK = "rack"
APPS = ("a", "b", "c")
NAMESPACES = ("default", "other")


def _node(rng: random.Random, i: int) -> Node:
    labels = {"kubernetes.io/hostname": f"n{i}", ZONE: f"z{i % 3}", RACK: f"r{i % 4}"}
    if rng.random() < 0.2:
        del labels[ZONE]
    if rng.random() < 0.1:
        del labels[RACK]
    spec: dict[str, Any] = {}
    if rng.random() < 0.2:
        spec["taints"] = [{"key": "k", "value": "v", "effect": "NoSchedule"}]
    return Node.from_manifest(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"n{i}", "labels": labels},
            "spec": spec,
        }
    )


def _pod(
    rng: random.Random,
    name: str,
    node: str = "",
    incoming: bool = False,
    action: str = "ScheduleAnyway",
    keys_from: tuple[tuple[str, ...], ...] = ((ZONE,), (RACK,), (ZONE, RACK)),
) -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": "c"}], "nodeName": node}
    if incoming:
        keys = rng.choice(keys_from)
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": rng.choice((1, 3)),
                "topologyKey": k,
                "whenUnsatisfiable": action,
                "labelSelector": {"matchLabels": {"app": rng.choice(APPS)}},
                **({"nodeTaintsPolicy": "Honor"} if rng.random() < 0.3 else {}),
            }
            for k in keys
        ]
        if rng.random() < 0.3:
            spec["nodeSelector"] = {RACK: f"r{rng.randrange(4)}"}
    meta: dict[str, Any] = {
        "name": name,
        "namespace": rng.choice(NAMESPACES),
        "labels": {"app": rng.choice(APPS)},
    }
    if rng.random() < 0.1:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return Pod.from_manifest({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


def _walk(plugin: PodTopologySpread, pod: Pod, s: Any, snap: PredicateSnapshot) -> list[Any]:
    """The counts upstream's PreScore computes, node by node (domains: those ``s`` has)."""
    required = required_node_affinity(pod)
    out: list[dict[str, int]] = [dict.fromkeys(m, 0) for m in s.tp_counts]
    for ni in snap.list_node_infos():
        node = ni.node
        assert node is not None
        labels = node.labels
        nip = plugin.enable_node_inclusion_policy
        if not nip and not required(labels, node.name):
            continue
        if not labels_match(s.constraints, labels):
            continue
        for i, c in enumerate(s.constraints):
            if nip and not c.includes_node(pod, node, required):
                continue
            v = labels[c.topology_key]
            if v in out[i]:
                out[i][v] += count_pods_match_selector(ni.pods, c, pod.namespace)
    return out


def _walk_pre_filter(
    plugin: PodTopologySpread, pod: Pod, constraints: Any, snap: PredicateSnapshot
) -> list[dict[str, int]]:
    """The counts upstream's ``calPreFilterState`` computes, node by node: every eligible
    node's domain, with the matching pods of its node added."""
    required = required_node_affinity(pod)
    nip = plugin.enable_node_inclusion_policy
    out: list[dict[str, int]] = [{} for _ in constraints]
    for ni in snap.list_node_infos():
        node = ni.node
        assert node is not None
        if not nip and not required(node.labels, node.name):
            continue
        if not labels_match(constraints, node.labels):
            continue
        for i, c in enumerate(constraints):
            if nip and not c.includes_node(pod, node, required):
                continue
            v = node.labels[c.topology_key]
            out[i][v] = out[i].get(v, 0) + count_pods_match_selector(ni.pods, c, pod.namespace)
    return out


def _go_normalize(ignored: set[str], scores: dict[str, int]) -> dict[str, int]:
    """Upstream's NormalizeScore loops (``scoring.go``), integer division truncating."""
    out = dict(scores)
    lo, hi = 2**63 - 1, 0
    for name, v in out.items():
        if name in ignored:
            out[name] = -1
            continue
        lo, hi = min(lo, v), max(hi, v)
    for name, v in out.items():
        if v == -1:
            out[name] = 0
        elif hi == 0:
            out[name] = 100
        else:
            num = 100 * (hi + lo - v)
            out[name] = abs(num) // hi * (1 if num >= 0 else -1)
    return out


def _check_pre_filter(snap: PredicateSnapshot, rng: random.Random) -> int:
    plugin = snap.framework.plugins["PodTopologySpread"]
    assert isinstance(plugin, PodTopologySpread)
    checked = 0
    with snap.bound():
        nodes = snap.list_node_infos()
        for k in range(3):
            pod = _pod(rng, f"hard-{k}", incoming=True, action="DoNotSchedule")
            state = CycleState()
            if plugin.schedsim_pre_filter(state, pod, nodes) is not None:
                continue
            s = state.get(PRE_FILTER_STATE_KEY)
            assert s is not None
            assert s.tp_value_to_match_num == _walk_pre_filter(plugin, pod, s.constraints, snap)
            checked += 1
    return checked


def _check(
    snap: PredicateSnapshot,
    rng: random.Random,
    keys_from: tuple[tuple[str, ...], ...] = ((ZONE,), (RACK,), (ZONE, RACK)),
    score: bool = False,
) -> int:
    """PreScore's counts against `_walk` for a few random incoming pods; with ``score``,
    also ``score_nodes`` against Score node by node (in two orders) and NormalizeScore
    against `_go_normalize`."""
    plugin = snap.framework.plugins["PodTopologySpread"]
    assert isinstance(plugin, PodTopologySpread)
    checked = 0
    with snap.bound():
        nodes = list(snap.list_node_infos())
        for k in range(4):
            pod = _pod(rng, f"incoming-{k}", incoming=True, keys_from=keys_from)
            feasible = rng.sample(nodes, max(1, len(nodes) // 2))
            state = CycleState()
            if plugin.schedsim_pre_score(state, pod, feasible) is not None:
                continue
            s = state.get(PRE_SCORE_STATE_KEY)
            assert s is not None
            assert s.tp_counts == _walk(plugin, pod, s, snap)
            checked += 1
            if not score:
                continue
            each = [plugin.schedsim_score(state, pod, ni) for ni in feasible]
            assert plugin.score_nodes(state, pod, feasible) == each
            assert plugin.score_nodes(state, pod, feasible[::-1]) == each[::-1]
            scores = {ni.node.name: v for ni, v in zip(feasible, each, strict=True) if ni.node}
            want = _go_normalize(s.ignored_nodes, scores)
            assert plugin.schedsim_normalize_score(state, pod, scores) is None
            assert scores == want
    return checked


def _check_score(snap: PredicateSnapshot, rng: random.Random) -> int:
    """`_check` with hostname constraints among the keys, and the Score checks."""
    keys = ((ZONE,), (HOST,), (HOST, ZONE), (RACK, HOST, ZONE), (ZONE, RACK))
    return _check(snap, rng, keys, score=True)


def _random_ops(
    snap: PredicateSnapshot, rng: random.Random, n: int, check: Any, steps: int = 60
) -> int:
    """``check`` after each of ``steps`` random fork / revert / commit / node removal / pod
    addition; returns the checks that ran."""
    checked = check(snap, rng)
    names = [f"n{i}" for i in range(n)]
    for step in range(steps):
        op = rng.random()
        if op < 0.1:
            snap.fork()
        elif op < 0.17:
            snap.revert()
        elif op < 0.22:
            snap.commit()
        elif op < 0.25 and len(names) > 3:
            snap.remove_node_info(names.pop(rng.randrange(len(names))))
        else:
            snap.force_add_pod(_pod(rng, f"s{step}"), rng.choice(names))
        names = [ni.node.name for ni in snap.list_node_infos() if ni.node is not None]
        checked += check(snap, rng)
    return checked


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_prescore_counts_equal_the_walk(store: StoreFactory, seed: int) -> None:
    rng = random.Random(seed)
    fw = Framework(Profile(plugins={"preScore": ("PodTopologySpread",), "reserve": ()}), Handle())
    snap = PredicateSnapshot(fw, store())
    n = 12
    snap.set_cluster_state(
        [_node(rng, i) for i in range(n)],
        [_pod(rng, f"p{i}", f"n{rng.randrange(n)}") for i in range(40)],
    )
    checked = _random_ops(snap, rng, n, _check)
    assert checked > 100  # the comparison ran (PreScore did not Skip them all)


@pytest.mark.parametrize("seed", [4, 5])
def test_prefilter_counts_equal_the_walk(store: StoreFactory, seed: int) -> None:
    """PreFilter's per-domain counts, kept per domain map and updated from the index's
    changes, equal ``calPreFilterState``'s walk over every node after every change."""
    rng = random.Random(seed)
    plugins = {"preFilter": ("PodTopologySpread",), "filter": (), "reserve": ()}
    fw = Framework(Profile(plugins=plugins), Handle())
    snap = PredicateSnapshot(fw, store())
    n = 12
    snap.set_cluster_state(
        [_node(rng, i) for i in range(n)],
        [_pod(rng, f"p{i}", f"n{rng.randrange(n)}") for i in range(40)],
    )
    assert _random_ops(snap, rng, n, _check_pre_filter) > 60


@pytest.mark.parametrize("seed", [6, 7])
def test_score_per_value_equals_score_per_node(store: StoreFactory, seed: int) -> None:
    """``score_nodes`` (once per distinct topology value; hostname constraints per node)
    gives what Score gives node by node, for any order of the nodes; NormalizeScore gives
    upstream's loops' result (nodes missing a topology key ignored, score 0)."""
    rng = random.Random(seed)
    plugins = {"preScore": ("PodTopologySpread",), "score": (), "reserve": ()}
    fw = Framework(Profile(plugins=plugins), Handle())
    snap = PredicateSnapshot(fw, store())
    n = 12
    snap.set_cluster_state(
        [_node(rng, i) for i in range(n)],
        [_pod(rng, f"p{i}", f"n{rng.randrange(n)}") for i in range(40)],
    )
    assert _random_ops(snap, rng, n, _check_score, steps=30) > 40


def test_normalize_score_edge_cases() -> None:
    """NormalizeScore with every node ignored, all raw scores 0, and raw scores below 0 (a
    raw -1 taken for upstream's ``invalidScore``; Go's division truncates): upstream's
    loops' results."""
    plugin = PodTopologySpread({}, Handle())
    cases: list[tuple[set[str], dict[str, int]]] = [
        ({"a", "b"}, {"a": 5, "b": 7}),
        (set(), {"a": 0, "b": 0}),
        ({"b"}, {"a": 0, "b": 9, "c": 0}),
        (set(), {"a": -1, "b": 4, "c": 2}),
        (set(), {"a": -3, "b": 4, "c": 5}),
        ({"c"}, {"a": 3, "b": 12, "c": 1, "d": 12}),
    ]
    for ignored, scores in cases:
        state = CycleState()
        s = PreScoreState()
        s.ignored_nodes = set(ignored)
        state[PRE_SCORE_STATE_KEY] = s
        want = _go_normalize(ignored, scores)
        got = dict(scores)
        assert plugin.schedsim_normalize_score(state, Pod.from_manifest(_POD), got) is None
        assert got == want, (ignored, scores)


_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p"},
    "spec": {"containers": [{"name": "c"}]},
}
