"""The HTML report in a real headless browser (the ``open_report`` fixture: the
distribution's Chromium, which .ci/run installs): the page loads offline without script
errors, every chart has drawn marks, and a screenshot is taken. Skipped, saying why,
without Chromium or Playwright."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from replay_scenarios import NODE_GROUPS, burst_trace

from schedsim.autoscaler.nodegroups import parse_node_groups
from schedsim.engine import Cluster
from schedsim.replay import Replay, manifest_trace
from schedsim.report import replay_page


def test_report_renders_in_chromium(
    tmp_path: Path, open_report: Callable[[Path, int], Any]
) -> None:
    trace = manifest_trace(Cluster.from_text(burst_trace(), "trace.yaml"))
    groups = parse_node_groups(yaml.safe_load(NODE_GROUPS), "groups.yaml")
    page = replay_page(Replay(trace, groups).run(), "burst")
    out = tmp_path / "report.html"
    out.write_text(page.render(), encoding="utf-8")
    opened = open_report(out, page.charts)
    tab = opened.tab
    # drawn marks: line paths of scatter traces, bar rectangles
    traces = tab.eval_on_selector_all(
        ".js-plotly-plot", "els => els.map(e => e.querySelectorAll('g.trace').length)"
    )
    marks = tab.eval_on_selector_all(
        ".js-plotly-plot",
        "els => els.map(e => e.querySelectorAll('path.js-line, g.point path, path.point').length)",
    )
    # the nodes chart shows both a scale-up and a scale-down marker
    legend = tab.eval_on_selector("#chart-1", "e => e.innerText")
    shot = tmp_path / "report.png"
    tab.screenshot(path=str(shot), full_page=True)
    assert opened.errors == []
    assert opened.offline, opened.requests
    assert len(traces) == page.charts and all(n > 0 for n in traces)
    assert all(n > 0 for n in marks), marks
    assert "scale-up" in legend and "scale-down" in legend
    assert shot.stat().st_size > 10_000
