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
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs
import pytest
from test_scale_down import node, pod

import schedsim.autoscaler.drain as drain_module
import schedsim.autoscaler.scaledown as scaledown_module
from schedsim.api.core import Node, Pod, Taint
from schedsim.api.policy import PodDisruptionBudget
from schedsim.autoscaler.nodegroups import NodeGroup, NodeTemplate
from schedsim.autoscaler.scaledown import (
    TO_BE_DELETED_TAINT,
    ScaleDownCache,
    ScaleDownResult,
    scale_down,
)
from schedsim.engine import Cluster
from schedsim.framework import Framework, Handle, default_profile
from schedsim.snapshot import ClusterSnapshotStore, NodeInfo, PredicateSnapshot

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


def plan(snap: PredicateSnapshot, cache: ScaleDownCache | None, **options: Any) -> ScaleDownResult:
    """A replay's plan: in a fork that is reverted (`schedsim.replay.autoscaler`);
    ``options``: `scale_down`'s keyword arguments."""
    with snap.forked():
        return scale_down(snap, (), node_groups=[GROUP], cache=cache, **options)


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


DELETED_AT = datetime(2026, 1, 1, tzinfo=UTC)


def replace_node(snap: PredicateSnapshot, new: Node) -> None:
    """Put ``new`` in place of the (empty) node of its name, as an informer update does."""
    snap.remove_node_info(new.name)
    snap.add_node_info(NodeInfo(new))


def test_eligibility_settings_and_node_changes_are_not_served_stale(
    store: Callable[[], ClusterSnapshotStore], evaluated: list[str]
) -> None:
    """What `filter_out_unremovable` reads besides the node's pods -- the plan's
    ``ignore_daemonsets_utilization``, ``scale_down_unready`` and ``now``, and the Node's
    taints, conditions and annotations -- changes the cached plan's verdicts exactly as the
    uncached plan's. The expected reasons are CA 1.34 eligibility_test.go
    TestFilterOutUnremovable's rows (tests/cases/upstream/ca-eligibility): a node tainted
    ToBeDeletedByClusterAutoscaler less than 5 minutes ago is CurrentlyBeingDeleted (002); a
    node whose only pod is a DaemonSet's at 60% is NotUnderutilized, and a candidate with
    --ignore-daemonsets-utilization (011, 012); a node without a Ready condition is
    ScaleDownUnreadyDisabled with --scale-down-unready-enabled=false (008) and a candidate
    once Ready (007); the scale-down-disabled annotation (003)."""
    deleted = Taint(TO_BE_DELETED_TAINT, "NoSchedule", str(int(DELETED_AT.timestamp())))
    base = cluster()
    nodes = [
        *base.nodes,
        node("ds", labels={"g": "a"}),
        attrs.evolve(node("doomed", labels={"g": "a"}), taints=(deleted,)),
    ]
    c = Cluster(nodes=nodes, pods=[*base.pods, pod("d", "ds", cpu="600m", kind="DaemonSet")])
    cached, fresh = snapshot(store, c), snapshot(store, c)
    cache = ScaleDownCache()

    def reasons(**options: Any) -> dict[str, str | None]:
        """The cached plan's reasons (``evaluated`` holds its calls only), checked against
        the uncached plan's verdicts."""
        evaluated.clear()
        got = plan(cached, cache, **options)
        calls = list(evaluated)
        assert got.verdicts == plan(fresh, None, **options).verdicts
        evaluated[:] = calls
        return {v.node: v.reason.value if v.reason else None for v in got.verdicts}

    first = reasons()
    # no clock: any such taint counts (`is_node_being_deleted`)
    assert first["doomed"] == "CurrentlyBeingDeleted"
    assert first["ds"] == "NotUnderutilized"
    assert first["empty"] is None
    assert reasons(ignore_daemonsets_utilization=True)["ds"] is None
    unready = reasons(scale_down_unready=False)
    assert unready["empty"] == unready["small-0"] == "ScaleDownUnreadyDisabled"
    assert reasons(now=DELETED_AT + timedelta(minutes=1))["doomed"] == "CurrentlyBeingDeleted"
    assert reasons(now=DELETED_AT + timedelta(minutes=10))["doomed"] is None

    ready = Node.from_manifest(
        {
            "metadata": {"name": "empty", "labels": {"kubernetes.io/hostname": "empty", "g": "a"}},
            "status": {
                "allocatable": {"cpu": "1000m", "memory": "1000", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }
    )
    assert reasons(scale_down_unready=False)["empty"] == "ScaleDownUnreadyDisabled"
    for snap in (cached, fresh):
        replace_node(snap, ready)
    after = reasons(scale_down_unready=False)
    assert sorted(n for n in evaluated if n.startswith("u:")) == ["u:empty"]
    assert after["empty"] is None and after["small-0"] == "ScaleDownUnreadyDisabled"
    for snap in (cached, fresh):
        replace_node(snap, attrs.evolve(ready, annotations=DISABLED))
    assert reasons(scale_down_unready=False)["empty"] == "ScaleDownDisabledAnnotation"


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
