"""``schedsim simulate`` on a kube-scheduler-simulator export, and ``--output kss``.

The export (tests/cli/data/kss/export.json) is shaped as the simulator's ``/api/v1/export``
writes it (simulator/snapshot ``ResourcesForSnap``: items without apiVersion/kind, a defaulted
v1 KubeSchedulerConfiguration without apiVersion/kind listing every default plugin under
multiPoint). Its embedded configuration is used unless ``--config`` is given, as the
simulator's import restarts its scheduler with it (``snapshot.Service.Load``).

Outcomes, by kube-scheduler's Filter semantics (independent of which feasible node is picked):
nodes node-a, node-b (4 cpu / 8Gi each) and node-gpu (8 cpu, tainted dedicated=gpu); web-0
(1 cpu) is bound to node-a. batch-0 (3 cpu, priority 1000) is first in the queue and fits;
web-1 (1 cpu) and db-0 (500m) fit; huge (16 cpu) fits nowhere: the taint on node-gpu,
"Insufficient cpu" on the two others.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from schedsim.api.loading.kss import SELECTED_NODE_ANNOTATION
from schedsim.cli import main

EXPORT = Path(__file__).resolve().parent / "data" / "kss" / "export.json"
HUGE = (
    "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu."
    " no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not"
    " helpful for scheduling."
)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["simulate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_an_export_schedules(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, str(EXPORT), "-o", "json")
    assert code == 0
    doc = json.loads(out)
    nodes = {f"{p['namespace']}/{p['name']}": p["node"] for p in doc["pods"]}
    assert list(nodes) == ["batch/batch-0", "shop/db-0", "batch/huge", "shop/web-1"]
    assert all(
        nodes[k] in ("node-a", "node-b") for k in ("batch/batch-0", "shop/db-0", "shop/web-1")
    )
    assert nodes["batch/huge"] is None
    assert [p["message"] for p in doc["pods"] if p["name"] == "huge"] == [HUGE]
    assert doc["summary"] == {
        "scheduled": 3,
        "unschedulable": 1,
        "errors": 0,
        "preempted": 0,
        "nodes": 3,
    }


def test_the_embedded_config_is_used_unless_config_is_given(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    doc = json.loads(EXPORT.read_text())
    doc["schedulerConfig"]["profiles"][0]["schedulerName"] = "kss-scheduler"
    export = tmp_path / "export.json"
    export.write_text(json.dumps(doc))
    code, out, err = _run(capsys, str(export), "-o", "json")
    assert code == 0 and json.loads(out)["pods"] == []
    assert "which no profile has (profiles: 'kss-scheduler'); not scheduled" in err
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    )
    code, out, err = _run(capsys, str(export), "-o", "json", "--config", str(config))
    assert code == 0 and len(json.loads(out)["pods"]) == 4
    assert f"note: --config {config} is used instead of the schedulerConfig of {export}" in err


def test_a_malformed_embedded_config_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    doc = json.loads(EXPORT.read_text())
    doc["schedulerConfig"]["profiles"][0]["plugins"]["multiPoint"]["enabled"][0] = {"nmae": "x"}
    export = tmp_path / "export.json"
    export.write_text(json.dumps(doc))
    code, out, err = _run(capsys, str(export))
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == (
        f"schedsim: error: {export}: kube-scheduler-simulator export: "
        'schedulerConfig.profiles[0].plugins.multiPoint.enabled[0].nmae: unknown field "nmae"; '
        "the profile is the kube-scheduler-simulator export's embedded schedulerConfig: give "
        "--config FILE (a KubeSchedulerConfiguration) to run the export with that "
        "configuration instead"
    )


def test_malformed_export_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    export = tmp_path / "export.json"
    export.write_text('{"pods": [], "nodes": {"node-a": {}}}')
    assert _run(capsys, str(export)) == (
        2,
        "",
        f"schedsim: error: {export}: kube-scheduler-simulator export: nodes: expected a "
        "list, got a mapping\n",
    )


def _kss(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code, out, _ = _run(capsys, *argv, "--output", "kss")
    assert code == 0
    doc: dict[str, Any] = json.loads(out)
    return doc


def test_output_kss_binds_the_scheduled_pods(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    export = tmp_path / "export.json"
    shutil.copy(EXPORT, export)
    before = export.read_bytes()
    code, out, _ = _run(capsys, str(export), "-o", "json")
    assert code == 0
    placed = {p["name"]: p["node"] for p in json.loads(out)["pods"]}
    doc = _kss(capsys, str(export))
    assert export.read_bytes() == before  # the input is never modified
    assert [len(doc[k]) for k in ("pods", "nodes", "pvs", "pvcs", "storageClasses")] == [
        5,
        3,
        1,
        1,
        1,
    ]
    assert [len(doc[k]) for k in ("priorityClasses", "namespaces")] == [2, 3]
    pods = {p["metadata"]["name"]: p for p in doc["pods"]}
    assert "annotations" not in pods["web-0"]["metadata"]  # bound in the input: as read
    for name, node in placed.items():
        pod = pods[name]
        assert pod["spec"].get("nodeName") == node
        assert pod["metadata"]["annotations"][SELECTED_NODE_ANNOTATION] == (node or "")
    assert pods["huge"]["status"]["conditions"] == [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": HUGE}
    ]
    assert doc["schedulerConfig"]["kind"] == "KubeSchedulerConfiguration"
    assert doc["schedulerConfig"]["parallelism"] == 16  # the export's own configuration


def test_output_kss_loads_again_as_the_state_after_the_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    after = tmp_path / "after.json"
    after.write_text(json.dumps(_kss(capsys, str(EXPORT))))
    code, out, _ = _run(capsys, str(after), "-o", "json")
    assert code == 0
    doc = json.loads(out)
    assert [p["name"] for p in doc["pods"]] == ["huge"]  # the rest are bound now
    assert doc["pods"][0]["message"] == HUGE


def test_output_kss_from_plain_manifests(capsys: pytest.CaptureFixture[str]) -> None:
    """The shipped example (plain YAML: 4 nodes, 2 bound and 7 pending pods) written as an
    export, with the default configuration."""
    doc = _kss(capsys)
    assert len(doc["nodes"]) == 4 and len(doc["pods"]) == 9
    assert doc["schedulerConfig"] == {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler"}],
    }


ADMITTED = """apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: kata-fc}
handler: kata-fc
overhead: {podFixed: {memory: 120Mi, cpu: 250m}}
---
apiVersion: v1
kind: LimitRange
metadata: {name: lr}
spec: {limits: [{type: Container, default: {cpu: 100m}}]}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: 350m, memory: 1Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: kata}
spec: {runtimeClassName: kata-fc, containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: plain}
spec: {containers: [{name: c}]}
"""


def test_output_kss_writes_pods_as_admission_stored_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The export has no place for LimitRanges and RuntimeClasses: the pods they applied to
    are written as the API server stores them (spec.priority, the overhead, the defaulted
    resources), so importing the export gives the same run (Pod Overhead docs: the overhead
    counts; kata needs 100m + 250m, so plain, 100m, no longer fits the 350m node)."""
    cluster = tmp_path / "c.yaml"
    cluster.write_text(ADMITTED)
    code, out, err = _run(capsys, str(cluster), "-o", "kss")
    assert code == 0
    assert "no place for 1 LimitRange, 1 RuntimeClass object(s)" in err
    pods = {p["metadata"]["name"]: p for p in json.loads(out)["pods"]}
    kata = pods["kata"]
    assert kata["spec"]["priority"] == 0
    assert kata["spec"]["overhead"] == {"memory": "120Mi", "cpu": "250m"}
    assert kata["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "100m"},
        "limits": {"cpu": "100m"},
    }
    assert kata["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu request for container c; cpu limit for container c"
    )
    first = {
        p["name"]: p["node"]
        for p in json.loads(_run(capsys, str(cluster), "-o", "json")[1])["pods"]
    }
    assert first == {"kata": "n1", "plain": None}
    export = tmp_path / "export.json"
    export.write_text(out)
    code, again, err = _run(capsys, str(export), "-o", "json")
    assert code == 0, err
    assert {p["name"]: p["node"] for p in json.loads(again)["pods"]} == {"plain": None}
