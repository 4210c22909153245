"""The ``schedsim`` command.

``schedsim simulate [PATH ...] [--config FILE] [--output table|json] [--feature-gates A=true]``
loads manifests, places bound pods, schedules the pending ones and prints where each lands
and, for the others, kube-scheduler's message, with the devices allocated to each pod's
ResourceClaims. With no PATH it runs the example cluster shipped with schedsim.
``schedsim scale-up`` / ``scale-down`` (see `schedsim.cli_autoscaling`) ask the Cluster
Autoscaler's what-if questions; ``schedsim plugins`` lists plugins and a profile's order.

Exit status: 0 done (whether or not every pod fits), 2 bad input or usage (the message names
the file, object and field), 1 a plugin failed or the output could not be written whole (a
full disk, a file size limit, a reader that went away as with ``| head``), 130 Ctrl-C.
Output is written whole or not at all (`schedsim.cli_output`).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import io
import json
import os
import stat
import sys
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from schedsim import cli_autoscaling, cli_kss, cli_output, cli_replay, cli_sweep, cli_table
from schedsim.api.core import Pod
from schedsim.api.errors import ManifestError, first_few
from schedsim.api.strict import VALIDATION_MODES
from schedsim.cli_output import warn
from schedsim.engine import STORES, Cluster, Engine, EngineConfig
from schedsim.framework.extension_points import HOOK_TITLES
from schedsim.framework.features import FeatureGates
from schedsim.framework.handle import PluginFactory
from schedsim.framework.runtime import (
    PluginError,
    PluginTimings,
    load_plugin_spec,
    plugin_sources,
)
from schedsim.framework.scheduler_config import SchedulerConfiguration, load_scheduler_configuration
from schedsim.report import simulate_page
from schedsim.simulation.scheduling import (
    PLACEMENTS,
    PodOutcome,
    SimulationResult,
    gc_paused,
)
from schedsim.snapshot.dra import DraSnapshotError
from schedsim.snapshot.errors import SchedulingError

__all__ = ["EXAMPLE", "MANIFEST_COMMANDS", "main"]

EXAMPLE = "demo-cluster.yaml"
"""The example cluster run when no PATH is given (in ``schedsim/examples``)."""

MANIFEST_COMMANDS = ("simulate", "scale-up", "scale-down", "replay")
"""The commands that read manifests (they take ``--validate``)."""


def _version() -> str:
    try:
        return importlib.metadata.version("schedsim")
    except importlib.metadata.PackageNotFoundError:  # running from a source tree
        return "unknown"


class _UsageError(Exception):
    pass


def _parse_gates(text: str | None) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        name, sep, val = part.partition("=")
        if not sep or val.strip().lower() not in ("true", "false"):
            raise _UsageError(f"--feature-gates: expected NAME=true|false, got {part!r}")
        out[name.strip()] = val.strip().lower() == "true"
    return out


def _parser() -> argparse.ArgumentParser:
    p = cli_output.Parser(
        prog="schedsim",
        description="Kubernetes scheduler framework emulator over a forkable cluster snapshot.",
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sim = sub.add_parser(
        "simulate",
        help="schedule pending pods onto nodes read from manifests",
        description="Place bound pods (spec.nodeName, else status.nominatedNodeName), then "
        "schedule pending pods in queue order and print where each lands, or why not in "
        "kube-scheduler's words. With no PATH, runs the example cluster shipped with schedsim.",
    )
    sim.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="manifest file (YAML, JSON, kind: List), directory of them, or - for stdin",
    )
    _profile_args(sim)
    cli_autoscaling.add_input_args(sim)
    sim.add_argument(
        "--output",
        "-o",
        choices=("table", "json", "kss"),
        default="table",
        help="table (default), json, or kss: the input as a kube-scheduler-simulator export "
        "with the scheduled pods bound and their results annotated (loads into its web UI)",
    )
    sim.add_argument(
        "--store",
        choices=sorted(STORES),
        default="delta",
        help="snapshot store: delta (layered, default) or basic (clone-on-fork reference)",
    )
    sim.add_argument(
        "--profile-plugins",
        action="store_true",
        help="print the time spent per plugin and extension point (on stderr)",
    )
    sim.add_argument(
        "--placement",
        choices=PLACEMENTS,
        default="kube-scheduler",
        help="kube-scheduler (default): filter, score, take the highest total, as "
        "kube-scheduler does; first-fit: the first node that passes, round robin after the "
        "node chosen last, as the Cluster Autoscaler does (scale-up/scale-down always do)",
    )
    sim.add_argument(
        "--seed",
        type=int,
        metavar="N",
        help="break score ties by seeded random sampling like kube-scheduler (default: the "
        "first tied node in evaluation order)",
    )
    sim.add_argument(
        "--explain",
        action="append",
        nargs="?",
        const=_EXPLAIN_ALL,
        metavar="NS/NAME",
        help="show per node and per plugin results (filter reasons, scores) for every pending "
        "pod, or for NS/NAME (repeatable; kube-scheduler placement)",
    )
    plug = sub.add_parser(
        "plugins",
        help="list discovered plugins, their extension points and the profile's order",
        description="List every plugin schedsim can load (entry points of the schedsim.plugins "
        "group and --plugin), where it comes from, the extension points it implements, and the "
        "order in which the active profile runs them.",
    )
    _profile_args(plug)
    cli_autoscaling.add_parsers(sub, _profile_args, sorted(STORES))
    cli_replay.add_parser(sub, _profile_args)
    for command in ("simulate", "scale-up", "scale-down"):  # replay has its own
        sub.choices[command].add_argument(
            "--report",
            metavar="FILE.html",
            help="also write a self-contained HTML report (charts of per-node utilization, "
            "the pods that found no place and why); opens offline",
        )
    cli_sweep.add_parser(sub)
    for each in sub.choices.values():  # the one place --output-file is defined
        each.add_argument(
            "--output-file",
            metavar="FILE",
            help="write the output to FILE instead of standard output: whole or not at all "
            "(a temporary file in FILE's directory, renamed over FILE once complete)",
        )
    for command in MANIFEST_COMMANDS:  # the one place --validate is defined
        sub.choices[command].add_argument(
            "--validate",
            choices=VALIDATION_MODES,
            default="strict",
            help="unknown or misspelled fields of modelled kinds (checked against the "
            "Kubernetes 1.34 schema): strict (default) refuses the input, warn prints a "
            "warning and ignores them, ignore says nothing (as kubectl's --validate)",
        )
    return p


def _profile_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config",
        metavar="FILE",
        help="KubeSchedulerConfiguration (every profile; pods pick theirs by schedulerName)",
    )
    p.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE:CLASS",
        help="load a plugin class from the import path (repeatable); enable it in --config",
    )
    p.add_argument(
        "--feature-gates", metavar="A=true,B=false", help="override feature gates (1.34 defaults)"
    )


_EXPLAIN_ALL = "*"


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
        if v == _EXPLAIN_ALL:
            every = True
        elif v == "-" or os.path.exists(v):
            args.paths.append(v)
            every = True
        elif "/" not in v:
            raise _UsageError(f"--explain {v}: expected NAMESPACE/NAME")
        else:
            keys.add(v)
    if args.placement != "kube-scheduler":
        raise _UsageError("--explain: needs --placement kube-scheduler (first fit scores nothing)")
    if every:
        return (lambda pod: True), set()
    return (lambda pod: pod.key in keys), keys


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
            "nodes": result.nodes,
        },
        "warnings": cli_output.recorded_warnings(),
    }
    if result.other_scheduler_pods:  # left to another scheduler: listed, never dropped
        doc["otherSchedulerPods"] = [
            {"namespace": p.namespace, "name": p.name, "schedulerName": p.scheduler_name}
            for p in result.other_scheduler_pods
        ]
    return json.dumps(doc, indent=2) + "\n"


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
        + f"{result.nodes} nodes"
        + (f" ({spread})" if spread else ""),
        markup=False,
    )
    for o in result.outcomes:
        if o.explanation is not None:
            _explain_table(buf, o)
    return buf.getvalue()


def _explain_table(buf: io.StringIO, o: PodOutcome) -> None:
    """A node-by-plugin grid for one explained pod: each Filter plugin's "passed" or reason,
    each Score plugin's ``raw/final`` (final = normalized x weight, column "<plugin> score"),
    the total."""
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
    table = Table(title=escape(title), title_justify="left", show_lines=False)
    headers = [*filter_plugins, *(f"{p} score" for p in score_plugins)]
    node_width = max((len(n) for n in ex.filter), default=4) + 2
    table.add_column("NODE", min_width=node_width)
    for p in filter_plugins:  # plugin names stay whole; reasons fold
        table.add_column(escape(p), overflow="fold", min_width=len(p))
    for p in score_plugins:  # raw/final score; named apart from the same plugin's Filter
        table.add_column(escape(f"{p} score"), justify="right", min_width=len(p) + 6)
    if score_plugins:
        table.add_column("TOTAL", justify="right")
    # as wide as the plugin names need (a grid of many plugins is wider than a terminal)
    width = max(120, node_width + sum(len(h) + 3 for h in headers) + 24)
    console = Console(file=buf, width=width, force_terminal=False, color_system=None)
    for node, row in ex.filter.items():
        cells = [escape(("* " if node == ex.selected_node else "") + node)]
        cells += [escape(row.get(p, "")) for p in filter_plugins]
        final = ex.final_score.get(node)
        if score_plugins:
            raw = ex.score.get(node, {})
            cells += [
                f"{raw.get(p, '')}/{final[p]}" if final and p in final else ""
                for p in score_plugins
            ]
            cells.append(str(sum(final.values())) if final else "")
        table.add_row(*cells)
    # never narrower than the grid itself: a cut grid loses its TOTAL column
    wide = Console(file=io.StringIO(), width=100_000, force_terminal=False, color_system=None)
    console.width = max(width, wide.measure(table).maximum)
    console.print(table)
    for plugin, msg in pre.items():
        console.print(f"  PreFilter {plugin}: {msg}", markup=False)


def _stdin_is_redirected() -> bool:
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (AttributeError, OSError, ValueError):  # no real stdin (e.g. under a test runner)
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def _some(pods: Sequence[Pod]) -> str:
    return f"{len(pods)} pod(s) ({first_few([p.key for p in pods], 3)})"


def _plugin_sources(args: argparse.Namespace) -> dict[str, str]:
    """Where each plugin comes from: entry points, then ``--plugin`` ones (which win, with a
    warning when they replace an installed plugin).

    ``--plugin`` modules are imported with the current directory on the import path, as
    ``python -m`` would.
    """
    sources = plugin_sources()
    if args.plugin and os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    for spec in args.plugin:
        name, _ = load_plugin_spec(spec)
        if name in sources:
            warn(f"--plugin {spec} replaces the installed plugin {name!r} ({sources[name]})")
        sources[name] = f"--plugin {spec}"
    return sources


def _engine_config(
    args: argparse.Namespace, embedded: tuple[SchedulerConfiguration, str] | None = None
) -> tuple[EngineConfig, dict[str, str]]:
    """The one place command-line options become an `EngineConfig` (and where each plugin
    comes from, for ``schedsim plugins``)."""
    try:
        gates = _parse_gates(args.feature_gates)
        FeatureGates().with_overrides(gates)
    except KeyError as e:
        raise _UsageError(f"--feature-gates: {e.args[0]}") from None
    sources = _plugin_sources(args)
    loaded, config_file = embedded if embedded is not None else (None, args.config)
    profile = None if loaded is None else loaded.profiles[0]
    if args.config:
        loaded = load_scheduler_configuration(args.config)
        for w in loaded.warnings:
            warn(f"{args.config}: KubeSchedulerConfiguration: {w}")
        profile = loaded.profiles[0]
    config = EngineConfig(
        profile=profile,
        config_file=config_file,
        feature_gates=gates,
        plugins=tuple(args.plugin),
        store=getattr(args, "store", "delta"),
        scheduler_config=loaded,
    )
    return config, sources


def _engine(
    args: argparse.Namespace,
    timings: PluginTimings | None = None,
    embedded: tuple[SchedulerConfiguration, str] | None = None,
) -> tuple[Engine, dict[str, str]]:
    """The engine of the run; ``embedded``: a kube-scheduler-simulator export's configuration and
    file, used without ``--config``."""
    config, sources = _engine_config(args, embedded)
    engine = Engine(config, timings=timings)
    framework = engine.framework
    asked = [n for n in framework.not_emulated if n in framework.profile.explicit]
    if asked:
        warn(
            f"{config.config_file}: plugin(s) {', '.join(asked)} enabled but not emulated "
            "yet: they do not run"
        )
    for line in framework.config_warnings:
        warn(f"{config.config_file}: {line}")
    unused = sorted(set(framework.profile.plugin_args) - set(framework.plugins))
    if unused:
        warn(f"pluginConfig for plugin(s) not enabled in the profile: {', '.join(unused)}")
    return engine, sources


def _plugins(args: argparse.Namespace) -> str:
    engine, sources = _engine(args)
    registry: Mapping[str, PluginFactory] = engine.config.registry()
    rows = [("PLUGIN", "EXTENSION POINTS", "SOURCE")]
    for name in sorted(registry):
        try:
            points = ", ".join(_hooks_of(registry[name])) or "-"
        except PluginError as e:  # list it anyway: this is where people look for the cause
            points = f"(cannot be loaded: {e})"
        rows.append((name, points, sources.get(name, "")))
    w0 = max(len(r[0]) for r in rows) + 2
    w1 = max(len(r[1]) for r in rows) + 2
    lines = [f"{a:<{w0}}{b:<{w1}}{c}".rstrip() for a, b, c in rows]
    for framework in engine.frameworks.values():  # every profile, in configuration order
        lines.append("")
        lines.append(f"profile {framework.profile.scheduler_name!r}:")
        weights = framework.score_weights
        for point, names in framework.order().items():
            if point == "Score":  # each Score plugin with its weight, then which normalize
                shown = [f"{n} (weight {weights[n]})" for n in names]
                lines.append(f"  {point}: {', '.join(shown) or '-'}")
                normalize = framework.normalize_score_plugin_names
                lines.append(f"  NormalizeScore: {', '.join(normalize) or '-'}")
                continue
            lines.append(f"  {point}: {', '.join(names) or '-'}")
        if framework.not_emulated:
            lines.append(f"  not emulated (skipped): {', '.join(framework.not_emulated)}")
    return "\n".join(lines) + "\n"


def _hooks_of(factory: object) -> list[str]:
    return [title for hook, title in HOOK_TITLES.items() if callable(getattr(factory, hook, None))]


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


def _autoscaling(args: argparse.Namespace) -> tuple[str | None, int]:
    engine, _ = _engine(args)
    return cli_autoscaling.run(args, engine)


def _cluster(args: argparse.Namespace) -> Cluster:
    """The input as a `Cluster`: the PATHs, or the shipped example without any."""
    expand = not args.no_expand_workloads
    kwargs: dict[str, Any] = {
        "expand_workloads": expand,
        "validate": args.validate,
        "keep_raw": args.output == "kss",  # --output kss writes the objects back as read
    }
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


def _simulate(args: argparse.Namespace) -> tuple[str, int]:
    """The output and the exit status (1 when a plugin failed for some pod)."""
    timings = PluginTimings() if args.profile_plugins else None
    explain, explain_keys = _explain_selector(args)
    cluster = _cluster(args)
    engine, _ = _engine(args, timings, cli_kss.embedded_profile(args.config, cluster))
    cli_autoscaling.warn_input(cluster, engine)
    try:
        # CEL selectors that do not compile are refused first, as the API server would
        result = engine.simulate(cluster, placement=args.placement, seed=args.seed, explain=explain)
    except DraSnapshotError as e:
        raise _UsageError(str(e)) from None
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
            f"failed (see their messages), the other pods were scheduled",
            file=sys.stderr,
        )
    if args.report:
        cli_autoscaling.write_report(args.report, simulate_page(cluster, result))
    if args.output == "kss":
        out = cli_kss.to_kss(args.config, cluster, result)
    else:
        out = _to_json(result) if args.output == "json" else _to_table(result)
    return out, 1 if result.errors else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0, 1, 2, or 130 on Ctrl-C)."""
    try:
        args = _parser().parse_args(argv)
    except cli_output.OutputError as e:  # --help or --version could not be written whole
        cli_output.error_line(f"schedsim: error: {e}")
        return 1
    except KeyboardInterrupt:
        cli_output.error_line("schedsim: interrupted")
        return 130
    return cli_output.run_command(lambda: _run(args), getattr(args, "output_file", None))


def _run(args: argparse.Namespace) -> tuple[str | None, int]:
    """The command's whole output (None: nothing to write) and exit status; bad input and
    failures become statuses with their error line."""
    try:
        if args.command == "plugins":
            return _plugins(args), 0
        if args.command in ("scale-up", "scale-down"):
            return _autoscaling(args)
        if args.command == "replay":
            with gc_paused():
                return cli_replay.run(args, _engine(args)[0])
        if args.command == "sweep":
            return cli_sweep.run(args)
        # Loading creates hundreds of thousands of objects and almost no reference
        # cycles: collections of the oldest generation would walk them again and again
        # (docs/performance.md).
        with gc_paused():
            return _simulate(args)
    except (ManifestError, _UsageError, cli_autoscaling.UsageError, PluginError) as e:
        for line in str(e).splitlines() or [""]:  # one line per problem
            cli_output.error_line(f"schedsim: error: {line}")
        return None, 2
    except SchedulingError as e:
        cli_output.error_line(f"schedsim: error: {e}")
        return None, 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
