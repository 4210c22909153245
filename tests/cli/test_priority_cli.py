"""Queue order follows the resolved priority (PrioritySort): with one free cpu, the pod of
the globalDefault class (1000) is scheduled before the pod of class ``low`` (10), although it
comes later in the file and is named later (the fresh-user repro)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedsim.cli import main

TEXT = """apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "1", memory: 4Gi, pods: "110"}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: base}
value: 1000
globalDefault: true
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 10
---
apiVersion: v1
kind: Pod
metadata: {name: a-low}
spec: {priorityClassName: low, containers: [{name: c, resources: {requests: {cpu: 1}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b-default}
spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}
"""


@pytest.mark.parametrize("placement", ["kube-scheduler", "first-fit"])
def test_higher_priority_class_gets_the_last_slot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], placement: str
) -> None:
    f = tmp_path / "prio.yaml"
    f.write_text(TEXT)
    assert main(["simulate", str(f), "-o", "json", "--placement", placement]) == 0
    pods = {p["name"]: p["node"] for p in json.loads(capsys.readouterr().out)["pods"]}
    assert pods == {"b-default": "n1", "a-low": None}
