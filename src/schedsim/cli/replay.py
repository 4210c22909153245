"""``schedsim replay``: a trace replayed on a virtual clock with the autoscaler in the loop.

Thin: parses the options into a trace, node groups and `AutoscalerOptions`, runs
`schedsim.replay.Replay` (a rich progress bar over simulated time on a terminal's stderr),
and renders the metrics (a summary table, ``-o json``, ``-o csv``) and, with ``--report``,
the HTML report. `schedsim.cli` registers it (`add_parser`) and runs it (`run`).

With ``--inflate`` it runs the FGD paper's GPU-sharing experiment instead
(`schedsim.replay.experiment.GpuSharingExperiment`): an Alibaba trace with ``--gpu-as dra``,
the workload tuned to ``--inflate`` x the GPU capacity, one pod at a time, a measurement
after every pod; ``-o json`` carries the ``curve``.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from typing import Any

import attrs
import yaml
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn
from rich.table import Table

from schedsim.autoscaler.nodegroups import NodeGroupError, load_node_groups, parse_node_groups
from schedsim.autoscaler.scaleup import DEFAULT_MAX_NODES_PER_SCALE_UP, EXPANDERS
from schedsim.cli.common import UsageError, output_path, report_title, write_report
from schedsim.cli.output import warn
from schedsim.cli.table import clip
from schedsim.engine import Cluster, Engine
from schedsim.replay import AutoscalerOptions, Replay, parse_duration
from schedsim.replay.alibaba import GPU_DRIVER, GPU_MODES, alibaba_trace
from schedsim.replay.autoscaler import OptionError
from schedsim.replay.experiment import ExperimentResult, GpuSharingExperiment
from schedsim.replay.export import metrics_to_csv, metrics_to_json
from schedsim.replay.metrics import ReplayMetrics
from schedsim.replay.trace import Trace, manifest_trace, trace_from_paths
from schedsim.report import replay_page

__all__ = ["EXAMPLE_NODE_GROUPS", "EXAMPLE_TRACE", "add_parser", "run"]

EXAMPLE_TRACE = "replay-burst.yaml"
EXAMPLE_NODE_GROUPS = "replay-node-groups.yaml"
"""What ``schedsim replay`` replays without a TRACE (``schedsim/examples``)."""


def _duration(text: str) -> float:
    try:
        seconds = parse_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if seconds < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text!r}")
    return seconds


def _fraction(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number between 0 and 1, got {text!r}"
        ) from None
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}")
    return v


def _bool(text: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def add_parser(sub: Any, profile_args: Callable[[argparse.ArgumentParser], None]) -> None:
    """Register ``replay`` on the ``schedsim`` subparsers (``profile_args`` adds
    ``--config``, ``--plugin``, ``--feature-gates``)."""
    p = sub.add_parser(
        "replay",
        help="replay a trace on a virtual clock with kube-scheduler and the Cluster "
        "Autoscaler in the loop",
        description="Pods arrive (creationTimestamp) and run for their schedsim.io/duration "
        "annotation; kube-scheduler places them; every --scan-interval the Cluster "
        "Autoscaler scales node groups up for unschedulable pods and down for nodes unneeded "
        "for --scale-down-unneeded-time. Prints metrics over time: pending and running pods, "
        "nodes per group, allocation, GPU fragmentation, latency, node-hours and cost.",
    )
    p.add_argument(
        "paths",
        nargs="*",
        metavar="TRACE",
        help="manifest trace: files or directories (workload controllers are expanded); "
        "without one, the shipped example and its node groups",
    )
    p.add_argument("--node-groups", metavar="FILE", help="node groups the autoscaler manages")
    p.add_argument(
        "--alibaba-pods", metavar="CSV", help="Alibaba GPU trace pod list (openb_pod_list*.csv)"
    )
    p.add_argument(
        "--alibaba-nodes", metavar="CSV", help="Alibaba GPU trace node list (openb_node_list*.csv)"
    )
    p.add_argument(
        "--gpu-as",
        choices=GPU_MODES,
        default=GPU_MODES[0],
        help="how an Alibaba trace's GPUs are modelled: extended-resource (nvidia.com/gpu, "
        "the default) or dra (a ResourceSlice of GPU devices per node, a DeviceClass, a "
        "ResourceClaim per GPU pod); GPU-sharing pods take a whole GPU (warned), except with dra "
        "and --feature-gates DRAConsumableCapacity=true: their gpu_milli of a shared device",
    )
    ca = p.add_argument_group("Cluster Autoscaler (its flag names and defaults)")
    ca.add_argument(
        "--scan-interval",
        type=_duration,
        default=10.0,
        metavar="DURATION",
        help="how often the autoscaler's loop runs (default 10s)",
    )
    ca.add_argument(
        "--scale-down-enabled",
        type=_bool,
        default=True,
        metavar="BOOL",
        help="whether the autoscaler removes unneeded nodes (default true)",
    )
    ca.add_argument(
        "--scale-down-unneeded-time",
        type=_duration,
        default=600.0,
        metavar="DURATION",
        help="how long a node must be unneeded before it is removed (default 10m)",
    )
    ca.add_argument(
        "--scale-down-delay-after-add",
        type=_duration,
        default=600.0,
        metavar="DURATION",
        help="how long after a scale-up scale-down evaluation resumes (default 10m)",
    )
    ca.add_argument(
        "--scale-down-delay-after-delete",
        type=_duration,
        default=None,
        metavar="DURATION",
        help="how long after a node removal scale-down evaluation resumes "
        "(default: --scan-interval)",
    )
    ca.add_argument(
        "--scale-down-delay-after-failure",
        type=_duration,
        default=180.0,
        metavar="DURATION",
        help="how long after a failed scale-down evaluation resumes (default 3m)",
    )
    ca.add_argument(
        "--scale-down-utilization-threshold",
        "--utilization-threshold",
        type=_fraction,
        default=0.5,
        metavar="FRACTION",
        help="a node is a scale-down candidate below this utilization (0..1, default 0.5; "
        "--utilization-threshold is the same flag)",
    )
    ca.add_argument(
        "--scale-down-gpu-utilization-threshold",
        "--gpu-utilization-threshold",
        type=_fraction,
        default=0.5,
        metavar="FRACTION",
        help="the same for GPU nodes (default 0.5; --gpu-utilization-threshold is the same flag)",
    )
    ca.add_argument(
        "--max-node-provision-time",
        type=_duration,
        default=900.0,
        metavar="DURATION",
        help="how long a requested node may take to register before the scale-up counts as "
        "failed and its group backs off (default 15m)",
    )
    ca.add_argument(
        "--node-provision-delay",
        type=_duration,
        default=60.0,
        metavar="DURATION",
        help="how long a new node takes to become ready (default 60s; not a CA flag)",
    )
    ca.add_argument(
        "--expander",
        choices=EXPANDERS,
        default="least-waste",
        help="how to pick among node groups that help: least-waste (default; CA's own "
        "default, random, is not deterministic) or most-pods",
    )
    ca.add_argument(
        "--max-nodes-per-scaleup",
        type=int,
        default=DEFAULT_MAX_NODES_PER_SCALE_UP,
        metavar="N",
        help="new nodes one group's estimate may add "
        f"(default {DEFAULT_MAX_NODES_PER_SCALE_UP}; 0: no limit)",
    )
    ca.add_argument(
        "--max-scale-down-parallelism",
        type=int,
        default=10,
        metavar="N",
        help="nodes removed at once, at most (default 10)",
    )
    ca.add_argument(
        "--initial-node-group-backoff-duration",
        type=_duration,
        default=300.0,
        metavar="DURATION",
        help="a node group's first backoff after a failed scale-up (default 5m)",
    )
    ca.add_argument(
        "--max-node-group-backoff-duration",
        type=_duration,
        default=1800.0,
        metavar="DURATION",
        help="the longest backoff, doubled from the initial one (default 30m)",
    )
    p.add_argument(
        "--sample-interval",
        type=_duration,
        default=60.0,
        metavar="DURATION",
        help="virtual time between metric samples (default 1m)",
    )
    p.add_argument(
        "--until",
        type=_duration,
        default=None,
        metavar="DURATION",
        help="stop at this virtual time (default: when nothing can change any more)",
    )
    p.add_argument(
        "--seed",
        type=int,
        metavar="N",
        help="break score ties by seeded random sampling like kube-scheduler",
    )
    p.add_argument(
        "--output",
        "-o",
        choices=("table", "json", "yaml", "csv"),
        default="table",
        help="table (summary and scale events, default), json (everything), yaml (the json "
        "document as YAML) or csv (one row per sample)",
    )
    p.add_argument(
        "--report",
        metavar="FILE.html",
        type=output_path,
        help="also write a self-contained HTML report (charts, unschedulable pods, nodes)",
    )
    p.add_argument(
        "--inflate",
        type=float,
        metavar="X",
        help="run the FGD paper's GPU-sharing experiment instead of a replay: the Alibaba "
        "trace (--alibaba-pods/--alibaba-nodes, --gpu-as dra; DRAConsumableCapacity is "
        "enabled for the sharing pods) shuffled with --seed (default 42) and tuned to X times "
        "the cluster's GPU capacity (the paper: 1.3), scheduled one pod at a time, failed pods "
        "dropped, measured after every pod; the output is the curve of GPU allocation and "
        "fragmentation against the arrived workload (no --node-groups or --report here: "
        "the sweep's experiment command draws the curves, docs/replay.md)",
    )
    p.add_argument(
        "--store",
        choices=("basic", "delta"),
        default="delta",
        help="snapshot store: delta (layered, default) or basic",
    )
    profile_args(p)


def _trace(args: argparse.Namespace, consumable_capacity: bool = False) -> Trace:
    alibaba = args.alibaba_pods or args.alibaba_nodes
    if alibaba and args.paths:
        raise UsageError("give either TRACE manifests or --alibaba-pods/--alibaba-nodes, not both")
    if alibaba:
        if not (args.alibaba_pods and args.alibaba_nodes):
            raise UsageError("--alibaba-pods and --alibaba-nodes go together")
        return alibaba_trace(
            args.alibaba_pods,
            args.alibaba_nodes,
            gpu_as=args.gpu_as,
            gpu_share=consumable_capacity and args.gpu_as == "dra",
        )
    if not args.paths:  # the shipped example (with its node groups, unless others are given)
        text = resources.files("schedsim.examples").joinpath(EXAMPLE_TRACE).read_text("utf-8")
        cluster = Cluster.from_text(text, f"<example {EXAMPLE_TRACE}>", validate=args.validate)
        return manifest_trace(cluster)
    return trace_from_paths(args.paths, validate=args.validate)


def _options(args: argparse.Namespace) -> AutoscalerOptions:
    try:
        return AutoscalerOptions(
            scan_interval=args.scan_interval,
            scale_down_enabled=args.scale_down_enabled,
            scale_down_unneeded_time=args.scale_down_unneeded_time,
            scale_down_delay_after_add=args.scale_down_delay_after_add,
            scale_down_delay_after_delete=args.scale_down_delay_after_delete,
            scale_down_delay_after_failure=args.scale_down_delay_after_failure,
            scale_down_utilization_threshold=args.scale_down_utilization_threshold,
            scale_down_gpu_utilization_threshold=args.scale_down_gpu_utilization_threshold,
            max_node_provision_time=args.max_node_provision_time,
            node_provision_delay=args.node_provision_delay,
            expander=args.expander,
            max_nodes_per_scaleup=args.max_nodes_per_scaleup,
            max_scale_down_parallelism=args.max_scale_down_parallelism,
            initial_node_group_backoff_duration=args.initial_node_group_backoff_duration,
            max_node_group_backoff_duration=args.max_node_group_backoff_duration,
        )
    except OptionError as e:  # named as the user wrote it: the flag
        raise UsageError(f"--{e.option.replace('_', '-')}: {e.problem}") from None


@contextmanager
def _progress(total: float) -> Iterator[Callable[[float], None] | None]:
    """A rich progress bar over simulated time on stderr when it is a terminal."""
    if not sys.stderr.isatty() or total <= 0:
        yield None
        return
    bar = Progress(
        TextColumn("replay"),
        BarColumn(),
        TextColumn("{task.completed:.0f}/{task.total:.0f} simulated s"),
        console=Console(stderr=True),
        transient=True,
    )
    task = bar.add_task("replay", total=total)
    with bar:
        yield lambda now: bar.update(task, completed=min(now, total))


def _hms(seconds: float) -> str:
    m, s = divmod(round(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}"


def _table(m: ReplayMetrics, warnings: Sequence[str]) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=120, force_terminal=False, color_system=None)
    s = m.summary()
    t = Table(title="replay summary")
    t.add_column("METRIC")
    t.add_column("VALUE", justify="right")
    lat = m.latency_percentiles()
    rows = [
        ("simulated time", _hms(m.end)),
        (
            "pods arrived / scheduled / completed",
            f"{m.arrivals} / {len(m.latencies)} / {m.completed}",
        ),
        ("pods evicted by scale-down", str(m.evicted)),
        ("pods pending at the end", str(len(m.unschedulable))),
        (
            "scheduling latency p50 / p90 / p99 / max (s)",
            " / ".join(f"{lat[k]:.0f}" for k in ("p50", "p90", "p99", "max")),
        ),
        (
            "nodes added / removed / peak",
            f"{s['nodesAdded']} / {s['nodesRemoved']} / {s['peakNodes']}",
        ),
        ("mean GPU fragmentation ratio", f"{s['meanGpuFragmentationRatio']:.3f}"),
    ]
    hours, cost = m.node_hours(), m.cost()
    for g in sorted(hours):
        rows.append((f"node-hours / cost {g or '(no group)'}", f"{hours[g]:.2f} / {cost[g]:.2f}"))
    rows.append(("total cost", f"{sum(cost.values()):.2f}"))
    for k, v in rows:
        t.add_row(k, v)
    console.print(t)
    if m.events:
        e = Table(title="scale events")
        for col in ("TIME", "KIND", "GROUP", "NODES", "REASON"):
            e.add_column(col)
        for ev in m.events:
            e.add_row(_hms(ev.time), ev.kind, ev.group, str(len(ev.nodes)), ev.reason)
        console.print(e)
    if m.unschedulable:
        u = Table(title="pending at the end")
        u.add_column("POD")
        u.add_column("WHY")
        for key, why in sorted(m.unschedulable.items()):
            u.add_row(key, clip(why))
        console.print(u)
    return buf.getvalue()


def _experiment(args: argparse.Namespace, engine: Engine) -> tuple[str, int]:
    """``--inflate``: the GPU-sharing experiment (see the module docstring)."""
    if not (args.alibaba_pods and args.alibaba_nodes) or args.paths:
        raise UsageError(
            "--inflate runs on an Alibaba trace: give --alibaba-pods and --alibaba-nodes"
        )
    if args.gpu_as != "dra":
        raise UsageError("--inflate needs --gpu-as dra (GPUs shared per device, in milli-GPU)")
    if not args.inflate > 0 or not math.isfinite(args.inflate):
        raise UsageError(f"--inflate: must be a finite number > 0, got {args.inflate:g}")
    if args.node_groups or args.report:
        raise UsageError(
            "--inflate runs without --node-groups or --report (no autoscaling); for the "
            "curves as charts run the experiment through schedsim sweep --report "
            "(docs/replay.md)"
        )
    if not engine.framework.handle.feature_gates.enabled("DRAConsumableCapacity"):
        gates = dict(engine.config.feature_gates) | {"DRAConsumableCapacity": True}
        engine = Engine(attrs.evolve(engine.config, feature_gates=gates))
        warn(
            "--inflate: the DRAConsumableCapacity feature gate is enabled (alpha in 1.34, off "
            "by default): GPU-sharing pods take their gpu_milli of one GPU device"
        )
    trace = alibaba_trace(args.alibaba_pods, args.alibaba_nodes, gpu_as="dra", gpu_share=True)
    for w in trace.warnings:
        warn(w)
    seed = 42 if args.seed is None else args.seed
    try:
        experiment = GpuSharingExperiment(trace, engine, inflate=args.inflate, seed=seed)
    except ValueError as e:
        raise UsageError(f"{args.alibaba_nodes}: {e}") from None
    result = experiment.run()
    if result.pods == 0:  # an empty curve: say why (simulate warns "no objects found in FILE")
        if result.original == 0:
            why = f"{args.alibaba_pods} has no pods"
        else:
            why = (
                f"tuned to {args.inflate:g} x the cluster's GPU capacity ({result.gpus} "
                f"GPUs), the workload kept none of the {result.original} pod(s) of "
                f"{args.alibaba_pods} (they ask for more GPU than that)"
            )
        warn(f"--inflate: no pod to place: {why}; the curve is empty")
    if args.output == "json":
        return json.dumps(result.to_json(), indent=2) + "\n", 0
    if args.output == "csv":
        return _curve_csv(result), 0
    return _curve_table(result), 0


def _cell(v: float | None) -> str:
    return "" if v is None else f"{v:.2f}"


def _curve_csv(r: ExperimentResult) -> str:
    lines = ["arrived,gpuAllocation,fragmentation,fragmentationAmount"]
    lines.extend(
        f"{p.arrived},{_cell(p.gpu_allocation)},{_cell(p.fragmentation)},"
        f"{_cell(p.fragmentation_amount)}"
        for p in r.curve
    )
    return "\n".join(lines) + "\n"


def _curve_table(r: ExperimentResult) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=120, force_terminal=False, color_system=None)
    t = Table(
        title=f"GPU-sharing experiment (seed {r.seed}, inflate {r.inflate:g}): {r.pods} pods "
        f"({r.original} in the trace), {r.scheduled} scheduled, {r.failed} failed, {r.gpus} GPUs"
    )
    for col in ("ARRIVED %", "GPU ALLOCATION %", "FRAGMENTATION % OF IDLE", "FRAGMENT % OF GPUS"):
        t.add_column(col, justify="right")
    for p in r.curve:
        if p.arrived % 10 == 0 or p.arrived == len(r.curve) - 1:
            t.add_row(
                str(p.arrived),
                _cell(p.gpu_allocation),
                _cell(p.fragmentation),
                _cell(p.fragmentation_amount),
            )
    console.print(t)
    return buf.getvalue()


def run(args: argparse.Namespace, engine: Engine) -> tuple[str, int]:
    """Run ``replay`` as ``args`` say with ``engine``; the output and the exit status (0;
    1 when a plugin failed for a pod, as ``simulate``).

    Raises:
        ManifestError: a bad trace or node-groups file (``FILE: KIND NS/NAME: FIELD:
            problem``, ``FILE:LINE: problem`` for CSV).
        UsageError: conflicting or missing inputs, bad options.
        SchedulingError: a plugin failed other than with a PreFilter or Filter Error status.
    """
    if args.inflate is not None:
        return _experiment(args, engine)
    options = _options(args)
    trace = _trace(args, engine.framework.handle.feature_gates.enabled("DRAConsumableCapacity"))
    if args.node_groups:
        groups = load_node_groups(args.node_groups)
    elif not (args.paths or args.alibaba_pods or args.alibaba_nodes):
        text = resources.files("schedsim.examples").joinpath(EXAMPLE_NODE_GROUPS).read_text()
        groups = parse_node_groups(yaml.safe_load(text), f"<example {EXAMPLE_NODE_GROUPS}>")
    else:
        groups = []
    if args.sample_interval <= 0:
        raise UsageError("--sample-interval: must be > 0")
    try:
        replay = Replay(
            trace,
            groups,
            engine=engine,
            options=options,
            sample_interval=args.sample_interval,
            until=args.until,
            seed=args.seed,
            gpu_driver=GPU_DRIVER if args.alibaba_pods and args.gpu_as == "dra" else None,
            detail=bool(args.report),
        )
    except NodeGroupError as e:
        raise UsageError(f"{args.node_groups}: {e}") from None
    for w in replay.warnings:
        warn(w)
    before = len(replay.warnings)
    total = args.until if args.until is not None else trace.last_arrival
    with _progress(total) as progress:
        metrics = replay.run(progress)
    for w in replay.warnings[before:]:  # found while replaying (plugin errors, PostBind)
        warn(w)
    status = 0
    if replay.failed:  # as simulate: the output is written, the exit status says it
        print(
            f"schedsim: error: a plugin failed for {len(replay.failed)} pod(s); they were not "
            "scheduled (see the warnings: an attempt that failed is not retried), the replay "
            "went on",
            file=sys.stderr,
        )
        status = 1
    if args.report:
        alibaba = [f for f in (args.alibaba_pods, args.alibaba_nodes) if f]
        title = report_title("replay", args, EXAMPLE_TRACE, args.paths or alibaba)
        write_report(args.report, replay_page(metrics, title))
    if args.output == "json":
        return metrics_to_json(metrics), status
    if args.output == "csv":
        return metrics_to_csv(metrics), status
    return _table(metrics, replay.warnings), status
