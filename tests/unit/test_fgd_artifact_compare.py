"""benchmarks/fgd_artifact_compare.py: the FGD artifact's ``analysis_*_discrete.csv`` rows
(the layout its ``experiments/analysis/merge_*_discrete.py`` write: ``workload, sc_policy,
tune, seed[, total_gpus]``, then one column per arrived percent 0..130, empty where a run
had no event near it) read and tabled beside a sweep's experiment curves."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from schedsim.sweep.results import ResultStore, ScenarioResult, to_json

ROOT = Path(__file__).resolve().parents[2]

# an excerpt in the artifact's shape: the allocation file has total_gpus, the frag files not;
# seed 43's 130 % cell is empty (no event in 129-131)
ALLOC = """workload,sc_policy,tune,seed,total_gpus,50,80,130
openb_pod_list_default,06-FGD,1.3,42,6212,50.0,80.0,95.0
openb_pod_list_default,06-FGD,1.3,43,6212,49.8,79.0,
openb_pod_list_default,01-Random,1.3,42,6212,49.0,78.0,87.0
"""
RATIO = """workload,sc_policy,tune,seed,50,80,130
openb_pod_list_default,06-FGD,1.3,42,18.0,30.0,99.0
openb_pod_list_default,06-FGD,1.3,43,17.0,29.0,99.4
"""
AMOUNT = """workload,sc_policy,tune,seed,50,80,130
openb_pod_list_default,06-FGD,1.3,42,9.0,6.0,4.6
"""


@pytest.fixture(scope="module")
def compare() -> Iterator[ModuleType]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import fgd_artifact_compare
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    yield fgd_artifact_compare


@pytest.fixture
def artifact(tmp_path: Path) -> Path:
    d = tmp_path / "expected_results"
    d.mkdir()
    (d / "analysis_allo_discrete.csv").write_text(ALLOC)
    (d / "analysis_frag_ratio_discrete.csv").write_text(RATIO)
    (d / "analysis_frag_discrete.csv").write_text(AMOUNT)
    return d


def run(
    seed: int, alloc130: float, policy: str = "fgd", index: int = 0, alloc: float = 50.0
) -> ScenarioResult:
    """A finished experiment scenario whose curve is flat: allocation ``alloc`` up to 129 %
    arrived and ``alloc130`` at 130 %; fragmentation ratio 20, amount 10 everywhere."""
    curve = [(a, alloc if a < 130 else alloc130, 20.0, 10.0) for a in range(131)]
    return ScenarioResult(
        name=f"default+{policy}+{seed}+experiment",
        index=index,
        axes=(
            ("traces", "default"),
            ("schedulerConfig", policy),
            ("seeds", str(seed)),
            ("command", "experiment"),
        ),
        fingerprint="f",
        curve=curve,
    )


def test_artifact_rows_are_read_by_trace_policy_and_seed(
    compare: ModuleType, artifact: Path
) -> None:
    assert compare.artifact_name("openb_pod_list_gpushare40", "05-BestFit") == (
        "gpushare40",
        "bestfit",
    )
    curves = compare.read_artifact_csv(str(artifact / "analysis_allo_discrete.csv"))
    assert curves[("default", "fgd")] == {
        42: {50: 50.0, 80: 80.0, 130: 95.0},
        43: {50: 49.8, 80: 79.0},  # the empty cell is absent, total_gpus is not a point
    }
    assert curves[("default", "random")] == {42: {50: 49.0, 80: 78.0, 130: 87.0}}


def test_rows_pair_means_and_ranges_and_flag_disjoint_ranges(
    compare: ModuleType, artifact: Path
) -> None:
    art = {
        column: compare.read_artifact_csv(str(artifact / name))
        for _, column, name in compare.METRICS
    }
    # 50.04 is above the artifact's 49.8-50.0 only past the printed decimal: not apart
    results = [run(42, 94.0, alloc=50.04), run(43, 96.0, index=1, alloc=50.04)]
    rows = compare.compare_rows(results, art)
    assert [r[2:5] for r in rows] == [
        ("GPU alloc %", "schedsim", "2"),
        ("GPU alloc %", "artifact", "2"),
        ("frag % idle", "schedsim", "2"),
        ("frag % idle", "artifact", "2"),
        ("frag % capacity", "schedsim", "2"),
        ("frag % capacity", "artifact", "1"),
    ]
    alloc_s, alloc_a = rows[0], rows[1]
    # 50 %: schedsim 50.0 and 50.0 inside the artifact's 49.8-50.0; 80 %: 50 vs 79-80 apart
    assert alloc_s[5:7] == ("50.0 (50.0-50.0)", "50.0 (50.0-50.0) *")
    assert alloc_a[5:7] == ("49.9 (49.8-50.0)", "79.5 (79.0-80.0)")
    # 90-120 %: the artifact has no column there
    assert alloc_a[7:11] == ("-", "-", "-", "-")
    # 130 %: schedsim 95.0 (94.0-96.0) around the artifact's single seed 95.0
    assert (alloc_s[11], alloc_a[11]) == ("95.0 (94.0-96.0)", "95.0")
    # max |d| over the paired points: |50 - 79.5| at 80 %
    assert (alloc_s[12], alloc_a[12]) == ("29.5", "")
    ratio_s = rows[2]
    assert ratio_s[5] == "20.0 (20.0-20.0) *"  # artifact 17-18
    assert ratio_s[12] == f"{99.2 - 20.0:.1f}"
    table = compare.compare_table(rows)
    assert table.splitlines()[0] == (
        "| trace | policy | metric | side | seeds | 50 % | 80 % | 90 % | 100 % | 110 % "
        "| 120 % | 130 % | max |d| |"
    )
    assert len(table.splitlines()) == 2 + len(rows)
    # a second trace is a second table after a blank line
    other = [("gpushare40", *r[1:]) for r in rows[:2]]
    tables = compare.compare_table(rows + other).split("\n\n")
    assert len(tables) == 2 and tables[1].splitlines()[2].startswith("| gpushare40 | fgd |")


def test_a_policy_the_artifact_lacks_gets_empty_artifact_rows(
    compare: ModuleType, artifact: Path
) -> None:
    art = {1: compare.read_artifact_csv(str(artifact / "analysis_allo_discrete.csv"))}
    rows = compare.compare_rows([run(42, 90.0, policy="mine")], art)
    assert rows[0][3:5] == ("schedsim", "1") and rows[0][-1] == "-"
    assert rows[1][3:] == ("artifact", "0", *["-"] * 7, "")


def test_cli_reads_a_resume_directory_and_a_sweep_json_once_each(
    compare: ModuleType, artifact: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = ResultStore(str(tmp_path / "runs"))
    store.save(run(42, 94.0))
    store.save(run(43, 96.0, index=1))
    # the same scenario 43 again in a sweep's JSON, and the random policy
    doc = tmp_path / "sweep.json"
    doc.write_text(to_json([run(43, 96.0), run(42, 87.0, policy="random", index=2)]))
    argv = ["--artifact", str(artifact), "--schedsim", str(tmp_path / "runs"), str(doc)]
    assert compare.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line for line in lines[2:] if "GPU alloc %" in line]
    # artifact order: 01-Random before 06-FGD; fgd has two seeds, not three
    assert rows[0].startswith("| default | random | GPU alloc % | schedsim | 1 |")
    assert rows[2].startswith("| default | fgd | GPU alloc % | schedsim | 2 |")


def test_bad_input_is_one_line_naming_the_file_and_exit_2(
    compare: ModuleType, artifact: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = artifact / "analysis_frag_discrete.csv"
    bad.write_text(AMOUNT.replace("4.6", "n/a"))
    (tmp_path / "runs").mkdir()
    argv = ["--artifact", str(artifact), "--schedsim", str(tmp_path / "runs")]
    assert compare.main(argv) == 2
    assert capsys.readouterr().err == (
        f"{bad}: line 2 (openb_pod_list_default 06-FGD 42): 130: not a number: 'n/a'\n"
    )
    bad.write_text(AMOUNT)
    (tmp_path / "runs" / "x.json").write_text(json.dumps({"scenario": "x"}))
    assert compare.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{tmp_path / 'runs' / 'x.json'}: scenario 0: not a sweep result row")
    (tmp_path / "runs" / "x.json").unlink()
    assert compare.main(argv) == 2
    assert capsys.readouterr().err == f"{tmp_path / 'runs'}: no finished experiment run\n"


def experiment_doc(alloc: float, alloc130: float) -> dict[str, object]:
    """An experiment's ``-o json`` (`GpuSharingExperiment.to_json`'s keys), as
    benchmarks/fgd_curves.py writes it: the flat curve of `run`."""
    return {
        "experiment": {"seed": 42, "pods": 10, "scheduled": 9, "failed": 1},
        "targetWorkload": [],
        "curve": [
            {
                "arrived": a,
                "gpuAllocation": alloc if a < 130 else alloc130,
                "fragmentation": 20.0,
                "fragmentationAmount": 10.0,
            }
            for a in range(131)
        ],
        "cpuSeconds": 1.0,
    }


def test_fgd_curves_out_directory_is_read_by_its_file_names(
    compare: ModuleType, artifact: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "fgd-runs"
    out.mkdir()
    (out / "default-fgd-42.json").write_text(json.dumps(experiment_doc(50.0, 94.0)))
    (out / "default-fgd-43.json").write_text(json.dumps(experiment_doc(50.0, 96.0)))
    results = compare.read_schedsim([str(out)])
    assert [(r.name, r.axes) for r in results] == [
        (
            f"default+fgd+{s}",
            (("traces", "default"), ("schedulerConfig", "fgd"), ("seeds", str(s))),
        )
        for s in (42, 43)
    ]
    assert results[1].curve[130] == (130, 96.0, 20.0, 10.0)
    argv = ["--artifact", str(artifact), "--schedsim", str(out), "-o", "deviation"]
    assert compare.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "| trace | policy | metric | seeds | 50 % | 80 % | 90 % | 100 % | 110 % | 120 % "
        "| 130 % | max |d| |"
    )
    # allocation: 50 - 49.9 at 50 % (ranges 50.0-50.0 and 49.8-50.0 overlap), 50 - 79.5 at
    # 80 % (apart), no artifact column at 90-120 %, 95 - 95 at 130 %
    assert lines[2] == (
        "| default | fgd | GPU alloc % | 2/2 | +0.1 | -29.5 * | - | - | - | - | 0.0 | 29.5 |"
    )
    # ratio: 20 against 17.5 (17-18), 29.5 (29-30), 99.2 (99.0-99.4), all apart
    assert lines[3] == (
        "| default | fgd | frag % idle | 2/2 | +2.5 * | -9.5 * | - | - | - | - | -79.2 * | 79.2 |"
    )
    argv[-1] = "summary"
    assert compare.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "| trace | policy | seeds | max |d| GPU alloc % | max |d| frag % idle "
        "| max |d| frag % capacity | apart |"
    )
    # capacity: 10 against the one seed's 9.0, 6.0, 4.6: all apart; 1 + 3 + 3 of 9 cells
    assert lines[2] == "| default | fgd | 2/2 | 29.5 | 79.2 | 5.4 | 7/9 |"


def test_an_experiment_json_not_named_trace_policy_seed_is_refused(
    compare: ModuleType, tmp_path: Path
) -> None:
    bad = tmp_path / "fgd-42.json"
    bad.write_text(json.dumps(experiment_doc(50.0, 94.0)))
    with pytest.raises(compare.InputError, match=r"not named TRACE-POLICY-SEED\.json"):
        compare.read_schedsim([str(bad)])
    good = tmp_path / "default-fgd-42.json"
    good.write_text(json.dumps({**experiment_doc(50.0, 94.0), "curve": [{"arrived": 0}]}))
    with pytest.raises(compare.InputError, match="curve: not an experiment's curve"):
        compare.read_schedsim([str(good)])
