"""Positions a Filter plugin marks stale (`FilterTable.mark_stale`, from its
``filter_reuse_refresh``) are filtered again by the next walk of the table, also when the
walk follows the store's node journal, which names only the nodes whose NodeInfo changed.

kube-scheduler runs every Filter afresh for every pod (``findNodesThatPassFilters``), so a
node whose devices in use changed while its NodeInfo did not (DynamicResources' PostFilter
deallocating a claim: ``deallocation of ResourceClaim completed``) gives the next pod the
verdict of the node as it is now.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from schedsim.cli import main as cli_main
from schedsim.engine import STORES

DRIVER = "driver-a"


def _node(name: str, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


def _slice(i: int) -> dict[str, Any]:
    """Node ``node-i``'s own pool of one device ``d0``."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"slice-{i}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": f"node-{i}",
            "pool": {"name": f"pool-{i}", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "d0"}],
        },
    }


def _pod(name: str, cpu: str, claim: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [
                {"name": "c", "resources": {"requests": {"cpu": cpu}, "claims": [{"name": "r"}]}}
            ],
            "resourceClaims": [{"name": "r", **claim}],
        },
    }


def _cluster() -> list[dict[str, Any]]:
    request = {"name": "r", "exactly": {"deviceClassName": "gpu"}}
    on_node_0 = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-0"]}]}
    template = {"resourceClaimTemplateName": "one"}
    return [
        _node("node-0", "2"),
        _node("node-1", "8"),
        _slice(0),
        _slice(1),
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [request]}}},
        },
        {  # allocated on node-0's device, reserved for no pod
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "pre", "namespace": "default", "uid": "pre-uid"},
            "spec": {"devices": {"requests": [request]}},
            "status": {
                "allocation": {
                    "devices": {
                        "results": [
                            {"request": "r", "driver": DRIVER, "pool": "pool-0", "device": "d0"}
                        ]
                    },
                    "nodeSelector": {"nodeSelectorTerms": [on_node_0]},
                }
            },
        },
        _pod("a-q1", "1", template),
        _pod("b-p", "3", {"resourceClaimName": "pre"}),
        _pod("c-q2", "1", template),
    ]


@pytest.mark.parametrize("store", sorted(STORES))
def test_claim_deallocated_by_post_filter_frees_the_node(tmp_path: Path, store: str) -> None:
    """node-0 (2 cpu) and node-1 (8 cpu) hold one device each; claim ``pre`` holds
    node-0's. ``a-q1`` (a claim from a template) finds node-0's device taken and goes to
    node-1. ``b-p`` uses ``pre`` and wants 3 cpu: node-0 is short of cpu, on node-1 the
    claim is not available; its PostFilter deallocates ``pre`` (upstream's
    DynamicResources PostFilter: the claim is unavailable and reserved for no pod), which
    changes node-0's devices in use but not its NodeInfo. ``c-q2``, of ``a-q1``'s class,
    then fits node-0 (its Filter run now sees d0 free; node-1's device is ``a-q1``'s), not
    "cannot allocate all claims" from ``a-q1``'s walk."""
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": _cluster()}))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        cli_main(["simulate", str(path), "-o", "json", "--store", store])
    pods = {p["name"]: p for p in json.loads(buf.getvalue())["pods"]}
    assert pods["a-q1"]["node"] == "node-1"
    assert pods["b-p"].get("node") is None
    assert pods["b-p"]["reasons"] == ["Insufficient cpu", "resourceclaim not available on the node"]
    assert pods["c-q2"]["node"] == "node-0"
    assert [(a["pool"], a["device"]) for a in pods["c-q2"]["allocations"]] == [("pool-0", "d0")]
