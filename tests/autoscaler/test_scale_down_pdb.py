"""Scale-down with PodDisruptionBudgets, in both stores: CA's System and PDB drainability
rules and the planner's remaining-PDB tracker (``core/scaledown/planner``
``categorizeNodes``: ``SimulateNodeRemoval`` then ``RemainingPdbTracker.RemovePods`` for
each removable node, in candidate order).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from schedsim.api.core import Node, Pod
from schedsim.api.policy import PodDisruptionBudget
from schedsim.autoscaler.scaledown import ScaleDownResult, UnremovableReason, scale_down
from schedsim.engine import Cluster
from schedsim.framework import Framework, Handle, default_profile
from schedsim.snapshot import ClusterSnapshotStore

BLOCKED = UnremovableReason.BLOCKED_BY_POD


def node(name: str) -> Node:
    return Node.from_manifest(
        {
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "1000m", "memory": "1000", "pods": "110"}},
        }
    )


def pod(
    name: str,
    node_name: str,
    cpu: str = "100m",
    namespace: str = "kube-system",
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    created: str | None = None,
) -> Pod:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "labels": dict(labels if labels is not None else {"app": "dns"}),
        "annotations": dict(annotations or {}),
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                             "uid": f"{namespace}-rs", "controller": True}],
    }  # fmt: skip
    if created is not None:
        meta["creationTimestamp"] = created
    return Pod.from_manifest(
        {
            "metadata": meta,
            "spec": {"nodeName": node_name,
                     "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
        }
    )  # fmt: skip


def budget(allowed: int | None, namespace: str = "kube-system") -> PodDisruptionBudget:
    raw: dict[str, Any] = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "dns", "namespace": namespace},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "dns"}}},
    }
    if allowed is not None:
        raw["status"] = {"disruptionsAllowed": allowed}
    return PodDisruptionBudget.from_manifest(raw)


def run(
    pods: list[Pod],
    budgets: list[PodDisruptionBudget],
    store: Callable[[], ClusterSnapshotStore],
    **kwargs: Any,
) -> ScaleDownResult:
    """Nodes a and b (one small pod each) and c (busy: 60% cpu, never a candidate, room for
    both small pods)."""
    cluster = Cluster(
        nodes=[node("a"), node("b"), node("c")],
        pods=[*pods, pod("busy", "c", cpu="600m", namespace="default", labels={})],
        pod_disruption_budgets=budgets,
    )
    framework = Framework(default_profile(), Handle())
    framework.handle.object_listers = cluster.object_listers()  # as Engine.check does
    snapshot, _ = cluster.snapshot(framework, store())
    return scale_down(snapshot, cluster.pods, **kwargs)


def verdicts(r: ScaleDownResult) -> dict[str, tuple[bool, str]]:
    return {v.node: (v.removable, v.detail) for v in r.verdicts}


def test_budget_lets_kube_system_pod_move(store: Callable[[], ClusterSnapshotStore]) -> None:
    """CA System rule (``rules/system/rule_test.go`` "kube-system PDB with matching
    kube-system pod") and PDB rule ("Pdb allowing" in ``simulator/drain_test.go``): a
    kube-system pod a budget covers, with a disruption left, moves; without the budget it
    blocks (UnmovableKubeSystemPod)."""
    r = run([pod("dns-0", "a")], [budget(1)], store)
    assert verdicts(r)["a"] == (True, "")
    assert [(m.pod.name, m.node_name) for m in r.verdicts[0].moved] == [("dns-0", "c")]
    r = run([pod("dns-0", "a")], [], store)
    assert verdicts(r)["a"] == (False, "pod kube-system/dns-0: UnmovableKubeSystemPod")


def test_budget_with_no_disruption_left_blocks(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """CA PDB rule ("Pdb blocking" in ``simulator/drain_test.go``): a matching budget with
    ``disruptionsAllowed`` 0 blocks with NotEnoughPdb; the System rule is satisfied by the
    budget's existence. ``safe-to-evict: "true"`` comes first in ``rules.Default()`` and
    moves the pod anyway."""
    r = run([pod("dns-0", "a")], [budget(0)], store)
    v = r.verdicts[0]
    assert (v.removable, v.reason, v.pod.name if v.pod else None) == (False, BLOCKED, "dns-0")
    assert v.detail == (
        "pod kube-system/dns-0: NotEnoughPdb "
        "(PodDisruptionBudget kube-system/dns allows 0 more disruption(s))"
    )
    safe = {"cluster-autoscaler.kubernetes.io/safe-to-evict": "true"}
    r = run([pod("dns-0", "a", annotations=safe)], [budget(0)], store)
    assert verdicts(r)["a"] == (True, "")


def test_shared_budget_is_used_up_across_candidates(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """CA planner (``categorizeNodes``): after a node is found removable its pods are
    charged to their budgets (``RemainingPdbTracker.RemovePods``), so with one disruption
    allowed for the pods on a and b, a is removable and b is then blocked (NotEnoughPdb, the
    budget at 0 left); with 2 allowed, both go."""
    pods = [pod("dns-0", "a"), pod("dns-1", "b")]
    r = run(pods, [budget(1)], store)
    assert verdicts(r) == {
        "a": (True, ""),
        "b": (False, "pod kube-system/dns-1: NotEnoughPdb "
                     "(PodDisruptionBudget kube-system/dns allows 0 more disruption(s))"),
        "c": (False, "cpu utilization 0.60 > threshold 0.5"),
    }  # fmt: skip
    assert run(pods, [budget(2)], store).removable == ("a", "b")


def test_blocking_pod_moved_here_earlier_in_the_pass_says_so(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """CA planner (``categorizeNodes``): removing a moves dns-0 (450m: c has 400m left) onto
    b and uses up the budget's one disruption (``RemovePods``); b, a candidate by its
    utilization before any removal, then finds dns-0 among its pods and the PDB rule blocks
    it (NotEnoughPdb). The detail names where the pod came from."""
    pods = [pod("dns-0", "a", cpu="450m"), pod("web", "b", namespace="default", labels={})]
    r = run(pods, [budget(1)], store)
    assert [(m.pod.name, m.node_name) for m in r.verdicts[0].moved] == [("dns-0", "b")]
    assert verdicts(r)["b"] == (
        False,
        "pod kube-system/dns-0 (moved here from a in this pass): NotEnoughPdb "
        "(PodDisruptionBudget kube-system/dns allows 0 more disruption(s))",
    )


def test_budget_without_status_uses_the_disruption_controller_count(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """With no ``status.disruptionsAllowed``, the budget allows what schedsim's
    DefaultPreemption reads (`PodDisruptionBudget.resolve_disruptions_allowed`, the
    disruption controller's rule): 2 running matching pods, minAvailable 1 -> 1; so, as
    with an explicit 1, only the first of the two nodes is removable."""
    pods = [pod("dns-0", "a"), pod("dns-1", "b")]
    assert run(pods, [budget(None)], store).removable == ("a",)


def test_blocking_system_pod_timeout_needs_a_drain_time(
    store: Callable[[], ClusterSnapshotStore],
) -> None:
    """CA System rule ("allow non-pdb system pod existing for more than
    BspDisruptionTimeout"): with a drain time, a kube-system pod without a budget created
    more than ``--blocking-system-pod-distruption-timeout`` (1h) before it moves; one
    created less than 1h before still blocks; with no drain time it always blocks."""
    now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    old = [pod("dns-0", "a", created="2026-01-01T10:59:59Z")]
    young = [pod("dns-0", "a", created="2026-01-01T11:00:01Z")]
    blocked = (False, "pod kube-system/dns-0: UnmovableKubeSystemPod")
    assert verdicts(run(old, [], store, now=now))["a"] == (True, "")
    assert verdicts(run(young, [], store, now=now))["a"] == blocked
    assert verdicts(run(old, [], store))["a"] == blocked
    two_hours = timedelta(hours=2)
    assert verdicts(run(old, [], store, now=now, bsp_disruption_timeout=two_hours))["a"] == blocked
