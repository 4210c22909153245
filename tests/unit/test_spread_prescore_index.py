"""PodTopologySpread PreScore counts matching pods per domain through the `PodIndex` when
every node must carry every topology key (issue 29). The counts must be upstream's: the walk
of kube-scheduler 1.34 ``podtopologyspread/scoring.go`` PreScore over every node (required
node affinity, or the inclusion policies with NodeInclusionPolicyInPodTopologySpread; nodes
without all topology keys skipped; only domains of the nodes being scored;
``countPodsMatchSelector``: same namespace, not terminating, selected). Checked here on
seeded random clusters over both stores, through forks, reverts, commits and node removals.
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
    PRE_SCORE_STATE_KEY,
    PodTopologySpread,
    count_pods_match_selector,
)
from schedsim_plugins.podtopologyspread_common import labels_match

ZONE = "topology.kubernetes.io/zone"
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


def _pod(rng: random.Random, name: str, node: str = "", incoming: bool = False) -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": "c"}], "nodeName": node}
    if incoming:
        keys = rng.choice(((ZONE,), (RACK,), (ZONE, RACK)))
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": rng.choice((1, 3)),
                "topologyKey": k,
                "whenUnsatisfiable": "ScheduleAnyway",
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


def _check(snap: PredicateSnapshot, rng: random.Random) -> int:
    plugin = snap.framework.plugins["PodTopologySpread"]
    assert isinstance(plugin, PodTopologySpread)
    checked = 0
    with snap.bound():
        nodes = list(snap.list_node_infos())
        for k in range(4):
            pod = _pod(rng, f"incoming-{k}", incoming=True)
            feasible = rng.sample(nodes, max(1, len(nodes) // 2))
            state = CycleState()
            if plugin.schedsim_pre_score(state, pod, feasible) is not None:
                continue
            s = state.get(PRE_SCORE_STATE_KEY)
            assert s is not None
            assert s.tp_counts == _walk(plugin, pod, s, snap)
            checked += 1
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
    checked = _check(snap, rng)
    names = [f"n{i}" for i in range(n)]
    for step in range(60):
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
        checked += _check(snap, rng)
    assert checked > 100  # the comparison ran (PreScore did not Skip them all)
