"""The curves of a sweep of GPU-sharing experiments (the ``experiment`` command): GPU
allocation and fragmentation against the arrived workload, per policy, over seeds.

Scenarios that differ only in their ``seeds`` variant are one series (a trace and a
``schedulerConfig``/``featureGates`` variant: a policy); a series is drawn as its mean line
and its min-max band over the seeds, the shape of the FGD paper's Fig. 7 (fragmentation)
and Fig. 9(a) (allocation), and tabled at the arrived percentages the paper discusses.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from schedsim.sweep.results import ScenarioResult

__all__ = [
    "POINTS",
    "Series",
    "curve_figures",
    "curve_rows",
    "curve_series",
    "curve_table",
    "mean_range_text",
    "values_at",
]

POINTS: Final = (50, 80, 90, 100, 110, 120, 130)
"""Arrived percentages the table shows (as docs/replay.md's table)."""

_METRICS: Final = (("gpuAllocation", 1, "GPU alloc %"), ("fragmentation", 2, "frag % idle"))
"""(curve key, its `CurveRow` index, table label)."""

Series = tuple[str, str, list[ScenarioResult]]
"""(trace variant, policy: the other axes' variants joined by ``+``, its runs by seed)."""


def curve_series(results: Iterable[ScenarioResult]) -> list[Series]:
    """The experiment runs that finished, grouped over seeds, in scenario order."""
    groups: dict[tuple[str, str], list[ScenarioResult]] = {}
    for r in sorted(results, key=lambda r: r.index):
        if not r.ok or not r.curve:
            continue
        axes = dict(r.axes)
        trace = axes.get("traces", "")
        policy = "+".join(v for a, v in r.axes if a not in ("traces", "seeds", "command") and v)
        groups.setdefault((trace, policy or "default"), []).append(r)
    return [(t, p, runs) for (t, p), runs in groups.items()]


def values_at(runs: Sequence[ScenarioResult], arrived: int, column: int) -> list[float]:
    """The runs' values at ``arrived`` percent of their `CurveRow` field ``column`` (1 GPU
    allocation, 2 fragmentation ratio, 3 fragmentation amount; percent), in run order; runs
    without a value there (no pod arrived in that bin, or a shorter curve) are left out."""
    out = []
    for r in runs:
        if arrived < len(r.curve):
            v = r.curve[arrived][column]
            if v is not None:
                out.append(v)
    return out


def mean_range_text(values: Sequence[float]) -> str:
    """``mean (min-max)`` of ``values`` to one decimal (the mean alone for one value, "-"
    for none): a cell of the curve table."""
    if not values:
        return "-"
    mean = sum(values) / len(values)
    return (
        f"{mean:.1f}" if len(values) == 1 else f"{mean:.1f} ({min(values):.1f}-{max(values):.1f})"
    )


def curve_rows(results: Iterable[ScenarioResult]) -> list[tuple[str, ...]]:
    """Per series and metric: trace, policy, seeds, metric, then the mean (min-max over
    seeds) at each of `POINTS` ("-" where no run has a value)."""
    rows = []
    for trace, policy, runs in curve_series(results):
        for _, column, label in _METRICS:
            cells = [mean_range_text(values_at(runs, a, column)) for a in POINTS]
            rows.append((trace, policy, str(len(runs)), label, *cells))
    return rows


def curve_table(results: Iterable[ScenarioResult]) -> str:
    """`curve_rows` as a Markdown table (empty string when no experiment ran)."""
    rows = curve_rows(results)
    if not rows:
        return ""
    head = ("trace", "policy", "seeds", "metric", *(f"{p} %" for p in POINTS))
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def curve_figures(results: Iterable[ScenarioResult]) -> list[go.Figure]:
    """One figure per trace: allocation (left) and fragmentation (right) against arrived
    percent, a mean line and a min-max band per policy."""
    by_trace: dict[str, list[tuple[str, list[ScenarioResult]]]] = {}
    for trace, policy, runs in curve_series(results):
        by_trace.setdefault(trace, []).append((policy, runs))
    figures = []
    for trace, series in by_trace.items():
        fig = make_subplots(
            rows=1,
            cols=2,
            subplot_titles=("GPU allocation % (Fig. 9a)", "fragmentation % of idle GPU (Fig. 7)"),
        )
        for policy, runs in series:
            length = max(len(r.curve) for r in runs)
            for key, column, _ in _METRICS:
                xs, mean, lo, hi = [], [], [], []
                for a in range(length):
                    vals = values_at(runs, a, column)
                    if vals:
                        xs.append(a)
                        mean.append(sum(vals) / len(vals))
                        lo.append(min(vals))
                        hi.append(max(vals))
                band = go.Scatter(
                    x=xs + xs[::-1],
                    y=hi + lo[::-1],
                    fill="toself",
                    opacity=0.2,
                    line={"width": 0},
                    showlegend=False,
                    legendgroup=policy,
                    hoverinfo="skip",
                    name=f"{policy} {key} range",
                )
                fig.add_trace(band, row=1, col=column)
                line = go.Scatter(
                    x=xs, y=mean, name=policy, legendgroup=policy, showlegend=column == 1
                )
                fig.add_trace(line, row=1, col=column)
        fig.update_xaxes(title_text="arrived workload (% of GPU capacity)")
        fig.update_yaxes(title_text="percent")
        runs_per = ", ".join(f"{p}: {len(r)} seed(s)" for p, r in series)
        fig.update_layout(title=f"{trace or 'trace'}: mean and range over seeds ({runs_per})")
        figures.append(fig)
    return figures
