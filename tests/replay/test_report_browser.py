"""The HTML report in a real headless browser (the distribution's Chromium, which .ci/run
installs): the page loads offline without script errors, every chart has drawn marks, and a
screenshot is taken. Skipped, saying why, without Chromium or Playwright."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from replay_scenarios import NODE_GROUPS, burst_trace

from schedsim.engine import Cluster
from schedsim.replay import Replay, manifest_trace
from schedsim.report import replay_page
from schedsim.simulation.nodegroups import parse_node_groups

CHROMIUM = next(
    (p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser") if Path(p).exists()),
    shutil.which("chromium"),
)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium found (.ci/run installs the Debian package chromium)"
)


def test_report_renders_in_chromium(tmp_path: Path) -> None:
    trace = manifest_trace(Cluster.from_text(burst_trace(), "trace.yaml"))
    groups = parse_node_groups(yaml.safe_load(NODE_GROUPS), "groups.yaml")
    page = replay_page(Replay(trace, groups).run(), "burst")
    out = tmp_path / "report.html"
    out.write_text(page.render(), encoding="utf-8")
    errors: list[str] = []
    requests: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"], headless=True
        )
        try:
            tab = browser.new_page(viewport={"width": 1280, "height": 900})
            tab.on("pageerror", lambda e: errors.append(str(e)))
            tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            tab.on("request", lambda r: requests.append(r.url))
            tab.goto(out.as_uri())
            tab.wait_for_function(
                f"document.querySelectorAll('.js-plotly-plot').length === {page.charts}"
            )
            # drawn marks: line paths of scatter traces, bar rectangles
            traces = tab.eval_on_selector_all(
                ".js-plotly-plot", "els => els.map(e => e.querySelectorAll('g.trace').length)"
            )
            marks = tab.eval_on_selector_all(
                ".js-plotly-plot",
                "els => els.map(e => e.querySelectorAll('path.js-line, g.point path, "
                "path.point').length)",
            )
            # the nodes chart shows both a scale-up and a scale-down marker
            legend = tab.eval_on_selector("#chart-1", "e => e.innerText")
            shot = tmp_path / "report.png"
            tab.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert errors == []
    assert all(u.startswith("file://") or u.startswith("data:") for u in requests), requests
    assert len(traces) == page.charts and all(n > 0 for n in traces)
    assert all(n > 0 for n in marks), marks
    assert "scale-up" in legend and "scale-down" in legend
    assert shot.stat().st_size > 10_000
