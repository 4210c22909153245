"""The command line's argument parser: every command and its flags (the manifest commands'
``--validate`` defined once, the profile flags every engine-building command shares).
"""

from __future__ import annotations

import argparse
import importlib.metadata

from schedsim.api.loading.strict import VALIDATION_MODES
from schedsim.cli import autoscaling as cli_autoscaling
from schedsim.cli import check_plugin as cli_check_plugin
from schedsim.cli import output as cli_output
from schedsim.cli import replay as cli_replay
from schedsim.cli import sweep as cli_sweep
from schedsim.cli.common import add_input_args, add_live_args, output_path
from schedsim.engine import STORES
from schedsim.scheduler.scheduling import PLACEMENTS

MANIFEST_COMMANDS = ("simulate", "scale-up", "scale-down", "replay")
"""The commands that read manifests (they take ``--validate``)."""


def package_version() -> str:
    try:
        return importlib.metadata.version("schedsim")
    except importlib.metadata.PackageNotFoundError:  # running from a source tree
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    p = cli_output.Parser(
        prog="schedsim",
        description="Kubernetes scheduler framework emulator over a forkable cluster snapshot.",
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sim = sub.add_parser(
        "simulate",
        help="schedule pending pods onto nodes read from manifests",
        description="Place bound pods (spec.nodeName; with first-fit also "
        "status.nominatedNodeName), then schedule pending pods in queue order and print where "
        "each lands, or why not in kube-scheduler's words. With no PATH, runs the example "
        "cluster shipped with schedsim.",
    )
    sim.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="manifest file (YAML, JSON, kind: List), directory of them, or - for stdin",
    )
    add_profile_args(sim)
    add_input_args(sim)
    sim.add_argument(
        "--output",
        "-o",
        choices=("table", "json", "yaml", "kss"),
        default="table",
        help="table (default), json, yaml (the json document as YAML), or kss: the input as a "
        "kube-scheduler-simulator export with the scheduled pods bound and their results "
        "annotated (loads into its web UI)",
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
        const=EXPLAIN_ALL,
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
    add_profile_args(plug)
    cli_autoscaling.add_parsers(sub, add_profile_args, sorted(STORES))
    cli_replay.add_parser(sub, add_profile_args)
    for command in ("simulate", "scale-up", "scale-down"):  # replay has its own
        add_live_args(sub.choices[command])
        sub.choices[command].add_argument(
            "--report",
            metavar="FILE.html",
            type=output_path,
            help="also write a self-contained HTML report (charts of per-node utilization, "
            "the pods that found no place and why); opens offline",
        )
    cli_sweep.add_parser(sub)
    cli_check_plugin.add_parser(sub)
    for each in sub.choices.values():  # the one place --output-file is defined
        each.add_argument(
            "--output-file",
            metavar="FILE",
            type=output_path,
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


def add_profile_args(p: argparse.ArgumentParser) -> None:
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
    p.add_argument(
        "--debug",
        action="store_true",
        help="print the traceback of an exception a plugin raises, on stderr (or set "
        "SCHEDSIM_DEBUG=1)",
    )


EXPLAIN_ALL = "*"
