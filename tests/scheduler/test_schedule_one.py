"""`schedsim.scheduler.Scheduler`: kube-scheduler 1.34's schedulePod over the snapshot
(pkg/scheduler/schedule_one.go and its tests)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any, ClassVar

import attrs
import pytest

from schedsim.api.core import Node, Pod
from schedsim.api.loading.loader import load_text
from schedsim.framework import (
    CycleState,
    FitError,
    Framework,
    Handle,
    NodeInfo,
    PluginTimings,
    Status,
    default_profile,
    discover_plugins,
)
from schedsim.scheduler import Scheduler
from schedsim.scheduler.scheduling import queue_order
from schedsim.snapshot import PredicateSnapshot
from schedsim.snapshot.infos import PodInfo as StoredPodInfo
from schedsim.testing.snapshot_conformance import make_node, make_pod


def _scheduler(
    nodes: Sequence[Node],
    framework: Framework | None = None,
    bound: Sequence[Pod] = (),
    **kw: Any,
) -> Scheduler:
    fw = framework or Framework(default_profile(), Handle())
    snap = PredicateSnapshot(fw, skip_unschedulable_nodes=False)
    snap.set_cluster_state(nodes, bound)
    return Scheduler(snap, **kw)


def test_fair_evaluation_for_nodes() -> None:
    """TestFairEvaluationForNodes: 500 nodes, percentageOfNodesToScore 30 (so 500 % 150 != 0);
    each attempt finds exactly nodesToFind feasible nodes and nextStartNodeIndex advances by
    the nodes processed, modulo all nodes, over more than two rounds."""
    nodes = [make_node(str(i)) for i in range(500)]
    sched = _scheduler(nodes, percentage_of_nodes_to_score=30)
    pod = make_pod("p")
    for i in range(2 * (500 // 150 + 1)):
        found = sched.schedule_pod(pod)
        assert not isinstance(found, FitError)
        result, _ = found
        assert result.feasible_nodes == 150
        assert result.evaluated_nodes == 150
        assert sched.next_start_node_index == (i + 1) * 150 % 500
        # no score plugins: every node scores 1, the first in evaluation order wins
        assert result.suggested_host == str(i * 150 % 500)


def test_rejected_nodes_count_towards_the_next_start() -> None:
    """findNodesThatFitPod advances nextStartNodeIndex by feasible + rejected nodes
    (``processedNodes := len(feasibleNodes) + diagnosis.NodeToStatus.Len()``)."""
    nodes = [make_node(f"n{i:03}", cpu="1" if i % 2 else "100m") for i in range(200)]
    sched = _scheduler(nodes)  # 200 nodes: adaptive 48 % -> 100 feasible nodes to find
    found = sched.schedule_pod(make_pod("p", cpu="500m"))
    assert not isinstance(found, FitError)
    result, _ = found
    assert (result.feasible_nodes, result.evaluated_nodes) == (100, 200)
    assert result.suggested_host == "n001"
    assert sched.next_start_node_index == 0


def test_one_feasible_node_skips_scoring_and_filter_is_not_rerun() -> None:
    """One feasible node is chosen without scoring ('When only one node after predicate,
    just use it'); placing it does not run Filter again on the chosen node."""
    timings = PluginTimings()
    fw = Framework(default_profile(), Handle(), timings=timings)
    sched = _scheduler([make_node("small", cpu="1"), make_node("big", cpu="8")], fw)
    placed = sched.schedule_one(make_pod("p", cpu="4"))
    assert placed.node_name == "big"
    assert timings.calls[("NodeResourcesFit", "filter")] == 2  # once per node, not 3
    assert sched.snapshot.get_node_info("big").pods[0].pod.name == "p"


def test_pre_filter_result_narrows_the_candidates() -> None:
    """A PreFilterResult (NodeAffinity's metadata.name field selector) limits Filter to the
    named nodes; when they do not fit, the others get 'node(s) didn't satisfy plugin(s)
    [NodeAffinity]' (findNodesThatFitPod's absent-nodes status), as the diagnosis says."""
    nodes = [make_node(f"n{i}", cpu="1") for i in range(5)]
    affinity = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["n3"]}
                            ]
                        }
                    ]
                }
            }
        }
    }
    sched = _scheduler(nodes)
    placed = sched.schedule_one(make_pod("fits", spec=affinity), explain=True)
    assert placed.node_name == "n3"
    assert placed.explanation is not None
    assert placed.explanation.pre_filter_nodes == ["n3"]
    assert list(placed.explanation.filter) == ["n3"]
    assert placed.explanation.excluded_nodes == 4
    big = make_pod("big", cpu="2", spec=affinity)
    placed = sched.schedule_one(big)
    assert placed.fit_error is not None
    diagnosed = "0/5 nodes are available: 1 Insufficient cpu, " + (
        "4 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )
    assert sched.snapshot.diagnose(big).message == diagnosed
    # the request exceeds n3's allocatable (UnschedulableAndUnresolvable) and the other nodes
    # were left out: DefaultPreemption has no node to try
    assert placed.fit_error.message == (
        f"{diagnosed} no new claims to deallocate, preemption: 0/5 nodes are available: "
        "5 Preemption is not helpful for scheduling."
    )


def _demo() -> tuple[list[Node], list[Pod], list[Pod]]:
    text = resources.files("schedsim.examples").joinpath("demo-cluster.yaml").read_text()
    m = load_text(text, "demo")
    return (
        list(m.nodes),
        [p for p in m.pods if p.node_name],
        queue_order(p for p in m.pods if not p.node_name),
    )


def test_demo_fit_errors_match_the_diagnosis() -> None:
    """On the shipped demo every pod that fits nowhere gets the FitError a full diagnosis
    gives (kube-scheduler's message), followed by DefaultPreemption's PostFilter message, and
    placed pods pass every Filter where they land."""
    nodes, bound, pending = _demo()
    sched = _scheduler(nodes, bound=bound)
    unschedulable = 0
    for pod in pending:
        placed = sched.schedule_one(pod)
        if placed.fit_error is not None:
            unschedulable += 1
            diagnosed = sched.snapshot.diagnose(pod).message
            assert placed.fit_error.message.startswith(
                diagnosed + " no new claims to deallocate, preemption: "
            )
    assert unschedulable == 2


def _shapes(n: int) -> list[Pod]:
    shapes = [("250m", "256Mi"), ("1", "1Gi"), ("2", "6Gi")]
    return [make_pod(f"p{i:04}", cpu=shapes[i % 3][0], memory=shapes[i % 3][1]) for i in range(n)]


def test_cache_gives_the_same_placements_with_fewer_filter_calls() -> None:
    """Reusing Filter results of identical pods on unchanged nodes (the `ResultCache` rule)
    changes no placement and no FitError, and runs Filter far less."""
    nodes = [
        make_node(f"n{i:03}", cpu=("2", "4", "8")[i % 3], memory=("4Gi", "8Gi", "16Gi")[i % 3])
        for i in range(150)
    ]
    pods = _shapes(700)
    outcomes = []
    calls = []
    for cache in (False, True):
        timings = PluginTimings()
        fw = Framework(default_profile(), Handle(), timings=timings)
        sched = _scheduler(nodes, fw, cache=cache)
        outcomes.append(
            [
                (p.node_name, p.fit_error.message if p.fit_error else "")
                for p in map(sched.schedule_one, pods)
            ]
        )
        calls.append(timings.calls[("NodeResourcesFit", "filter")])
    assert outcomes[0] == outcomes[1]
    assert sum(1 for n, _ in outcomes[0] if n is None) > 0  # the cluster fills up
    assert calls[1] * 5 < calls[0]


# ---------------------------------------------------------------- scoring wiring


class _FreeCpu:
    """A Score plugin: raw score = the node's free milli-CPU / 100 (no NormalizeScore)."""

    name: ClassVar[str] = "FreeCpu"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.pre_scored = 0

    def schedsim_pre_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status | None:
        self.pre_scored += 1
        return None

    def schedsim_score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return (node_info.allocatable.milli_cpu - node_info.requested.milli_cpu) // 100


def _free_cpu_framework() -> Framework:
    """The default profile's Filter plugins plus FreeCpu at PreScore/Score with weight 2."""
    base = default_profile()
    plugins = dict(base.plugins)
    plugins["preScore"] = ("FreeCpu",)
    plugins["score"] = ("FreeCpu",)
    profile = attrs.evolve(
        base,
        plugins=plugins,
        explicit=frozenset({"FreeCpu"}),
        plugin_weights={"FreeCpu": 2},
    )
    return Framework(profile, Handle(), discover_plugins(extra={"FreeCpu": _FreeCpu}))


def test_highest_total_wins_and_explanation_has_raw_and_final_scores() -> None:
    """Several feasible nodes are scored (PreScore once, Score per node) and the highest
    total wins; --explain records raw and final (normalized x weight) scores per node."""
    fw = _free_cpu_framework()
    nodes = [make_node("a", cpu="2"), make_node("b", cpu="6"), make_node("c", cpu="4")]
    sched = _scheduler(nodes, fw)
    placed = sched.schedule_one(make_pod("p", cpu="1"), explain=True)
    assert placed.node_name == "b"
    assert fw.plugins["FreeCpu"].pre_scored == 1
    ex = placed.explanation
    assert ex is not None
    # free milli-CPU / 100 before placement: a 2000-0 -> 20, b 60, c 40
    assert ex.score == {"a": {"FreeCpu": 20}, "b": {"FreeCpu": 60}, "c": {"FreeCpu": 40}}
    assert ex.final_score == {"a": {"FreeCpu": 40}, "b": {"FreeCpu": 120}, "c": {"FreeCpu": 80}}
    assert ex.selected_node == "b"
    # the next identical pod: b has 5 cores free, still the most
    assert sched.schedule_one(make_pod("q", cpu="1")).node_name == "b"
    # ties (b 4 cores free, c 4): the first tied node in evaluation order; the walk starts
    # at nextStartNodeIndex = 6 % 3 = 0, so b comes before c
    assert sched.schedule_one(make_pod("r", cpu="1")).node_name == "b"


def test_explanation_filter_grid() -> None:
    """The filter grid names, per node, the plugins that ran: "passed" up to the rejecting
    plugin, whose entry is its message (the simulator's filter-result annotation)."""
    nodes = [
        make_node("tainted", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
        make_node("small", cpu="100m"),
        make_node("ok"),
    ]
    sched = _scheduler(nodes)
    placed = sched.schedule_one(make_pod("p", cpu="1"), explain=True)
    ex = placed.explanation
    assert ex is not None and placed.node_name == "ok"
    assert ex.filter["tainted"] == {
        "NodeUnschedulable": "passed",
        "NodeName": "passed",
        "TaintToleration": "node(s) had untolerated taint(s)",
    }
    assert ex.filter["small"]["NodeResourcesFit"] == "Insufficient cpu"
    assert set(ex.filter["ok"].values()) == {"passed"}
    assert "NodePorts" not in ex.filter["ok"]  # PreFilter said Skip: its Filter did not run
    assert ex.pre_filter["NodePorts"] == "skip"
    assert ex.pre_filter["NodeResourcesFit"] == "success"
    assert ex.to_json()["nodes"] == {
        "all": 3,
        "evaluated": 3,
        "feasible": 1,
        "notEvaluated": 0,
        "excludedByPreFilter": 0,
    }


def test_explanation_counts_nodes_not_evaluated() -> None:
    """With more nodes than numFeasibleNodesToFind, the untried nodes are counted, not
    listed: 300 nodes, adaptive 48 % -> 144 feasible nodes to find."""
    sched = _scheduler([make_node(f"n{i:03}") for i in range(300)])
    ex = sched.schedule_one(make_pod("p"), explain=True).explanation
    assert ex is not None
    assert len(ex.filter) == 144
    assert ex.not_evaluated_nodes == 156


def test_explanation_of_a_pod_placed_on_its_nominated_node() -> None:
    """kube-scheduler 1.34 ``evaluateNominatedNode``: a nominated pod whose node passes
    Filter goes there without the other nodes being filtered (``ScheduleResult`` with
    EvaluatedNodes 1, FeasibleNodes 1); the explanation shows that node's Filter results
    and counts the rest as not evaluated (a fresh user saw "0 of 3 nodes evaluated")."""
    sched = _scheduler([make_node("a"), make_node("b"), make_node("c")])
    pod = make_pod("p", cpu="1")
    sched.nominator.add_nominated_pod(StoredPodInfo(pod, []), "b")
    placed = sched.schedule_one(pod, explain=True)
    ex = placed.explanation
    assert ex is not None and placed.node_name == "b"
    assert list(ex.filter) == ["b"]
    assert set(ex.filter["b"].values()) == {"passed"}
    assert ex.to_json()["nodes"] == {
        "all": 3,
        "evaluated": 1,
        "feasible": 1,
        "notEvaluated": 2,
        "excludedByPreFilter": 0,
    }


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_seeded_runs_are_reproducible(seed: int) -> None:
    """--seed: the same seed gives the same placements."""
    runs = []
    for _ in range(2):
        sched = _scheduler([make_node(f"n{i}") for i in range(6)], seed=seed)
        runs.append([sched.schedule_one(p).node_name for p in _shapes(30)])
    assert runs[0] == runs[1]


def test_cache_gives_the_same_explanations() -> None:
    """The cached walk (`FilterTable`) yields the same per node results, counts and
    nextStartNodeIndex as running every Filter, pod after pod, on a cluster with tainted,
    cordoned and small nodes (more than 100 nodes, so the walk stops early)."""
    nodes = [
        make_node(
            f"n{i:03}",
            cpu=("1", "4")[i % 2],
            unschedulable=i % 17 == 0,
            taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}] if i % 13 == 0 else [],
        )
        for i in range(160)
    ]
    pods = _shapes(120)
    runs = []
    for cache in (False, True):
        sched = _scheduler(nodes, cache=cache)
        got = []
        for p in pods:
            placed = sched.schedule_one(p, explain=True)
            assert placed.explanation is not None
            got.append(
                (placed.node_name, placed.explanation.to_json(), sched.next_start_node_index)
            )
        runs.append(got)
    assert runs[0] == runs[1]
