"""schedsim.testing's plugin kit: run_plugin reports PreFilterResult and scores,
run_plugin_on_nodes runs Filter and Score over every node the way schedulePod would with the
plugin alone (PreFilterResult narrows Filter; Score only over feasible nodes), make_pod takes
labels and the other fields the API has."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from schedsim.api.core import Pod
from schedsim.framework import (
    Code,
    CycleState,
    Handle,
    NodeInfo,
    PreFilterResult,
    Status,
)
from schedsim.testing import make_node, make_pod, run_plugin, run_plugin_on_nodes

_FULL = Status(Code.Unschedulable, ("full",))


class _Picky:
    """PreFilter narrows to nodes labelled ok=yes; Filter rejects node names ending in 'x';
    Score = number of pods on the node (no NormalizeScore)."""

    name: ClassVar[str] = "Picky"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    def schedsim_pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> PreFilterResult:
        return PreFilterResult(
            frozenset(n.node.name for n in nodes if n.node and n.node.labels.get("ok") == "yes")
        )

    def schedsim_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        assert node_info.node is not None
        return _FULL if node_info.node.name.endswith("x") else None

    def schedsim_score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return len(node_info.pods)


NODES = [
    make_node("a", labels={"ok": "yes"}),
    make_node("bx", labels={"ok": "yes"}),
    make_node("c"),
]


def test_run_plugin_on_nodes_filters_within_the_pre_filter_result_then_scores_feasible() -> None:
    """Filter runs only on nodes in the PreFilterResult (findNodesThatPassFilters), Score only
    on nodes that passed (prioritizeNodes)."""
    bound = [make_pod("old", node_name="a")]
    run = run_plugin_on_nodes(_Picky, make_pod("p"), nodes=NODES, pods=bound)
    assert run.pre_filter_result == PreFilterResult(frozenset({"a", "bx"}))
    assert run.filter == {"a": Status(Code.Success), "bx": _FULL.with_plugin("Picky")}
    assert run.feasible == ("a",)
    assert run.scores == {"a": 1} and run.normalized_scores == {"a": 1}
    assert run.score_status == Status(Code.Success)


def test_run_plugin_reports_the_node_it_was_asked_about() -> None:
    run = run_plugin(_Picky, make_pod("p"), "c", nodes=NODES)
    assert run.pre_filter_result == PreFilterResult(frozenset({"a", "bx"}))
    assert run.filter is None and run.score is None  # outside the PreFilterResult
    run = run_plugin(_Picky, make_pod("p"), "a", nodes=NODES)
    assert run.filter == Status(Code.Success) and (run.score, run.normalized_score) == (0, 0)


def test_make_pod_fields() -> None:
    pod = make_pod(
        "p",
        labels={"app": "web"},
        annotations={"note": "x"},
        tolerations=[{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
        node_selector={"disk": "ssd"},
        priority=7,
        scheduler_name="other",
    )
    assert pod.labels == {"app": "web"} and pod.annotations == {"note": "x"}
    assert pod.priority == 7 and pod.scheduler_name == "other"
    assert [t.key for t in pod.tolerations] == ["gpu"]
    assert dict(pod.node_selector) == {"disk": "ssd"}


class _Gate:
    """Permit: allow pods labelled go=yes, make go=wait ones wait 30s, reject the rest
    (kube-scheduler's three Permit answers: Success, Wait with a timeout, Unschedulable)."""

    name: ClassVar[str] = "Gate"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    def schedsim_permit(
        self, state: CycleState, pod: Pod, node_name: str
    ) -> Status | tuple[Status, float] | None:
        go = pod.labels.get("go")
        if go == "yes":
            return None
        if go == "wait":
            return Status(Code.Wait), 30
        return Status(Code.Unschedulable, ("not yet",))


def test_the_kit_returns_permit_results() -> None:
    nodes = [make_node("n1")]
    allow = run_plugin(_Gate, make_pod("a", labels={"go": "yes"}), "n1", nodes=nodes, permit=True)
    assert allow.permit is not None and allow.permit.is_success
    assert allow.permit_timeout is None
    wait = run_plugin(_Gate, make_pod("w", labels={"go": "wait"}), "n1", nodes=nodes, permit=True)
    assert wait.permit is not None and wait.permit.code is Code.Wait
    assert wait.permit.plugin == "Gate"
    assert wait.permit_timeout == 30.0
    no = run_plugin(_Gate, make_pod("r"), "n1", nodes=nodes, permit=True)
    assert no.permit == Status(Code.Unschedulable, ("not yet",), "Gate")
    # without permit=True, Permit does not run
    assert run_plugin(_Gate, make_pod("r"), "n1", nodes=nodes).permit is None


class _Slow:
    name: ClassVar[str] = "Slow"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    def schedsim_permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        return Status(Code.Wait), 3600.0


def test_a_permit_wait_is_capped_at_15_minutes() -> None:
    """upstream maxTimeout (framework/runtime: 15 minutes)."""
    run = run_plugin(_Slow, make_pod("p"), "n1", nodes=[make_node("n1")], permit=True)
    assert run.permit_timeout == 900.0
