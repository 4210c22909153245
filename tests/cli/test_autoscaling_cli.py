"""``schedsim scale-up`` and ``schedsim scale-down``: the shipped demo, JSON and table output,
both stores, and bad input (exit status 2, one ``schedsim: error: FILE: field: problem`` line,
nothing on stdout, never a traceback)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedsim.cli import main

CLUSTER = """\
apiVersion: v1
kind: Node
metadata: {name: gpu-0, labels: {pool: gpu}}
status: {allocatable: {cpu: "1", memory: 1000, pods: "110", nvidia.com/gpu: "1"}}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-1, labels: {pool: gpu}}
status: {allocatable: {cpu: "1", memory: 1000, pods: "110", nvidia.com/gpu: "1"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: big
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: rs, controller: true}]
spec:
  nodeName: gpu-1
  containers:
  - name: c
    resources: {requests: {cpu: 600m, memory: 100}, limits: {nvidia.com/gpu: "1"}}
"""

PENDING = """\
---
apiVersion: v1
kind: Pod
metadata:
  name: train-{i}
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: job, uid: job, controller: true}]
spec:
  containers:
  - name: c
    resources: {requests: {cpu: 100m, memory: 100}, limits: {nvidia.com/gpu: "1"}}
"""

GROUPS: dict[str, Any] = {
    "nodeGroups": [
        {
            "name": "gpu",
            "minSize": 0,
            "maxSize": 10,
            "nodeSelector": {"pool": "gpu"},
            "template": {
                "node": {
                    "metadata": {"name": "gpu-template", "labels": {"pool": "gpu"}},
                    "status": {
                        "allocatable": {"cpu": "1", "memory": "1000", "pods": "110",
                                        "nvidia.com/gpu": "1"}},
                }
            },
        },
        {
            "name": "cpu",
            "minSize": 0,
            "maxSize": 10,
            "template": {"node": {"metadata": {"name": "cpu-template"},
                                  "status": {"allocatable": {"cpu": "8", "memory": "8Gi"}}}},
        },
    ]
}  # fmt: skip


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER + "".join(PENDING.replace("{i}", str(i)) for i in range(3)))
    groups = tmp_path / "groups.yaml"
    groups.write_text(yaml.safe_dump(GROUPS))
    return str(cluster), str(groups)


def test_demo_scale_up(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["scale-up"], capsys)
    assert code == 0, err
    assert "scale up highmem by 1 node(s) for 1 pod(s) (least-waste)" in out
    assert "untolerated taint {dedicated: gpu}" in out  # escaped, not rich markup
    code, out, _ = run(["scale-up", "-o", "json"], capsys)
    doc = json.loads(out)
    assert doc["scaleUp"] == {"nodeGroup": "highmem", "nodes": 1}
    assert doc["noScaleUp"] == [
        {
            "pod": "ml/train-2",
            "reasons": {
                "general": "wouldn't fit: node(s) didn't match Pod's node affinity/selector",
                "gpu": "wouldn't fit: node(s) had untolerated taint {dedicated: gpu}",
                "highmem": "wouldn't fit: node(s) didn't match Pod's node affinity/selector",
            },
        }
    ]
    assert doc["summary"] == {
        "pending": 7, "onExistingNodes": 5, "helped": 1, "awaiting": 0, "noScaleUp": 1}  # fmt: skip


def test_demo_scale_down(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["scale-down", "-o", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    by_node = {n["node"]: (n["removable"], n["reason"]) for n in doc["nodes"]}
    assert by_node == {
        "worker-a": (False, "NotUnderutilized"),
        "worker-b": (False, "BlockedByPod"),
        "gpu-1": (True, None),
        "worker-c": (True, None),
    }
    code, out, _ = run(["scale-down"], capsys)
    assert "2 of 4 node(s) removable (utilization threshold 0.5)" in out


@pytest.mark.parametrize("store", ["delta", "basic"])
def test_scale_up_files(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str], store: str
) -> None:
    """The CA outcome "one pod per node, one device per node" through the command: the
    existing GPU nodes: gpu-0 takes one pod, the two others need 2 new nodes; the cpu group
    says what it lacks."""
    cluster, groups = files
    code, out, err = run(["scale-up", cluster, "--node-groups", groups, "-o", "json",
                          "--store", store], capsys)  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    assert doc["scaleUp"] == {"nodeGroup": "gpu", "nodes": 2}
    assert doc["existingNodes"] == [{"pod": "default/train-0", "node": "gpu-0"}]
    [gpu, cpu] = doc["nodeGroups"]
    assert (gpu["currentSize"], gpu["nodes"]) == (2, 2)
    assert cpu["nodes"] == 0
    code, out, _ = run(["scale-up", cluster, "--node-groups", groups, "--expander", "most-pods"],
                       capsys)  # fmt: skip
    assert "scale up gpu by 2 node(s) for 2 pod(s) (most-pods)" in out


@pytest.mark.parametrize("store", ["delta", "basic"])
def test_scale_down_files(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str], store: str
) -> None:
    cluster, _ = files
    code, out, err = run(["scale-down", cluster, "-o", "json", "--store", store], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert [(n["node"], n["removable"]) for n in doc["nodes"]] == [
        ("gpu-0", True),
        ("gpu-1", False),
    ]
    assert doc["nodes"][1]["utilization"] == {"cpu": 0.6, "memory": 0.1, "devices": 0.0}
    code, out, _ = run(["scale-down", cluster, "--utilization-threshold", "0.7", "-o", "json"],
                       capsys)  # fmt: skip
    doc = json.loads(out)
    assert doc["nodes"][1]["reason"] == "NoPlaceToMovePods"
    assert doc["nodes"][1]["pod"] == "default/big"


def _error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code, out, err = run(args, capsys)
    assert code == 2
    assert out == ""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("schedsim: error: ")
    return lines[0].removeprefix("schedsim: error: ")


def test_bad_node_groups(
    files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster, _ = files
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"nodeGroups": [{"name": "g", "maxSize": "ten"}]}))
    msg = _error(["scale-up", cluster, "--node-groups", str(bad)], capsys)
    assert msg == f"{bad}: nodeGroups[0].maxSize: expected an integer, got a string"
    msg = _error(["scale-down", cluster, "--node-groups", str(bad)], capsys)
    assert msg.startswith(f"{bad}: nodeGroups[0].maxSize")
    bad.write_text("nodeGroups:\n- name: g\n  maxSize: 3\n  template:\n    node: {metadata: {}}\n")
    msg = _error(["scale-up", cluster, "--node-groups", str(bad)], capsys)
    assert msg == f"{bad}: nodeGroups[0].template.node.metadata.name: required"
    msg = _error(["scale-up", cluster, "--node-groups", str(tmp_path / "missing.yaml")], capsys)
    assert msg == f"{tmp_path / 'missing.yaml'}: no such file or directory"


def test_template_pod_with_missing_claim(
    files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster, _ = files
    groups = tmp_path / "claims.yaml"
    doc = json.loads(json.dumps(GROUPS))
    doc["nodeGroups"][0]["template"]["pods"] = [
        {"metadata": {"name": "ds"},
         "spec": {"resourceClaims": [{"name": "c", "resourceClaimName": "nowhere"}]}}
    ]  # fmt: skip
    groups.write_text(yaml.safe_dump(doc))
    msg = _error(["scale-up", cluster, "--node-groups", str(groups)], capsys)
    assert msg == (
        f"{groups}: pod default/ds references ResourceClaim default/nowhere, which is neither "
        "in resourceClaims nor in the cluster"
    )


def test_usage_errors(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    cluster, _ = files
    assert _error(["scale-up", cluster], capsys) == "--node-groups FILE is required with CLUSTER"
    msg = _error(["scale-down", cluster, "--utilization-threshold", "2"], capsys)
    assert msg == "--utilization-threshold: must be between 0 and 1, got 2.0"


def test_documented_node_groups_example_is_valid() -> None:
    """The node-groups example in docs/cli.md parses, and its template can be copied."""
    from schedsim.simulation.nodegroups import (
        parse_node_groups,
        sanitized_node_info,
        template_node_info,
    )

    text = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text("utf-8")
    section = text.split("## The node-groups file", 1)[1]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    [g] = parse_node_groups(yaml.safe_load(block), "docs/cli.md")
    assert (g.name, g.max_size, g.nodes) == ("gpu", 3, frozenset({"gpu-1"}))
    copy = sanitized_node_info(template_node_info(g.template), "gpu-template-e-0", "e-0")
    assert [s.pool.name for s in copy.local_resource_slices] == ["gpu-template-e-0"]
    assert copy.csi_node is not None and copy.csi_node.name == "gpu-template-e-0"
    assert [p.pod.name for p in copy.pods] == ["gpu-agent-e-0"]


def test_progress_bar_only_for_many_items_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from schedsim import cli_autoscaling

    with cli_autoscaling._progress(100, "nodes") as callback:
        assert callback is None  # stderr is not a terminal here
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    with cli_autoscaling._progress(cli_autoscaling.PROGRESS_THRESHOLD - 1, "nodes") as callback:
        assert callback is None
    with cli_autoscaling._progress(cli_autoscaling.PROGRESS_THRESHOLD, "nodes") as callback:
        assert callback is not None
        callback(cli_autoscaling.PROGRESS_THRESHOLD, cli_autoscaling.PROGRESS_THRESHOLD)
    assert capsys.readouterr().out == ""  # never on stdout
