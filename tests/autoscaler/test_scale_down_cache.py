"""Scale-down plans with a `ScaleDownCache`, in both stores: the verdicts of a plan that
reuses the previous plan's per-node results are those of the same plan without the cache,
and only the nodes that changed since are evaluated again.

CA's planner (``core/scaledown/planner/planner.go``) keeps state between loops and its
``categorizeNodes`` computes each node's utilization (``eligibility.FilterOutUnremovable``)
and drain verdict (``simulator.GetPodsToMove``) from that node alone; these tests take the
expected verdicts from the uncached plan, whose rules the other scale-down tests check
against CA's, on an identical cluster with an identical history (the removal simulations'
round-robin start moves with every first-fit search).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from test_scale_down import node, pod

import schedsim.autoscaler.drain as drain_module
import schedsim.autoscaler.scaledown as scaledown_module
from schedsim.api.core import Pod
from schedsim.api.policy import PodDisruptionBudget
from schedsim.autoscaler.nodegroups import NodeGroup, NodeTemplate
from schedsim.autoscaler.scaledown import ScaleDownCache, ScaleDownResult, scale_down
from schedsim.engine import Cluster
from schedsim.framework import Framework, Handle, default_profile
from schedsim.snapshot import ClusterSnapshotStore, PredicateSnapshot

DISABLED = {"cluster-autoscaler.kubernetes.io/scale-down-disabled": "true"}


def cluster() -> Cluster:
    """Eight nodes of every kind the planner tells apart before simulating: busy (60%, not
    underutilized), two with one small pod each (candidates that move), an empty one,
    scale-down disabled, a bare pod (NotReplicated), a kube-system pod without a budget
    (UnmovableKubeSystemPod), and outside the node group (NotAutoscaled)."""
    nodes = [
        node("busy", labels={"g": "a"}),
        node("small-0", labels={"g": "a"}),
        node("small-1", labels={"g": "a"}),
        node("empty", labels={"g": "a"}),
        node("off", labels={"g": "a"}, annotations=DISABLED),
        node("bare", labels={"g": "a"}),
        node("sys", labels={"g": "a"}),
        node("outside"),
    ]
    pods = [
        pod("big", "busy", cpu="600m"),
        pod("s0", "small-0"),
        pod("s1", "small-1"),
        pod("o", "off"),
        pod("b", "bare", kind=None),
        pod("k", "sys", namespace="kube-system"),
        pod("x", "outside"),
    ]
    return Cluster(nodes=nodes, pods=pods)


GROUP = NodeGroup("a", 1, 20, NodeTemplate(node("t")), {"g": "a"})


def snapshot(store: Callable[[], ClusterSnapshotStore], c: Cluster) -> PredicateSnapshot:
    framework = Framework(default_profile(), Handle())
    framework.handle.object_listers = c.object_listers()  # as Engine.check does
    snap, _ = c.snapshot(framework, store())
    return snap


def plan(snap: PredicateSnapshot, cache: ScaleDownCache | None) -> ScaleDownResult:
    """A replay's plan: in a fork that is reverted (`schedsim.replay.autoscaler`)."""
    with snap.forked():
        return scale_down(snap, (), node_groups=[GROUP], cache=cache)


def small(name: str, node_name: str) -> Pod:
    """A 100m pod of a ReplicaSet labelled ``app: small``."""
    return Pod.from_manifest(
        {
            "metadata": {
                "name": name,
                "labels": {"app": "small"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                     "name": "small", "uid": "small", "controller": True}],
            },
            "spec": {
                "nodeName": node_name,
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m",
                                                                        "memory": "100"}}}],
            },
        }
    )  # fmt: skip


def one_disruption(app: str) -> PodDisruptionBudget:
    """The budget ``default/APP`` over the pods labelled ``app: APP``, one disruption left."""
    return PodDisruptionBudget.from_manifest(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": app, "namespace": "default"},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": app}}},
            "status": {"disruptionsAllowed": 1},
        }
    )


@pytest.fixture
def evaluated(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The nodes whose utilization and pods to move are computed, in call order (a name per
    call, prefixed ``u:`` and ``d:``)."""
    calls: list[str] = []
    real_util = scaledown_module.utilization
    real_drain = scaledown_module.pods_to_move

    def util(ni: Any, **kwargs: Any) -> Any:
        calls.append(f"u:{ni.node.name}")
        return real_util(ni, **kwargs)

    def drain(ni: Any, ctx: Any = None) -> Any:
        calls.append(f"d:{ni.node.name}")
        return real_drain(ni, ctx)

    monkeypatch.setattr(scaledown_module, "utilization", util)
    monkeypatch.setattr(scaledown_module, "pods_to_move", drain)
    yield calls


def test_cached_plans_decide_as_uncached_plans(
    store: Callable[[], ClusterSnapshotStore], evaluated: list[str]
) -> None:
    """Three plans over a changing cluster, with and without the cache: identical verdicts
    (reasons, details, utilization, where each pod moves); the second plan evaluates only
    the two nodes whose pods changed (busy lost its big pod and becomes a candidate; empty
    got one), the third none."""
    c = cluster()
    cached, fresh = snapshot(store, c), snapshot(store, c)
    cache = ScaleDownCache()
    first = plan(cached, cache)
    assert first.verdicts == plan(fresh, None).verdicts
    assert first.removable == ("small-0", "small-1", "empty")
    extra = pod("new", "empty")
    for snap in (cached, fresh):
        snap.force_remove_pod("default", "big", "busy")
        snap.force_add_pod(extra, "empty")
    evaluated.clear()
    second = plan(cached, cache)
    assert sorted(n for n in evaluated if n.startswith("u:")) == ["u:busy", "u:empty"]
    assert second.verdicts == plan(fresh, None).verdicts
    # busy is a candidate now, empty has a pod to move: all four go (their pods fit on the
    # nodes that stay)
    assert second.removable == ("busy", "small-0", "small-1", "empty")
    evaluated.clear()
    third = plan(cached, cache)
    assert [n for n in evaluated if n.startswith("u:")] == []
    assert third.verdicts == plan(fresh, None).verdicts


def test_pods_a_budget_selects_are_drained_again_every_plan(
    store: Callable[[], ClusterSnapshotStore], evaluated: list[str]
) -> None:
    """CA planner (``RemainingPdbTracker.RemovePods`` in ``categorizeNodes``): with one
    disruption for the pods on small-0 and small-1, small-0 goes and small-1 is then blocked
    (NotEnoughPdb). What a node with a selected pod drains depends on what the pass used
    up, so it is computed again in every plan (here twice: for the empty-first sort and as
    a candidate), while the nodes without such pods are served from the cache."""
    c = cluster()
    labelled = [small(p.name, p.node_name) if p.name in ("s0", "s1") else p for p in c.pods]
    c = Cluster(nodes=c.nodes, pods=labelled, pod_disruption_budgets=[one_disruption("small")])
    cached, fresh = snapshot(store, c), snapshot(store, c)
    cache = ScaleDownCache()
    for round_ in range(2):
        evaluated.clear()
        got = plan(cached, cache)
        drained = sorted(n for n in evaluated if n.startswith("d:"))
        assert got.verdicts == plan(fresh, None).verdicts
        detail = {v.node: v.detail for v in got.verdicts}
        assert got.removable == ("small-0", "empty")
        assert detail["small-1"] == (
            "pod default/s1: NotEnoughPdb "
            "(PodDisruptionBudget default/small allows 0 more disruption(s))"
        )
        if round_:
            assert drained == ["d:small-0", "d:small-0", "d:small-1", "d:small-1"]


def test_selects_any() -> None:
    """`RemainingPdbTracker.selects_any`: a budget matches a pod of its namespace its
    selector matches (policy/v1: a missing selector matches none)."""
    budget = one_disruption("web")
    web = Pod.from_manifest({"metadata": {"name": "w", "labels": {"app": "web"}}})
    other = Pod.from_manifest(
        {"metadata": {"name": "o", "namespace": "x", "labels": {"app": "web"}}}
    )
    tracker = drain_module.RemainingPdbTracker([budget])
    assert tracker.selects_any([other, web]) and not tracker.selects_any([other])
    assert not drain_module.RemainingPdbTracker().selects_any([web])
