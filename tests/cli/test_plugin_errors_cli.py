"""Plugin errors and unwritable output through ``schedsim simulate``.

kube-scheduler compiles CEL selectors when a claim is created (API validation) and, when a
plugin returns an Error status during a pod's attempt, fails that attempt only and goes on
with the next pod. schedsim: selectors that do not compile are bad input (exit 2, file,
object and field named); a runtime error fails one pod, the others are scheduled, exit 1.
"""

from __future__ import annotations

import json
import os
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
CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu"},
    "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]},
}
SLICE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": {"name": "n1-gpus"},
    "spec": {
        "driver": "gpu.example.com",
        "nodeName": "n1",
        "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": "gpu-0"}],
    },
}


def _claim(name: str, expression: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu",
                            "selectors": [{"cel": {"expression": expression}}],
                        },
                    }
                ]
            }
        },
    }


def _pod(name: str, claim: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c"}]}
    if claim:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def _write(tmp_path: Path, objs: list[dict[str, Any]]) -> Path:
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all(objs))
    return f


def test_selector_that_does_not_compile_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """API validation compiles every selector: exit 2, the file, the claim and the field path,
    one line, nothing on stdout."""
    f = _write(tmp_path, [NODE, CLASS, SLICE, _claim("c", "device.driver =="), _pod("p", "c")])
    code = main(["simulate", str(f)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith(
        f"schedsim: error: {f}: ResourceClaim default/c: "
        "spec.devices.requests[0].exactly.selectors[0].cel.expression: compilation failed: "
    )
    assert err.count("\n") == 1


def test_runtime_error_fails_only_that_pod(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``no such key`` at runtime (the device has no such attribute) is an Error status for
    that pod (the allocator's ``CEL runtime error``); the next pod is still scheduled; the
    output is complete and the exit status is 1."""
    f = _write(
        tmp_path,
        [
            NODE,
            CLASS,
            SLICE,
            _claim("bad", "device.attributes['gpu.example.com'].model == 'x'"),
            _pod("a", "bad"),
            _pod("b"),
        ],
    )
    code = main(["simulate", str(f), "-o", "json"])
    out, err = capsys.readouterr()
    assert code == 1
    pods = {p["name"]: p for p in json.loads(out)["pods"]}
    assert pods["a"]["node"] is None and pods["a"]["error"] is True
    assert pods["a"]["message"] == (
        'running "DynamicResources" filter plugin: claim default/bad: selector #0: '
        "CEL runtime error: no such key: model"
    )
    assert pods["b"]["node"] == "n1" and "error" not in pods["b"]
    assert "a plugin failed for 1 pod(s)" in err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_unwritable_output_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    """Writing to a full device: one error line, exit 1, no traceback."""
    import subprocess
    import sys

    f = _write(tmp_path, [NODE, _pod("p")])
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "schedsim.cli", "simulate", str(f)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
        )
    assert done.returncode == 2
    assert done.stderr.startswith("schedsim: error: standard output: cannot write the output: ")
    assert "Traceback" not in done.stderr
