"""GpuGuard's own tests: the model for testing a plugin with schedsim.testing."""

from __future__ import annotations

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
