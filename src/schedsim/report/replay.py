"""The HTML report of a replay: time series, scale events, unschedulable pods, nodes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from schedsim.replay.autoscaler import SCALE_DOWN, SCALE_UP
from schedsim.replay.metrics import ReplayMetrics, Sample
from schedsim.report.page import Page

__all__ = ["replay_page"]


def _axis(end: float) -> tuple[float, str]:
    if end > 2 * 3600:
        return 3600.0, "simulated time (h)"
    return 60.0, "simulated time (min)"


def _pct(num: int, den: int) -> float:
    return 100.0 * num / den if den else 0.0


def _lines(
    title: str, xs: Sequence[float], series: Mapping[str, Sequence[float]], xlabel: str, ylabel: str
) -> go.Figure:
    fig = go.Figure()
    for name, ys in series.items():
        fig.add_trace(go.Scatter(x=list(xs), y=list(ys), name=name, mode="lines", line_shape="hv"))
    fig.update_layout(title=title, xaxis_title=xlabel, yaxis_title=ylabel)
    return fig


def _nodes_figure(m: ReplayMetrics, unit: float, xlabel: str) -> go.Figure:
    samples = m.samples
    xs = [s.time / unit for s in samples]
    groups = sorted({g for s in samples for g in s.nodes})
    fig = go.Figure()
    for g in groups:
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=[s.nodes.get(g, 0) for s in samples],
                name=g or "(no group)",
                mode="lines",
                line_shape="hv",
                stackgroup="ready",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=[sum(s.upcoming.values()) for s in samples],
            name="being provisioned",
            mode="lines",
            line={"dash": "dot"},
            line_shape="hv",
        )
    )

    def total_at(t: float) -> int:
        best: Sample | None = None
        for s in samples:
            if s.time <= t:
                best = s
        return sum(best.nodes.values()) if best is not None else 0

    for kind, symbol, colour in (
        (SCALE_UP, "triangle-up", "#2a9d3f"),
        (SCALE_DOWN, "triangle-down", "#d1495b"),
    ):
        events = [e for e in m.events if e.kind == kind]
        if not events:
            continue
        fig.add_trace(
            go.Scatter(
                x=[e.time / unit for e in events],
                y=[total_at(e.time) for e in events],
                name=kind,
                mode="markers",
                marker={"symbol": symbol, "size": 12, "color": colour},
                text=[f"{e.group}: {len(e.nodes)} node(s): {e.reason}" for e in events],
                hoverinfo="text",
            )
        )
    fig.update_layout(
        title="Ready nodes per node group, and scale events",
        xaxis_title=xlabel,
        yaxis_title="nodes",
    )
    return fig


def replay_page(m: ReplayMetrics, title: str = "schedsim replay") -> Page:
    """The report of a replay's metrics (see `schedsim.replay.metrics`)."""
    page = Page(title)
    unit, xlabel = _axis(m.end)
    s = m.summary()
    lat = m.latency_percentiles()
    page.heading("Summary")
    rows: list[tuple[str, object]] = [
        ("simulated time (s)", round(m.end)),
        ("pods arrived", m.arrivals),
        ("pods scheduled", len(m.latencies)),
        ("pods completed", m.completed),
        ("pods evicted by scale-down", m.evicted),
        ("pods pending at the end", len(m.unschedulable)),
        (
            "latency p50 / p90 / p99 / max (s)",
            " / ".join(f"{lat[k]:.0f}" for k in ("p50", "p90", "p99", "max")),
        ),
        ("nodes added", s["nodesAdded"]),
        ("nodes removed", s["nodesRemoved"]),
        ("peak nodes", s["peakNodes"]),
        ("total cost", float(str(s["totalCost"]))),
    ]
    page.table(("metric", "value"), rows)
    samples = m.samples
    xs = [x.time / unit for x in samples]
    page.heading("Over time")
    page.chart(_nodes_figure(m, unit, xlabel))
    page.chart(
        _lines(
            "Pods",
            xs,
            {"pending": [x.pending for x in samples], "running": [x.running for x in samples]},
            xlabel,
            "pods",
        )
    )
    alloc = {
        "cpu": [_pct(x.cpu_requested, x.cpu_allocatable) for x in samples],
        "memory": [_pct(x.memory_requested, x.memory_allocatable) for x in samples],
    }
    has_gpu = any(x.gpu_allocatable for x in samples)
    if has_gpu:
        alloc["GPU"] = [_pct(x.gpu_requested, x.gpu_allocatable) for x in samples]
    page.chart(_lines("Requested / allocatable of the ready nodes", xs, alloc, xlabel, "%"))
    if has_gpu:
        page.chart(
            _lines(
                "GPU fragmentation (FGD measure)",
                xs,
                {
                    "fragmented GPUs": [x.gpu_fragmentation for x in samples],
                    "unallocated GPUs": [x.gpu_allocatable - x.gpu_requested for x in samples],
                },
                xlabel,
                "GPUs",
            )
        )
    page.chart(_lines("Cost so far", xs, {"cost": [x.cost for x in samples]}, xlabel, "cost"))
    if m.latencies:
        fig = go.Figure(go.Histogram(x=list(m.latencies.values()), name="latency"))
        fig.update_layout(
            title="Scheduling latency (arrival to first binding)",
            xaxis_title="seconds",
            yaxis_title="pods",
        )
        page.chart(fig)
    page.heading("Scale events")
    page.table(
        ("time (s)", "kind", "group", "nodes", "reason", "pods"),
        [(e.time, e.kind, e.group, ", ".join(e.nodes), e.reason, len(e.pods)) for e in m.events],
    )
    page.heading("Pods pending at the end, and why")
    if m.unschedulable:
        page.table(("pod", "why"), sorted(m.unschedulable.items()))
    else:
        page.text("None: every pod that arrived was scheduled.")
    page.heading("Nodes")
    nodes = sorted(m.nodes, key=lambda n: (n.group, n.name))
    shown = nodes[:300]
    fig = go.Figure()
    names = [n.name for n in shown]
    fig.add_trace(go.Bar(x=names, y=[100 * n.cpu for n in shown], name="cpu"))
    fig.add_trace(go.Bar(x=names, y=[100 * n.memory for n in shown], name="memory"))
    if has_gpu:
        fig.add_trace(go.Bar(x=names, y=[100 * n.gpu for n in shown], name="GPU"))
    fig.update_layout(
        title="Average requested / allocatable per node (over its samples)",
        yaxis_title="%",
        barmode="group",
    )
    page.chart(fig)
    if len(nodes) > len(shown):
        page.text(f"The chart shows the first {len(shown)} of {len(nodes)} nodes.", note=True)
    page.table(
        ("node", "group", "added (s)", "removed (s)", "hours", "cpu", "memory", "GPU", "pods"),
        [
            (
                n.name,
                n.group,
                n.added,
                "" if n.removed is None else n.removed,
                n.hours,
                n.cpu,
                n.memory,
                n.gpu,
                n.pods,
            )
            for n in nodes
        ],
    )
    return page
