"""DRA input problems through ``schedsim simulate``: what a user sees when a pod's claim or
template is missing (kube-scheduler's DynamicResources PreEnqueue messages) and when a bound
pod's claim is missing (bad input: exit status 2, no traceback)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedsim.cli import main

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1"},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
}


def _pod(name: str, ref: dict[str, str], node: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "c"}],
        "resourceClaims": [{"name": "gpu", **ref}],
    }
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def _run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], objs: list[dict[str, Any]]
) -> tuple[int, str, str]:
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all(objs))
    code = main(["simulate", str(f), "-o", "json"])
    out, err = capsys.readouterr()
    return code, out, err


def test_missing_template_leaves_the_pod_pending_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No template, so no claim: PreEnqueue's ``pod "<ns>/<pod>": ResourceClaim not created
    yet`` is the outcome, and stderr says which template is missing."""
    code, out, err = _run(
        tmp_path, capsys, [NODE, _pod("p", {"resourceClaimTemplateName": "nope"})]
    )
    assert code == 0
    (pod,) = json.loads(out)["pods"]
    assert pod["node"] is None
    assert pod["message"] == 'pod "default/p": ResourceClaim not created yet'
    assert "warning: default/p: ResourceClaimTemplate default/nope" in err


def test_bound_pod_with_missing_claim_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A running pod's claim must exist (CA's SetClusterState fails the same way): exit 2,
    one error line naming the pod and the claim, nothing on stdout."""
    code, out, err = _run(
        tmp_path, capsys, [NODE, _pod("running", {"resourceClaimName": "gone"}, node="n1")]
    )
    assert code == 2
    assert out == ""
    assert err.startswith("schedsim: error: ")
    assert "default/running" in err and "default/gone" in err
    assert "Traceback" not in err


def _claim(name: str, node: str | None, reserved_for: str | None) -> dict[str, Any]:
    status: dict[str, Any] = {}
    if node:
        status["allocation"] = {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": "gpu.example.com", "pool": node, "device": "gpu-0"}
                ]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                ]
            },
        }
        if reserved_for:
            status["reservedFor"] = [
                {"resource": "pods", "name": reserved_for, "uid": f"uid-{reserved_for}"}
            ]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
        "status": status,
    }


def test_running_pod_with_claim_allocated_elsewhere_is_warned_about(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A running pod's claim allocated for another node, or not reserved for the pod, never
    happens in a live cluster (kube-scheduler allocates for the chosen node and reserves at
    PreBind; CA's AddNodeInfo refuses it): likely a stale export, so say so."""
    n2 = {**NODE, "metadata": {"name": "n2"}}
    running = _pod("running", {"resourceClaimName": "c"}, node="n2")
    running["metadata"]["uid"] = "uid-running"
    other = _pod("other", {"resourceClaimName": "d"}, node="n1")
    other["metadata"]["uid"] = "uid-other"
    objs = [NODE, n2, _claim("c", "n1", "running"), _claim("d", "n1", None), running, other]
    code, _, err = _run(tmp_path, capsys, objs)
    assert code == 0
    assert (
        "warning: pod default/running runs on n2 but its ResourceClaim default/c is allocated "
        "for other nodes; used as it is" in err
    )
    assert (
        "warning: pod default/other runs on n1 but its ResourceClaim default/d is not reserved "
        "for it (status.reservedFor); used as it is" in err
    )


def test_disabled_dynamic_resources_ignores_claims(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With the DynamicResources plugin disabled in the profile, kube-scheduler binds pods
    without looking at their claims: no allocation, no error."""
    cfg = tmp_path / "sched.yaml"
    cfg.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: DynamicResources}]\n"
    )
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all([NODE, _pod("p", {"resourceClaimName": "missing"})]))
    code = main(["simulate", str(f), "-o", "json", "--config", str(cfg)])
    out, err = capsys.readouterr()
    assert code == 0, err
    (pod,) = json.loads(out)["pods"]
    assert pod["node"] == "n1" and pod["allocations"] == [] and "error" not in pod
