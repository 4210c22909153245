"""Runner for the ``ca-estimate-*`` cases: the Cluster Autoscaler's binpacking estimator
(CA ``estimator/binpacking_estimator_test.go``; format in tests/cases/upstream/README.md,
"Cluster Autoscaler estimator cases").

The cluster (the objects' Nodes and the Pods with ``spec.nodeName``) is loaded into a
`PredicateSnapshot` with the default profile, once per store; ``check.template`` is the node
group's template Node; ``check.equivalenceGroups`` lists the pending pods group by group (CA's
``PodEquivalenceGroup``s, in the test's order: the estimator orders them itself);
``check.maxNodes`` is the static threshold of the estimation limiter (0 or absent: no limit).
`schedsim.autoscaler.estimator.estimate` must return ``expect.nodeCount`` nodes and
``expect.podCount`` scheduled pods (``expect.scheduledPods``: those pods, in order;
``expect.podsPerNode``: the pods on each added copy ``<template>-e-<i>``, as CA's estimation
analyser records them), and leave the snapshot as it was.
"""

from __future__ import annotations

from typing import Any

from schedsim.api.loading.loader import decode_objects
from schedsim.autoscaler.estimator import estimate
from schedsim.engine import STORES
from schedsim.framework import Framework, Handle, default_profile
from schedsim.snapshot import NodeInfo, PredicateSnapshot


def expected_failure(case: dict[str, Any]) -> str | None:
    """Why this case is expected to fail (None: it must pass)."""
    del case
    return None


def run(case: dict[str, Any], source: str) -> None:
    """Run one estimator case on both stores."""
    check, expect = case["check"], case["expect"]
    assert check["component"] == "BinpackingEstimator", check
    m = decode_objects(case["objects"], source, api_rules=False)
    by_key = {f"{p.namespace}/{p.name}": p for p in m.pods}
    template_nodes = decode_objects([check["template"]], source, api_rules=False).nodes
    assert len(template_nodes) == 1
    groups = [[by_key[k] for k in g] for g in check["equivalenceGroups"]]
    pending = {id(p) for g in groups for p in g}
    bound = [p for p in m.pods if p.node_name and id(p) not in pending]
    for store in STORES.values():
        snap = PredicateSnapshot(Framework(default_profile(), Handle()), store())
        assert snap.set_cluster_state(m.nodes, bound) == []
        before = sorted(ni.node.name for ni in snap.list_node_infos() if ni.node)
        est = estimate(snap, groups, NodeInfo(template_nodes[0]), check.get("maxNodes") or None)
        assert est.node_count == expect["nodeCount"], f"{store.__name__}: nodes {est.node_count}"
        assert len(est.pods) == expect["podCount"], f"{store.__name__}: pods {len(est.pods)}"
        if "podsPerNode" in expect:
            got_per_node = dict(est.pods_per_node)
            assert got_per_node == expect["podsPerNode"], f"{store.__name__}: {got_per_node}"
        if "scheduledPods" in expect:
            got = [f"{p.namespace}/{p.name}" for p in est.pods]
            assert got == expect["scheduledPods"], f"{store.__name__}: scheduled {got}"
        after = sorted(ni.node.name for ni in snap.list_node_infos() if ni.node)
        assert after == before, "the estimate must leave the snapshot as it was"
