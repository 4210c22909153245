"""Extended resources backed by DRA (KEP-5004, alpha ``DRAExtendedResource`` in 1.34) through
``schedsim simulate``: a pod asking for ``example.com/gpu`` on a node that does not list it
in allocatable gets a device through the special claim DynamicResources makes, and
NodeResourcesFit leaves the resource alone there (``shouldDelegateResourceToDRA``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from schedsim.cli import main

CLUSTER: list[dict[str, Any]] = [
    {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "worker"},
        "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "32"}},
    },
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {
            "extendedResourceName": "example.com/gpu",
            "selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}],
        },
    },
    {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "worker-gpus"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "worker",
            "pool": {"name": "worker", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}],
        },
    },
]


def _pod(name: str, second: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "creationTimestamp": f"2026-11-01T00:00:0{second}Z"},
        "spec": {
            "containers": [{"name": "main", "resources": {"limits": {"example.com/gpu": "1"}}}]
        },
    }


def _run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], objs: list[dict[str, Any]], *args: str
) -> dict[str, Any]:
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all(objs))
    code = main(["simulate", str(f), "-o", "json", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return dict(json.loads(out))


PODS = [_pod("a", 1), _pod("b", 2), _pod("c", 3)]


def test_extended_resource_is_allocated_through_dra(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Gate on: a and b each get one of the two devices through their special claim
    (request ``container-0-request-0``); c finds none left: "cannot allocate all claims"."""
    doc = _run(tmp_path, capsys, CLUSTER + PODS, "--feature-gates", "DRAExtendedResource=true")
    pods = {p["name"]: p for p in doc["pods"]}
    assert pods["a"]["node"] == pods["b"]["node"] == "worker"
    devices = [(a["request"], a["device"]) for n in ("a", "b") for a in pods[n]["allocations"]]
    assert sorted(devices) == [
        ("container-0-request-0", "gpu-0"),
        ("container-0-request-0", "gpu-1"),
    ]
    assert all(
        a["claim"].startswith(f"default/{n}-extended-resources-")
        for n in ("a", "b")
        for a in pods[n]["allocations"]
    )
    assert pods["c"]["node"] is None
    assert pods["c"]["message"] == "0/1 nodes are available: 1 cannot allocate all claims." + (
        " still not schedulable, preemption: 0/1 nodes are available: 1 Preemption is not helpful"
        " for scheduling."
    )


def test_without_the_gate_the_resource_must_be_in_allocatable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Gate off (1.34 default): NodeResourcesFit checks example.com/gpu against allocatable
    (0 here): ``Insufficient example.com/gpu`` for every pod."""
    doc = _run(tmp_path, capsys, CLUSTER + PODS)
    assert {p["node"] for p in doc["pods"]} == {None}
    assert {p["message"] for p in doc["pods"]} == {
        "0/1 nodes are available: 1 Insufficient example.com/gpu. no new claims to deallocate,"
        " preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    }


def test_device_plugin_resource_is_left_to_node_resources_fit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A node listing example.com/gpu in allocatable serves it through its device plugin:
    no claim is made and NodeResourcesFit counts it (1 allocatable: only a fits)."""
    node = dict(CLUSTER[0])
    node["status"] = {
        "allocatable": {"cpu": "8", "memory": "16Gi", "pods": "32", "example.com/gpu": "1"}
    }
    doc = _run(
        tmp_path, capsys, [node, *CLUSTER[1:], *PODS], "--feature-gates", "DRAExtendedResource=true"
    )
    pods = {p["name"]: p for p in doc["pods"]}
    assert pods["a"]["node"] == "worker" and pods["a"]["allocations"] == []
    assert pods["b"]["message"] == "0/1 nodes are available: 1 Insufficient example.com/gpu." + (
        " still not schedulable, preemption: 0/1 nodes are available: 1 No preemption victims"
        " found for incoming pod."
    )
