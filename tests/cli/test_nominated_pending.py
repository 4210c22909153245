"""A pending pod with ``status.nominatedNodeName`` (fresh-user report: it vanished from
`schedsim simulate` and was put on its node without any check, overcommitting it).

kube-scheduler 1.34: such a pod is pending. ``schedulePod`` -> ``findNodesThatFitPod`` first
runs Filter on the nominated node alone (``evaluateNominatedNode``; PreferNominatedNode is
GA) and keeps it when it passes, else filters every node (upstream
``TestSchedulerSchedulePod`` / ``TestFindNodesThatPassFilters`` "nominated node" cases). The
queue nominates it on Add (``nominator.addNominatedPod(pInfo, nil)`` reads
``status.nominatedNodeName``), so ``RunFilterPluginsWithNominatedPods`` counts it on that node
for every other pod of equal or higher priority (``addGENominatedPods``).

The Cluster Autoscaler's placement (``--placement first-fit``) keeps CA's reading: its
``FilterOutExpendableAndSplit`` takes pods with a nominated node out of the pending ones and
``ForceAddPod``s them on that node.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from schedsim.cli import main


def _node(name: str, cpu: str) -> str:
    return f"""apiVersion: v1
kind: Node
metadata: {{name: {name}}}
status: {{allocatable: {{cpu: "{cpu}", memory: 4Gi, pods: "110"}}}}
---
"""


def _pod(name: str, cpu: str, *, node: str = "", nominated: str = "", priority: int = 0) -> str:
    spec_node = f"nodeName: {node}, " if node else ""
    status = f"\nstatus: {{phase: Pending, nominatedNodeName: {nominated}}}" if nominated else ""
    container = f'{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}'
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec: {{{spec_node}priority: {priority}, containers: [{container}]}}{status}
---
"""


def _simulate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, *argv: str
) -> dict[str, Any]:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    assert main(["simulate", str(path), "-o", "json", *argv]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def _nodes(doc: dict[str, Any]) -> dict[str, str | None]:
    return {p["name"]: p["node"] for p in doc["pods"]}


# the tester's repro (/work/fresh5/repro/nominated.yaml): n1 is full, nom is nominated there
REPRO = (
    _node("n1", "2")
    + _node("n2", "8")
    + _pod("running", "2", node="n1")
    + _pod("nom", "2", nominated="n1")
)


def test_nominated_pod_is_pending_and_falls_back_when_its_node_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """n1 fails Filter (Insufficient cpu): evaluateNominatedNode finds nothing, every node is
    filtered and nom lands on n2; it is in the output, n1 is not overcommitted."""
    doc = _simulate(tmp_path, capsys, REPRO)
    assert _nodes(doc) == {"nom": "n2"}
    assert doc["summary"]["scheduled"] == 1


def test_nominated_node_is_taken_when_it_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both nodes fit and n1 would win the scores (least allocated): the nominated node n2
    passes Filter, so it is the only feasible node and is chosen without comparing."""
    text = _node("n1", "8") + _node("n2", "4") + _pod("nom", "2", nominated="n2")
    assert _nodes(_simulate(tmp_path, capsys, text)) == {"nom": "n2"}


def test_nominated_pod_holds_its_room_for_equal_priority(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """early (same priority, queued first) is filtered with nom counted on n1 (2 + 3 > 4
    CPUs), so it goes to n2, and nom keeps n1. Without the nomination early would take n1
    (first of the tied nodes) and push nom off its node."""
    text = (
        _node("n1", "4") + _node("n2", "4") + _pod("early", "2") + _pod("nom", "3", nominated="n1")
    )
    assert _nodes(_simulate(tmp_path, capsys, text)) == {"early": "n2", "nom": "n1"}


def test_lower_priority_nomination_is_not_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """addGENominatedPods counts only nominated pods of priority >= the pod's: early
    (priority 10) ignores nom (priority 0) and takes n1; nom's nominated node then fails and
    it falls back to n2."""
    text = (
        _node("n1", "4")
        + _node("n2", "4")
        + _pod("early", "2", priority=10)
        + _pod("nom", "3", nominated="n1")
    )
    assert _nodes(_simulate(tmp_path, capsys, text)) == {"early": "n1", "nom": "n2"}


def test_first_fit_places_nominated_pods_as_ca_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Cluster Autoscaler's placement keeps CA's reading: the nominated pod is running
    on its node (not a pending pod, so not in the output)."""
    doc = _simulate(tmp_path, capsys, REPRO, "--placement", "first-fit")
    assert doc["pods"] == []
