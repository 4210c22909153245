"""GpuGuard's own tests: the model for testing a plugin with schedsim.testing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schedsim.framework import Code, Status
from schedsim.testing import make_node, make_pod, run_plugin
from schedsim_gpu_guard import GpuGuard

CPU_NODE = make_node("cpu-1", labels={"workload-class": "cpu"})
GPU_NODE = make_node("gpu-1")
GPU_POD = make_pod(
    "train", spec={"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}
)


def test_gpu_pod_rejected_on_cpu_node() -> None:
    run = run_plugin(GpuGuard, GPU_POD, "cpu-1", nodes=[CPU_NODE, GPU_NODE])
    assert run.filter == Status(
        Code.UnschedulableAndUnresolvable, ("node(s) are reserved for CPU workloads",), "GpuGuard"
    )


def test_gpu_pod_accepted_elsewhere_and_recorded() -> None:
    run = run_plugin(GpuGuard, GPU_POD, "gpu-1", nodes=[CPU_NODE, GPU_NODE], reserve=True)
    assert run.filter is not None and run.filter.is_success
    assert run.plugin.decisions == [("default/train", "gpu-1")]


def test_cpu_pod_skips_the_filter() -> None:
    run = run_plugin(GpuGuard, make_pod("web"), "cpu-1", nodes=[CPU_NODE])
    assert run.pre_filter is not None and run.pre_filter.code is Code.Skip
    assert run.filter is None


def test_custom_label_args() -> None:
    node = make_node("n", labels={"pool": "batch-cpu"})
    args = {"cpuNodeLabel": "pool", "cpuNodeValue": "batch-cpu"}
    run = run_plugin(GpuGuard, GPU_POD, "n", nodes=[node], args=args)
    assert run.filter is not None and run.filter.code is Code.UnschedulableAndUnresolvable


# --------------------------------------------------------------------------- CI
# the kit's pytest fixtures, and the conformance check that
# `schedsim check-plugin --plugin schedsim_gpu_guard:GpuGuard` runs

CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: cpu-1, labels: {kubernetes.io/hostname: cpu-1, workload-class: cpu}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-1, labels: {kubernetes.io/hostname: gpu-1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10", nvidia.com/gpu: "1"}}
---
apiVersion: v1
kind: Pod
metadata: {name: train}
spec:
  containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: "1"}}}]
"""


def test_the_profile_schedules_on_both_stores(
    schedsim_cluster: Callable[[str], Any],
    schedsim_store: str,
    schedsim_run_profile: Callable[..., Any],
) -> None:
    result = schedsim_run_profile(
        schedsim_cluster(CLUSTER), plugins=["schedsim_gpu_guard:GpuGuard"], store=schedsim_store
    )
    # GpuGuard keeps the GPU pod off the CPU node
    assert [(o.pod.name, o.node_name) for o in result.outcomes] == [("train", "gpu-1")]


def test_conformance(schedsim_check_plugin: Callable[..., list[str]]) -> None:
    assert schedsim_check_plugin("schedsim_gpu_guard:GpuGuard") == []
