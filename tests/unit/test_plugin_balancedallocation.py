"""NodeResourcesBalancedAllocation PreScore/Score: upstream's table
(balanced_allocation_test.go TestNodeResourcesBalancedAllocation, 1.34 formula) with its case
names and expected scores. The DRA-backed extended resource rows are 1.35 (DRAExtendedResource
scoring) and not transcribed."""

from __future__ import annotations

from typing import Any

import pytest

from schedsim.api.core import Node, Pod
from schedsim.framework import Code, CycleState, Handle
from schedsim.framework.args import ArgsError
from schedsim.snapshot import NodeInfo, PodInfo
from schedsim_plugins.balancedallocation import NodeResourcesBalancedAllocation

GPU = "nvidia.com/gpu"
DEFAULT = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
WITH_GPU = [*DEFAULT, {"name": GPU, "weight": 1}]

Reqs = dict[str, str]


def make_node(name: str, milli_cpu: int, memory: int, gpus: int | None = None) -> Node:
    """upstream ``makeNode(name, milliCPU, memory, extended)``: capacity == allocatable."""
    rl = {"cpu": f"{milli_cpu}m", "memory": str(memory)}
    if gpus is not None:
        rl[GPU] = str(gpus)
    return Node.from_manifest(
        {"metadata": {"name": name}, "status": {"capacity": rl, "allocatable": rl}}
    )


def make_pod(name: str, *containers: Reqs) -> Pod:
    cs = []
    for i, reqs in enumerate(containers):
        r: dict[str, Any] = {"requests": reqs}
        if GPU in reqs:
            r["limits"] = {GPU: reqs[GPU]}
        cs.append({"name": f"c{i}", "image": "x", "resources": r})
    return Pod.from_manifest({"metadata": {"name": name}, "spec": {"containers": cs}})


CPU_ONLY = ({"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"})
CPU_AND_MEMORY = ({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"})
CPU_MEMORY_GPU = ({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000", GPU: "3"})
EXISTING = [("node1", CPU_ONLY), ("node2", CPU_AND_MEMORY)]

TABLE = [
    (
        "nothing scheduled, resources requested, differently sized nodes",
        CPU_AND_MEMORY,
        [("node1", 4000, 10000, None), ("node2", 6000, 10000, None)],
        [],
        DEFAULT,
        True,
        [87, 100],
    ),
    (
        "resources requested, pods scheduled with resources",
        CPU_AND_MEMORY,
        [("node1", 10000, 20000, None), ("node2", 10000, 20000, None)],
        EXISTING,
        DEFAULT,
        True,
        [82, 95],
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        CPU_AND_MEMORY,
        [("node1", 10000, 20000, None), ("node2", 10000, 50000, None)],
        EXISTING,
        DEFAULT,
        True,
        [82, 80],
    ),
    (
        "requested resources at node capacity",
        CPU_ONLY,
        [("node1", 6000, 10000, None), ("node2", 6000, 10000, None)],
        EXISTING,
        DEFAULT,
        True,
        [50, 75],
    ),
    (
        "include scalar resource on a node for balanced resource allocation",
        ({"memory": "0", GPU: "1"},),
        [("node1", 3500, 40000, 8), ("node2", 3500, 40000, 8)],
        [("node2", CPU_AND_MEMORY), ("node1", CPU_MEMORY_GPU)],
        WITH_GPU,
        True,
        [70, 65],
    ),
    (
        "node without the scalar resource should skip the scalar resource",
        CPU_AND_MEMORY,
        [("node1", 3500, 40000, 8), ("node2", 3500, 40000, None)],
        [],
        WITH_GPU,
        True,
        [63, 63],
    ),
    (
        "resources requested, pods scheduled with resources if PreScore not called",
        CPU_AND_MEMORY,
        [("node1", 10000, 20000, None), ("node2", 10000, 20000, None)],
        EXISTING,
        DEFAULT,
        False,
        [82, 95],
    ),
]


@pytest.mark.parametrize("row", TABLE, ids=[r[0] for r in TABLE])
def test_balanced_allocation(row: tuple[Any, ...]) -> None:
    """``(1 - std(requested/allocatable fractions)) * 100``, truncated; the pods' own requests
    (no non-zero defaults); scalar resources only where the node has them and the pod asks."""
    _, pod_reqs, nodes, existing, resources, run_pre_score, want = row
    infos = {n[0]: NodeInfo(make_node(*n)) for n in nodes}
    for i, (node_name, reqs) in enumerate(existing):
        infos[node_name].add_pod_info(PodInfo(make_pod(f"e{i}", *reqs)))
    plugin = NodeResourcesBalancedAllocation({"resources": resources}, Handle())
    pod = make_pod("p", *pod_reqs)
    state = CycleState()
    if run_pre_score:
        assert plugin.schedsim_pre_score(state, pod, list(infos.values())) is None
    assert [plugin.schedsim_score(state, pod, ni) for ni in infos.values()] == want
    bound = plugin.score_node_fn(state, pod)  # what the scheduler's cached scoring calls
    assert [bound(ni) for ni in infos.values()] == want


def test_best_effort_pod_skips_in_pre_score() -> None:
    """nothing scheduled, nothing requested, skip in PreScore (kubernetes#129138); Score
    without PreScore gives a best-effort pod 0."""
    plugin = NodeResourcesBalancedAllocation({"resources": DEFAULT}, Handle())
    pod = Pod.from_manifest({"metadata": {"name": "p"}, "spec": {"containers": []}})
    nodes = [NodeInfo(make_node("node1", 4000, 10000)), NodeInfo(make_node("node2", 4000, 10000))]
    st = plugin.schedsim_pre_score(CycleState(), pod, nodes)
    assert st is not None and st.code is Code.Skip
    assert plugin.schedsim_score(CycleState(), pod, nodes[0]) == 0
    assert plugin.score_node_fn(CycleState(), pod)(nodes[0]) == 0


def test_args_are_validated() -> None:
    """NewBalancedAllocation runs ValidateNodeResourcesBalancedAllocationArgs."""
    with pytest.raises(ArgsError, match="must be 1"):
        NodeResourcesBalancedAllocation({"resources": [{"name": "cpu", "weight": 2}]}, Handle())
