"""``schedsim replay``: the shipped example, the outputs, and bad input (exit status 2, one
``schedsim: error: ...`` line, nothing on stdout, never a traceback)."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
from pathlib import Path

import pytest

from schedsim.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_readme_replay_snippet_prints_what_the_readme_says() -> None:
    """README's replay snippet runs as written on the shipped example."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("A replay is an object you step and inspect") :]
    code, expected = re.findall(r"```(?:python)?\n(.*?)```", section, re.S)[:2]
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    finally:
        os.chdir(cwd)
    assert out.getvalue() == expected


def test_example_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without a TRACE the shipped example replays: a table, JSON with the scale events,
    CSV with one row per sample and a column per node group, and an HTML report."""
    assert main(["replay"]) == 0
    table = capsys.readouterr().out
    assert "replay summary" in table and "scale-up" in table and "scale-down" in table
    report = tmp_path / "r.html"
    assert main(["replay", "-o", "json", "--report", str(report)]) == 0
    doc = json.loads(capsys.readouterr().out)
    kinds = [e["kind"] for e in doc["events"]]
    assert kinds[0] == "scale-up" and kinds[-1] == "scale-down"
    assert doc["summary"]["nodesAdded"] == doc["summary"]["nodesRemoved"] == 5
    assert "Plotly.newPlot" in report.read_text()
    assert main(["replay", "-o", "csv", "--sample-interval", "30s"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows[0]["time"] == "0.0" and "nodes:burst" in rows[0] and "upcoming:burst" in rows[0]
    assert {float(r["time"]) % 30 for r in rows[:-1]} == {0.0}


BAD_TRACE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: team, annotations: {schedsim.io/duration: "-1m"}}
spec: {containers: [{name: c, image: x}]}
"""


def _run_bad(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    return err.rstrip("\n")


def test_negative_duration_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "t.yaml"
    p.write_text(BAD_TRACE)
    err = _run_bad(["replay", str(p)], capsys)
    assert err == (
        f"schedsim: error: {p}: Pod team/p: metadata.annotations[schedsim.io/duration]: "
        "must not be negative, got '-1m'"
    )


def test_csv_error_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pods = tmp_path / "pods.csv"
    nodes = tmp_path / "nodes.csv"
    pods.write_text(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
        "deletion_time,scheduled_time\n"
        "a,1000,1024,0,0,,BE,Running,10,20,10\n"
        "b,1000,1024,0,0,,BE,Running,30,20,30\n"
    )
    nodes.write_text("sn,cpu_milli,memory_mib,gpu,model\nn1,4000,4096,0,\n")
    err = _run_bad(["replay", "--alibaba-pods", str(pods), "--alibaba-nodes", str(nodes)], capsys)
    assert err == (
        f"schedsim: error: {pods}:3: deletion_time 20 is before scheduled_time 30 "
        "(a completion before the arrival)"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["replay", "--alibaba-pods", "p.csv"], "--alibaba-pods and --alibaba-nodes go together"),
        (["replay", "t.yaml", "--alibaba-pods", "p.csv", "--alibaba-nodes", "n.csv"],
         "give either TRACE manifests or --alibaba-pods/--alibaba-nodes, not both"),
        # refused before the replay starts, named as the flag (CA validates its flags at
        # start-up; a fresh user got a traceback at the first scale-up)
        (["replay", "--max-nodes-per-scaleup", "-1"],
         "--max-nodes-per-scaleup: must be >= 0, got -1"),
        (["replay", "--scan-interval", "0s"], "--scan-interval: must be > 0, got 0.0"),
        (["replay", "--max-scale-down-parallelism", "0"],
         "--max-scale-down-parallelism: must be >= 1, got 0"),
    ],
)  # fmt: skip
def test_usage_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run_bad(argv, capsys) == f"schedsim: error: {message}"


def test_bad_duration_flag(capsys: pytest.CaptureFixture[str]) -> None:
    """Durations are Go durations; argparse refuses others with exit 2."""
    with pytest.raises(SystemExit) as e:
        main(["replay", "--scan-interval", "soon"])
    assert e.value.code == 2
    assert "invalid duration 'soon'" in capsys.readouterr().err


def test_bad_price_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A node group's price is a number >= 0 (FILE: FIELD: problem)."""
    from schedsim.cli.replay import EXAMPLE_NODE_GROUPS

    src = (ROOT / "src/schedsim/examples" / EXAMPLE_NODE_GROUPS).read_text()
    groups = tmp_path / "groups.yaml"
    groups.write_text(src.replace("price: 0.2", "price: -1"))
    err = _run_bad(["replay", "--node-groups", str(groups)], capsys)
    assert err == (
        f"schedsim: error: {groups}: nodeGroups[0].price: must be a finite number >= 0, got -1"
    )


@pytest.mark.parametrize("value", ["nan", "inf", "1e400", "9999999999h"])
def test_non_finite_or_overlong_duration_is_exit_2(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Go's time.ParseDuration refuses what does not fit in an int64 of nanoseconds (about
    2562047h); NaN, infinity and 1e400 are no durations (fresh-user finding: a traceback)."""
    p = tmp_path / "t.yaml"
    p.write_text(BAD_TRACE.replace('"-1m"', f'"{value}"'))
    err = _run_bad(["replay", str(p)], capsys)
    # NaN, infinity and 1e400 are no Go durations at all ("time: invalid duration", "unknown
    # unit"), no longer read as numbers of seconds
    problem = (
        ": out of range (at most 2562047h)"
        if value.endswith("h")
        else " (expected e.g. 90s, 10m, 1h30m)"
    )
    assert err == (
        f"schedsim: error: {p}: Pod team/p: metadata.annotations[schedsim.io/duration]: "
        f"invalid duration '{value}'{problem}"
    )


_POD_HEADER = (
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time"
)


def test_csv_with_a_bom_is_read_and_non_utf8_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A spreadsheet's UTF-8 byte-order mark is not part of the first column's name; bytes
    that are not UTF-8 are a FILE:LINE error, not a traceback (fresh-user findings)."""
    pods = tmp_path / "pods.csv"
    nodes = tmp_path / "nodes.csv"
    pods.write_bytes(
        ("\ufeff" + _POD_HEADER + "\r\na,1000,1024,0,0,,BE,Running,10,20,10\r\n").encode()
    )
    nodes.write_bytes("\ufeffsn,cpu_milli,memory_mib,gpu,model\r\nn1,4000,4096,0,\r\n".encode())
    argv = ["replay", "--alibaba-pods", str(pods), "--alibaba-nodes", str(nodes), "-o", "json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["scheduled"] == 1
    nodes.write_bytes(b"\xff\xfes\x00n\x00")
    err = _run_bad(argv, capsys)
    assert err == f"schedsim: error: {nodes}:1: not UTF-8 text"


def test_bad_node_name_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A node list's ``sn`` must be a Kubernetes node name (apimachinery
    ``IsDNS1123Subdomain``): FILE:LINE: column: problem, exit 2."""
    pods = tmp_path / "pods.csv"
    nodes = tmp_path / "nodes.csv"
    pods.write_text(_POD_HEADER + "\na,1000,1024,0,0,,BE,Running,10,20,10\n")
    nodes.write_text("sn,cpu_milli,memory_mib,gpu,model\nn1,4000,4096,0,\nN_2,4000,4096,0,\n")
    err = _run_bad(["replay", "--alibaba-pods", str(pods), "--alibaba-nodes", str(nodes)], capsys)
    assert err.startswith(f"schedsim: error: {nodes}:3: sn: invalid node name 'N_2': a lowercase")


def test_gpu_as_dra(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--gpu-as dra``: the GPU pod gets its two devices on the GPU node, and the GPU
    metrics count devices (2 of 4 allocated while it runs)."""
    pods = tmp_path / "pods.csv"
    nodes = tmp_path / "nodes.csv"
    pods.write_text(_POD_HEADER + "\ng,1000,1024,2,1000,,LS,Running,10,70,10\n")
    nodes.write_text("sn,cpu_milli,memory_mib,gpu,model\nn1,4000,4096,0,\nn2,8000,8192,4,T4\n")
    argv = ["replay", "--alibaba-pods", str(pods), "--alibaba-nodes", str(nodes)]
    assert main([*argv, "--gpu-as", "dra", "-o", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["summary"]["scheduled"] == 1 and out["summary"]["completed"] == 1
    assert [(s["gpuRequested"], s["gpuAllocatable"]) for s in out["samples"]][:1] == [(2, 4)]
    with pytest.raises(SystemExit) as e:
        main([*argv, "--gpu-as", "extended"])
    assert e.value.code == 2


PREEMPTION_TRACE = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: low
  namespace: default
  creationTimestamp: "2026-01-01T00:00:00Z"
  annotations: {schedsim.io/duration: 10m}
spec:
  priorityClassName: low
  containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: hi
  namespace: default
  creationTimestamp: "2026-01-01T00:01:00Z"
  annotations: {schedsim.io/duration: 2m}
spec:
  priorityClassName: high
  containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]
"""


def test_preemption_during_a_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """kube-scheduler 1.34's DefaultPreemption in a replay: the high-priority pod arriving at
    t=60s on the full node evicts the low one (deleted, as upstream, so it never completes)
    and runs its 2 minutes (fresh-user finding: any preemption ended the replay with a
    traceback)."""
    p = tmp_path / "t.yaml"
    p.write_text(PREEMPTION_TRACE)
    assert main(["replay", str(p), "-o", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert summary["preempted"] == 1
    assert summary["scheduled"] == 2 and summary["completed"] == 1
    assert summary["pendingAtEnd"] == 0


def test_replay_ends_at_until_even_when_quiet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/replay.md: "The replay ends at --until": node-hours count up to it even when no
    event falls there (fresh-user finding: a 90s replay stopped at the last event, 60s)."""
    p = tmp_path / "t.yaml"
    p.write_text(PREEMPTION_TRACE)
    assert main(["replay", str(p), "--until", "90s", "-o", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert summary["simulatedSeconds"] == 90.0
    assert summary["nodeHours"] == {"": pytest.approx(90 / 3600)}


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", "--scan-interval", "-5s"],
        ["replay", "--scan-interval=-5s"],
        ["replay", "--scale-down-unneeded-time", "-.5m"],
    ],
)
def test_negative_duration_flag_is_refused_as_negative(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``--flag -5s`` reaches the duration check as ``--flag=-5s`` does (argparse alone would
    take ``-5s`` for an option and say ``expected one argument``)."""
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "must not be negative, got '-" in err and "expected one argument" not in err
