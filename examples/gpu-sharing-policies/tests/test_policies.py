"""The six policies' scores and GPU choices on small clusters, each value worked out by hand
from the artifact's definitions (``pkg/simulator/plugin/*_score.go`` of
hkust-adsl/kubernetes-scheduler-simulator, as ``fgd-experiment.md`` section 3 gives them),
then the GPU choice through schedsim's DRA path (DeviceChoice at Reserve)."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from schedsim.framework import CycleState, Handle
from schedsim.framework.plugin import DeviceChoicePlugin, ScoreExtensions, ScorePlugin
from schedsim.framework.scheduler_config import load_scheduler_configuration
from schedsim.replay.fragmentation import TargetClass
from schedsim.snapshot.infos import NodeInfo
from schedsim.testing import chosen_devices, make_node, make_pod
from schedsim_gpu_sharing import (
    BestFitScore,
    DotProductScore,
    FGDScore,
    GpuClusteringScore,
    GpuDemand,
    GpuPackingScore,
    NodeGpus,
    RandomScore,
    best_fit_score,
    dot_product_score,
    fgd_score,
    gpu_clustering_score,
    gpu_packing_score,
    min_max_normalize,
    tightest_fit,
)

HERE = Path(__file__).resolve().parents[1]
SHARE_300 = GpuDemand(1000, 300, 1)


def test_dot_product() -> None:
    """(64000/128000, 1500/8000) . (8000/128000, 500/8000) = 0.03125 + 0.01171875;
    100 x (1 - 0.04296875 / 2) = 97.85 -> 97."""
    assert dot_product_score(NodeGpus(64000, (1000, 500)), GpuDemand(8000, 500, 1)) == 97


@pytest.mark.parametrize(
    ("tags", "pod", "want"),
    [
        ({"share-gpu": 2}, SHARE_300, 15 + 75),  # only the pod's tag
        ({"share-gpu": 1, "1-gpu": 1}, SHARE_300, 15 + 50),  # its tag among others
        ({}, SHARE_300, 15 + 25),  # no GPU pods
        ({"2-gpu": 1}, SHARE_300, 15),  # other tags only
        ({"1-gpu": 1}, GpuDemand(4000, 1000, 1), 15 + 75),
        ({}, GpuDemand(4000, 0, 0), 0),  # CPU-only pods: 0 everywhere
    ],
)
def test_gpu_clustering(tags: dict[str, int], pod: GpuDemand, want: int) -> None:
    """gpuLeftTotal 3000: 25 x (8000 - 3000) / 8000 = 15 (integer division), plus the tag
    base."""
    node = NodeGpus(32000, (1000, 1000, 1000, 0))
    assert gpu_clustering_score(node, pod, tags) == want


@pytest.mark.parametrize(
    ("left", "pod", "want"),
    [
        ((1000,) * 4, SHARE_300, 29),  # free node: max(33 - 4, 4)
        ((1000,) * 8, SHARE_300, 25),  # max(33 - 8, 8)
        # shared GPU 0 (300 left): 100 - (300 x 100 / 1000) / 10 = 97
        ((300, 1000, 1000, 0), GpuDemand(1000, 200, 1), 97),
        # 500 only fits a free GPU of this used node: max(50 - 1, 33)
        ((300, 1000, 1000, 0), GpuDemand(1000, 500, 1), 49),
        ((300, 1000, 1000, 0), GpuDemand(1000, 1000, 2), 48),  # two free GPUs: 50 - 2
        ((300, 1000, 1000, 0), GpuDemand(1000, 1000, 3), 0),  # does not fit
        ((300, 1000), GpuDemand(1000, 0, 0), 0),  # CPU-only: 0
    ],
)
def test_gpu_packing(left: tuple[int, ...], pod: GpuDemand, want: int) -> None:
    assert gpu_packing_score(NodeGpus(32000, left), pod) == want


def test_best_fit_and_its_normalisation() -> None:
    """0.5 x 24000/128000 + 0.5 x 1000/8000 = 0.15625: 100 x 0.84375 -> 84; min-max over
    {84, 60, 72}: 100, 0, 12 x 100 / 24 = 50; all equal: all 0."""
    assert best_fit_score(NodeGpus(32000, (1000, 1000)), GpuDemand(8000, 1000, 1)) == 84
    scores = {"a": 84, "b": 60, "c": 72}
    min_max_normalize(scores)
    assert scores == {"a": 100, "b": 0, "c": 50}
    same = {"a": 7, "b": 7}
    min_max_normalize(same)
    assert same == {"a": 0, "b": 0}


ONE_CLASS = (TargetClass(1000, 500, 1, (), 1.0),)


def _sig(x: float) -> int:
    return int(100 / (1 + math.exp(-x)))


def test_fgd_picks_the_gpu_that_fragments_least() -> None:
    """Target workload: 500-milli pods only. GPUs (600, 1000), 8000 CPU: F = 0 (both serve
    500). A 300 share on GPU 0 leaves 300 < 500: F = 300, score int(100 sigmoid(-0.3)) = 42;
    on GPU 1 (600, 700): F = 0, score 50. FGD takes GPU 1; tightest fit would take GPU 0."""
    node = NodeGpus(8000, (600, 1000), "T4")
    assert _sig(-0.3) == 42
    assert fgd_score(node, SHARE_300, ONE_CLASS) == (50, 1)
    assert tightest_fit(node.gpu_left, 300) == 0
    # a whole GPU takes the free GPU 1: (600, 0), F still 0
    assert fgd_score(node, GpuDemand(1000, 1000, 1), ONE_CLASS) == (50, None)
    # a CPU-only pod taking all 8000 CPU: the class no longer fits, all 1600 idle milli is
    # fragment: int(100 sigmoid(-1.6)) = 16
    assert fgd_score(node, GpuDemand(8000, 0, 0), ONE_CLASS) == (_sig(-1.6), None) == (16, None)


def test_random_gpu_choice_is_uniform_over_the_gpus_that_fit() -> None:
    plugin = RandomScore({"seed": 3}, Handle())
    node = NodeGpus(8000, (200, 900, 500, 1000))
    picks = [plugin.choose_gpu(CycleState(), node, SHARE_300) for _ in range(300)]
    assert set(picks) == {1, 2, 3}
    rng = random.Random(3)
    assert picks[:5] == [[1, 2, 3][rng.randrange(3)] for _ in range(5)]


# ---------------------------------------------------------------------------- through DRA

DRIVER = "gpu.alibaba.com"


def _manifests(used: Mapping[int, int]) -> list[dict[str, Any]]:
    """One T4 node (8 CPU) with four shareable GPUs; ``used``: GPU -> milli already
    allocated to a bound pod; pending pod ``p`` asks for 300 milli of one GPU."""
    docs: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n", "labels": {"alibaba.com/gpu-model": "T4"}},
            "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "110"}},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": DRIVER},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "n-gpu"},
            "spec": {
                "driver": DRIVER,
                "nodeName": "n",
                "pool": {"name": "n", "generation": 1, "resourceSliceCount": 1},
                "devices": [
                    {
                        "name": f"gpu-{i}",
                        "allowMultipleAllocations": True,
                        "capacity": {"gpu-milli": {"value": "1000"}},
                    }
                    for i in range(4)
                ],
            },
        },
    ]

    def claim(name: str, milli: int) -> dict[str, Any]:
        exactly = {
            "deviceClassName": DRIVER,
            "allocationMode": "ExactCount",
            "count": 1,
            "capacity": {"requests": {"gpu-milli": str(milli)}},
        }
        return {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}},
        }

    def pod(name: str, claim_name: str, node: str = "") -> dict[str, Any]:
        spec: dict[str, Any] = {
            "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": claim_name}],
        }
        if node:
            spec["nodeName"] = node
        meta = {"name": name, "uid": f"uid-{name}"}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}

    for i, milli in used.items():
        c = claim(f"used-{i}", milli)
        c["status"] = {
            "allocation": {
                "devices": {
                    "results": [
                        {
                            "request": "gpu",
                            "driver": DRIVER,
                            "pool": "n",
                            "device": f"gpu-{i}",
                            "shareID": f"0000000{i}-0000-0000-0000-000000000000",
                            "consumedCapacity": {"gpu-milli": str(milli)},
                        }
                    ]
                }
            },
            "reservedFor": [{"resource": "pods", "name": f"b{i}", "uid": f"uid-b{i}"}],
        }
        docs += [c, pod(f"b{i}", f"used-{i}", "n")]
    docs += [claim("want", 300), pod("p", "want")]
    return docs


USED = {0: 800, 1: 100, 2: 500}  # left: 200, 900, 500, 1000
GATES = {"DRAConsumableCapacity": True}


@pytest.mark.parametrize(
    "plugin", [DotProductScore, GpuClusteringScore, GpuPackingScore, BestFitScore]
)
def test_tightest_fit_through_dra(plugin: Any) -> None:
    """Left 200, 900, 500, 1000: the least left that holds 300 is gpu-2 (500); kube-
    scheduler's allocator alone takes the first that fits, gpu-1."""
    assert chosen_devices(plugin, _manifests(USED), "p", "n", feature_gates=GATES) == {
        "want": ("n/gpu-2",)
    }


def test_fgd_through_dra() -> None:
    """Target workload: 500-milli pods, 1000 CPU. F(before) = 200 (gpu-0 cannot serve 500).
    300 on gpu-1 (900 -> 600): F 200, score 50; on gpu-2 (500 -> 200): F 400, score
    int(100 sigmoid(-0.2)) = 45; on gpu-3 (1000 -> 700): F 200, 50. The first best: gpu-1."""
    args = {"targetWorkload": [{"milliCpu": 1000, "gpuMilli": 500, "gpus": 1, "weight": 1.0}]}
    got = chosen_devices(FGDScore, _manifests(USED), "p", "n", args=args, feature_gates=GATES)
    assert got == {"want": ("n/gpu-1",)}
    assert _sig(-0.2) == 45


def test_random_through_dra_takes_a_gpu_that_fits() -> None:
    got = chosen_devices(RandomScore, _manifests(USED), "p", "n", feature_gates=GATES)
    assert got["want"][0] in {"n/gpu-1", "n/gpu-2", "n/gpu-3"}


def test_fgd_without_target_workload_is_an_error() -> None:
    """A bad targetWorkload arg is refused; without one (and outside an experiment) Score
    fails with an Error status that says how to go on."""
    with pytest.raises(ValueError, match="targetWorkload"):
        FGDScore({"targetWorkload": "x"}, Handle())
    plugin = FGDScore({}, Handle())
    st = plugin.schedsim_score(CycleState(), _pod_without_claims(), _empty_node_info())
    assert not isinstance(st, int) and "no target workload" in st.message


def _pod_without_claims() -> Any:
    return make_pod("x")


def _empty_node_info() -> Any:
    return NodeInfo(make_node("n"))


@pytest.mark.parametrize(
    ("file", "plugin"),
    [
        ("random.yaml", "RandomScore"),
        ("dotprod.yaml", "DotProductScore"),
        ("gpuclustering.yaml", "GpuClusteringScore"),
        ("gpupacking.yaml", "GpuPackingScore"),
        ("bestfit.yaml", "BestFitScore"),
        ("fgd.yaml", "FGDScore"),
    ],
)
def test_configs_enable_the_policy_alone_at_weight_1000(file: str, plugin: str) -> None:
    """As the artifact's generate_config_and_run.py: every default Score plugin off, the
    policy at weight 1000, percentageOfNodesToScore 100."""
    config = load_scheduler_configuration(str(HERE / file))
    profile = config.profiles[0]
    assert profile.plugins["score"] == (plugin,)
    assert profile.weight(plugin) == 1000
    assert profile.percentage_of_nodes_to_score == 100


_a: ScorePlugin = DotProductScore({}, Handle())
_b: DeviceChoicePlugin = FGDScore({}, Handle())
_c: ScoreExtensions = BestFitScore({}, Handle())


@pytest.mark.parametrize(
    ("file", "plugin"),
    [("gpuclustering.yaml", "GpuClusteringScore"), ("gpupacking.yaml", "GpuPackingScore")],
)
@pytest.mark.parametrize(
    ("rank", "want"),
    [
        ({"a": 2, "b": 0, "c": 1}, "c"),  # b ranked first but lacks the CPU
        ({"a": 0, "b": 1, "c": 2}, "a"),
        ({"a": 1, "b": 2, "c": 0}, "c"),
    ],
)
def test_cpu_only_pod_goes_to_the_first_ranked_feasible_node(
    tmp_path: Path, file: str, plugin: str, rank: dict[str, int], want: str
) -> None:
    """The artifact's tie rule for a CPU-only pod under GpuClustering and GpuPacking: both
    scores return 0 for it on every node (``gpu_clustering_score.go``: ``NoGpuTag`` ->
    MinNodeScore; ``gpu_packing_score.go``: gpu-milli <= 0 -> MinNodeScore), no
    NormalizeScore, no other Score plugin (every default one disabled in the generated
    config); the patched ``selectHost`` takes the smallest name among the tied nodes, and
    ``syncClusterResourceList`` prefixes the name-sorted nodes with ``%04d-`` from
    ``rand.Perm``, so the smallest name is the feasible node of the lowest permutation value:
    the experiment's ``node_rank``. Nodes a, c: 64 CPUs; b: 8 CPUs; the pod asks 16 CPUs,
    so NodeResourcesFit leaves a and c (the Open-Gpu-Share Filter passes pods without GPU
    milli everywhere)."""
    from schedsim.engine import Engine, EngineConfig
    from schedsim.replay.alibaba import alibaba_trace
    from schedsim.scheduler import Scheduler

    nodes = tmp_path / "nodes.csv"
    nodes.write_text(
        "sn,cpu_milli,memory_mib,gpu,model\n"
        "a,64000,262144,2,P100\nb,8000,262144,2,P100\nc,64000,262144,2,P100\n"
    )
    pods = tmp_path / "pods.csv"
    pods.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,16000,1024,0,0\n")
    trace = alibaba_trace(str(pods), str(nodes), gpu_as="dra", gpu_share=True)
    config = EngineConfig.from_config_file(
        str(HERE / file),
        feature_gates=GATES,
        plugins=(f"schedsim_gpu_sharing:{plugin}",),
    )
    engine = Engine(config)
    snapshot, _ = engine.snapshot(trace.cluster, skip_unschedulable_nodes=False, node_tree=True)
    scheduler = Scheduler(snapshot, node_rank=rank)
    assert scheduler.schedule_one(trace.arrivals[0].pod).node_name == want
