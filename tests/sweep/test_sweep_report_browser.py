"""``schedsim sweep --report`` in a real headless browser (the ``open_report`` fixture, as
for the replay report): the page comparing the 12 replay scenarios loads offline without
script errors, and every bar chart draws one bar per scenario and metric. Skipped, saying
why, without Chromium or Playwright."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from schedsim.cli import main

BARS_PER_CHART = [12 * 4, 12 * 2, 6, 6 * 3, 12]
"""pods (scheduled, unschedulable, preempted, pluginErrors), nodes (added, removed), wall
seconds: 12 scenarios each; cost and latency (p50, p90, p99): the 6 replay scenarios."""


def test_sweep_report_in_chromium(
    replay_dir: Path, capsys: pytest.CaptureFixture[str], open_report: Callable[..., Any]
) -> None:
    out = replay_dir / "report.html"
    assert main(["sweep", str(replay_dir / "replay.yaml"), "--serial", "--report", str(out)]) == 0
    assert "12 scenario(s)" in capsys.readouterr().out
    opened = open_report(out, len(BARS_PER_CHART))
    tab = opened.tab
    bars = tab.eval_on_selector_all(
        ".js-plotly-plot", "els => els.map(e => e.querySelectorAll('g.point').length)"
    )
    rows = tab.eval_on_selector("table", "t => t.querySelectorAll('tbody tr').length")
    shot = replay_dir / "report.png"
    tab.screenshot(path=str(shot), full_page=True)
    assert opened.errors == []
    assert opened.offline
    assert rows == 12
    assert bars == BARS_PER_CHART
    assert shot.stat().st_size > 10_000


def test_sweep_tables_fit_the_window(
    replay_dir: Path, capsys: pytest.CaptureFixture[str], open_report: Callable[..., Any]
) -> None:
    """In a 700-pixel window the scenario table (16 columns) is wider than the page: it
    scrolls in its own box and the page itself is no wider than the window. The pivot by
    each axis lists its variants with the number of scenarios (2 traces x 3 node-group
    files x 2 commands: 6 per trace, 4 per node-group file)."""
    out = replay_dir / "report.html"
    assert main(["sweep", str(replay_dir / "replay.yaml"), "--serial", "--report", str(out)]) == 0
    capsys.readouterr()
    opened = open_report(out, len(BARS_PER_CHART), width=700)
    tab = opened.tab
    width, window = opened.widths()
    boxes = tab.eval_on_selector_all(
        "div.table", "els => els.map(e => [e.scrollWidth, e.clientWidth])"
    )
    tables = tab.evaluate(
        """() => Array.from(document.querySelectorAll('table')).map(
        t => Array.from(t.rows).map(r => Array.from(r.cells).map(c => c.innerText)))"""
    )
    assert width <= window
    assert any(scroll > client for scroll, client in boxes)  # the scenario table scrolls
    assert all(client <= window for _, client in boxes)
    pivots = {t[0][0]: [(r[0], r[1]) for r in t[1:]] for t in tables if t[0][1] == "scenarios"}
    assert pivots["traces"] == [("burst", "6"), ("steady", "6")]
    assert pivots["nodeGroups"] == [("capped", "4"), ("roomy", "4"), ("large", "4")]
    assert opened.errors == []
