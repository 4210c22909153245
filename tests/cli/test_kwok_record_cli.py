"""Issue 28: KWOK's ``kwokctl snapshot record`` output runs end to end. The recording is the
kind cluster of kubectl-get-all.yaml when recording started (its 30 objects), then four
``action.kwok.x-k8s.io/v1alpha1`` ResourcePatch changes (create a pod, patch a pod's binding
and status, patch a Deployment, delete a pod): the objects are the run's cluster, the changes
are decoded into a timeline and named in one warning, not dropped silently."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedsim.api.loading.loader import load_paths
from schedsim.cli import main

DATA = Path(__file__).parent / "data"
RECORD = DATA / "kwok-record.yaml"
DUMP = DATA / "kubectl-get-all.yaml"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


WARNING = (
    f"{RECORD}: KWOK recording: 4 ResourcePatch change(s) (1 create, 2 patch, 1 delete) over "
    "3.15s after the recorded objects are not applied: the run is the cluster as recording "
    "started (schedsim replay applies them)"
)


@pytest.mark.parametrize("command", ["simulate", "scale-down"])
def test_a_recording_runs_as_its_initial_cluster(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    code, out, err = _run(capsys, command, str(RECORD), "-o", "json")
    assert code == 0, err
    assert err == f"warning: {WARNING}\n"
    doc = json.loads(out)
    assert [w["message"] for w in doc["warnings"]] == [WARNING]
    code, dump, _ = _run(capsys, command, str(DUMP), "-o", "json")
    want = json.loads(dump)
    del doc["warnings"], want["warnings"]
    assert doc == want


def test_the_changes_are_decoded_in_recorded_order() -> None:
    m = load_paths([str(RECORD)])
    got = [(p.seconds, p.method, p.group, p.resource, p.namespace, p.name) for p in m.kwok_patches]
    assert got == [
        (1.204518337, "create", "", "pods", "shop", "web-7c5ddbdf54-q8v2n"),
        (2.010772114, "patch", "", "pods", "shop", "web-7c5ddbdf54-x2lmb"),
        (2.5, "patch", "apps", "deployments", "shop", "web"),
        (3.15, "delete", "", "pods", "batch", "report-8xq4t"),
    ]
    create, bind, scale, delete = m.kwok_patches
    assert create.template is not None and create.template["kind"] == "Pod"
    assert bind.template == {
        "spec": {"nodeName": "kind-worker2"},
        "status": {
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "True",
                    "lastProbeTime": None,
                    "lastTransitionTime": "2026-11-30T09:02:13Z",
                }
            ],
            "$setElementOrder/conditions": [{"type": "PodScheduled"}],
        },
    }
    assert scale.template == {"spec": {"replicas": 4}} and delete.template is None


def test_a_malformed_change_names_its_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "rec.yaml"
    path.write_text(
        "apiVersion: action.kwok.x-k8s.io/v1alpha1\nkind: ResourcePatch\n"
        "resource: {version: v1, resource: pods}\ntarget: {name: p, namespace: d}\n"
        "durationNanosecond: 5\nmethod: update\n"
    )
    code, out, err = _run(capsys, "simulate", str(path))
    assert (code, out) == (2, "")
    assert err == (
        f"schedsim: error: {path}: ResourcePatch (document 1): method: unsupported value "
        '"update": supported values: "create", "patch", "delete"\n'
    )
