"""The ``experiment`` command of a sweep: the FGD paper's grid (traces x policies x seeds) as
a sweep spec, its curves in the JSON rows, the table and the report, resumable.

The trace is openb_small's (tests/replay/test_gpu_experiment.py), whose experiment
is worked out by hand there (two T4 nodes of one GPU, two 600-milli pods tuned to four:
two placed, two dropped; GPU allocation 30 % at 30 % arrived, 60 % from 60 % on, the
fragmentation of idle GPU 400/1400 then 100 %); it does not depend on the seed, so every
seed of the grid must give those values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openb_small import NO_SCORES, NODES, PODS

from schedsim.api.errors import ManifestError
from schedsim.sweep import ResultStore, SerialExecutor, load_spec, run_sweep, scenarios
from schedsim.sweep.curves import curve_rows, curve_table
from schedsim.sweep.report import sweep_page

SPEC = """\
kind: Sweep
commands: [experiment]
experiment:
  alibabaNodes: nodes.csv
  inflate: 1.3
axes:
  traces: {small: pods.csv}
  schedulerConfig: {noscore: noscore.yaml}
  seeds: [7, 8]
"""


@pytest.fixture
def grid(tmp_path: Path) -> Path:
    (tmp_path / "nodes.csv").write_text(NODES)
    (tmp_path / "pods.csv").write_text(PODS)
    (tmp_path / "noscore.yaml").write_text(NO_SCORES)
    (tmp_path / "sweep.yaml").write_text(SPEC)
    return tmp_path / "sweep.yaml"


def test_experiment_grid_gives_the_hand_computed_curves(grid: Path, tmp_path: Path) -> None:
    spec = load_spec(str(grid))
    assert [s.name for s in scenarios(spec)] == [
        "small+noscore+7+experiment",
        "small+noscore+8+experiment",
    ]
    store = ResultStore(str(tmp_path / "state"))
    results = run_sweep(spec, SerialExecutor(), store=store)
    assert [r.error for r in results] == [None, None]
    for r in results:
        assert (r.scheduled, r.unschedulable) == (2, 2)
        assert len(r.curve) == 131
        by = {a: (g, f, m) for a, g, f, m in r.curve}
        for a in (29, 30, 31):
            assert by[a] == pytest.approx((30.0, 100 * 400 / 1400, 20.0))
        for a in (59, 60, 61, 90, 120):
            assert by[a] == pytest.approx((60.0, 100.0, 40.0))
        assert by[50] == (None, None, None)  # no pod arrived within 1 % of 50 %
    rows = curve_rows(results)
    assert rows[0][:4] == ("small", "noscore", "2", "GPU alloc %")
    # 50 %: empty; 80 %: empty; 90 .. 130 %: 60.0 on both seeds (mean 60.0, range 60-60)
    assert rows[0][4:] == ("-", "-", "60.0 (60.0-60.0)", "-", "-", "60.0 (60.0-60.0)", "-")
    assert rows[1][4:] == ("-", "-", "100.0 (100.0-100.0)", "-", "-", "100.0 (100.0-100.0)", "-")
    assert curve_table(results).splitlines()[0].startswith("| trace | policy | seeds |")
    # the curve survives the resume directory: a rerun runs nothing and gives equal rows
    again = run_sweep(spec, SerialExecutor(), store=store)
    assert all(r.resumed for r in again)
    assert [r.metrics() for r in again] == [r.metrics() for r in results]
    html = sweep_page(results, "t").render()
    assert "GPU-sharing experiment: allocation and fragmentation" in html


def test_experiment_row_in_json_matches_replay_inflate(grid: Path) -> None:
    """The sweep runs what ``schedsim replay --inflate`` runs: same curve for seed 7."""
    import contextlib
    import io

    from schedsim.cli import main

    (result,) = run_sweep(load_spec(str(grid)), SerialExecutor())[:1]
    d = grid.parent
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(
            [
                "replay",
                "--alibaba-nodes",
                str(d / "nodes.csv"),
                "--alibaba-pods",
                str(d / "pods.csv"),
                "--gpu-as",
                "dra",
                "--inflate",
                "1.3",
                "--seed",
                "7",
                "--config",
                str(d / "noscore.yaml"),
                "-o",
                "json",
            ]
        )
    assert code == 0
    assert result.to_dict()["curve"] == json.loads(out.getvalue())["curve"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("commands: [experiment]", "commands: [experiment, simulate]"), "experiment runs alone"),
        (("  alibabaNodes: nodes.csv\n", ""), "experiment: required with the experiment command"),
        (("  inflate: 1.3", "  inflate: 0"), "experiment.inflate: expected a finite number > 0"),
        (("  inflate: 1.3", "  inflate: 1.3\n  gpus: 2"), "experiment.gpus: unknown field"),
        (("seeds: [7, 8]", "seeds: [7, true]"), "axes.seeds: expected integers, got true"),
        (("seeds: [7, 8]", "seeds: [7, 7]"), "axes.seeds: a seed is listed twice"),
        (("kind: Sweep\n", "kind: Sweep\ncluster: [x.yaml]\n"), "leave cluster out"),
    ],
)
def test_experiment_spec_errors(grid: Path, change: tuple[str, str], message: str) -> None:
    (grid.parent / "x.yaml").write_text("")  # a cluster path must exist to be refused here
    grid.write_text(SPEC.replace(*change))
    with pytest.raises(ManifestError, match=message.replace("[", r"\[")):
        load_spec(str(grid))
