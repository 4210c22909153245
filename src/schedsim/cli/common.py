"""What every ``schedsim`` command shares: the manifest-input options, the input's warnings,
``--report`` writing and the usage error (exit status 2)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

import yaml

from schedsim.api.loading.gate_hints import feature_gate_hints
from schedsim.api.loading.live import read_cluster
from schedsim.cli.output import deliver, deliver_later, error_line, warn
from schedsim.engine import Cluster, Engine
from schedsim.report import Page

__all__ = [
    "UsageError",
    "add_input_args",
    "add_live_args",
    "json_to_yaml",
    "live_cluster",
    "output_path",
    "report_title",
    "warn_input",
    "write_report",
]

_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # the C emitter when built with it


def output_path(text: str) -> str:
    """argparse ``type`` of ``--output-file`` and ``--report``: a path, not empty (an empty
    ``--report ''`` wrote nothing and exited 0).

    Raises:
        argparse.ArgumentTypeError: the path is empty.
    """
    if not text:
        raise argparse.ArgumentTypeError("an empty path: give a file name (e.g. out.html)")
    return text


def json_to_yaml(text: str) -> str:
    """A command's ``-o json`` document as YAML (``-o yaml``): the same keys in the same
    order, block style, UTF-8 as is."""
    return yaml.dump(
        json.loads(text), Dumper=_DUMPER, sort_keys=False, allow_unicode=True, width=100
    )


def add_input_args(p: argparse.ArgumentParser) -> None:
    """Options of every command that reads manifests: ``--no-expand-workloads``."""
    p.add_argument(
        "--no-expand-workloads",
        action="store_true",
        help="do not create the pods of Deployments, ReplicaSets, StatefulSets, DaemonSets, "
        "Jobs and ReplicationControllers (for inputs that already list every pod)",
    )


def add_live_args(p: argparse.ArgumentParser) -> None:
    """``--kubeconfig FILE [--context C] [--namespace N | -A] [--selector L] [--save FILE]``:
    read a live cluster (read-only) instead of manifest files (`live_cluster`)."""
    g = p.add_argument_group("live cluster (read-only: GET requests only)")
    g.add_argument(
        "--kubeconfig",
        metavar="FILE",
        help="read the cluster this kubeconfig names, through the kubernetes client, instead "
        "of CLUSTER files",
    )
    g.add_argument("--context", metavar="NAME", help="kubeconfig context (default: current)")
    scope = g.add_mutually_exclusive_group()
    scope.add_argument(
        "--namespace",
        metavar="NS",
        help="read namespaced objects of NS only (nodes and other cluster-scoped kinds whole)",
    )
    scope.add_argument(
        "--all-namespaces",
        "-A",
        action="store_true",
        help="read every namespace (the default: scheduling sees every pod on a node)",
    )
    g.add_argument(
        "--selector",
        metavar="LABELS",
        help="label selector for the namespaced workload kinds (pods, controllers, claims)",
    )
    g.add_argument(
        "--save",
        metavar="FILE",
        help="with --kubeconfig only: also write what was read from the live cluster as one "
        "List (JSON for FILE.json, else YAML); running on FILE gives the same output",
    )


_LIVE_ONLY = ("context", "namespace", "all_namespaces", "selector", "save")


def live_cluster(args: argparse.Namespace, **load: Any) -> Cluster | None:
    """The cluster ``--kubeconfig`` names, read live (`schedsim.api.loading.live`), or None
    without ``--kubeconfig``. ``load``: `Cluster.from_paths`'s options.

    With ``--save FILE`` the List is written first (whole or not at all) and the cluster is
    loaded from FILE, so a later run on FILE reads exactly what this run read. Kinds not read
    (not served, forbidden) are warning lines on stderr, not in a JSON output's
    ``warnings``: the answer is the answer for what was read, the same as a run on FILE.

    Raises:
        UsageError: a live-only option without ``--kubeconfig``, or CLUSTER files with it.
        ManifestError: the kubeconfig or the server (see `read_cluster`), or an object.
        OutputError: ``--save FILE`` cannot be written.
    """
    if not args.kubeconfig:
        for name in _LIVE_ONLY:
            if getattr(args, name, None):
                flag = "-A" if name == "all_namespaces" else f"--{name.replace('_', '-')}"
                raise UsageError(f"{flag} reads a live cluster: give --kubeconfig FILE too")
        return None
    if args.paths:
        raise UsageError("give CLUSTER files or --kubeconfig FILE, not both")
    read = read_cluster(
        args.kubeconfig, context=args.context, namespace=args.namespace, selector=args.selector
    )
    # on stderr only: they are about the reading, not the answer, so the JSON of this run
    # and of a run on the --save file are the same bytes
    for w in read.warnings:
        error_line(f"warning: {w}")
    if args.namespace:
        error_line(
            f"warning: --namespace {args.namespace}: pods of other namespaces are not read; "
            "the nodes look as free as they leave them"
        )
    if args.save:
        deliver(read.to_text(as_json=args.save.endswith(".json")), args.save)
        return Cluster.from_paths([args.save], **load)
    return Cluster.from_text(read.to_text(), read.source, **load)


def report_title(
    command: str, args: argparse.Namespace, example: str, inputs: Sequence[str] = ()
) -> str:
    """The title of a ``--report`` page, naming what the command read: ``inputs`` (default:
    the CLUSTER / TRACE paths; ``-`` is standard input), else the ``--kubeconfig`` cluster,
    else the shipped ``example``; and the ``--node-groups`` file when one was given, e.g.
    ``schedsim replay: trace.yaml (node groups groups.yaml)``."""
    read = list(inputs) or list(getattr(args, "paths", None) or ())
    if read:
        what = ", ".join("standard input" if p == "-" else p for p in read)
    elif getattr(args, "kubeconfig", None):
        context = getattr(args, "context", None) or "current context"
        what = f"live cluster ({context}) of {args.kubeconfig}"
    else:
        what = f"shipped example {example}"
    groups = getattr(args, "node_groups", None)
    if groups:
        what += f" (node groups {'standard input' if groups == '-' else groups})"
    return f"schedsim {command}: {what}"


def write_report(path: str, page: Page) -> None:
    """Write the HTML report of ``--report`` whole or not at all, put in place with the
    command's output (`cli_output.deliver_later`: neither is left when one fails).

    Raises:
        OutputError: it cannot be written (exit status 2, as for the output itself).
    """
    deliver_later(page.render(), path)


def warn_input(cluster: Cluster, engine: Engine) -> None:
    """Print the input's warnings and the feature-gate hints for it (stderr)."""
    hints = feature_gate_hints(
        engine.framework.handle.feature_gates.enabled,
        device_classes=cluster.device_classes,
        resource_slices=cluster.resource_slices,
        resource_claims=cluster.resource_claims,
        resource_claim_templates=cluster.resource_claim_templates,
    )
    for w in (*cluster.warnings, *hints):
        warn(w)


class UsageError(Exception):
    """Bad command-line use (exit status 2)."""
