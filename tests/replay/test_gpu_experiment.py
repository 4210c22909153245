"""The FGD paper's GPU-sharing experiment (``schedsim replay --inflate``): its tuning rule,
the fragmentation measure, the curve's binning, and the whole experiment on a small trace in
the openb format, each against values worked out by hand from the artifact's definitions
(``fgd-experiment.md``: ``TunePodsByNodeTotalResource``, ``GetTypicalPods``,
``GetNodePodFrag``, ``merge_*_discrete.py``)."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from openb_small import NO_SCORES, NODES, PODS

from schedsim.api.core import Pod
from schedsim.cli import main
from schedsim.replay.experiment import ExperimentEvent, curve, tuned_workload
from schedsim.replay.fragmentation import (
    PodDemand,
    TargetClass,
    node_fragment_amount,
    target_workload,
)


class ScriptedRandom:
    """A generator whose shuffle keeps the order and whose draws are given."""

    def __init__(self, draws: Sequence[int]) -> None:
        self.draws = list(draws)

    def shuffle(self, x: list[Any]) -> None:
        del x

    def randrange(self, n: int) -> int:
        v = self.draws.pop(0)
        assert 0 <= v < n
        return v


def _pod(name: str) -> Pod:
    return Pod.from_manifest({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}})


def test_tuning_stops_at_the_first_draw_whose_per_gpu_milli_overshoots() -> None:
    """Capacity 4000, target 4000; the originals total 600 + 2 x 1000 = 2600. The first draw
    (the 2-GPU pod) is checked with its per-GPU 1000 (3600 <= 4000) and then adds 2000:
    4600. The next draw (the CPU-only pod, 0 milli) already overshoots (4600 + 0 > 4000):
    it is dropped and tuning stops, 600 milli above the target."""
    pods = [
        (_pod("a"), PodDemand(1000, 600, 1)),
        (_pod("c"), PodDemand(500, 0, 0)),
        (_pod("m"), PodDemand(8000, 1000, 2)),
    ]
    rng = ScriptedRandom([2, 1])
    out = tuned_workload(pods, 4000, 1.0, rng)  # type: ignore[arg-type]
    assert [p.name for p, _ in out] == ["a", "c", "m", "m-tuned-0"]
    assert out[-1][0].uid != out[2][0].uid
    assert rng.draws == []


def test_tuning_down_removes_random_pods_until_at_or_below_the_target() -> None:
    """Target 0.5 x 2000 = 1000; 600 + 600 + 600 = 1800: remove index 1 (1200), then index 0
    (600 <= 1000)."""
    pods = [(_pod(n), PodDemand(1000, 600, 1)) for n in "xyz"]
    out = tuned_workload(pods, 2000, 0.5, ScriptedRandom([1, 0]))  # type: ignore[arg-type]
    assert [p.name for p, _ in out] == ["z"]


def test_target_workload_covers_95_percent_by_count() -> None:
    """Classes of 50, 30, 15 and 5 pods cover 50, 80, 95 %: the first three are kept
    (95 >= 95), weights renormalised over 95 pods; memory is not part of a class and a pod
    without a CPU request counts 100 milli-CPU (non-zero request)."""
    pods = (
        [PodDemand(1000, 500, 1)] * 50
        + [PodDemand(0, 0, 0)] * 30
        + [PodDemand(8000, 1000, 2, ("V100M32",))] * 15
        + [PodDemand(4000, 1000, 1)] * 5
    )
    assert target_workload(pods) == (
        TargetClass(1000, 500, 1, (), 50 / 95),
        TargetClass(100, 0, 0, (), 30 / 95),
        TargetClass(8000, 1000, 2, ("V100M32",), 15 / 95),
    )


CLASSES = (
    TargetClass(1000, 500, 1, (), 0.5),
    TargetClass(1000, 0, 0, (), 0.25),
    TargetClass(2000, 1000, 1, ("V100M32",), 0.25),
)


@pytest.mark.parametrize(
    ("cpu", "left", "model", "want"),
    [
        # 500-class: GPU 0 (300 < 500) is fragment, GPU 1 (800) usable: 300 x 0.5;
        # CPU-only class: all 1100 idle; V100M32 class on a T4: all 1100 (model mismatch)
        (4000, [300, 800], "T4", 0.5 * 300 + 0.25 * 1100 + 0.25 * 1100),
        # on a V100M32 the 1000-class needs a whole free GPU: none, all 1100
        (4000, [300, 800], "V100M32", 0.5 * 300 + 0.25 * 1100 + 0.25 * 1100),
        # CPU short for the 500-class (Q4): all idle for it too
        (500, [300, 800], "T4", 1.0 * 1100),
        # a whole free GPU on a V100M32 with 2000 CPU: 1000-class fragment is the 300
        (2000, [300, 1000], "V100M32", 0.5 * 300 + 0.25 * 1300 + 0.25 * 300),
        ([0][0], [], "T4", 0.0),  # no GPUs: nothing
    ],
)
def test_node_fragment_amount(cpu: int, left: list[int], model: str, want: float) -> None:
    assert node_fragment_amount(cpu, left, model, CLASSES) == pytest.approx(want)


def test_curve_bins_by_rounded_arrived_percent() -> None:
    """10 GPUs: arrived percent = milli / 100, rounded half to even (250 -> 2, 350 -> 4);
    a percent without events takes the events within +-1; allocation rounded to 2
    decimals per event before the mean."""
    events = [
        ExperimentEvent(250, 123, 100.0, 9877, True),  # 2 (half to even)
        ExperimentEvent(350, 200, 200.0, 9800, True),  # 4 (half to even)
        ExperimentEvent(360, 300, 300.0, 9700, True),  # 4
    ]
    c = curve(events, 10, 6)
    assert [p.arrived for p in c] == [0, 1, 2, 3, 4, 5, 6]
    assert c[0].gpu_allocation is None  # nothing in -1..1
    assert c[1].gpu_allocation == 1.23  # from 2 (its neighbour)
    assert c[2].gpu_allocation == 1.23 and c[2].fragmentation_amount == 1.0
    assert c[3].gpu_allocation == pytest.approx((1.23 + 2.0 + 3.0) / 3)  # 2 and 4
    assert c[4].gpu_allocation == pytest.approx(2.5)
    assert c[4].fragmentation == pytest.approx((100 * 200 / 9800 + 100 * 300 / 9700) / 2)
    assert c[6].gpu_allocation is None


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_whole_experiment_on_a_small_trace(tmp_path: Path) -> None:
    """Two T4 nodes with one GPU each (2000 milli); two 600-milli pods in the 5-column
    format (multigpu*). Tuned to 1.3 x 2000 = 2600: 1200 -> clone (1800) -> clone (2400);
    the next draw would make 3000: dropped. Four identical pods, so the result does not
    depend on the seed's order or node priority:

    1. on one GPU (400 left): arrived 600, allocated 600, idle 1400; that GPU cannot host
       the only class (600 milli) so its 400 is fragment: ratio 400/1400, amount 400/2000;
    2. on the other GPU: arrived 1200, allocated 1200, idle 800, all fragment;
    3. and 4. fit nowhere (dropped): arrived 1800 and 2400, the rest unchanged.

    Arrived percent = milli / 20: 30, 60, 90, 120; other percents take their +-1
    neighbours or stay empty."""
    nodes, pods, config = tmp_path / "n.csv", tmp_path / "p.csv", tmp_path / "c.yaml"
    nodes.write_text(NODES)
    pods.write_text(PODS)
    config.write_text(NO_SCORES)
    argv = [
        "replay",
        "--alibaba-nodes",
        str(nodes),
        "--alibaba-pods",
        str(pods),
        "--gpu-as",
        "dra",
        "--inflate",
        "1.3",
        "--seed",
        "7",
        "--config",
        str(config),
        "-o",
        "json",
    ]
    code, out, err = _run(argv)
    assert code == 0, err
    assert "DRAConsumableCapacity feature gate is enabled" in err
    doc = json.loads(out)
    assert doc["experiment"] == {
        "seed": 7,
        "inflate": 1.3,
        "gpus": 2,
        "originalPods": 2,
        "pods": 4,
        "scheduled": 2,
        "failed": 2,
    }
    assert doc["targetWorkload"] == [
        {"milliCpu": 1000, "gpuMilli": 600, "gpus": 1, "models": [], "weight": 1.0}
    ]
    cells = {p["arrived"]: p for p in doc["curve"]}
    assert len(doc["curve"]) == 131 and min(cells) == 0 and max(cells) == 130
    want = {
        30: (30.0, 100 * 400 / 1400, 20.0),
        60: (60.0, 100.0, 40.0),
        90: (60.0, 100.0, 40.0),
        120: (60.0, 100.0, 40.0),
    }
    for a, (alloc, ratio, amount) in want.items():
        for b in (a - 1, a, a + 1):
            got = cells[b]
            assert got["gpuAllocation"] == pytest.approx(alloc), b
            assert got["fragmentation"] == pytest.approx(ratio), b
            assert got["fragmentationAmount"] == pytest.approx(amount), b
    empty = [a for a, p in cells.items() if p["gpuAllocation"] is None]
    assert empty == [a for a in range(131) if all(abs(a - b) > 1 for b in want)]
    assert _run(argv)[1] == out  # same input, same output


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--gpu-as", "extended-resource"], "--inflate needs --gpu-as dra"),
        (["--inflate", "0"], "--inflate: must be a finite number > 0, got 0"),
        (["--inflate", "inf"], "--inflate: must be a finite number > 0, got inf"),
    ],
)
def test_experiment_usage_errors(tmp_path: Path, extra: list[str], message: str) -> None:
    nodes, pods = tmp_path / "n.csv", tmp_path / "p.csv"
    nodes.write_text(NODES)
    pods.write_text(PODS)
    base = ["replay", "--alibaba-nodes", str(nodes), "--alibaba-pods", str(pods)]
    code, _, err = _run([*base, "--gpu-as", "dra", "--inflate", "1.3", *extra])
    assert code == 2
    assert message in err


@pytest.mark.parametrize(
    ("pods", "inflate", "message"),
    [
        # clones are drawn until the GPU target: with no GPU pod the draws never reach it
        (
            "p-cpu,4000,8192,0,0\n",
            "1.3",
            "no pod of the trace asks for a GPU: it cannot be tuned to 1.3 x",
        ),
        (None, "1e9", "pods after tuning, past schedsim's limit of 1,000,000"),
    ],
)
def test_a_tuning_that_cannot_end_is_refused_before_it_starts(
    tmp_path: Path, pods: str | None, inflate: str, message: str
) -> None:
    """Issue 30 (no loop without progress; sizes checked before anything is built): the
    tuning's end and size are known from the trace, so they are checked first."""
    nodes, trace = tmp_path / "n.csv", tmp_path / "p.csv"
    nodes.write_text(NODES)
    header = PODS.splitlines(keepends=True)[0]
    trace.write_text(header + pods if pods is not None else PODS)
    base = ["replay", "--alibaba-nodes", str(nodes), "--alibaba-pods", str(trace)]
    code, _, err = _run([*base, "--gpu-as", "dra", "--inflate", inflate])
    assert code == 2
    assert message in err
