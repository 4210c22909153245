"""Preemption in `schedsim simulate` (kube-scheduler placement), end to end on both stores:
issue 14's "Done when" scenarios, the FitError's ``preemption: ...`` suffix, budgets, and the
JSON/table output of victims and nominations.

Expected values follow kube-scheduler 1.34: TestPreempt / TestPostFilter
(default_preemption_test.go) for who is preempted, schedule_one_test.go and
test/integration/scheduler/preemption for the messages (``0/N nodes are available: ...
preemption: 0/N nodes are available: N No preemption victims found for incoming pod.``), the
preemption doc (https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/:
"Pods with preemptionPolicy: Never ... will not preempt other pods", "a Pod ... can be placed
on a node once lower-priority Pods are evicted", PodDisruptionBudget "supported, but not
guaranteed").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedsim.cli import main
from schedsim.engine import Cluster, Engine, EngineConfig
from schedsim.scheduler.scheduling import SimulationResult

CLASSES = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high-never}
value: 1000
preemptionPolicy: Never
"""


def node(name: str, cpu: str = "2") -> str:
    return f"""
---
apiVersion: v1
kind: Node
metadata: {{name: {name}}}
status: {{allocatable: {{cpu: "{cpu}", memory: 4Gi, pods: "10"}}}}
"""


def pod(name: str, cls: str, cpu: str = "2", node_name: str = "", labels: str = "{}") -> str:
    bound = f"nodeName: {node_name}, " if node_name else ""
    return f"""
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default, labels: {labels}}}
spec: {{{bound}priorityClassName: {cls},
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}]}}
"""


def run(text: str, store: str) -> SimulationResult:
    return Engine(EngineConfig(store=store)).simulate(Cluster.from_text(text))


def by_name(result: SimulationResult) -> dict[str, tuple[str | None, str, str, str]]:
    return {
        o.pod.name: (o.node_name, o.preempted_by, o.nominated_node, o.message)
        for o in result.outcomes
    }


def test_high_priority_pod_preempts_the_low_one(store_name: str) -> None:
    """Done when: n1 (2 cpu) runs a low-priority 2-cpu pod; the pending high-priority 2-cpu
    pod lands on n1 and the low one is reported as preempted by it (TestPreempt "basic
    preemption logic"; the preemptor is nominated, then placed on its next attempt)."""
    text = CLASSES + node("n1") + pod("low", "low", node_name="n1") + pod("high", "high")
    result = run(text, store_name)
    got = by_name(result)
    assert got["high"] == ("n1", "", "n1", "")
    assert got["low"][:2] == (None, "default/high")
    assert (result.scheduled, result.unschedulable, result.preempted) == (1, 0, 1)


def test_preemption_policy_never_preempts_nothing(store_name: str) -> None:
    """Done when: a preemptionPolicy: Never pod with the same priority preempts nothing
    (TestPodEligibleToPreemptOthers "Pod with preemptionPolicy=Never"; the message is
    PostFilter's ``preemption: not eligible due to preemptionPolicy=Never.``)."""
    text = CLASSES + node("n1") + pod("low", "low", node_name="n1") + pod("high", "high-never")
    result = run(text, store_name)
    got = by_name(result)
    assert got["high"] == (
        None,
        "",
        "",
        "0/1 nodes are available: 1 Insufficient cpu. "
        "no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never.",
    )
    assert "low" not in got and result.preempted == 0


def test_two_pods_for_one_slot_go_in_priority_order(store_name: str) -> None:
    """Done when: two pending pods compete for one slot: the higher priority one is
    scheduled first (PrioritySort); the lower one cannot preempt it and gets the FitError
    with DefaultPreemption's suffix (schedule_one_test.go / integration preemption tests:
    ``... preemption: 0/N nodes are available: N No preemption victims found for incoming
    pod.``)."""
    text = CLASSES + node("n1") + node("n2") + node("n3")
    text += pod("a-low", "low", cpu="2") + pod("b-high", "high", cpu="2")
    text += pod("fill2", "high", node_name="n2") + pod("fill3", "high", node_name="n3")
    result = run(text, store_name)
    got = by_name(result)
    assert got["b-high"][0] == "n1"
    assert got["a-low"] == (
        None,
        "",
        "",
        "0/3 nodes are available: 3 Insufficient cpu. no new claims to deallocate, preemption: "
        "0/3 nodes are available: "
        "3 No preemption victims found for incoming pod.",
    )


PDB = """
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: guard, namespace: default}}
spec: {{{spec}, selector: {{matchLabels: {{app: guarded}}}}}}
"""


@pytest.mark.parametrize(
    "budget",
    [
        PDB.format(spec="minAvailable: 1")
        + "\nstatus: {disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1}",
        PDB.format(spec="minAvailable: 1"),  # no status: computed, 1 healthy - 1 = 0
        PDB.format(spec="maxUnavailable: 0"),
    ],
)
def test_the_node_without_budget_violation_is_chosen(store_name: str, budget: str) -> None:
    """Two nodes each run a low pod; the one on n1 is protected by a budget that allows no
    disruption: the preemptor goes to n2 (pickOneNodeForPreemption: fewest PDB violations
    first; TestSelectBestCandidate "... pdb violating ..."). The budget's allowed disruptions
    come from its status, or from minAvailable/maxUnavailable over the matching pods."""
    text = CLASSES + node("n1") + node("n2") + budget
    text += pod("guarded", "low", node_name="n1", labels="{app: guarded}")
    text += pod("free", "low", node_name="n2") + pod("high", "high")
    got = by_name(run(text, store_name))
    assert got["high"][:3] == ("n2", "", "n2")
    assert got["free"][1] == "default/high"
    assert "guarded" not in got  # still running on n1


def test_budget_is_only_a_preference() -> None:
    """A budget is "supported, but not guaranteed": when only the protected pod can make
    room, it is preempted anyway (1 PDB violation)."""
    budget = PDB.format(spec="minAvailable: 1")
    text = CLASSES + node("n1") + budget
    text += pod("guarded", "low", node_name="n1", labels="{app: guarded}") + pod("high", "high")
    got = by_name(run(text, "delta"))
    assert got["high"][0] == "n1" and got["guarded"][1] == "default/high"


def test_json_and_table_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The victim's JSON entry has ``"node": null`` and ``"preemptedBy"``; the preemptor its
    ``nominatedNode``; the summary counts ``preempted``; the table says the same."""
    f = tmp_path / "c.yaml"
    f.write_text(CLASSES + node("n1") + pod("low", "low", node_name="n1") + pod("high", "high"))
    assert main(["simulate", str(f), "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    pods = {p["name"]: p for p in doc["pods"]}
    assert pods["low"]["node"] is None and pods["low"]["preemptedBy"] == "default/high"
    assert pods["high"]["node"] == "n1" and pods["high"]["nominatedNode"] == "n1"
    assert doc["summary"] == {
        "scheduled": 1,
        "unschedulable": 0,
        "errors": 0,
        "preempted": 1,
        "nodes": 1,
    }
    assert main(["simulate", str(f)]) == 0
    table = capsys.readouterr().out
    assert "preempted by default/high" in table
    assert "1 scheduled, 0 unschedulable, 1 preempted, 1 nodes" in table


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: both}\n"
            "spec: {minAvailable: 1, maxUnavailable: 1, selector: {matchLabels: {a: b}}}\n",
            "PodDisruptionBudget default/both: spec: minAvailable and maxUnavailable cannot "
            "be both set",
        ),
        (
            "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: sel}\n"
            "spec: {minAvailable: 1, selector: {matchExpressions: "
            "[{key: a, operator: Bogus, values: [x]}]}}\n",
            "PodDisruptionBudget default/sel: spec.selector.matchExpressions[0].operator: "
            "unsupported value 'Bogus'",
        ),
        (
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: huge}\n"
            "value: 2000000000\n",
            "PriorityClass huge: value: forbidden: maximum allowed value of a user defined "
            "priority is 1000000000",
        ),
        (
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: tiny}\n"
            "value: -3000000000\n",
            "PriorityClass tiny: value: invalid value -3000000000: out of the int32 range",
        ),
    ],
)
def test_bad_input_names_file_object_and_field(
    text: str, problem: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bad input: ``FILE: KIND NS/NAME: FIELD: problem`` and exit 2, never a traceback
    (ValidatePodDisruptionBudgetSpec, ValidateLabelSelector, ValidatePriorityClass)."""
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    assert main(["simulate", str(f)]) == 2
    err = capsys.readouterr().err
    assert f"{f}: {problem}" in err and "Traceback" not in err


def test_kss_output_leaves_the_victim_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-o kss`` writes the state after the run: the victim is deleted (kube-scheduler
    deletes preemption victims), the preemptor is bound to n1."""
    f = tmp_path / "c.yaml"
    f.write_text(CLASSES + node("n1") + pod("low", "low", node_name="n1") + pod("high", "high"))
    assert main(["simulate", str(f), "-o", "kss"]) == 0
    doc = json.loads(capsys.readouterr().out)
    pods = {p["metadata"]["name"]: p for p in doc["pods"]}
    assert list(pods) == ["high"]
    assert pods["high"]["spec"]["nodeName"] == "n1"
