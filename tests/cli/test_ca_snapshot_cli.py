"""Issue 28: the Cluster Autoscaler's debugging snapshot (``/snapshotz`` JSON,
cluster-autoscaler debuggingsnapshot.DebuggingSnapshotImpl) runs end to end. The test file is
the kind cluster of kubectl-get-all.yaml as CA would serve it: Go's JSON of the API objects
(no apiVersion/kind), NodeList entries of a node and its pods, the pending web replica in
UnscheduledPodsCanBeScheduled, one template node (with its kube-proxy pod) for "workers"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedsim.cli import main

DATA = Path(__file__).parent / "data"
SNAPSHOT = DATA / "ca-snapshotz.json"
DUMP = DATA / "kubectl-get-all.yaml"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


TEMPLATE_NOTE = (
    f"warning: {SNAPSHOT}: TemplateNodes: node group(s) workers for scale-up and scale-down "
    "when no --node-groups FILE is given; the snapshot has no sizes or members, so each has "
    "minSize 0, maxSize 1000 and no existing nodes\n"
)


def test_simulate_on_the_snapshot_answers_as_the_cluster_dump(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Same nodes and pods as the dump (minus the controllers, which the snapshot does not
    carry): the same placement and the same preemption."""
    code, out, err = _run(capsys, "simulate", str(SNAPSHOT), "-o", "json")
    assert code == 0, err
    assert err == TEMPLATE_NOTE
    code, dump, _ = _run(capsys, "simulate", str(DUMP), "-o", "json")
    snap, want = json.loads(out), json.loads(dump)
    assert snap["pods"] == want["pods"]
    assert snap["summary"] == want["summary"]


def test_scale_up_uses_the_template_nodes_as_node_groups(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """No --node-groups: the snapshot's template for "workers" is the group; the web replica
    (1500m) needs one new node (CA's binpacking on the template: 4 cpu, kube-proxy on it)."""
    code, out, err = _run(capsys, "scale-up", str(SNAPSHOT), "-o", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["scaleUp"] == {"nodeGroup": "workers", "nodes": 1}
    assert doc["nodeGroups"][0]["currentSize"] == 0
    assert doc["nodeGroups"][0]["maxSize"] == 1000


def test_given_node_groups_replace_the_templates(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    groups = tmp_path / "groups.yaml"
    groups.write_text(
        "nodeGroups:\n- name: big\n  minSize: 0\n  maxSize: 2\n  template:\n    node:\n"
        "      metadata: {name: big-template, labels: {kubernetes.io/os: linux}}\n"
        '      status: {allocatable: {cpu: "16", memory: 64Gi, pods: "110"}}\n'
    )
    code, out, err = _run(
        capsys, "scale-up", str(SNAPSHOT), "--node-groups", str(groups), "-o", "json"
    )
    assert code == 0, err
    assert json.loads(out)["scaleUp"] == {"nodeGroup": "big", "nodes": 1}


def test_scale_down_without_members_says_not_autoscaled(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The snapshot names no group's nodes: CA's NotAutoscaled for every node."""
    code, out, err = _run(capsys, "scale-down", str(SNAPSHOT), "-o", "json")
    assert code == 0, err
    reasons = {n["node"]: n["reason"] for n in json.loads(out)["nodes"]}
    assert set(reasons.values()) == {"NotAutoscaled"}


def test_the_snapshot_error_is_a_warning_and_a_bad_shape_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    doc = json.loads(SNAPSHOT.read_text())
    doc["Error"] = "failed to list pods: context deadline exceeded"
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(doc))
    code, _, err = _run(capsys, "simulate", str(path))
    assert code == 0
    assert (
        f"warning: {path}: the Cluster Autoscaler's snapshot carries an error: failed to list "
        "pods: context deadline exceeded"
    ) in err.splitlines()
    doc["NodeList"][1] = {"Pods": []}
    path.write_text(json.dumps(doc))
    code, out, err = _run(capsys, "simulate", str(path))
    assert (code, out) == (2, "")
    assert err == f"schedsim: error: {path}: NodeList[1].Node: required (a Node)\n"
