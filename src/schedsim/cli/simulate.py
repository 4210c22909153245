"""``schedsim simulate``: load the cluster (the PATHs, or the shipped example), schedule it,
warn about what was not checked, and render the result (table, JSON, or a
kube-scheduler-simulator export) with the ``--explain`` grids.
"""

from __future__ import annotations

import argparse
import io
import os
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from schedsim.api.core import Pod
from schedsim.api.errors import first_few
from schedsim.cli import json_text as cli_json
from schedsim.cli import kss as cli_kss
from schedsim.cli import output as cli_output
from schedsim.cli import table as cli_table
from schedsim.cli.common import UsageError, live_cluster, report_title, warn_input, write_report
from schedsim.cli.options import make_engine
from schedsim.cli.output import warn
from schedsim.cli.parser import EXPLAIN_ALL
from schedsim.engine import Cluster
from schedsim.framework import debug
from schedsim.framework.runtime import PluginTimings
from schedsim.report import simulate_page
from schedsim.scheduler.scheduling import PodOutcome, SimulationResult
from schedsim.snapshot.dra import DraSnapshotError

EXAMPLE = "demo-cluster.yaml"
"""The example cluster run when no PATH is given (in ``schedsim/examples``)."""

PROGRESS_THRESHOLD = 20
"""A progress bar is shown on stderr (a terminal) from this many pending pods."""


def shows_progress(args: argparse.Namespace) -> bool:
    """A bar on a terminal's stderr; none when stderr is piped, nor when JSON or YAML goes to
    a pipe on stdout (a script reads it: it gets the answer, not a moving picture)."""
    if sys.stderr is None or not sys.stderr.isatty():
        return False
    to_pipe = not args.output_file and (sys.stdout is None or not sys.stdout.isatty())
    return not (args.output in ("json", "yaml") and to_pipe)


@contextmanager
def _progress(args: argparse.Namespace) -> Iterator[Callable[[int, int, int], None] | None]:
    """A rich progress bar of the pending pods attempted (with how many are bound), shown
    once the run has `PROGRESS_THRESHOLD` pending pods; None when it is not shown."""
    if not shows_progress(args):
        yield None
        return
    bar = Progress(
        TextColumn("simulate"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("pods attempted, {task.fields[bound]} scheduled"),
        console=Console(stderr=True),
        transient=True,
    )
    task = bar.add_task("simulate", total=None, bound=0, start=False)
    started = False

    def update(attempted: int, bound: int, total: int) -> None:
        nonlocal started
        if total < PROGRESS_THRESHOLD:
            return
        if not started:
            bar.start()
            bar.start_task(task)
            started = True
        bar.update(task, completed=attempted, total=total, bound=bound)

    try:
        yield update
    finally:
        if started:
            bar.stop()


def _explain_selector(
    args: argparse.Namespace,
) -> tuple[Callable[[Pod], bool] | None, set[str]]:
    """The pods to explain and the NS/NAME keys asked for.

    ``--explain`` takes an optional value, so ``--explain cluster.yaml`` would read the path
    as a pod name: a value that names an existing file or directory (or ``-``) is taken back
    as a PATH, as the user meant.
    """
    values: list[str] = args.explain or []
    if not values:
        return None, set()
    keys: set[str] = set()
    every = False
    for v in values:
        if v == EXPLAIN_ALL:
            every = True
        elif v == "-" or os.path.exists(v):
            args.paths.append(v)
            every = True
        elif "/" not in v:
            raise UsageError(f"--explain {v}: expected NAMESPACE/NAME")
        else:
            keys.add(v)
    if args.placement != "kube-scheduler":
        raise UsageError("--explain: needs --placement kube-scheduler (first fit scores nothing)")
    if every:
        return (lambda pod: True), set()
    return (lambda pod: pod.key in keys), keys


def _every_pod(pod: Pod) -> bool:
    return True


KSS_EXPLAIN_LIMIT = 1_000_000
"""Pending pods x nodes up to which ``--output kss`` annotates every pod with its per-node
results without being asked: beyond it the export grows by gigabytes (6,000 pods on 2,000
nodes: 4.3 GB written, 16 GB of memory, measured; docs/cli.md), so ``--explain`` asks for it."""


def _kss_explain(args: argparse.Namespace, cluster: Cluster) -> Callable[[Pod], bool] | None:
    """Which pods ``--output kss`` explains when ``--explain`` is not given: every pod, as
    the simulator annotates every pod it schedules, unless first fit (nothing to record) or
    the input is past `KSS_EXPLAIN_LIMIT` (a warning says how to get them)."""
    if args.placement != "kube-scheduler":
        warn(
            "--output kss: first fit records no per-plugin results; the pods carry "
            "only the selected-node annotation (use --placement kube-scheduler for all)"
        )
        return None
    pending = sum(1 for p in cluster.pods if not p.node_name and not p.is_terminal)
    pairs = pending * len(cluster.nodes)
    if pairs > KSS_EXPLAIN_LIMIT:
        warn(
            f"--output kss: {pending:,} pending pods x {len(cluster.nodes):,} nodes: the "
            "per-plugin result annotations are left out (only selected-node and the "
            "PodScheduled condition are written), as they would take gigabytes; give "
            "--explain (every pod) or --explain NS/NAME to write them"
        )
        return None
    return _every_pod


def _to_json(result: SimulationResult) -> str:
    doc: dict[str, Any] = {
        "pods": [
            {
                "namespace": o.pod.namespace,
                "name": o.pod.name,
                "node": o.node_name,
                "reasons": list(o.reasons),
                "message": o.message,
                "allocations": [
                    {
                        "claim": a.claim,
                        "request": a.request,
                        "driver": a.driver,
                        "pool": a.pool,
                        "device": a.device,
                        **({"adminAccess": True} if a.admin_access else {}),
                    }
                    for a in o.allocations
                ],
                "attempts": o.attempts,
                **({"error": True} if o.error else {}),
                **({"skipped": True} if o.skipped else {}),
                **({"nominatedNode": o.nominated_node} if o.nominated_node else {}),
                **({"preemptedBy": o.preempted_by} if o.preempted_by else {}),
                **({"results": o.explanation.to_json()} if o.explanation is not None else {}),
            }
            for o in result.outcomes
        ],
        "summary": {
            "scheduled": result.scheduled,
            "unschedulable": result.unschedulable,
            "errors": result.errors,
            "preempted": result.preempted,
            # pods being deleted, skipped as kube-scheduler skips them (only when some are)
            **({"skipped": result.skipped} if result.skipped else {}),
            "nodes": result.nodes,
        },
        "warnings": cli_output.recorded_warnings(),
    }
    if result.other_scheduler_pods:  # left to another scheduler: listed, never dropped
        doc["otherSchedulerPods"] = [
            {"namespace": p.namespace, "name": p.name, "schedulerName": p.scheduler_name}
            for p in result.other_scheduler_pods
        ]
    return cli_json.dumps(doc) + "\n"  # json.dumps(doc, indent=2), faster


def _to_table(result: SimulationResult) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=120, force_terminal=False, color_system=None)
    # names fold onto more lines, never cut: two long names must stay distinguishable
    columns: list[cli_table.ColumnSpec] = [("POD", "fold"), ("NODE", "fold")]
    devices = any(o.allocations for o in result.outcomes)
    if devices:
        columns.append(("DEVICES", "fold"))  # the device name is the useful end
    columns.append(("REASON", "ellipsis"))
    rows: list[list[str]] = []
    for o in result.outcomes:
        where = o.node_name or "<none>"
        if o.nominated_node and o.node_name != o.nominated_node:
            where += f" (nominated {o.nominated_node})"
        cells = [o.pod.key, where]
        if devices:
            cells.append(
                "\n".join(f"{a.request}: {a.driver}/{a.pool}/{a.device}" for a in o.allocations)
            )
        cells.append(o.message)
        rows.append(cells)
    buf.write(cli_table.table_text(columns, rows, width=120))
    per_node = result.pods_per_node()
    spread = ", ".join(f"{n}: {c}" for n, c in sorted(per_node.items()))
    console.print(
        f"{result.scheduled} scheduled, {result.unschedulable} unschedulable, "
        + (f"{result.errors} plugin error(s), " if result.errors else "")
        + (f"{result.preempted} preempted, " if result.preempted else "")
        + (f"{result.skipped} skipped (being deleted), " if result.skipped else "")
        + f"{result.nodes} nodes"
        + (f" ({spread})" if spread else ""),
        markup=False,
    )
    for o in result.outcomes:
        if o.explanation is not None:
            _explain_table(buf, o)
    return buf.getvalue()


GRID_WIDTH = 120
"""The widest an ``--explain`` grid is printed: wider grids wrap into more tables."""

_REASON_WIDTH = 32  # a Filter reason folds onto more lines beyond this


def _explain_table(buf: io.StringIO, o: PodOutcome) -> None:
    """A node-by-plugin grid for one explained pod: each Filter plugin's "passed" or reason,
    each Score plugin's ``raw/final`` (final = normalized x weight, column "<plugin> score"),
    the total. A grid wider than `GRID_WIDTH` columns wraps: the plugin columns go into as
    many tables as needed, each repeating the NODE column, the TOTAL in the last one."""
    ex = o.explanation
    assert ex is not None
    nodes = ex.to_json()["nodes"]
    title = (
        f"{o.pod.key}: {o.node_name or 'not scheduled'} "
        f"({nodes['evaluated']} of {nodes['all']} nodes evaluated, {nodes['feasible']} "
        f"feasible, {nodes['notEvaluated']} not evaluated"
        + (
            f", {nodes['excludedByPreFilter']} excluded by PreFilter"
            if nodes["excludedByPreFilter"]
            else ""
        )
        + ")"
    )
    pre = {k: v for k, v in ex.pre_filter.items() if v not in ("success", "skip")}
    filter_plugins = list(dict.fromkeys(p for row in ex.filter.values() for p in row))
    score_plugins = list(dict.fromkeys(p for row in ex.final_score.values() for p in row))
    names = list(ex.filter)
    node_cells = [("* " if n == ex.selected_node else "") + n for n in names]
    # (header, cells, justify, width) per column after NODE
    columns: list[tuple[str, list[str], str, int]] = []
    for p in filter_plugins:
        cells = [ex.filter[n].get(p, "") for n in names]
        width = max(len(p), min(_REASON_WIDTH, max((len(c) for c in cells), default=0)))
        columns.append((p, cells, "left", width))
    for p in score_plugins:
        raw = [ex.score.get(n, {}) for n in names]
        final = [ex.final_score.get(n) for n in names]
        pairs = zip(raw, final, strict=True)
        cells = [f"{r.get(p, '')}/{f[p]}" if f and p in f else "" for r, f in pairs]
        header = f"{p} score"  # named apart from the same plugin's Filter
        columns.append((header, cells, "right", max(len(header), *(len(c) for c in cells))))
    if score_plugins:
        totals = [str(sum(f.values())) if f else "" for f in (ex.final_score.get(n) for n in names)]
        columns.append(("TOTAL", totals, "right", max(5, *(len(c) for c in totals))))
    node_width = max((len(c) for c in node_cells), default=4)
    node_width = max(node_width, 4)
    segments: list[list[tuple[str, list[str], str, int]]] = [[]]
    used = 1 + node_width + 3
    for col in columns:
        if segments[-1] and used + col[3] + 3 > GRID_WIDTH:
            segments.append([])
            used = 1 + node_width + 3
        segments[-1].append(col)
        used += col[3] + 3
    if not names:
        # PreFilter rejected the pod (or no node was left): no grid, whose width would fold
        # the title at the NODE column's
        segments = []
        buf.write(title + "\n")
    for i, segment in enumerate(segments):
        heading = title if i == 0 else f"{o.pod.key} (continued, {i + 1} of {len(segments)})"
        grid = [cli_table.GridColumn("NODE", min_width=node_width, no_wrap=True)]
        grid += [
            cli_table.GridColumn(header, justify, len(header), width)
            for header, _, justify, width in segment
        ]
        rows = [
            [node_cell, *(col[1][r] for col in segment)] for r, node_cell in enumerate(node_cells)
        ]
        buf.write(cli_table.grid_text(heading, grid, rows, GRID_WIDTH))
    # one line each, as the JSON's preFilter/postFilter entries (a long message is left to
    # the terminal to wrap)
    clip = cli_table.clip
    lines = [f"  PreFilter {plugin}: {clip(msg)}" for plugin, msg in pre.items()]
    lines += [f"  PostFilter {plugin}: {clip(msg)}" for plugin, msg in ex.post_filter.items()]
    if ex.nominated_node:
        lines.append(f"  nominated node: {ex.nominated_node}")
    if lines:
        buf.write("\n".join(lines) + "\n")


def _stdin_is_redirected() -> bool:
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (AttributeError, OSError, ValueError):  # no real stdin (e.g. under a test runner)
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def _some(pods: Sequence[Pod]) -> str:
    return f"{len(pods)} pod(s) ({first_few([p.key for p in pods], 3)})"


def _timing_report(timings: PluginTimings) -> str:
    rows = sorted(timings.calls, key=lambda k: -timings.nanoseconds[k])
    lines = ["plugin timings (total, calls, mean):"]
    for plugin, point in rows:
        n = timings.calls[(plugin, point)]
        total = timings.nanoseconds[(plugin, point)]
        mean = total / n if n else 0.0
        lines.append(
            f"  {plugin:<24} {point:<12} {total / 1e6:10.3f} ms {n:>9} calls {mean / 1e3:9.2f} µs"
        )
    return "\n".join(lines)


def _cluster(args: argparse.Namespace) -> Cluster:
    """The input as a `Cluster`: the PATHs, the ``--kubeconfig`` cluster, or the shipped
    example without either."""
    expand = not args.no_expand_workloads
    kwargs: dict[str, Any] = {
        "expand_workloads": expand,
        "validate": args.validate,
        "keep_raw": args.output == "kss",  # --output kss writes the objects back as read
    }
    live = live_cluster(args, **kwargs)
    if live is not None:
        return live
    if args.paths:
        return Cluster.from_paths(args.paths, **kwargs)
    if _stdin_is_redirected():  # `... | schedsim simulate` without `-` is a likely slip
        print(
            f"note: no PATH given: running the example cluster shipped with schedsim "
            f"({EXAMPLE}); use - to read manifests from stdin",
            file=sys.stderr,
        )
    text = resources.files("schedsim.examples").joinpath(EXAMPLE).read_text("utf-8")
    return Cluster.from_text(text, f"<example {EXAMPLE}>", **kwargs)


def simulate(args: argparse.Namespace) -> tuple[str, int]:
    """The output and the exit status (1 when a plugin failed for some pod)."""
    timings = PluginTimings() if args.profile_plugins else None
    explain, explain_keys = _explain_selector(args)
    cluster = _cluster(args)
    if args.output == "kss" and explain is None:
        explain = _kss_explain(args, cluster)
    engine, _ = make_engine(args, timings, cli_kss.embedded_profile(args.config, cluster))
    warn_input(cluster, engine)
    try:
        # CEL selectors that do not compile are refused first, as the API server would
        with _progress(args) as progress:
            result = engine.simulate(
                cluster,
                placement=args.placement,
                seed=args.seed,
                explain=explain,
                progress=progress,
            )
    except DraSnapshotError as e:
        raise UsageError(str(e)) from None
    for w in result.warnings:
        warn(w)
    missing = explain_keys - {o.pod.key for o in result.outcomes}
    for key in sorted(missing):
        warn(f"--explain {key}: no such pending pod")
    for p in result.skipped_pods:
        target = p.node_name or p.nominated_node_name
        warn(f"pod {p.key}: node {target!r} is not among the nodes; ignored", f"Pod {p.key}")
    by_name: dict[str, list[Pod]] = {}
    for p in result.other_scheduler_pods:
        by_name.setdefault(p.scheduler_name, []).append(p)
    profiles = ", ".join(repr(n) for n in engine.frameworks)
    for name, theirs in by_name.items():
        warn(
            f"{_some(theirs)} name schedulerName {name!r}, which no profile has "
            f"(profiles: {profiles}); not scheduled, as kube-scheduler leaves them to that "
            "scheduler"
        )
    for plugin, pods in result.unchecked.items():
        warn(
            f"{plugin} is not emulated yet: {_some(pods)} need it; where they were "
            f"placed, it was not checked"
        )
    if timings is not None:
        print(_timing_report(timings), file=sys.stderr)
    if result.errors:
        print(
            f"schedsim: error: a plugin failed for {result.errors} pod(s); their attempts "
            f"failed (see their messages), the other pods were scheduled"
            + ("" if debug.enabled() else "; --debug prints the plugin's traceback"),
            file=sys.stderr,
        )
    if args.report:
        title = report_title("simulate", args, EXAMPLE)
        write_report(args.report, simulate_page(cluster, result, title))
    if args.output == "kss":
        out = cli_kss.to_kss(args.config, cluster, result)
    else:
        out = _to_json(result) if args.output == "json" else _to_table(result)
    return out, 1 if result.errors else 0
