"""The HTML report comparing a sweep's scenarios (``schedsim sweep --report FILE.html``).

Built on `schedsim.report.Page` (one self-contained page, plotly.js embedded, opens
offline), as the reports of the single commands: a table of every row, then one bar chart
per headline metric with a bar per scenario (grouped where metrics share a unit: pods,
nodes, latency percentiles), and the failed scenarios with their errors. Cost and latency
charts show only the scenarios that measure them (``replay``), and are left out when none
does. A pivot per axis (`axis_pivot`) sums the rows up by that axis's variants. Tables
scroll inside their box when they have more columns than the window is wide
(`schedsim.report.Page.table`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import plotly.graph_objects as go

from schedsim.report import Page
from schedsim.sweep.curves import POINTS, curve_figures, curve_rows
from schedsim.sweep.results import COLUMNS, ScenarioResult, shown_metrics

__all__ = ["CHARTS", "axis_pivot", "sweep_page"]

CHARTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Pods per scenario", "pods", ("scheduled", "unschedulable", "preempted", "plugin_errors")),
    ("Nodes added and removed", "nodes", ("nodes_added", "nodes_removed")),
    ("Total cost (replay)", "cost", ("cost",)),
    (
        "Scheduling latency percentiles (replay)",
        "seconds",
        ("latency_p50", "latency_p90", "latency_p99"),
    ),
    ("Wall time per scenario", "seconds", ("wall_seconds",)),
)
"""(title, y-axis unit, the `ScenarioResult` fields drawn as one bar group each)."""


def _bars(
    title: str, unit: str, fields: Sequence[str], rows: Sequence[ScenarioResult]
) -> go.Figure:
    names = [r.name for r in rows]
    fig = go.Figure(
        [
            go.Bar(
                x=names,
                y=[getattr(r, f) for r in rows],
                name=COLUMNS.get(f, "wallSeconds"),
            )
            for f in fields
        ]
    )
    fig.update_layout(title=title, yaxis_title=unit, barmode="group", xaxis_tickangle=-30)
    return fig


def _number(v: float) -> int | float:
    return int(v) if float(v).is_integer() else round(v, 3)


def axis_pivot(
    rows: Sequence[ScenarioResult], axis: str, metrics: Sequence[str]
) -> list[tuple[object, ...]]:
    """The scenarios that ran, by ``axis``'s variants (in the order they first appear): per
    variant the number of scenarios and, per metric (`ScenarioResult` field), the mean over
    them and, when they differ, the range: ``"mean (min-max)"``; a single value as a number;
    empty when no scenario of the variant measures it (e.g. cost outside ``replay``)."""
    by_variant: dict[str, list[ScenarioResult]] = {}
    for r in rows:
        if r.ok:
            by_variant.setdefault(dict(r.axes).get(axis, ""), []).append(r)
    out: list[tuple[object, ...]] = []
    for variant, group in by_variant.items():
        cells: list[object] = [variant, len(group)]
        for m in metrics:
            values = [float(v) for v in (getattr(r, m) for r in group) if v is not None]
            if not values:
                cells.append("")
            elif min(values) == max(values):
                cells.append(_number(values[0]))
            else:
                mean = sum(values) / len(values)
                cells.append(f"{_number(mean)} ({_number(min(values))}-{_number(max(values))})")
        out.append(tuple(cells))
    return out


def _experiment_curves(page: Page, ok: Sequence[ScenarioResult]) -> None:
    """The GPU-sharing experiments' curves (`schedsim.sweep.curves`), when the sweep ran
    any: per trace, allocation and fragmentation against arrived workload per policy."""
    figures = curve_figures(ok)
    if not figures:
        return
    page.heading("GPU-sharing experiment: allocation and fragmentation")
    page.text(
        "Per policy, the mean over seeds (line) and the min-max range (band) at each arrived "
        "percent of the cluster's GPU capacity; allocation is the percent of the cluster's "
        "milli-GPU held by bound pods, fragmentation the percent of idle GPU milli that the "
        "target workload cannot use (the FGD paper's measure)."
    )
    for fig in figures:
        page.chart(fig)
    page.table(("trace", "policy", "seeds", "metric", *(f"{p} %" for p in POINTS)), curve_rows(ok))


def sweep_page(results: Iterable[ScenarioResult], title: str = "schedsim sweep") -> Page:
    """The page comparing ``results`` (in scenario order): the rows as a table (axes,
    status, every measured metric by its JSON key, wall seconds), a bar chart per metric
    group over the scenarios that ran, and the failed scenarios with their errors."""
    rows = sorted(results, key=lambda r: r.index)
    ok = [r for r in rows if r.ok]
    metrics = shown_metrics(rows)
    axes = [a for a, _ in rows[0].axes] if rows else []
    page = Page(title)
    page.heading("Scenarios")
    failed = len(rows) - len(ok)
    page.text(
        f"{len(rows)} scenario(s), {failed} failed. Cost is node-hours x price per node "
        "group; latencies are seconds from arrival to first binding (both from replay)."
    )
    page.table(
        ("scenario", *axes, "status", *(COLUMNS[m] for m in metrics), "wallSeconds"),
        [
            (
                r.name,
                *(dict(r.axes).get(a, "") for a in axes),
                "ok" if r.ok else "failed",
                *("" if getattr(r, m) is None else getattr(r, m) for m in metrics),
                r.wall_seconds,
            )
            for r in rows
        ],
    )
    if ok and axes:
        page.heading("By axis")
        page.text(
            "One table per axis: its variants, the scenarios with each (that ran), and each "
            "metric's mean over them, with the range (min-max) when they differ.",
            note=True,
        )
        for axis in axes:
            page.text(f"axis {axis}")
            page.table(
                (axis, "scenarios", *(COLUMNS[m] for m in metrics)),
                axis_pivot(ok, axis, metrics),
            )
    page.heading("Headline metrics per scenario")
    for chart_title, unit, fields in CHARTS:
        drawn = [f for f in fields if f == "wall_seconds" or f in metrics]
        measured = [r for r in ok if any(getattr(r, f) is not None for f in drawn)]
        if measured and drawn:
            page.chart(_bars(chart_title, unit, drawn, measured))
    _experiment_curves(page, ok)
    if not ok:
        page.text("No scenario ran to the end: nothing to chart.", note=True)
    if failed:
        page.heading("Failed scenarios")
        page.table(("scenario", "error"), [(r.name, r.error or "") for r in rows if not r.ok])
    warned = [(r.name, w) for r in rows for w in r.warnings]
    if warned:
        page.heading("Warnings")
        page.table(("scenario", "warning"), warned)
    return page
