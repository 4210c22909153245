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
