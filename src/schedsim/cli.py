"""The ``schedsim`` command.

``schedsim simulate [PATH ...] [--config FILE] [--output table|json] [--feature-gates A=true]``
loads manifests, places bound pods, schedules the pending ones and prints where each lands
and, for the others, kube-scheduler's message. With no PATH it runs the example cluster
shipped with schedsim.

Exit status: 0 done (whether or not every pod fits), 2 bad input or usage (the message names
the file, object and field), 1 a plugin failed (or the reader of the output went away, as
with ``| head``). Output is written whole or not at all.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import io
import json
import os
import stat
import sys
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from schedsim.api.core import Pod
from schedsim.api.errors import ManifestError
from schedsim.api.loader import load_paths, load_text
from schedsim.framework.features import FeatureGates
from schedsim.framework.handle import Handle
from schedsim.framework.profile import default_profile, load_scheduler_config
from schedsim.framework.runtime import Framework, PluginError
from schedsim.simulation.scheduling import SimulationResult, simulate
from schedsim.snapshot.basic import BasicSnapshotStore
from schedsim.snapshot.delta import DeltaSnapshotStore
from schedsim.snapshot.errors import SchedulingError
from schedsim.snapshot.store import ClusterSnapshotStore

__all__ = ["EXAMPLE", "main"]

EXAMPLE = "demo-cluster.yaml"
"""The example cluster run when no PATH is given (in ``schedsim/examples``)."""


_STORES: dict[str, Callable[[], ClusterSnapshotStore]] = {
    "delta": DeltaSnapshotStore,
    "basic": BasicSnapshotStore,
}


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
    p = argparse.ArgumentParser(
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
    sim.add_argument("--config", metavar="FILE", help="KubeSchedulerConfiguration (profiles[0])")
    sim.add_argument("--output", "-o", choices=("table", "json"), default="table")
    sim.add_argument(
        "--feature-gates", metavar="A=true,B=false", help="override feature gates (1.34 defaults)"
    )
    sim.add_argument(
        "--store",
        choices=sorted(_STORES),
        default="delta",
        help="snapshot store: delta (layered, default) or basic (clone-on-fork reference)",
    )
    return p


def _to_json(result: SimulationResult) -> str:
    doc: dict[str, Any] = {
        "pods": [
            {
                "namespace": o.pod.namespace,
                "name": o.pod.name,
                "node": o.node_name,
                "reasons": list(o.reasons),
                "message": o.message,
            }
            for o in result.outcomes
        ],
        "summary": {
            "scheduled": result.scheduled,
            "unschedulable": result.unschedulable,
            "nodes": result.nodes,
        },
    }
    return json.dumps(doc, indent=2) + "\n"


def _to_table(result: SimulationResult) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=120, force_terminal=False, color_system=None)
    table = Table(title=None, show_lines=False)
    table.add_column("POD")
    table.add_column("NODE")
    table.add_column("REASON")
    for o in result.outcomes:
        # rich would read "[...]" in messages (scheduling gates, plugin lists) as markup
        table.add_row(escape(o.pod.key), escape(o.node_name or "<none>"), escape(o.message))
    console.print(table)
    per_node = result.pods_per_node()
    spread = ", ".join(f"{n}: {c}" for n, c in sorted(per_node.items()))
    console.print(
        f"{result.scheduled} scheduled, {result.unschedulable} unschedulable, "
        f"{result.nodes} nodes" + (f" ({spread})" if spread else ""),
        markup=False,
    )
    return buf.getvalue()


def _stdin_is_redirected() -> bool:
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (AttributeError, OSError, ValueError):  # no real stdin (e.g. under a test runner)
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def _some(pods: Sequence[Pod]) -> str:
    names = ", ".join(p.key for p in pods[:3])
    more = f" and {len(pods) - 3} more" if len(pods) > 3 else ""
    return f"{len(pods)} pod(s) ({names}{more})"


def _simulate(args: argparse.Namespace) -> str:
    gates = FeatureGates()
    try:
        gates = gates.with_overrides(_parse_gates(args.feature_gates))
    except KeyError as e:
        raise _UsageError(f"--feature-gates: {e.args[0]}") from None
    if args.paths:
        manifests = load_paths(args.paths)
    else:
        if _stdin_is_redirected():  # `... | schedsim simulate` without `-` is a likely slip
            print(
                f"note: no PATH given: running the example cluster shipped with schedsim "
                f"({EXAMPLE}); use - to read manifests from stdin",
                file=sys.stderr,
            )
        text = resources.files("schedsim.examples").joinpath(EXAMPLE).read_text("utf-8")
        manifests = load_text(text, f"<example {EXAMPLE}>")
    for w in manifests.warnings:
        print(f"warning: {w}", file=sys.stderr)
    profile = load_scheduler_config(args.config) if args.config else default_profile()
    try:
        framework = Framework(profile, Handle(feature_gates=gates))
    except PluginError as e:
        if args.config:  # name the file whose plugins or pluginConfig are wrong
            raise PluginError(f"{args.config}: {e}") from None
        raise
    result = simulate(manifests.nodes, manifests.pods, framework, _STORES[args.store]())
    for p in result.skipped_pods:
        target = p.node_name or p.nominated_node_name
        print(
            f"warning: pod {p.key}: node {target!r} is not among the nodes; ignored",
            file=sys.stderr,
        )
    if result.other_scheduler_pods:
        print(
            f"warning: {_some(result.other_scheduler_pods)} name another schedulerName than "
            f"{profile.scheduler_name!r}; not scheduled",
            file=sys.stderr,
        )
    for plugin, pods in result.unchecked.items():
        print(
            f"warning: {plugin} is not emulated yet: {_some(pods)} were placed without its checks",
            file=sys.stderr,
        )
    return _to_json(result) if args.output == "json" else _to_table(result)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        out = _simulate(args)
    except (ManifestError, _UsageError) as e:
        print(f"schedsim: error: {e}", file=sys.stderr)
        return 2
    except PluginError as e:
        print(f"schedsim: error: {e}", file=sys.stderr)
        return 2
    except SchedulingError as e:
        print(f"schedsim: error: {e}", file=sys.stderr)
        return 1
    try:
        sys.stdout.write(out)
        sys.stdout.flush()
    except BrokenPipeError:
        # keep the interpreter's final flush from failing again (Python's documented recipe)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
