"""The dra-example-driver demos (../shared/examples/dra-example-driver, sources in its
SOURCES.md) scheduled by ``schedsim simulate`` on a cluster of our own shaped like what the
driver publishes: one node-local ResourceSlice per node, pool = node name, GPUs ``gpu-0`` ..
``gpu-7`` with ``index``, ``uuid``, ``model: LATEST-GPU-MODEL``, ``driverVersion: 1.0.0`` and
``memory: 80Gi``, DeviceClass ``gpu.example.com`` selecting the driver.

Each demo's expected outcome is the one its header comment (or the driver's README) states.
Also the project's own example, ``src/schedsim/examples/gpu-cluster.yaml``, exactly.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from schedsim.cli import main

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("SCHEDSIM_SHARED_DIR") or ROOT.parent / "shared")
DEMOS = SHARED / "examples" / "dra-example-driver"

NODES = ("dra-worker-1", "dra-worker-2")

# PostFilter: DynamicResources cannot deallocate anything, then DefaultPreemption finds no
# node where removing pods would help (the claims, not the pods, are the problem)
STILL_1 = " still not schedulable," + (
    " preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
)
STILL_2 = " still not schedulable," + (
    " preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
)


def _cluster(gpus: int = 8) -> str:
    docs = [
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: gpu.example.com\n"
        "spec:\n  selectors:\n  - cel:\n      expression: \"device.driver == 'gpu.example.com'\"\n"
    ]
    for node in NODES:
        docs.append(
            f"apiVersion: v1\nkind: Node\nmetadata:\n  name: {node}\n  labels:\n"
            f"    kubernetes.io/hostname: {node}\nstatus:\n"
            f'  allocatable: {{cpu: "16", memory: 64Gi, pods: "110"}}\n'
        )
        devices = "".join(
            f"  - name: gpu-{i}\n    attributes:\n      index: {{int: {i}}}\n"
            f"      uuid: {{string: gpu-{uuid.uuid5(uuid.NAMESPACE_URL, f'{node}/{i}')}}}\n"
            f"      model: {{string: LATEST-GPU-MODEL}}\n"
            f"      driverVersion: {{version: 1.0.0}}\n"
            f"    capacity:\n      memory: {{value: 80Gi}}\n"
            for i in range(gpus)
        )
        docs.append(
            f"apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata:\n"
            f"  name: {node}-gpu.example.com\nspec:\n  driver: gpu.example.com\n"
            f"  nodeName: {node}\n  pool: {{name: {node}, generation: 1, resourceSliceCount: 1}}\n"
            f"  devices:\n{devices}"
        )
    return "---\n".join(docs)


def _simulate(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    *paths: Path | str,
    args: tuple[str, ...] = (),
) -> dict[str, Any]:
    cluster = tmp_path / "cluster.yaml"
    if not cluster.exists():
        cluster.write_text(_cluster())
    code = main(["simulate", str(cluster), *map(str, paths), "-o", "json", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return dict(json.loads(out))


def _demo(name: str) -> Path:
    path = DEMOS / f"{name}.yaml"
    if not path.exists():
        pytest.skip(f"{path} is absent (../shared/examples not available)")
    return path


def _devices(pod: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(a["driver"], a["pool"], a["device"]) for a in pod["allocations"]]


def test_basic_resourceclaimtemplate_gives_each_pod_its_own_gpu(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "Two Pods, One Container each, One GPU Each": one claim per pod from the template,
    two distinct GPUs."""
    doc = _simulate(tmp_path, capsys, _demo("basic-resourceclaimtemplate"))
    pods = doc["pods"]
    assert [p["name"] for p in pods] == ["pod0", "pod1"]
    assert all(p["node"] for p in pods)
    devices = [d for p in pods for d in _devices(p)]
    assert len(devices) == 2 and len(set(devices)) == 2
    claims = {a["claim"] for p in pods for a in p["allocations"]}
    assert len(claims) == 2  # one generated claim per pod
    assert all(
        c.startswith(f"basic-resourceclaimtemplate/pod{i}-gpu-")
        for i, c in enumerate(sorted(claims))
    )


def test_basic_shared_claim_across_pods_shares_one_gpu(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "Two Pods, One Container each, One Shared GPU": both pods reference one
    ResourceClaim, so they land on the node of its GPU and see the same device."""
    doc = _simulate(tmp_path, capsys, _demo("basic-shared-claim-across-pods"))
    pods = doc["pods"]
    assert len(pods) == 2 and all(p["node"] for p in pods)
    assert pods[0]["node"] == pods[1]["node"]
    assert len(_devices(pods[0])) == 1
    assert _devices(pods[0]) == _devices(pods[1])


def test_cel_selector_gets_one_matching_gpu(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "CEL Expression Selectors": 1 GPU with model LATEST-GPU-MODEL and >= 4Gi memory
    (every GPU of the driver qualifies)."""
    doc = _simulate(tmp_path, capsys, _demo("cel-selector"))
    (pod,) = doc["pods"]
    assert pod["node"] in NODES
    (device,) = _devices(pod)
    assert device[0] == "gpu.example.com" and device[1] == pod["node"]


def test_cel_selector_rejects_when_no_gpu_matches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same demo on GPUs of another model: no device passes the claim's selector, so
    every node fails DynamicResources' Filter with "cannot allocate all claims"."""
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(_cluster().replace("LATEST-GPU-MODEL", "OLD-GPU-MODEL"))
    doc = _simulate(tmp_path, capsys, _demo("cel-selector"))
    (pod,) = doc["pods"]
    assert pod["node"] is None
    assert pod["message"] == "0/2 nodes are available: 2 cannot allocate all claims." + STILL_2


def test_prioritized_alternatives_falls_back_and_prefers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """KEP-4816 demo: pod0 falls through to ``gpu/older-gpu``, pod1 gets ``gpu/latest-gpu``
    (the header comment's expected outcome)."""
    doc = _simulate(tmp_path, capsys, _demo("prioritized-alternatives"))
    requests = {p["name"]: [a["request"] for a in p["allocations"]] for p in doc["pods"]}
    assert requests == {"pod0": ["gpu/older-gpu"], "pod1": ["gpu/latest-gpu"]}


PARTITIONED_NODE = """apiVersion: v1
kind: Node
metadata:
  name: mig-node
status:
  allocatable: {cpu: "16", memory: 64Gi, pods: "110"}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
spec:
  selectors:
  - cel:
      expression: "device.driver == 'gpu.example.com'"
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: mig-node-gpu.example.com
spec:
  driver: gpu.example.com
  nodeName: mig-node
  pool: {name: mig-node, generation: 1, resourceSliceCount: 1}
  sharedCounters:
  - name: gpu-0-counters
    counters:
      memory: {value: 80Gi}
  devices:
  - name: gpu-0
    capacity:
      memory: {value: 80Gi}
    consumesCounters:
    - counterSet: gpu-0-counters
      counters:
        memory: {value: 80Gi}
""" + "".join(
    f"""  - name: gpu-0-part-{i}
    capacity:
      memory: {{value: 20Gi}}
    consumesCounters:
    - counterSet: gpu-0-counters
      counters:
        memory: {{value: 20Gi}}
"""
    for i in range(4)
)


def test_partitionable_devices_respect_shared_counters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Partitionable-devices demo (2 devices per claim) on a slice of our own: one 80Gi GPU
    offered whole or as four 20Gi partitions over one counter set (KEP-4815). The whole GPU
    plus any partition would exceed the counters, so the allocator backtracks to two
    partitions; a second pod takes the other two; a third finds nothing left."""
    demo = _demo("partitionable-devices")
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(PARTITIONED_NODE)
    second = tmp_path / "more-pods.yaml"
    text = demo.read_text()
    pod = text[text.index("apiVersion: v1\nkind: Pod") :]
    second.write_text(
        pod.replace("name: pod0", "name: pod1")
        + "\n---\n"
        + pod.replace("name: pod0", "name: pod2")
    )
    doc = _simulate(
        tmp_path, capsys, demo, second, args=("--feature-gates", "DRAPartitionableDevices=true")
    )
    by_name = {p["name"]: p for p in doc["pods"]}
    got = {n: sorted(d[2] for d in _devices(p)) for n, p in by_name.items()}
    assert got["pod0"] == ["gpu-0-part-0", "gpu-0-part-1"]
    assert got["pod1"] == ["gpu-0-part-2", "gpu-0-part-3"]
    assert by_name["pod2"]["node"] is None
    assert by_name["pod2"]["message"] == (
        "0/1 nodes are available: 1 cannot allocate all claims." + STILL_1
    )


def test_partitionable_devices_need_the_feature_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With DRAPartitionableDevices off (1.34 default), devices that consume counters are
    not selectable (the allocator rejects them): the demo pod is unschedulable."""
    (tmp_path / "cluster.yaml").write_text(PARTITIONED_NODE)
    doc = _simulate(tmp_path, capsys, _demo("partitionable-devices"))
    (pod,) = doc["pods"]
    assert pod["node"] is None


GPU_EXAMPLE = ROOT / "src" / "schedsim" / "examples" / "gpu-cluster.yaml"


def test_gpu_cluster_example_exactly(capsys: pytest.CaptureFixture[str]) -> None:
    """The shipped GPU example in first-fit placement, worked out by hand: nodes in input
    order, the first search
    starting at index 1 and later ones after the node chosen last (CA's ordering); each
    node has gpu-0 and gpu-1, taken in slice order.
    trainer-0 -> gpu-node-2/gpu-0, trainer-1 -> gpu-node-1/gpu-0, trainer-2 ->
    gpu-node-2/gpu-1, viewer-a -> gpu-node-1/gpu-1 (allocating the shared claim), viewer-b
    -> the shared claim's node and GPU; big-job (2 GPUs) finds no node with two free."""
    code = main(["simulate", str(GPU_EXAMPLE), "-o", "json", "--placement", "first-fit"])
    out, _ = capsys.readouterr()
    assert code == 0
    doc = json.loads(out)
    got = {
        p["name"]: (p["node"], [f"{a['pool']}/{a['device']}" for a in p["allocations"]])
        for p in doc["pods"]
    }
    assert got == {
        "trainer-0": ("gpu-node-2", ["gpu-node-2/gpu-0"]),
        "trainer-1": ("gpu-node-1", ["gpu-node-1/gpu-0"]),
        "trainer-2": ("gpu-node-2", ["gpu-node-2/gpu-1"]),
        "viewer-a": ("gpu-node-1", ["gpu-node-1/gpu-1"]),
        "viewer-b": ("gpu-node-1", ["gpu-node-1/gpu-1"]),
        "big-job": (None, []),
    }
    big = next(p for p in doc["pods"] if p["name"] == "big-job")
    # first fit (the Cluster Autoscaler's) runs no PostFilter
    assert big["message"] == "0/2 nodes are available: 2 cannot allocate all claims."
    assert doc["summary"] == {
        "scheduled": 5,
        "unschedulable": 1,
        "errors": 0,
        "preempted": 0,
        "nodes": 2,
    }
