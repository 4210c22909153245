"""HTML reports: self-contained (plotly.js inline, no external script or stylesheet), written
whole or not at all, for replay, simulate, scale-up and scale-down."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from replay_scenarios import NODE_GROUPS, burst_trace

from schedsim.cli import main
from schedsim.engine import Cluster
from schedsim.replay import Replay, ReplayMetrics, manifest_trace
from schedsim.report import Page, replay_page, write_page
from schedsim.simulation.nodegroups import parse_node_groups


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


def test_write_page_whole_or_nothing(tmp_path: Path) -> None:
    """An unwritable target leaves nothing behind; a written one has no temp file beside
    it and the reader's usual permissions."""
    page = Page("t")
    page.text("hello")
    out = tmp_path / "r.html"
    write_page(str(out), page)
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]
    assert out.stat().st_mode & 0o044  # readable by others, as open() would make it
    with pytest.raises(OSError):
        write_page(str(tmp_path / "missing-dir" / "r.html"), page)
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]


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


def test_report_unwritable_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A report that cannot be written is a usage error (exit 2, one line)."""
    bad = tmp_path / "no" / "r.html"
    assert main(["simulate", "--report", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"schedsim: error: --report {bad}: cannot write:")
