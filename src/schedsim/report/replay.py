"""The HTML report of a replay: time series, scale events, unschedulable pods, nodes.

Every chart is drawn from state that holds between its points, and says so:

* ready nodes and cost come from the nodes' lifetimes (`ReplayMetrics.timeline`), exact at
  every instant: nodes as a step at each addition and removal, cost as a ramp (node-hours x
  price per node group accrue linearly while the ready nodes hold, and bend where one is
  added or removed);
* everything else is the cluster at each sample, held until the next one (a step after each
  sample): the replay samples every ``sample_interval`` when something changed, so a change
  between two samples shows at the next.

With detail (``Replay(detail=True)``, what ``replay --report`` runs) the page also has the
per-node utilisation heatmaps, the pending pods by reason and the DRA devices in use; without
it those sections say they were not recorded.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from schedsim.replay.autoscaler import SCALE_DOWN, SCALE_UP
from schedsim.replay.metrics import GroupTimeline, ReplayMetrics, SampleDetail
from schedsim.report.page import Page

__all__ = ["HEATMAP_NODES", "REASON_SERIES", "replay_page"]

HEATMAP_NODES = 200
"""The utilisation heatmaps show at most this many nodes (by group, then name)."""

REASON_SERIES = 12
"""The pending-by-reason chart draws the most frequent reasons (pod-samples) as their own
series, the rest as one ``other reasons``."""

_NOT_RECORDED = (
    "Not recorded: the replay ran without detail (schedsim replay --report records it; "
    "Replay(detail=True) in the library)."
)


def _axis(end: float) -> tuple[float, str]:
    if end > 2 * 3600:
        return 3600.0, "simulated time (h)"
    return 60.0, "simulated time (min)"


def _pct(num: int, den: int) -> float:
    return 100.0 * num / den if den else 0.0


def _group_name(group: str) -> str:
    return group or "(no group)"


def _lines(
    title: str, xs: Sequence[float], series: Mapping[str, Sequence[float]], xlabel: str, ylabel: str
) -> go.Figure:
    """Sampled series, each value held until the next sample (step after)."""
    fig = go.Figure()
    for name, ys in series.items():
        fig.add_trace(go.Scatter(x=list(xs), y=list(ys), name=name, mode="lines", line_shape="hv"))
    fig.update_layout(title=title, xaxis_title=xlabel, yaxis_title=ylabel)
    return fig


class _Grid:
    """The groups' timelines on the union of their breakpoints (a stacked chart needs one x
    for all its series): nodes held from each time, cost interpolated (exact: every group's
    cost is linear between its own breakpoints)."""

    def __init__(self, timeline: Mapping[str, GroupTimeline]) -> None:
        self.times = sorted({t for tl in timeline.values() for t in tl.times})
        self.nodes: dict[str, list[int]] = {}
        self.cost: dict[str, list[float]] = {}
        for group, tl in timeline.items():
            nodes, cost = [], []
            i = 0  # the last breakpoint at or before t
            for t in self.times:
                while i + 1 < len(tl.times) and tl.times[i + 1] <= t:
                    i += 1
                t0, c0 = tl.times[i], tl.cost[i]
                if t < t0:  # before the group's first point (t = 0): nothing yet
                    nodes.append(0)
                    cost.append(0.0)
                    continue
                nodes.append(tl.nodes[i])
                if i + 1 < len(tl.times):  # linear up to the next breakpoint
                    c0 += (tl.cost[i + 1] - c0) * (t - t0) / (tl.times[i + 1] - t0)
                cost.append(round(c0, 9))
            self.nodes[group], self.cost[group] = nodes, cost

    def total_nodes_at(self, t: float) -> int:
        i = max(0, bisect.bisect_right(self.times, t) - 1)
        return sum(n[i] for n in self.nodes.values()) if self.times else 0


def _stacked(
    xs: Sequence[float], series: Mapping[str, Sequence[float]], stack: str, *, step: bool
) -> go.Figure:
    """A figure of stacked areas over one x (plotly stacks by x): held from each point to
    the next with ``step``, else linear between points."""
    fig = go.Figure()
    for name, ys in series.items():
        fig.add_trace(
            go.Scatter(
                x=list(xs),
                y=list(ys),
                name=name,
                mode="lines",
                line_shape="hv" if step else "linear",
                stackgroup=stack,
            )
        )
    return fig


def _nodes_figure(m: ReplayMetrics, grid: _Grid, unit: float, xlabel: str) -> go.Figure:
    xs = [t / unit for t in grid.times]
    fig = _stacked(
        xs, {_group_name(g): nodes for g, nodes in grid.nodes.items()}, "ready", step=True
    )
    samples = m.samples
    fig.add_trace(
        go.Scatter(
            x=[s.time / unit for s in samples],
            y=[sum(s.upcoming.values()) for s in samples],
            name="being provisioned",
            mode="lines",
            line={"dash": "dot"},
            line_shape="hv",
        )
    )
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
                y=[grid.total_nodes_at(e.time) for e in events],
                name=kind,
                mode="markers",
                marker={"symbol": symbol, "size": 12, "color": colour},
                text=[f"{e.group}: {len(e.nodes)} node(s): {e.reason}" for e in events],
                hoverinfo="text",
            )
        )
    fig.update_layout(
        title="Ready nodes per node group (exact: steps at each addition and removal), "
        "and scale events",
        xaxis_title=xlabel,
        yaxis_title="nodes",
    )
    return fig


def _cost_figure(grid: _Grid, unit: float, xlabel: str) -> go.Figure:
    xs = [t / unit for t in grid.times]
    fig = _stacked(xs, {_group_name(g): cost for g, cost in grid.cost.items()}, "cost", step=False)
    fig.update_layout(
        title="Cost so far per node group (node-hours x price: a ramp while the ready nodes "
        "hold, bending at each addition and removal)",
        xaxis_title=xlabel,
        yaxis_title="cost",
    )
    return fig


def _pending_figure(
    details: Sequence[SampleDetail], unit: float, xlabel: str
) -> tuple[go.Figure, list[str]]:
    """Stacked pending pods per reason; the reasons drawn, most frequent first."""
    weight: dict[str, int] = {}
    for d in details:
        for why, n in d.pending.items():
            weight[why] = weight.get(why, 0) + n
    ranked = sorted(weight, key=lambda w: (-weight[w], w))
    shown, rest = ranked[:REASON_SERIES], set(ranked[REASON_SERIES:])
    series = {why: [d.pending.get(why, 0) for d in details] for why in shown}
    if rest:
        series["other reasons"] = [
            sum(n for w, n in d.pending.items() if w in rest) for d in details
        ]
    fig = _stacked([d.time / unit for d in details], series, "pending", step=True)
    fig.update_layout(
        title="Pending pods by reason (kube-scheduler's reasons of each pod's last attempt)",
        xaxis_title=xlabel,
        yaxis_title="pods",
        legend={"orientation": "h", "y": -0.25},
    )
    return fig, list(series)


def _heatmap(
    details: Sequence[SampleDetail],
    nodes: Sequence[str],
    resource: str,
    unit: float,
    xlabel: str,
) -> go.Figure:
    xs = [d.time / unit for d in details]
    share = [d.cpu if resource == "cpu" else d.memory for d in details]
    z = [[None if n not in s else round(100 * s[n], 3) for s in share] for n in nodes]
    fig = go.Figure(
        go.Heatmap(
            x=xs,
            y=list(nodes),
            z=z,
            zmin=0,
            zmax=100,
            colorscale="Viridis",
            colorbar={"title": "%"},
            hovertemplate="%{y}<br>%{x}<br>%{z:.1f}%<extra></extra>",
        )
    )
    fig.update_layout(
        title=f"{resource} requested / allocatable per node at each sample "
        "(blank: the node was not ready)",
        xaxis_title=xlabel,
        yaxis={"title": "node", "autorange": "reversed", "type": "category"},
    )
    return fig


def _devices_figure(details: Sequence[SampleDetail], unit: float, xlabel: str) -> go.Figure:
    drivers = sorted({d for x in details for d in x.devices})
    xs = [d.time / unit for d in details]
    fig = go.Figure()
    for driver in drivers:
        for i, what, dash in ((0, "allocated", "solid"), (1, "published", "dot")):
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=[d.devices.get(driver, (0, 0))[i] for d in details],
                    name=f"{driver}: {what}",
                    mode="lines",
                    line={"dash": dash},
                    line_shape="hv",
                )
            )
    fig.update_layout(
        title="DRA devices allocated and published per driver (ResourceSlices)",
        xaxis_title=xlabel,
        yaxis_title="devices",
    )
    return fig


def _detail_sections(page: Page, m: ReplayMetrics, unit: float, xlabel: str) -> None:
    details = m.details
    page.heading("Pending pods by reason")
    if not details:
        page.text(_NOT_RECORDED, note=True)
    elif not any(d.pending for d in details):
        page.text("No pod was pending at any sample.")
    else:
        fig, shown = _pending_figure(details, unit, xlabel)
        page.chart(fig)
        page.text(
            "Each pending pod counts once, under the reasons of its last attempt (the "
            "distinct reasons the nodes rejected it with, joined by '; '); held from one "
            f"sample to the next. Reasons drawn: {len(shown)}.",
            note=True,
        )
    page.heading("Per-node utilisation over time")
    if not details:
        page.text(_NOT_RECORDED, note=True)
    else:
        group = {n.name: n.group for n in m.nodes}
        names = sorted({n for d in details for n in d.cpu}, key=lambda n: (group.get(n, ""), n))
        shown_nodes = names[:HEATMAP_NODES]
        height = max(360, 120 + 18 * len(shown_nodes))
        for resource in ("cpu", "memory"):
            page.chart(_heatmap(details, shown_nodes, resource, unit, xlabel), height=height)
        if len(names) > len(shown_nodes):
            page.text(
                f"The heatmaps show the first {len(shown_nodes)} of {len(names)} nodes.",
                note=True,
            )
    if any(d.devices for d in details):
        page.heading("DRA devices in use")
        page.chart(_devices_figure(details, unit, xlabel))
        last = details[-1].devices
        page.table(
            ("driver", "allocated at the end", "published at the end", "peak allocated"),
            [
                (
                    driver,
                    last.get(driver, (0, 0))[0],
                    last.get(driver, (0, 0))[1],
                    max(d.devices.get(driver, (0, 0))[0] for d in details),
                )
                for driver in sorted({d for x in details for d in x.devices})
            ],
        )


def _cost_section(page: Page, m: ReplayMetrics, timeline: Mapping[str, GroupTimeline]) -> None:
    page.heading("Cost per node group")
    hours = m.node_hours()
    cost = m.cost()
    groups = sorted(hours)
    fig = go.Figure(go.Bar(x=[_group_name(g) for g in groups], y=[cost[g] for g in groups]))
    fig.update_layout(title="Total cost per node group", yaxis_title="cost")
    page.chart(fig)
    page.table(
        ("node group", "price per node-hour", "node-hours", "peak nodes", "cost"),
        [
            (
                _group_name(g),
                m.prices.get(g, 0.0),
                hours[g],
                max(timeline[g].nodes) if g in timeline else 0,
                cost[g],
            )
            for g in groups
        ],
    )
    page.text(
        "Cost is node-hours x the group's price; a node is billed from when it is ready to "
        "its deletion or the end of the replay (provisioning is not billed; nodes in no group "
        "cost nothing).",
        note=True,
    )


def replay_page(m: ReplayMetrics, title: str = "schedsim replay") -> Page:
    """The report of a replay's metrics (see `schedsim.replay.metrics` and the module
    docstring); ``title``: the page's title, naming the input."""
    page = Page(title)
    unit, xlabel = _axis(m.end)
    s = m.summary()
    lat = m.latency_percentiles()
    timeline = m.timeline()
    grid = _Grid(timeline)
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
    page.text(
        "Nodes and cost are exact at every instant (from each node's addition and removal); "
        "the other series are the cluster at each sample, held until the next sample.",
        note=True,
    )
    page.chart(_nodes_figure(m, grid, unit, xlabel))
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
    page.chart(_cost_figure(grid, unit, xlabel))
    if m.latencies:
        fig = go.Figure(go.Histogram(x=list(m.latencies.values()), name="latency"))
        fig.update_layout(
            title="Scheduling latency (arrival to first binding)",
            xaxis_title="seconds",
            yaxis_title="pods",
        )
        page.chart(fig)
    _detail_sections(page, m, unit, xlabel)
    _cost_section(page, m, timeline)
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
