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
    replay_dir: Path, capsys: pytest.CaptureFixture[str], open_report: Callable[[Path, int], Any]
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
