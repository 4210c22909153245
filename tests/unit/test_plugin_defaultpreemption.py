"""DefaultPreemption's pieces, with upstream's tables where upstream has them:
DefaultPreemptionArgs validation (validation_pluginargs_test.go
TestValidateDefaultPreemptionArgs), calculateNumCandidates (default_preemption_test.go
TestCalculateNumCandidates), pickOneNodeForPreemption's criteria (preemption_test.go
TestPickOneNodeForPreemption / default_preemption_test.go TestSelectBestCandidate),
RunFilterPluginsWithNominatedPods (framework_test.go TestRunFilterPluginsWithNominatedPods /
schedule_one_test.go "nominated pods"), PodEligibleToPreemptOthers
(default_preemption_test.go TestPodEligibleToPreemptOthers), and the disruption controller's
allowed-disruptions rule for budgets without status.

The ``preempt-*`` cases (tests/cases) cover PostFilter end to end.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import attrs
import pytest

from schedsim.api.core import Node, Pod
from schedsim.api.policy import PodDisruptionBudget
from schedsim.framework import Code, CycleState, Framework, Handle, Profile, Status
from schedsim.framework.args import ArgsError, DefaultPreemptionArgs
from schedsim.framework.nominator import PodNominator
from schedsim.framework.preemption import Candidate, pick_one_node_for_preemption
from schedsim.snapshot import NodeInfo, PodInfo, PredicateSnapshot
from schedsim_plugins.defaultpreemption import (
    NOT_ELIGIBLE_NEVER,
    NOT_ELIGIBLE_TERMINATING,
    DefaultPreemption,
    filter_pods_with_pdb_violation,
)


def node(name: str, cpu: str = "2", pods: str = "32") -> Node:
    cap = {"cpu": cpu, "memory": "4Gi", "pods": pods}
    return Node.from_manifest({"metadata": {"name": name}, "status": {"allocatable": cap}})


def pod(
    name: str,
    cpu: str = "1",
    priority: int = 0,
    node_name: str = "",
    labels: dict[str, str] | None = None,
    **extra: Any,
) -> Pod:
    spec: dict[str, Any] = {
        "priority": priority,
        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
    }
    if node_name:
        spec["nodeName"] = node_name
    spec.update(extra.pop("spec", {}))
    meta: dict[str, Any] = {"name": name, "namespace": "default", "labels": labels or {}}
    meta.update(extra.pop("metadata", {}))
    return Pod.from_manifest({"metadata": meta, "spec": spec, "status": extra.pop("status", {})})


# ------------------------------------------------------------------ args


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ({"minCandidateNodesPercentage": -1}, "not in valid range [0, 100]"),
        ({"minCandidateNodesPercentage": 900}, "not in valid range [0, 100]"),
        ({"minCandidateNodesAbsolute": -1}, "not in valid range [0, inf)"),
        (
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            "cannot be zero at the same time as minCandidateNodesAbsolute",
        ),
        ({"minCandidateNodes": 1}, "unknown field"),
    ],
)
def test_args_validation(raw: dict[str, Any], problem: str) -> None:
    """ValidateDefaultPreemptionArgs' rejections (TestValidateDefaultPreemptionArgs:
    "negative minCandidateNodesPercentage", "minCandidateNodesPercentage over 100",
    "negative minCandidateNodesAbsolute", "all zero")."""
    with pytest.raises(ArgsError, match=problem.replace("[", r"\[").replace(")", r"\)")):
        DefaultPreemptionArgs.from_mapping(raw)


def test_args_defaults() -> None:
    """SetDefaults_DefaultPreemptionArgs: 10 percent, 100 absolute."""
    assert DefaultPreemptionArgs.from_mapping({}) == DefaultPreemptionArgs(10, 100)


@pytest.mark.parametrize(
    ("pct", "absolute", "num_nodes", "want"),
    [
        (10, 100, 10, 10),  # "no need to use percentage"
        (40, 1, 10, 4),  # "use percentage"
        (10, 10, 1, 1),  # "at most numNodes"
        (10, 100, 1000, 100),  # absolute wins over 10%
        (10, 100, 5000, 500),  # 10% wins
    ],
)
def test_calculate_num_candidates(pct: int, absolute: int, num_nodes: int, want: int) -> None:
    """calculateNumCandidates (TestCalculateNumCandidates)."""
    plugin = DefaultPreemption(
        {"minCandidateNodesPercentage": pct, "minCandidateNodesAbsolute": absolute}, Handle()
    )
    assert plugin.get_offset_and_num_candidates(num_nodes) == (0, want)


# ------------------------------------------------------------------ candidate choice


def _t(sec: int) -> datetime:
    return datetime(1970, 1, 1, 0, 0, sec, tzinfo=UTC)


def cand(name: str, *victims: tuple[int, int | None], pdb: int = 0) -> Candidate:
    pods = tuple(
        attrs_evolve_start(pod(f"{name}-{i}", priority=p), s) for i, (p, s) in enumerate(victims)
    )
    return Candidate(name, pods, pdb)


def attrs_evolve_start(p: Pod, sec: int | None) -> Pod:
    return attrs.evolve(p, start_time=None if sec is None else _t(sec))


@pytest.mark.parametrize(
    ("candidates", "want"),
    [
        # fewest PDB violations
        ([cand("a", (0, 1), pdb=1), cand("b", (100, 1))], "b"),
        # lowest highest-victim priority
        ([cand("a", (100, 1)), cand("b", (10, 1), (10, 1))], "b"),
        # smallest sum of (priority + 2^31): two -100 pods cost more than one
        ([cand("a", (-100, 1), (-100, 1)), cand("b", (-100, 1))], "b"),
        # sum ties -> fewest victims; then latest earliest start of top-priority victims
        ([cand("a", (10, 1), (0, 1)), cand("b", (10, 5), (0, 1))], "b"),
        # a victim that never started counts as "now": the latest
        ([cand("a", (10, 5)), cand("b", (10, None))], "b"),
        # all tied: the first
        ([cand("a", (10, 5)), cand("b", (10, 5))], "a"),
    ],
)
def test_pick_one_node_for_preemption(candidates: list[Candidate], want: str) -> None:
    """pickOneNodeForPreemption's ordered criteria (TestPickOneNodeForPreemption: "a pod that
    fits with no preemption" ... "mixed priority pods are preempted, pick later StartTime
    one when priorities are equal")."""
    assert pick_one_node_for_preemption(candidates) == want


def test_pdb_violation_split_keeps_order_and_skips_disrupted() -> None:
    """filterPodsWithPDBViolation: the budget allows 1; the first matching pod takes it, the
    second violates; a pod listed in disruptedPods is not charged; an empty selector matches
    nothing (TestDryRunPreemption "preemption with violation of the pdb ... disruptedPods")."""
    budget = PodDisruptionBudget.from_manifest(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "b"},
            "spec": {"selector": {"matchLabels": {"app": "foo"}}},
            "status": {"disruptionsAllowed": 1, "disruptedPods": {"p0": "2025-01-01T00:00:00Z"}},
        }
    )
    empty = PodDisruptionBudget.from_manifest(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "all"},
            "spec": {"selector": {}},
            "status": {"disruptionsAllowed": 0},
        }
    )
    infos = [PodInfo(pod(f"p{i}", labels={"app": "foo"})) for i in range(3)]
    violating, ok = filter_pods_with_pdb_violation(infos, [budget, empty])
    assert [pi.pod.name for pi in ok] == ["p0", "p1"]
    assert [pi.pod.name for pi in violating] == ["p2"]


@pytest.mark.parametrize(
    ("spec", "allowed"),
    [
        ({"minAvailable": 2}, 1),  # 3 healthy - 2
        ({"minAvailable": "50%"}, 1),  # ceil(0.5 * 4) = 2 desired, 3 healthy
        ({"maxUnavailable": 1}, 0),  # expected 4 -> desired 3, 3 healthy
        ({"maxUnavailable": "50%"}, 1),  # 4 - ceil(2) = 2 desired
        ({}, 0),
    ],
)
def test_budget_without_status_is_resolved_from_the_matching_pods(
    spec: dict[str, Any], allowed: int
) -> None:
    """Without status.disruptionsAllowed the disruption controller's rule is applied
    (pkg/controller/disruption: healthy = running matching pods, desired from minAvailable or
    expected - maxUnavailable, percentages rounded up, allowed = healthy - desired): 3 bound
    pods and 1 pending pod match."""
    raw = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "b"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec},
    }
    budget = PodDisruptionBudget.from_manifest(raw)
    assert budget.disruptions_allowed is None
    pods = [pod(f"w{i}", node_name="n1", labels={"app": "web"}) for i in range(3)]
    pods += [pod("pending", labels={"app": "web"}), pod("other", node_name="n1")]
    assert budget.resolve_disruptions_allowed(pods).disruptions_allowed == allowed


# ------------------------------------------------------------------ nominated pods


def _fit_framework() -> Framework:
    profile = Profile(plugins={"preFilter": ("NodeResourcesFit",), "filter": ("NodeResourcesFit",)})
    return Framework(profile, Handle())


@pytest.mark.parametrize(("nominated_priority", "fits"), [(10, False), (5, False), (1, True)])
def test_filter_counts_nominated_pods_of_equal_or_higher_priority(
    nominated_priority: int, fits: bool
) -> None:
    """RunFilterPluginsWithNominatedPods: a pod nominated to n1 with priority >= the incoming
    pod's takes its room there (the incoming 1-cpu pod no longer fits on the 2-cpu node with
    1 cpu used); a lower-priority nominated pod is ignored (framework_test.go
    TestRunFilterPluginsWithNominatedPods, schedule_one_test.go "nominated pods")."""
    fw = _fit_framework()
    ni = NodeInfo(node("n1"))
    ni.add_pod_info(PodInfo(pod("running", node_name="n1")))
    nominator = PodNominator()
    nominator.add_nominated_pod(PodInfo(pod("nominated", priority=nominated_priority)), "n1")
    incoming = pod("incoming", priority=5)
    state = CycleState()
    snap = PredicateSnapshot(fw)
    with snap.bound():
        fw.run_pre_filter_plugins(state, incoming, [ni])
        assert fw.run_filter_plugins(state, incoming, ni).is_success
        with fw.handle.nominating(nominator):
            st = fw.run_filter_plugins_with_nominated_pods(state, incoming, ni)
    assert st.is_success is fits
    if not fits:
        assert st.reasons == ("Insufficient cpu",)
    assert len(ni.pods) == 1  # the node itself is not changed


def test_nominator_moves_and_clears_nominations() -> None:
    """AddNominatedPod replaces an earlier nomination; DeleteNominatedPodIfExists drops it."""
    n = PodNominator()
    p = PodInfo(pod("p"))
    n.add_nominated_pod(p, "n1")
    n.add_nominated_pod(p, "n2")
    assert (n.nominated_pods_for_node("n1"), n.nominated_node_name(p.pod)) == ((), "n2")
    n.delete_nominated_pod_if_exists(p.pod)
    assert len(n) == 0 and n.nodes() == ()


# ------------------------------------------------------------------ eligibility


def test_pod_eligible_to_preempt_others() -> None:
    """TestPodEligibleToPreemptOthers: "Pod with preemptionPolicy=Never"; "Pod with nominated
    node" whose node has a lower-priority pod terminating by preemption -> not eligible;
    the same when the nominated node is UnschedulableAndUnresolvable -> eligible."""
    fw = Framework(Profile(plugins={"postFilter": ("DefaultPreemption",)}), Handle())
    plugin = fw.plugins["DefaultPreemption"]
    never = pod("never", priority=10, spec={"preemptionPolicy": "Never"})
    assert plugin.pod_eligible_to_preempt_others(never, None) == (False, NOT_ELIGIBLE_NEVER)
    victim = pod(
        "victim",
        priority=0,
        node_name="n1",
        metadata={"deletionTimestamp": "2025-01-01T00:00:00Z"},
        status={
            "conditions": [
                {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
            ]
        },
    )
    preemptor = pod("preemptor", priority=10, status={"nominatedNodeName": "n1"})
    snap = PredicateSnapshot(fw)
    snap.set_cluster_state([node("n1")], [victim])
    unschedulable = Status(Code.Unschedulable, ("Insufficient cpu",))
    unresolvable = Status(Code.UnschedulableAndUnresolvable, ("x",))
    with snap.bound():
        got = plugin.pod_eligible_to_preempt_others(preemptor, unschedulable)
        assert got == (False, NOT_ELIGIBLE_TERMINATING)
        assert plugin.pod_eligible_to_preempt_others(preemptor, unresolvable) == (True, "")
