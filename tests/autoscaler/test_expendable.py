"""``--expendable-pods-priority-cutoff`` (scale-up and scale-down), as Cluster Autoscaler
uses it: static_autoscaler.go builds the snapshot from ``FilterOutExpendablePods(scheduled
pods, cutoff)`` and the ``filterOutExpendable`` pod-list processor drops pending pods below the
cutoff ("will be scheduled when enough resources is free. Ignoring in scale up"). CA's FAQ:
"pods with priority lower than this cutoff are expendable: they can be killed without any
consideration during scale down and they don't cause scale up" (default -10; an
overprovisioning placeholder at priority -100 is the documented use)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from schedsim.cli import main

CLUSTER = """apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: overprovisioning}
value: -100
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {pool: cpu}}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {pool: cpu}}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: placeholder
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: rs, controller: true}]
spec:
  nodeName: n1
  priorityClassName: overprovisioning
  containers: [{name: c, resources: {requests: {cpu: 900m, memory: 100Mi}}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: pending-placeholder
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: rs, controller: true}]
spec:
  priorityClassName: overprovisioning
  containers: [{name: c, resources: {requests: {cpu: 900m, memory: 100Mi}}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: app
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs2, uid: rs2, controller: true}]
spec:
  nodeName: n2
  containers: [{name: c, resources: {requests: {cpu: 900m, memory: 100Mi}}}]
"""

GROUPS = """nodeGroups:
- name: cpu
  minSize: 0
  maxSize: 10
  nodeSelector: {pool: cpu}
  template:
    node:
      metadata: {name: cpu-template, labels: {pool: cpu}}
      status: {allocatable: {cpu: "1", memory: 1Gi, pods: "110"}}
"""


def run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], *argv: str
) -> tuple[dict[str, Any], str]:
    (tmp_path / "c.yaml").write_text(CLUSTER)
    (tmp_path / "g.yaml").write_text(GROUPS)
    args = [argv[0], str(tmp_path / "c.yaml"), "--node-groups", str(tmp_path / "g.yaml")]
    assert main([*args, "-o", "json", *argv[1:]]) == 0
    out, err = capsys.readouterr()
    return json.loads(out), err


def test_expendable_pending_pod_does_not_scale_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], store_name: str
) -> None:
    """The pending placeholder (priority -100 < -10) triggers no scale-up and is said to be
    ignored; with the cutoff below its priority it needs a new node (n1 runs the other
    placeholder, n2 an app: both are full)."""
    doc, err = run(tmp_path, capsys, "scale-up", "--store", store_name)
    assert doc["scaleUp"] is None and doc["summary"]["pending"] == 0
    assert "1 pending pod(s) with priority below the expendable-pods priority cutoff (-10)" in err
    doc, err = run(tmp_path, capsys, "scale-up", "--expendable-pods-priority-cutoff", "-1000")
    assert doc["scaleUp"] == {"nodeGroup": "cpu", "nodes": 1}
    assert "cutoff" not in err


def test_expendable_running_pod_does_not_block_scale_down(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], store_name: str
) -> None:
    """n1 only runs the placeholder: left out of the snapshot, n1 is empty and removable (the
    placeholder is not moved); with the cutoff below its priority n1 is 90% used."""
    doc, err = run(tmp_path, capsys, "scale-down", "--store", store_name)
    n1 = next(n for n in doc["nodes"] if n["node"] == "n1")
    assert (n1["removable"], n1["utilization"]["cpu"], n1["moves"]) == (True, 0.0, [])
    assert "1 running pod(s) with priority below" in err
    doc, _ = run(tmp_path, capsys, "scale-down", "--expendable-pods-priority-cutoff", "-1000")
    n1 = next(n for n in doc["nodes"] if n["node"] == "n1")
    assert (n1["removable"], n1["reason"], n1["utilization"]["cpu"]) == (
        False,
        "NotUnderutilized",
        0.9,
    )
