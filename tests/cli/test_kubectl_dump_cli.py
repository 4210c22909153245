"""Issue 28: a ``kubectl get nodes,pods,deployments,replicasets,statefulsets,daemonsets,jobs,
pvc,pv,storageclasses,priorityclasses,pdb -A -o yaml`` dump of a 1.34 kind cluster, in the
shape kubectl prints it (one List; managedFields, status, ownerReferences, generated names,
``creationTimestamp: null`` in templates, generated Job selectors, last-applied annotations),
runs unedited and gives the answers it gave after the Job selectors were removed by hand."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedsim.cli import main

DUMP = Path(__file__).parent / "data" / "kubectl-get-all.yaml"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _hand_edited(tmp_path: Path) -> Path:
    """The edit a user had to make before issue 28: drop each Job's generated selector."""
    doc = yaml.safe_load(DUMP.read_text())
    doc = copy.deepcopy(doc)
    for item in doc["items"]:
        if item["kind"] == "Job":
            del item["spec"]["selector"]
    out = tmp_path / "edited.yaml"
    out.write_text(yaml.safe_dump(doc, sort_keys=True))
    return out


def test_the_dump_has_thirty_objects_of_the_twelve_kinds() -> None:
    """The test data is what the issue describes (so the next test means something)."""
    doc = yaml.safe_load(DUMP.read_text())
    assert (doc["kind"], doc["metadata"]) == ("List", {"resourceVersion": ""})
    kinds = [item["kind"] for item in doc["items"]]
    assert len(kinds) == 30
    assert set(kinds) == {
        "Node",
        "Pod",
        "Deployment",
        "ReplicaSet",
        "StatefulSet",
        "DaemonSet",
        "Job",
        "PersistentVolumeClaim",
        "PersistentVolume",
        "StorageClass",
        "PriorityClass",
        "PodDisruptionBudget",
    }
    jobs = [item for item in doc["items"] if item["kind"] == "Job"]
    assert all(
        "batch.kubernetes.io/controller-uid" in j["spec"]["selector"]["matchLabels"] for j in jobs
    )
    assert all(item["metadata"]["managedFields"] for item in doc["items"])


@pytest.mark.parametrize("extra", [(), ("--no-expand-workloads",), ("--validate", "ignore")])
def test_simulate_runs_the_dump_unedited_as_after_the_hand_edit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, extra: tuple[str, ...]
) -> None:
    """The pending high-priority web replica (1500m) fits no worker (1400m free on each).
    Each worker has one priority-0 victim (db-0, the Job pod report-8xq4t); the candidates tie
    on PDB violations, highest victim priority, priority sum and victim count, so
    pickOneNodeForPreemption takes the node whose highest-priority victim started latest: the
    Job pod (db-0 started earlier), on kind-worker2. No controller pod is made twice: every
    Deployment, ReplicaSet, StatefulSet, DaemonSet and Job already has its pods (the
    completed Job wants none). Same output as the hand-edited dump."""
    code, out, err = _run(capsys, "simulate", str(DUMP), "-o", "json", *extra)
    assert code == 0, err
    if extra:
        assert err.startswith("warning: workload expansion is off") or err == ""
    else:
        assert err == ""
    doc: dict[str, Any] = json.loads(out)
    assert doc["summary"] == {
        "scheduled": 1,
        "unschedulable": 0,
        "errors": 0,
        "preempted": 1,
        "nodes": 3,
    }
    placed = {f"{p['namespace']}/{p['name']}": p["node"] for p in doc["pods"]}
    assert placed == {"shop/web-7c5ddbdf54-x2lmb": "kind-worker2", "batch/report-8xq4t": None}
    assert len(doc["warnings"]) == (1 if "--no-expand-workloads" in extra else 0)
    edited = _hand_edited(tmp_path)
    code, again, err = _run(capsys, "simulate", str(edited), "-o", "json", *extra)
    assert code == 0, err
    assert again == out


def test_scale_down_and_scale_up_run_the_dump_unedited_as_after_the_hand_edit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """scale-down without node groups: the control-plane node is NotAutoscaled (CA manages
    only node-group nodes), the workers are above the 0.5 cpu threshold (NotUnderutilized).
    scale-up (one node group over the workers) and scale-down give the same JSON on both
    inputs."""
    edited = _hand_edited(tmp_path)
    code, out, err = _run(capsys, "scale-down", str(DUMP), "-o", "json")
    assert code == 0, err
    doc = json.loads(out)
    reasons = {n["node"]: (n["removable"], n["reason"]) for n in doc["nodes"]}
    assert reasons == {
        "kind-control-plane": (False, "NotAutoscaled"),
        "kind-worker": (False, "NotUnderutilized"),
        "kind-worker2": (False, "NotUnderutilized"),
    }
    code, again, err = _run(capsys, "scale-down", str(edited), "-o", "json")
    assert (code, again) == (0, out), err
    groups = tmp_path / "groups.yaml"
    groups.write_text(NODE_GROUPS)
    code, out, err = _run(capsys, "scale-up", str(DUMP), "--node-groups", str(groups), "-o", "json")
    assert code == 0, err
    doc = json.loads(out)
    # CA's scale-up does not preempt: the web replica needs one new 4-cpu worker
    assert doc["scaleUp"] == {"nodeGroup": "workers", "nodes": 1}
    assert doc["nodeGroups"][0]["pods"] == ["shop/web-7c5ddbdf54-x2lmb"]
    code, again, err = _run(
        capsys, "scale-up", str(edited), "--node-groups", str(groups), "-o", "json"
    )
    assert (code, again) == (0, out), err


NODE_GROUPS = """\
nodeGroups:
- name: workers
  minSize: 1
  maxSize: 4
  nodes: [kind-worker, kind-worker2]
  template:
    node:
      metadata:
        name: workers-template
        labels: {kubernetes.io/os: linux, topology.kubernetes.io/zone: zone-a}
      status:
        allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
"""
