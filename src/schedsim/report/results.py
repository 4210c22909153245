"""The HTML reports of ``simulate``, ``scale-up`` and ``scale-down``: per-node utilization
charts and the pods that found no place, with their reasons."""

from __future__ import annotations

import plotly.graph_objects as go

from schedsim.api.core.resources import pod_requests
from schedsim.autoscaler.scaledown import ScaleDownResult
from schedsim.autoscaler.scaleup import ScaleUpResult
from schedsim.engine import Cluster
from schedsim.framework.resource import Resource
from schedsim.report.page import Page
from schedsim.scheduler.scheduling import SimulationResult

__all__ = ["scale_down_page", "scale_up_page", "simulate_page"]


def simulate_page(
    cluster: Cluster, result: SimulationResult, title: str = "schedsim simulate"
) -> Page:
    """Where the pending pods went: requested / allocatable per node after scheduling (the
    bound pods plus the placed ones), pods per node, and the pods that fit nowhere with
    kube-scheduler's message."""
    page = Page(title)
    page.heading("Summary")
    page.table(
        ("metric", "value"),
        [
            ("nodes", result.nodes),
            ("pending pods", len(result.outcomes)),
            ("scheduled", result.scheduled),
            ("unschedulable", result.unschedulable),
            ("plugin errors", result.errors),
        ],
    )
    requested: dict[str, Resource] = {n.name: Resource() for n in cluster.nodes}
    placed: dict[str, int] = dict.fromkeys(requested, 0)
    for p in cluster.bound_pods():
        node = p.node_name or p.nominated_node_name
        if node in requested:
            requested[node].add(pod_requests(p))
    for o in result.outcomes:
        if o.node_name is not None and o.node_name in requested:
            requested[o.node_name].add(pod_requests(o.pod))
            placed[o.node_name] += 1
    names, cpu, mem = [], [], []
    for n in cluster.nodes:
        alloc = Resource.from_resource_list(n.allocatable)
        r = requested[n.name]
        names.append(n.name)
        cpu.append(100 * r.milli_cpu / alloc.milli_cpu if alloc.milli_cpu else 0.0)
        mem.append(100 * r.memory / alloc.memory if alloc.memory else 0.0)
    page.heading("Per-node utilization after scheduling")
    fig = go.Figure([go.Bar(x=names, y=cpu, name="cpu"), go.Bar(x=names, y=mem, name="memory")])
    fig.update_layout(title="Requested / allocatable per node", yaxis_title="%", barmode="group")
    page.chart(fig)
    fig = go.Figure(go.Bar(x=names, y=[placed[n] for n in names], name="pods placed"))
    fig.update_layout(title="Pending pods placed per node", yaxis_title="pods")
    page.chart(fig)
    page.heading("Unschedulable pods, and why")
    failed = [
        (o.pod.key, o.message) for o in result.outcomes if o.node_name is None and not o.skipped
    ]
    if failed:
        page.table(("pod", "why"), failed)
    else:
        page.text("None: every pending pod was scheduled.")
    skipped = [o.pod.key for o in result.outcomes if o.skipped]
    if skipped:
        page.text(
            f"Skipped, being deleted (kube-scheduler's skip schedule deleting pod): "
            f"{', '.join(skipped)}."
        )
    return page


def scale_up_page(result: ScaleUpResult, title: str = "schedsim scale-up") -> Page:
    """The scale-up decision: new nodes and pods helped per node group, the pods no group
    helps with each group's reason."""
    page = Page(title)
    page.heading("Decision")
    page.text(
        f"expander {result.expander}: "
        + (f"scale up {result.chosen}" if result.chosen else "no node group helps")
        + f"; {result.pending} pending pod(s), {len(result.scheduled)} fit existing nodes."
    )
    names = [o.name for o in result.options]
    fig = go.Figure(
        [
            go.Bar(x=names, y=[o.node_count for o in result.options], name="new nodes"),
            go.Bar(x=names, y=[len(o.pods) for o in result.options], name="pods helped"),
        ]
    )
    fig.update_layout(title="Per node group", barmode="group")
    page.chart(fig)
    page.table(
        ("node group", "size", "max", "new nodes", "pods helped", "note"),
        [
            (
                o.name,
                o.current_size,
                o.max_size,
                o.node_count,
                len(o.pods),
                o.skipped or o.limit or ("chosen" if o.name == result.chosen else ""),
            )
            for o in result.options
        ],
    )
    page.heading("Pods no node group helps, and why")
    rows = [
        (u.pod.key, g, r) for u in (*result.unhelped, *result.later) for g, r in u.reasons.items()
    ]
    if rows:
        page.table(("pod", "node group", "why"), rows)
    else:
        page.text("None.")
    return page


def scale_down_page(result: ScaleDownResult, title: str = "schedsim scale-down") -> Page:
    """Which nodes could go: utilization per node against the threshold, and each node's
    verdict."""
    page = Page(title)
    v = result.verdicts
    page.heading("Utilization per node")
    names = [x.node for x in v]
    util = [100 * x.utilization.value if x.utilization is not None else 0.0 for x in v]
    colours = ["#2a9d3f" if x.removable else "#888888" for x in v]
    fig = go.Figure(go.Bar(x=names, y=util, marker_color=colours, name="utilization"))
    fig.add_hline(y=100 * result.threshold, line_dash="dash", annotation_text="threshold")
    fig.update_layout(title="Utilization (green: removable)", yaxis_title="%")
    page.chart(fig)
    page.heading("Verdicts")
    page.table(
        ("node", "removable", "utilization", "reason", "pods move to"),
        [
            (
                x.node,
                "yes" if x.removable else "no",
                x.utilization.value if x.utilization is not None else "",
                "" if x.reason is None else f"{x.reason.value}: {x.detail}",
                ", ".join(f"{p.pod.key} -> {p.node_name}" for p in x.moved),
            )
            for x in v
        ],
    )
    if result.pending_unplaced:
        page.heading("Pending pods that fit no existing node")
        page.table(("pod",), [(p.key,) for p in result.pending_unplaced])
    return page
