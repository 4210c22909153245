"""The HTML reports in a real headless browser (the ``open_report`` fixture: the
distribution's Chromium, which .ci/run installs): each page loads offline without script
errors, every chart has drawn marks, the titles name the input, the charts carry the values
worked out by hand for small scenarios, and nothing is wider than the window. Skipped,
saying why, without Chromium or Playwright."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from replay_scenarios import NODE_GROUPS, burst_trace

from schedsim.autoscaler.nodegroups import parse_node_groups
from schedsim.cli import main
from schedsim.engine import Cluster
from schedsim.replay import Replay, manifest_trace
from schedsim.replay.alibaba import GPU_DRIVER, alibaba_trace
from schedsim.report import replay_page

CHARTS_JS = """els => els.map(e => ({
  title: (e.layout.title && e.layout.title.text) || '',
  traces: e.data.map(t => ({
    name: t.name || '', x: Array.from(t.x || []), y: Array.from(t.y || []), z: t.z || null,
  })),
  drawn: e.querySelectorAll('g.trace, g.hm image, g.point').length,
}))"""
"""Per plotly chart: its title, each trace's name and data as plotly holds it, marks drawn."""

TABLES_JS = """() => Array.from(document.querySelectorAll('table')).map(
  t => Array.from(t.rows).map(r => Array.from(r.cells).map(c => c.innerText)))"""


def _chart(charts: list[dict[str, Any]], title_start: str) -> dict[str, Any]:
    [chart] = [c for c in charts if c["title"].startswith(title_start)]
    return chart


def _table(tables: list[list[list[str]]], first_header: str) -> list[list[str]]:
    [table] = [t for t in tables if t and t[0][0] == first_header]
    return table


def _burst_page(title: str = "schedsim replay: burst.yaml") -> Any:
    trace = manifest_trace(Cluster.from_text(burst_trace(), "trace.yaml"))
    groups = parse_node_groups(yaml.safe_load(NODE_GROUPS), "groups.yaml")
    return replay_page(Replay(trace, groups, detail=True).run(), title)


def test_report_renders_in_chromium(tmp_path: Path, open_report: Callable[..., Any]) -> None:
    page = _burst_page()
    out = tmp_path / "report.html"
    out.write_text(page.render(), encoding="utf-8")
    opened = open_report(out, page.charts)
    tab = opened.tab
    charts = tab.eval_on_selector_all(".js-plotly-plot", CHARTS_JS)
    # the nodes chart shows both a scale-up and a scale-down marker
    legend = tab.eval_on_selector("#chart-1", "e => e.innerText")
    shot = tmp_path / "report.png"
    tab.screenshot(path=str(shot), full_page=True)
    assert opened.errors == []
    assert opened.offline, opened.requests
    assert len(charts) == page.charts and all(c["drawn"] > 0 for c in charts), charts
    assert "scale-up" in legend and "scale-down" in legend
    assert shot.stat().st_size > 10_000
    assert tab.title() == "schedsim replay: burst.yaml"
    assert tab.inner_text("h1") == "schedsim replay: burst.yaml"
    width, window = opened.widths()
    assert width <= window


def test_replay_report_values_in_chromium(tmp_path: Path, open_report: Callable[..., Any]) -> None:
    """The burst scenario by hand (replay_scenarios.burst_trace, NODE_GROUPS): base-1 (4
    CPU) runs steady (1 CPU) and first (100m, done at 30 s); at t = 60 s six 2-CPU pods
    arrive for 5 min: one fits base-1, five are pending with NodeResourcesFit's reason
    ``Insufficient cpu`` (noderesources/fit.go); CA adds 3 burst nodes, ready at 120 s (2, 2,
    1 pods: 100 %, 100 %, 50 % cpu); the pods complete at 360 s (base-1) and 420 s. burst-2,
    at the threshold (50 %, a candidate as in CA 1.34's isNodeAtOrBelowUtilizationThreshold),
    can move its pod to base-1 from 360 s and is deleted after CA's scale-down-unneeded-time
    (10 min) at 960 s; burst-0 and burst-1 at 1,020 s; the replay ends at 1,030 s. Cost: base
    0.2/h x 1,030 s = 0.0572; burst 0.5/h x (840 + 2 x 900) s = 0.367, a ramp from 2 to
    17 min."""
    page = _burst_page()
    out = tmp_path / "report.html"
    out.write_text(page.render(), encoding="utf-8")
    opened = open_report(out, page.charts, width=900)
    tab = opened.tab
    charts = tab.eval_on_selector_all(".js-plotly-plot", CHARTS_JS)
    tables = tab.evaluate(TABLES_JS)
    minutes = [0, 1, 2, 6, 7, 16, 17, 1030 / 60]  # the samples

    pending = _chart(charts, "Pending pods by reason")
    assert [(t["name"], t["y"]) for t in pending["traces"]] == [
        ("Insufficient cpu", [0, 5, 0, 0, 0, 0, 0, 0])
    ]
    assert pending["traces"][0]["x"] == pytest.approx(minutes)

    cpu = _chart(charts, "cpu requested / allocatable per node")
    [heat] = cpu["traces"]
    assert heat["y"] == ["base-1", "burst-0", "burst-1", "burst-2"]
    assert heat["x"] == pytest.approx(minutes)
    n = None
    assert heat["z"] == [
        [27.5, 75, 75, 25, 25, 25, 25, 25],
        [n, n, 100, 100, 0, 0, n, n],
        [n, n, 100, 100, 0, 0, n, n],
        [n, n, 50, 50, 0, n, n, n],
    ]
    memory = _chart(charts, "memory requested / allocatable per node")
    assert memory["traces"][0]["z"][1][2] == 12.5  # two 1Gi pods of 16Gi

    cost = _chart(charts, "Cost so far per node group")
    base, burst = cost["traces"]
    assert (base["name"], burst["name"]) == ("base", "burst")
    assert base["x"] == pytest.approx([0, 2, 16, 17, 1030 / 60])
    assert base["y"] == pytest.approx(
        [0, 0.2 * 120 / 3600, 0.2 * 960 / 3600, 0.2 * 1020 / 3600, 0.2 * 1030 / 3600]
    )
    burst_cost = 0.5 * (3 * 840 + 2 * 60) / 3600
    assert burst["y"] == pytest.approx([0, 0, 0.35, burst_cost, burst_cost])

    nodes = _chart(charts, "Ready nodes per node group")
    assert [t["y"] for t in nodes["traces"][:2]] == [[1, 1, 1, 1, 1], [0, 3, 2, 0, 0]]

    assert _table(tables, "node group")[1:] == [
        ["base", "0.200", "0.286", "1", "0.057"],
        ["burst", "0.500", "0.733", "3", "0.367"],
    ]
    assert "DRA devices" not in tab.inner_text("body")  # the trace has no DRA
    assert opened.errors == []
    width, window = opened.widths()
    assert width <= window


PODS = """\
name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
a,1000,1024,1,1000,,LS,Succeeded,0,100,0
b,1000,1024,1,1000,,LS,Succeeded,0,100,0
c,1000,1024,1,1000,,LS,Succeeded,10,160,100
"""
NODES = "sn,cpu_milli,memory_mib,gpu,model\nnode-a,8000,32768,2,T4\n"


def test_dra_devices_in_chromium(tmp_path: Path, open_report: Callable[..., Any]) -> None:
    """An Alibaba trace with ``--gpu-as dra``: node-a publishes 2 GPU devices; a and b take
    one each (0-100 s); c (t = 10 s) waits with DynamicResources' reason ``cannot allocate
    all claims`` (dynamicresources.go) until they complete, then runs on one device for 60 s
    (160 - 100). Devices allocated at the samples 0, 10, 100, 160 s: 2, 2, 1, 0 of 2."""
    pods, nodes = tmp_path / "pods.csv", tmp_path / "nodes.csv"
    pods.write_text(PODS)
    nodes.write_text(NODES)
    trace = alibaba_trace(str(pods), str(nodes), gpu_as="dra")
    m = Replay(trace, gpu_driver=GPU_DRIVER, detail=True, sample_interval=10).run()
    page = replay_page(m, "schedsim replay: pods.csv, nodes.csv")
    out = tmp_path / "report.html"
    out.write_text(page.render(), encoding="utf-8")
    opened = open_report(out, page.charts)
    tab = opened.tab
    charts = tab.eval_on_selector_all(".js-plotly-plot", CHARTS_JS)
    devices = _chart(charts, "DRA devices allocated and published")
    assert [(t["name"], t["y"]) for t in devices["traces"]] == [
        ("gpu.alibaba.com: allocated", [2, 2, 1, 0]),
        ("gpu.alibaba.com: published", [2, 2, 2, 2]),
    ]
    assert devices["traces"][0]["x"] == pytest.approx([0, 10 / 60, 100 / 60, 160 / 60])
    assert _table(tab.evaluate(TABLES_JS), "driver")[1:] == [["gpu.alibaba.com", "0", "2", "2"]]
    pending = _chart(charts, "Pending pods by reason")
    assert [(t["name"], t["y"]) for t in pending["traces"]] == [
        ("cannot allocate all claims", [0, 1, 0, 0])
    ]
    assert opened.errors == []
    assert all(c["drawn"] > 0 for c in charts)


@pytest.mark.parametrize(
    ("command", "title"),
    [
        ("simulate", "schedsim simulate: shipped example demo-cluster.yaml"),
        ("scale-up", "schedsim scale-up: shipped example demo-cluster.yaml"),
        ("scale-down", "schedsim scale-down: shipped example demo-cluster.yaml"),
        ("replay", "schedsim replay: shipped example replay-burst.yaml"),
    ],
)
def test_command_reports_in_chromium(
    tmp_path: Path,
    command: str,
    title: str,
    open_report: Callable[..., Any],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--report`` of each command on its shipped example: titled after the input, charts
    drawn, no script error, nothing wider than an 800-pixel window."""
    out = tmp_path / "r.html"
    assert main([command, "--report", str(out)]) == 0
    capsys.readouterr()
    text = out.read_text()
    charts = text.count('class="plotly-graph-div"')
    opened = open_report(out, charts, width=800)
    tab = opened.tab
    assert tab.title() == title and tab.inner_text("h1") == title
    drawn = tab.eval_on_selector_all(".js-plotly-plot", CHARTS_JS)
    assert charts > 0 and all(c["drawn"] > 0 for c in drawn)
    assert opened.errors == []
    width, window = opened.widths()
    assert width <= window
