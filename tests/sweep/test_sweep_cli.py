"""``schedsim sweep``: the command line over `schedsim.sweep` (exit statuses, outputs,
--resume, errors)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schedsim.cli import main


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(args)
    out, err = capsys.readouterr()
    return status, out, err


def test_sweep_json_on_the_pool(sweep_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Default executor (the process pool): 12 rows, exit status 0."""
    status, out, _ = _run(["sweep", str(sweep_dir / "sweep.yaml"), "-o", "json"], capsys)
    assert status == 0
    doc = json.loads(out)
    assert [r["scenario"] for r in doc["scenarios"]][-1] == "large+packed+scale-up"
    assert doc["scenarios"][-1]["nodesAdded"] == 2


def test_sweep_table_csv_resume_and_output_file(
    sweep_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--serial --resume DIR writes one JSON per scenario; a rerun reads them back and prints
    the same CSV to --output-file; the table names every scenario's variants."""
    spec = str(sweep_dir / "sweep.yaml")
    state = tmp_path / "state"
    status, out, _ = _run(["sweep", spec, "--serial", "--resume", str(state), "-o", "csv"], capsys)
    assert status == 0
    assert len(list(state.glob("*.json"))) == 12
    target = tmp_path / "out.csv"
    status, _, _ = _run(
        [
            "sweep",
            spec,
            "--workers",
            "1",
            "--resume",
            str(state),
            "-o",
            "csv",
            "--output-file",
            str(target),
        ],
        capsys,
    )
    assert status == 0

    def strip_wall(text: str) -> list[list[str]]:
        return [line.split(",")[:-2] for line in text.splitlines()]

    assert strip_wall(target.read_text()) == strip_wall(out)
    status, out, _ = _run(["sweep", spec, "--serial", "--resume", str(state)], capsys)
    assert status == 0
    assert out.count("resumed") == 12 and "roomy" in out and "packed" in out


def test_failed_scenarios_exit_1(sweep_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A scenario that fails gets one error line, the rest are printed, exit status 1."""
    (sweep_dir / "broken.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- plugins: {score: {enabled: [{name: NoSuchPlugin}]}}\n"
    )
    (sweep_dir / "sweep.yaml").write_text(
        "cluster: [cluster.yaml]\ncommands: [simulate]\n"
        "axes: {schedulerConfig: {default: null, broken: broken.yaml}}\n"
    )
    status, out, err = _run(
        ["sweep", str(sweep_dir / "sweep.yaml"), "--serial", "-o", "json"], capsys
    )
    assert status == 1
    assert "error: scenario broken+simulate: PluginError:" in err
    assert "1 of 2 scenario(s) failed" in err
    rows = json.loads(out)["scenarios"]
    assert [r["status"] for r in rows] == ["ok", "failed"]
    assert rows[0]["scheduled"] == 2
    # a failed scenario measured nothing: null, not a 0 that reads like a result
    assert rows[1]["scheduled"] is None and rows[1]["nodesAdded"] is None


def test_bad_spec_exit_2(sweep_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A bad spec is one ``schedsim: error: FILE: FIELD: problem`` line and exit status 2,
    nothing on standard output."""
    (sweep_dir / "sweep.yaml").write_text("cluster: [cluster.yaml]\ncommands: [simulat]\n")
    status, out, err = _run(["sweep", str(sweep_dir / "sweep.yaml")], capsys)
    assert status == 2 and out == ""
    assert err.startswith("schedsim: error: ") and "commands[0]: unknown command" in err
    status, out, err = _run(["sweep", str(sweep_dir / "nope.yaml")], capsys)
    assert status == 2 and "nope.yaml" in err and "Traceback" not in err


def test_report_file(sweep_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--report FILE.html writes one self-contained page (plotly.js inlined, no external
    script) naming every scenario; an unwritable target is exit status 1 and no file."""
    report = tmp_path / "sweep.html"
    spec = str(sweep_dir / "sweep.yaml")
    status, _, _ = _run(["sweep", spec, "--serial", "--report", str(report)], capsys)
    assert status == 0
    html = report.read_text()
    assert "<script src=" not in html and "plotly" in html
    assert all(
        f"<td>{g}+{c}+scale-up</td>" in html
        for g in ("capped", "large")
        for c in ("spread", "packed")
    )
    bad = tmp_path / "missing-dir" / "sweep.html"
    status, _, err = _run(["sweep", spec, "--serial", "--report", str(bad)], capsys)
    assert status == 2 and f"{bad}: cannot write the output: " in err and not bad.exists()


BARE = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p1}
spec:
  containers:
  - {name: c, image: i, resources: {requests: {cpu: "1"}}}
"""


RS = """---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs}
spec:
  replicas: 2
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      containers:
      - {name: c, image: i, resources: {requests: {cpu: "1"}}}
"""


def test_an_axis_without_effect_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``workloadScale`` scales controllers' replicas; on an input of bare pods its variants
    give identical rows, and the sweep says so (issue 31) instead of printing them silently."""
    (tmp_path / "bare.yaml").write_text(BARE)
    (tmp_path / "sweep.yaml").write_text(
        "cluster: [bare.yaml]\ncommands: [simulate]\naxes: {workloadScale: {today: 1, double: 2}}\n"
    )
    status, _, err = _run(["sweep", str(tmp_path / "sweep.yaml"), "--serial"], capsys)
    assert status == 0
    assert (
        "warning: sweep axis workloadScale: its variants (today, double) gave the same results "
        "in every scenario: it has no effect on this input (it scales the replicas of workload "
        "controllers; bare pods, as in a trace of pods, are not scaled)"
    ) in " ".join(err.split())
    # with a controller the axis changes the rows: no warning
    (tmp_path / "bare.yaml").write_text(BARE.split("---")[0] + RS)
    status, _, err = _run(["sweep", str(tmp_path / "sweep.yaml"), "--serial"], capsys)
    assert status == 0, err
    assert "sweep axis" not in err
