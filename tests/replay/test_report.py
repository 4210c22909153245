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
from schedsim.replay.metrics import pending_reason
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


def test_report_unwritable_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A report that cannot be written is an output failure (exit 2, one line ``FILE:
    problem (how to go on)``, no temporary file left), as for --output-file."""
    bad = tmp_path / "no" / "r.html"
    assert main(["simulate", "--report", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"schedsim: error: {bad}: cannot write the output: No such file or directory "
        "(give a path that can be written)\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_report_is_deterministic() -> None:
    """Two replays of the same input give the same page, byte for byte."""
    trace = burst_trace()
    groups = yaml.safe_load(NODE_GROUPS)
    pages = [
        replay_page(
            Replay(
                manifest_trace(Cluster.from_text(trace, "trace.yaml")),
                parse_node_groups(groups, "groups.yaml"),
                detail=True,
            ).run(),
            "burst",
        ).render()
        for _ in range(2)
    ]
    assert pages[0] == pages[1]


def test_timeline_is_the_cost_at_every_sample() -> None:
    """`ReplayMetrics.timeline` (from the nodes' lifetimes) gives, summed over the groups,
    each sample's cost so far (node-hours x price, metrics module docstring); by hand for the
    burst scenario: burst's 3 nodes ready from 120 s at 0.5/h, burst-2 deleted at 960 s
    (3 x 840 s = 0.35), the other two at 1,020 s (+ 2 x 60 s = 0.01667)."""
    m = _metrics()
    tl = m.timeline()
    for s in m.samples:
        assert sum(t.cost_at(s.time) for t in tl.values()) == pytest.approx(s.cost)
    assert tl["burst"].times == (0.0, 120.0, 960.0, 1020.0, 1030.0)
    assert tl["burst"].nodes == (0, 3, 2, 0, 0)
    assert tl["burst"].cost == pytest.approx(
        (0.0, 0.0, 0.35, 0.35 + 0.5 * 120 / 3600, 0.35 + 0.5 * 120 / 3600)
    )
    assert tl["base"].nodes == (1, 1)  # still there at the end


def test_without_detail_nothing_is_recorded() -> None:
    """A replay that writes no report records no detail, and its page says so instead of
    drawing the heatmaps and the pending-by-reason chart."""
    m = _metrics()
    assert m.details == ()
    text = replay_page(m).render()
    assert text.count("Not recorded: the replay ran without detail") == 2


def test_pending_reason() -> None:
    """A pod counts once under its distinct reasons (joined), or the FitError message when
    there is none (kube-scheduler's 'no nodes available to schedule pods')."""
    assert pending_reason(("Insufficient cpu", "Insufficient memory"), "0/2 nodes ...") == (
        "Insufficient cpu; Insufficient memory"
    )
    assert pending_reason((), "no nodes available to schedule pods") == (
        "no nodes available to schedule pods"
    )


def test_replay_report_title_names_the_input(tmp_path: Path) -> None:
    """replay --report is titled after the trace and node-groups files it read."""
    trace, groups, out = tmp_path / "trace.yaml", tmp_path / "groups.yaml", tmp_path / "r.html"
    trace.write_text(burst_trace())
    groups.write_text(NODE_GROUPS)
    args = ["replay", str(trace), "--node-groups", str(groups), "--report", str(out)]
    assert main(args) == 0
    title = f"schedsim replay: {trace} (node groups {groups})"
    assert f"<title>{title}</title>" in out.read_text()
