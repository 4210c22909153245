"""``schedsim`` on workload controllers: the issue-20 "done when" scenario, bad input, and
``--no-expand-workloads``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from schedsim.cli import main

DATA = Path(__file__).parent / "data"
DONE_WHEN = DATA / "workloads-done-when.yaml"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_done_when_scenario_schedules_ten_pods(capsys: pytest.CaptureFixture[str]) -> None:
    """A capacity-only node (allocatable defaults to capacity), a 3-replica Deployment, a
    2-replica StatefulSet, a DaemonSet over two schedulable nodes and a tainted
    control-plane node, a Job with parallelism 2 and a generateName pod: 10 pods scheduled,
    web-0/web-1, one DaemonSet pod per untainted node, on that node."""
    code, out, err = _run(capsys, "simulate", str(DONE_WHEN), "-o", "json")
    assert code == 0, err
    assert err == ""
    doc: dict[str, Any] = json.loads(out)
    assert doc["summary"] == {
        "scheduled": 10,
        "unschedulable": 0,
        "errors": 0,
        "preempted": 0,
        "nodes": 3,
    }
    pods = {f"{p['namespace']}/{p['name']}": p["node"] for p in doc["pods"]}
    assert pods["default/web-0"] and pods["default/web-1"]
    daemons = {k: v for k, v in pods.items() if k.startswith("monitoring/node-exporter-")}
    assert sorted(daemons.values()) == ["worker-1", "worker-2"]
    assert sum(bool(re.fullmatch(r"default/frontend-\w+-\w{5}", k)) for k in pods) == 3
    assert sum(bool(re.fullmatch(r"default/batch-\w{5}", k)) for k in pods) == 2
    assert sum(bool(re.fullmatch(r"default/debug-\w{5}", k)) for k in pods) == 1
    assert "control-plane" not in pods.values()
    # deterministic: the same input gives the same names and placements
    code, again, _ = _run(capsys, "simulate", str(DONE_WHEN), "-o", "json")
    assert again == out


def test_no_expand_workloads_keeps_only_the_listed_pods(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--no-expand-workloads``: only the pods the input lists (the generateName pod)."""
    code, out, _ = _run(capsys, "simulate", str(DONE_WHEN), "-o", "json", "--no-expand-workloads")
    assert code == 0
    doc = json.loads(out)
    names = [p["name"] for p in doc["pods"]]
    assert len(names) == 1 and names[0].startswith("debug-")
    # nothing silently dropped: the controllers whose pods were not made are counted
    messages = [w["message"] for w in doc["warnings"]]
    assert any(
        m.startswith("workload expansion is off (--no-expand-workloads): the pods of ")
        and "Deployment" in m
        for m in messages
    ), messages


def test_scale_down_accepts_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    """scale-down (like scale-up and simulate) takes ``--no-expand-workloads``."""
    code, _, err = _run(capsys, "scale-down", str(DONE_WHEN), "--no-expand-workloads")
    assert code == 0, err
    code, _, err = _run(capsys, "scale-down", str(DONE_WHEN), "-o", "json")
    assert code == 0, err


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        pytest.param(
            "matchLabels: {app: frontend}",
            "matchLabels: {app: backend}",
            "Deployment default/frontend: spec.template.metadata.labels: invalid value "
            "{'app': 'frontend'}: `selector` does not match template `labels`",
            id="selector does not match",
        ),
        pytest.param(
            "replicas: 3",
            "replicas: -3",
            "Deployment default/frontend: spec.replicas: invalid value -3: must be greater "
            "than or equal to 0",
            id="negative replicas",
        ),
    ],
)
def test_bad_workloads_exit_2_naming_file_object_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, message: str
) -> None:
    """Refused as the API server's validation refuses them, exit status 2."""
    text = DONE_WHEN.read_text()
    assert old in text
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace(old, new, 1))
    code, out, err = _run(capsys, "simulate", str(bad))
    assert code == 2 and out == ""
    assert err == f"schedsim: error: {bad}: {message}\n"
