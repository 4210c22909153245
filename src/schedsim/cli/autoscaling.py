"""``schedsim scale-up`` and ``schedsim scale-down``: the what-if autoscaling commands.

``schedsim scale-up [CLUSTER ...] --node-groups FILE [--expander least-waste|most-pods]``
answers "how many nodes of which group do my pending pods need?";
``schedsim scale-down [CLUSTER ...] [--scale-down-utilization-threshold 0.5] [--node-groups FILE]``
answers "which nodes could be removed, and where would their pods go?". Both print a table
or one JSON object (``--output json``); with no CLUSTER they run the shipped demo cluster and
its node groups. `schedsim.cli` registers them (`add_parsers`) and runs them (`run`).

Pods whose attempt failed with a plugin error (e.g. a CEL runtime error) are listed on
stderr, one ``error: pod NS/NAME: ...`` line each, and make the exit status 1; the output is
still printed.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from schedsim.api.core import Pod, parse_timestamp
from schedsim.api.errors import FieldError, ManifestError
from schedsim.autoscaler.equivalence import group_equivalent_pods
from schedsim.autoscaler.events import TRIGGERED_SCALE_UP, Event
from schedsim.autoscaler.expendable import DEFAULT_EXPENDABLE_PODS_PRIORITY_CUTOFF
from schedsim.autoscaler.nodegroups import (
    NodeGroup,
    NodeGroupError,
    load_node_groups,
    parse_node_groups,
    templates_without_pods,
    unknown_member_nodes,
)
from schedsim.autoscaler.plugin_errors import PodError
from schedsim.autoscaler.scaledown import (
    DEFAULT_GPU_UTILIZATION_THRESHOLD,
    DEFAULT_UTILIZATION_THRESHOLD,
    ScaleDownResult,
)
from schedsim.autoscaler.scaleup import (
    DEFAULT_MAX_NODES_PER_SCALE_UP,
    EXPANDERS,
    LIMIT_MAX_NODES_PER_SCALE_UP,
    LIMIT_MAX_SIZE,
    GroupOption,
    ScaleUpResult,
    UnhelpedPod,
)
from schedsim.cli.common import (
    UsageError,
    add_input_args,
    live_cluster,
    report_title,
    warn_input,
    write_report,
)
from schedsim.cli.output import recorded_warnings, warn
from schedsim.cli.table import clip
from schedsim.engine import Cluster, Engine
from schedsim.report import scale_down_page, scale_up_page
from schedsim.snapshot.dra import DraSnapshotError

__all__ = ["EXAMPLE_NODE_GROUPS", "PROGRESS_THRESHOLD", "add_parsers", "run"]

EXAMPLE_CLUSTER = "demo-cluster.yaml"
EXAMPLE_NODE_GROUPS = "demo-node-groups.yaml"
"""The node groups used with the example cluster when no CLUSTER is given."""

PROGRESS_THRESHOLD = 20
"""A progress bar is shown on stderr (when it is a terminal) from this many groups/nodes."""


def add_parsers(
    sub: Any,
    profile_args: Callable[[argparse.ArgumentParser], None],
    stores: Sequence[str],
) -> None:
    """Register ``scale-up`` and ``scale-down`` on the ``schedsim`` subparsers.

    Args:
        sub: the object ``ArgumentParser.add_subparsers`` returned.
        profile_args: adds ``--config``, ``--plugin``, ``--feature-gates``.
        stores: names accepted by ``--store``.
    """
    up = sub.add_parser(
        "scale-up",
        help="which node group, and how many nodes, the pending pods need (Cluster Autoscaler)",
        description="Place pending pods that fit on existing nodes, then estimate per node "
        "group how many template nodes the rest need (binpacking) and pick a group with an "
        "expander, as Cluster Autoscaler's scale-up does. Pods no group helps are listed with "
        "each group's reason. With no CLUSTER, runs the shipped demo cluster and node groups.",
    )
    down = sub.add_parser(
        "scale-down",
        help="which nodes could be removed, and where their pods would go (Cluster Autoscaler)",
        description="For each node whose utilization is at or below the threshold, simulate moving "
        "its pods elsewhere, as Cluster Autoscaler's scale-down does; report removable nodes "
        "and why the others are not. With no CLUSTER, runs the shipped demo cluster.",
    )
    for p in (up, down):
        p.add_argument(
            "paths",
            nargs="*",
            metavar="CLUSTER",
            help="manifest file (YAML, JSON, kind: List), directory of them, or - for stdin",
        )
    up.add_argument(
        "--node-groups",
        metavar="FILE",
        help="node groups (YAML; format in docs/cli.md), or - for stdin; required with CLUSTER",
    )
    up.add_argument(
        "--max-nodes-per-scaleup",
        type=int,
        default=DEFAULT_MAX_NODES_PER_SCALE_UP,
        metavar="N",
        help="new nodes one group's estimate may add, as Cluster Autoscaler's flag "
        f"(default {DEFAULT_MAX_NODES_PER_SCALE_UP}; 0: no limit)",
    )
    up.add_argument(
        "--expander",
        choices=EXPANDERS,
        default="least-waste",
        help="how to pick among groups that help (default least-waste)",
    )
    down.add_argument(
        "--node-groups",
        metavar="FILE",
        help="node groups (or - for stdin): nodes outside them are not autoscaled; min sizes "
        "are kept",
    )
    down.add_argument(
        "--scale-down-utilization-threshold",
        "--utilization-threshold",
        dest="utilization_threshold",
        type=float,
        default=DEFAULT_UTILIZATION_THRESHOLD,
        metavar="FRACTION",
        help="a node is a candidate below this utilization (0..1, default 0.5), as Cluster "
        "Autoscaler's flag (--utilization-threshold is the same flag)",
    )
    down.add_argument(
        "--scale-down-gpu-utilization-threshold",
        "--gpu-utilization-threshold",
        dest="gpu_utilization_threshold",
        type=float,
        default=DEFAULT_GPU_UTILIZATION_THRESHOLD,
        metavar="FRACTION",
        help="the same for GPU nodes (a GPU resource such as nvidia.com/gpu in allocatable), "
        "as Cluster Autoscaler's flag (default 0.5; --gpu-utilization-threshold is the same flag)",
    )
    down.add_argument(
        "--now",
        metavar="TIMESTAMP",
        help="the drain time, RFC 3339 (e.g. 2026-01-02T03:04:05Z): a kube-system pod without "
        "a PodDisruptionBudget created more than 1h before it stops blocking, as Cluster "
        "Autoscaler's --blocking-system-pod-distruption-timeout (default: no clock, it blocks)",
    )
    for p in (up, down):
        p.add_argument(
            "--expendable-pods-priority-cutoff",
            type=int,
            default=DEFAULT_EXPENDABLE_PODS_PRIORITY_CUTOFF,
            metavar="N",
            help="pods with priority below N are left out, as Cluster Autoscaler's flag: "
            "running ones are not counted on their nodes (nor moved by scale-down), pending "
            f"ones do not trigger a scale-up (default {DEFAULT_EXPENDABLE_PODS_PRIORITY_CUTOFF})",
        )
        profile_args(p)
        add_input_args(p)
        p.add_argument(
            "--output",
            "-o",
            choices=("table", "json", "yaml"),
            default="table",
            help="table (default), json, or yaml (the json document as YAML)",
        )
        p.add_argument(
            "--store",
            choices=sorted(stores),
            default="delta",
            help="snapshot store: delta (layered, default) or basic (clone-on-fork reference)",
        )


def _inputs(args: argparse.Namespace, need_groups: bool) -> tuple[Cluster, list[NodeGroup] | None]:
    if args.node_groups == "-" and "-" in args.paths:
        raise UsageError(
            "--node-groups -: standard input is already read for CLUSTER (-); give one of "
            "them as a file"
        )
    load = {"expand_workloads": not args.no_expand_workloads, "validate": args.validate}
    live = live_cluster(args, **load)
    if args.paths or live is not None:
        cluster = live or Cluster.from_paths(args.paths, **load)
        groups_file = args.node_groups
        from_snapshot = cluster.origin is not None and cluster.origin.ca_node_groups is not None
        if need_groups and groups_file is None and not from_snapshot:
            given = "--kubeconfig" if live is not None else "CLUSTER"
            raise UsageError(f"--node-groups FILE is required with {given}")
    else:
        text = resources.files("schedsim.examples").joinpath(EXAMPLE_CLUSTER).read_text("utf-8")
        cluster = Cluster.from_text(
            text,
            f"<example {EXAMPLE_CLUSTER}>",
            expand_workloads=not args.no_expand_workloads,
            validate=args.validate,
        )
        groups_file = args.node_groups
        if groups_file is None:
            ref = resources.files("schedsim.examples").joinpath(EXAMPLE_NODE_GROUPS)
            with resources.as_file(ref) as path:
                return cluster, load_node_groups(str(path))
    export = cluster.origin
    if groups_file is None and export is not None and export.ca_node_groups is not None:
        # a Cluster Autoscaler debugging snapshot's TemplateNodes (the load warned how)
        groups = parse_node_groups(export.ca_node_groups, export.ca_node_groups_source)
        return cluster, groups
    if export is not None and export.scheduler_config is not None and not args.config:
        warn(
            f"{export.scheduler_config_source}: the schedulerConfig of the "
            f"kube-scheduler-simulator export is not used by {args.command} (the default "
            "profile is); save it to a file and pass --config FILE"
        )
    return cluster, None if groups_file is None else load_node_groups(groups_file)


@contextmanager
def _progress(total: int, what: str) -> Iterator[Callable[[int, int], None] | None]:
    """A rich progress bar on stderr for long runs on a terminal; None otherwise."""
    if total < PROGRESS_THRESHOLD or not sys.stderr.isatty():
        yield None
        return
    bar = Progress(
        TextColumn(what),
        BarColumn(),
        MofNCompleteColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = bar.add_task(what, total=total)
    with bar:
        yield lambda done, _total: bar.update(task, completed=done)


def run(args: argparse.Namespace, engine: Engine) -> tuple[str, int]:
    """Run ``scale-up`` or ``scale-down`` as ``args`` say, with ``engine`` (built from the
    command's ``--config``, ``--plugin``, ``--feature-gates`` and ``--store``).

    Returns:
        what to print, and the exit status: 1 when a pod's attempt failed with a plugin error
        (listed on stderr), else 0.

    Raises:
        ManifestError: a bad cluster or node-groups file (``FILE: FIELD: problem``), e.g. a
            node in two groups or a template claim allocated to a device the template does
            not have.
        UsageError: a missing ``--node-groups``, a threshold outside [0, 1], a negative
            ``--max-nodes-per-scaleup``, stdin given twice.
        SchedulingError: a plugin failed other than with a PreFilter or Filter Error status.
    """
    try:
        return _run(args, engine)
    except DraSnapshotError as e:  # e.g. a bound pod's claim is missing
        raise UsageError(str(e)) from None


def _warn_skipped(pods: Sequence[Pod]) -> None:
    for p in pods:  # the same words as `schedsim simulate`
        target = p.node_name or p.nominated_node_name
        warn(f"pod {p.key}: node {target!r} is not among the nodes; ignored", f"Pod {p.key}")


def _report_errors(errors: Sequence[PodError]) -> int:
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    if not errors:
        return 0
    pods = len({e.pod.key for e in errors})
    print(
        f"schedsim: error: a plugin failed for {pods} pod(s) (listed above); they were left "
        "out of the decision",
        file=sys.stderr,
    )
    return 1


def _run(args: argparse.Namespace, engine: Engine) -> tuple[str, int]:
    for_up = args.command == "scale-up"
    if for_up and args.max_nodes_per_scaleup < 0:
        raise UsageError(f"--max-nodes-per-scaleup: must be >= 0, got {args.max_nodes_per_scaleup}")
    if not for_up:
        for flag, value in (
            ("--scale-down-utilization-threshold", args.utilization_threshold),
            ("--scale-down-gpu-utilization-threshold", args.gpu_utilization_threshold),
        ):
            if not 0.0 <= value <= 1.0:
                raise UsageError(f"{flag}: must be between 0 and 1, got {value}")
    try:
        now = None if for_up else parse_timestamp(args.now, "--now")
    except FieldError as e:
        raise UsageError(f"--now: {e.problem}") from None
    cluster, groups = _inputs(args, need_groups=for_up)
    source = (
        "<stdin>"
        if args.node_groups == "-"
        else args.node_groups or f"<example {EXAMPLE_NODE_GROUPS}>"
    )
    warn_input(cluster, engine)
    # The API server rejects selectors that do not compile; so does schedsim, at load time.
    engine.check(cluster)
    if groups is not None:
        for w in [*unknown_member_nodes(groups, cluster.nodes), *templates_without_pods(groups)]:
            warn(f"{source}: {w}")
    try:
        if for_up:
            assert groups is not None
            with _progress(len(groups), "node groups") as progress:
                up = engine.scale_up(
                    cluster,
                    groups,
                    expander=args.expander,
                    progress=progress,
                    max_nodes_per_scale_up=args.max_nodes_per_scaleup,
                    expendable_pods_priority_cutoff=args.expendable_pods_priority_cutoff,
                )
            for w in up.warnings:
                warn(w)
            _warn_skipped(up.skipped_pods)
            code = _report_errors(up.errors)
            if args.report:
                title = report_title("scale-up", args, EXAMPLE_CLUSTER)
                write_report(args.report, scale_up_page(up, title))
            return (_up_json(up) if args.output == "json" else _up_table(up)), code
        with _progress(len(cluster.nodes), "nodes") as progress:
            down = engine.scale_down(
                cluster,
                threshold=args.utilization_threshold,
                gpu_threshold=args.gpu_utilization_threshold,
                node_groups=groups,
                progress=progress,
                expendable_pods_priority_cutoff=args.expendable_pods_priority_cutoff,
                now=now,
            )
    except NodeGroupError as e:  # a node in two groups, a template that cannot be copied
        raise ManifestError(f"{source}: {e}") from None
    for w in down.warnings:
        warn(w)
    _warn_skipped(down.skipped_pods)
    code = _report_errors(down.errors)
    if args.report:
        title = report_title("scale-down", args, EXAMPLE_CLUSTER)
        write_report(args.report, scale_down_page(down, title))
    return (_down_json(down) if args.output == "json" else _down_table(down)), code


# --------------------------------------------------------------------------- output


def _console(buf: io.StringIO) -> Console:
    return Console(file=buf, width=120, force_terminal=False, color_system=None)


def _up_json(r: ScaleUpResult) -> str:
    doc: dict[str, Any] = {
        "scaleUp": None
        if r.chosen_option is None
        else {"nodeGroup": r.chosen, "nodes": r.chosen_option.node_count},
        "expander": r.expander,
        "nodeGroups": [
            {
                "name": o.name,
                "currentSize": o.current_size,
                "maxSize": o.max_size,
                "nodes": o.node_count,
                "pods": [p.key for p in o.pods],
                **({"skipped": o.skipped} if o.skipped else {}),
                **({"limitReached": o.limit} if o.limit_reached else {}),
                **({"waste": round(o.waste, 4)} if o.waste is not None else {}),
                # "nodes" counts them too (CA newNodesWithPods): how it is made up
                **(
                    {
                        "newNodesInEstimate": o.estimated_new_nodes,
                        "existingNodesCounted": dict(sorted(o.existing_nodes.items())),
                    }
                    if o.counted_nodes_note()
                    else {}
                ),
            }
            for o in r.options
        ],
        "existingNodes": [{"pod": p.pod.key, "node": p.node_name} for p in r.scheduled],
        "awaiting": [p.key for p in r.awaiting],
        "noScaleUp": [
            {"pod": u.pod.key, "reasons": dict(u.reasons), "message": u.message} for u in r.unhelped
        ],
        "laterScaleUp": [{"pod": u.pod.key, "reasons": dict(u.reasons)} for u in r.later],
        "errors": [
            {"pod": e.pod.key, "nodeGroup": e.node_group or None, "message": e.message}
            for e in r.errors
        ],
        "maxNodesPerScaleUp": r.max_nodes_per_scale_up,
        "events": [_event_json(e) for e in r.events],
        "summary": {
            "pending": r.pending,
            "onExistingNodes": len(r.scheduled),
            "helped": len(r.chosen_option.pods) if r.chosen_option else 0,
            "awaiting": len(r.awaiting),
            "noScaleUp": len(r.unhelped),
            "laterScaleUp": len(r.later),
            "errors": len({e.pod.key for e in r.errors}),
        },
        "warnings": recorded_warnings(),
    }
    return json.dumps(doc, indent=2) + "\n"


def _event_json(e: Event) -> dict[str, str]:
    return {
        "involvedObject": f"{e.kind} {e.name}",
        "type": e.type,
        "reason": e.reason,
        "message": e.message,
    }


def _grouped(pods: Sequence[UnhelpedPod]) -> list[tuple[list[UnhelpedPod], str]]:
    """Pods grouped by equivalence (same controller and spec, as CA groups them; same reasons),
    each group's keys sorted, groups sorted by their first key; with a row label."""
    by_id = {id(u.pod): u for u in pods}
    out = []
    for group in group_equivalent_pods(u.pod for u in pods):
        members = sorted((by_id[id(p)] for p in group), key=lambda u: u.pod.key)
        # pods of one equivalence group normally share reasons; split if not (plugin errors)
        by_reasons: dict[tuple[tuple[str, str], ...], list[UnhelpedPod]] = {}
        for u in members:
            by_reasons.setdefault(tuple(u.reasons.items()), []).append(u)
        for same in by_reasons.values():
            first = same[0].pod.key
            label = first if len(same) == 1 else f"{first} (+{len(same) - 1} similar)"
            out.append((same, label))
    out.sort(key=lambda row: row[0][0].pod.key)
    return out


def _pods_table(title: str, pods: Sequence[UnhelpedPod]) -> Table:
    t = Table(title=title)
    for col in ("PODS", "COUNT", "NODE GROUP", "REASON"):
        t.add_column(col, overflow="fold")
    for same, label in _grouped(pods):
        for i, (g, reason) in enumerate(same[0].reasons.items()):
            first = i == 0
            t.add_row(
                escape(label) if first else "",
                str(len(same)) if first else "",
                escape(g),
                escape(clip(reason)),
            )
    return t


def _counted(o: GroupOption) -> str:
    """The make-up of ``o.node_count`` when the estimate counted existing nodes, with the cap
    at the group's room when it applied ("" otherwise)."""
    note = o.counted_nodes_note()
    if not note:
        return ""
    if o.node_count < o.estimated_new_nodes + len(o.existing_nodes):
        grows = f"capped at the group's room: it grows by {o.node_count}"
    else:
        grows = f"the group grows by {o.node_count}"
    return f"{note}, counted alike by Cluster Autoscaler; {grows}"


def _capped(o: GroupOption, cap: int) -> str:
    """The table note of an estimate stopped by ``--max-nodes-per-scaleup``: the flag limits
    the new nodes, so say so when existing ones are counted on top."""
    if o.existing_nodes:
        return f"estimate capped at {cap} new node(s) by --max-nodes-per-scaleup {cap}"
    return f"capped by --max-nodes-per-scaleup {cap}"


def _up_table(r: ScaleUpResult) -> str:
    buf = io.StringIO()
    console = _console(buf)
    table = Table()
    for col in ("NODE GROUP", "SIZE", "NEW NODES", "PODS HELPED", "NOTE"):
        table.add_column(col, overflow="fold")
    for o in r.options:
        notes = [o.skipped or ("chosen" if o.name == r.chosen else "")]
        notes.append(_counted(o))
        if o.limit_kind == LIMIT_MAX_NODES_PER_SCALE_UP:
            notes.append(_capped(o, r.max_nodes_per_scale_up))
        elif o.limit_kind == LIMIT_MAX_SIZE:
            notes.append(f"limited by max size {o.max_size}")
        if o.waste is not None:
            notes.append(f"waste {o.waste:.2f}")
        table.add_row(
            escape(o.name),
            f"{o.current_size}/{o.max_size}",
            str(o.node_count),
            str(len(o.pods)),
            escape(", ".join(n for n in notes if n)),
        )
    console.print(table)
    if r.unhelped:
        console.print(_pods_table("pods no node group helps", r.unhelped))
        console.print(
            "Cluster Autoscaler's event for them (recorded on a loop without a scale-up):",
            markup=False,
        )
        for same, label in _grouped(r.unhelped):  # as kubectl describe shows it
            console.print(f"  {label}: NotTriggerScaleUp: {clip(same[0].message)}", markup=False)
    if r.later:
        console.print(_pods_table("pods left for a later scale-up", r.later))
    chosen = r.chosen_option
    verdict = (
        f"scale up {chosen.name} by {chosen.node_count} node(s) for {len(chosen.pods)} pod(s)"
        if chosen
        else "no scale-up"
    )
    if chosen is not None and _counted(chosen):
        verdict += f" ({_counted(chosen)})"
    if chosen is not None and chosen.limit_kind == LIMIT_MAX_NODES_PER_SCALE_UP:
        cap = r.max_nodes_per_scale_up
        verdict += (
            f" (estimate stopped at --max-nodes-per-scaleup {cap}; more pods may need more nodes)"
            if not chosen.existing_nodes
            else f" (estimate stopped at {cap} new node(s), --max-nodes-per-scaleup {cap}; "
            "more pods may need more nodes)"
        )
    elif chosen is not None and chosen.limit_kind == LIMIT_MAX_SIZE:
        verdict += f", reaching the group's max size {chosen.max_size}"
    console.print(
        f"{verdict} ({r.expander}); {r.pending} pending: {len(r.scheduled)} fit existing "
        f"nodes, {len(r.awaiting)} await another group, {len(r.unhelped)} helped by no group"
        + (f", {len(r.later)} left for a later scale-up" if r.later else "")
        + (f", {len({e.pod.key for e in r.errors})} plugin error(s)" if r.errors else ""),
        markup=False,
    )
    triggered = next((e for e in r.events if e.reason == TRIGGERED_SCALE_UP), None)
    if triggered is not None:
        console.print(f"  TriggeredScaleUp: {triggered.message}", markup=False)
    if r.later:
        limits = sorted({o.limit for o in r.options if o.limit_reached}, key=str)
        why = f": {'; '.join(limits)}" if limits else ""
        console.print(
            f"{len(r.later)} pod(s) left for a later scale-up{why} (their pods fit a group's "
            "template; Cluster Autoscaler does not report them as unschedulable)",
            markup=False,
        )
    return buf.getvalue()


def _down_json(r: ScaleDownResult) -> str:
    doc: dict[str, Any] = {
        "nodes": [
            {
                "node": v.node,
                "removable": v.removable,
                "reason": v.reason.value if v.reason else None,
                "detail": v.detail,
                "utilization": None
                if v.utilization is None
                else {
                    "cpu": round(v.utilization.cpu, 4),
                    "memory": round(v.utilization.memory, 4),
                    "devices": round(v.utilization.devices, 4),
                    "gpu": round(v.utilization.gpu, 4),
                    "basis": v.utilization.basis,
                    "resource": v.utilization.resource,
                    "value": round(v.utilization.value, 4),
                },
                **({"pod": v.pod.key} if v.pod is not None else {}),
                "moves": [{"pod": p.pod.key, "node": p.node_name} for p in v.moved],
            }
            for v in r.verdicts
        ],
        "pendingPlaced": [{"pod": p.pod.key, "node": p.node_name} for p in r.pending_placed],
        "pendingUnplaced": [p.key for p in r.pending_unplaced],
        "errors": [{"pod": e.pod.key, "message": e.message} for e in r.errors],
        "events": [_event_json(e) for e in r.events],
        "summary": {
            "removable": len(r.removable),
            "nodes": len(r.verdicts),
            "threshold": r.threshold,
            "gpuThreshold": r.gpu_threshold,
            "pendingPlaced": len(r.pending_placed),
            "pendingUnplaced": len(r.pending_unplaced),
            "errors": len({e.pod.key for e in r.errors}),
        },
        "warnings": recorded_warnings(),
    }
    return json.dumps(doc, indent=2) + "\n"


def _down_table(r: ScaleDownResult) -> str:
    buf = io.StringIO()
    console = _console(buf)
    table = Table()
    for col in ("NODE", "REMOVABLE", "UTILIZATION", "REASON", "PODS GO TO"):
        table.add_column(col, overflow="fold")
    for v in r.verdicts:
        util = "" if v.utilization is None else f"{v.utilization.value:.2f}"
        reason = "" if v.reason is None else clip(f"{v.reason.value}: {v.detail}")
        moves = ", ".join(f"{p.pod.key} -> {p.node_name}" for p in v.moved)
        table.add_row(
            escape(v.node), "yes" if v.removable else "no", util, escape(reason), escape(moves)
        )
    console.print(table)
    gpu = any(v.utilization is not None and v.utilization.basis == "gpu" for v in r.verdicts)
    thresholds = f"utilization threshold {r.threshold:g}" + (
        f", GPU nodes {r.gpu_threshold:g}" if gpu else ""
    )
    console.print(
        f"{len(r.removable)} of {len(r.verdicts)} node(s) removable ({thresholds})"
        + (f", {len({e.pod.key for e in r.errors})} plugin error(s)" if r.errors else ""),
        markup=False,
    )
    pending = len(r.pending_placed) + len(r.pending_unplaced)
    if pending:
        console.print(
            f"{pending} pending pod(s): {len(r.pending_placed)} placed on existing nodes first "
            "(as Cluster Autoscaler's filter-out-schedulable; they count and move like the "
            f"others), {len(r.pending_unplaced)} fit no existing node (see scale-up)",
            markup=False,
        )
    return buf.getvalue()
