"""HTML reports: self-contained (plotly.js inline, no external script or stylesheet), written
whole or not at all, for replay, simulate, scale-up and scale-down."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from replay_scenarios import NODE_GROUPS, burst_trace

from schedsim.autoscaler.nodegroups import parse_node_groups
from schedsim.cli import main
from schedsim.engine import Cluster
from schedsim.replay import Replay, ReplayMetrics, manifest_trace
from schedsim.report import replay_page


def _metrics() -> ReplayMetrics:
    trace = manifest_trace(Cluster.from_text(burst_trace(), "trace.yaml"))
    groups = parse_node_groups(yaml.safe_load(NODE_GROUPS), "groups.yaml")
    return Replay(trace, groups).run()


def test_replay_page_is_self_contained() -> None:
    """No <script src>, no <link>, no http(s) fetch of scripts; plotly.js inline; one div
    per chart; the scale events and pods are in the tables."""
    page = replay_page(_metrics(), "burst")
    text = page.render()
    assert not re.search(r"<script[^>]+src=", text)
    assert "<link" not in text
    assert "Plotly.newPlot" in text and page.charts >= 5
    assert text.count('id="chart-') == page.charts
    assert "scale-up" in text and "scale-down" in text and "burst-2" in text


@pytest.mark.parametrize("command", ["simulate", "scale-up", "scale-down"])
def test_report_flag_of_other_commands(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--report on the shipped demo writes a page with charts; the normal output is
    unchanged."""
    out = tmp_path / "r.html"
    assert main([command, "--report", str(out)]) == 0
    text = out.read_text()
    assert "Plotly.newPlot" in text
    assert capsys.readouterr().out  # the table is still printed


def test_report_unwritable_is_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A report that cannot be written is an output failure (exit 1, one line, no temporary
    file left), as for --output-file."""
    bad = tmp_path / "no" / "r.html"
    assert main(["simulate", "--report", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"schedsim: error: cannot write the output to {bad}:")
    assert list(tmp_path.iterdir()) == []
