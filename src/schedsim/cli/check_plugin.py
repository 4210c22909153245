"""``schedsim check-plugin --plugin MODULE:CLASS ...``: a plugin package's conformance, for its
CI (`schedsim.testing.plugin_check`): mypy ``--strict`` against the typed protocols of the
extension points each class implements, then the runtime's validation and a run of kube-
scheduler's default profile with the plugins enabled, on both snapshot stores. Prints each
problem on one line and exits 1 when there is one, 0 (``conformant``) otherwise.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from typing import Any

import yaml

from schedsim.cli.common import UsageError
from schedsim.testing.plugin_check import dynamic_problems, protocols_of, static_problems

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Register the ``check-plugin`` command on the subparsers ``sub``."""
    p = sub.add_parser(
        "check-plugin",
        help="check a plugin package's conformance (mypy against the protocols; a run on "
        "both stores)",
        description="Check plugin classes statically (mypy --strict against the typed "
        "protocols of the extension points they implement: hook and parameter names, types, "
        "results) and dynamically (the runtime's validation, then kube-scheduler's default "
        "profile with the plugins enabled scheduling a cluster on both snapshot stores: no "
        "plugin error, the same placements). Exit status 1 with one line per problem.",
    )
    p.add_argument(
        "paths",
        nargs="*",
        metavar="CLUSTER",
        help="manifests to schedule in the dynamic check (default: the shipped demo cluster)",
    )
    p.add_argument(
        "--plugin",
        action="append",
        default=[],
        required=True,
        metavar="MODULE:CLASS",
        help="a plugin class to check (repeatable); MODULE is imported from the current "
        "directory or the import path",
    )
    p.add_argument(
        "--args",
        metavar="FILE",
        help="YAML mapping of plugin name to its pluginConfig args for the dynamic check "
        "(default: {} for each)",
    )
    p.add_argument(
        "--static-only", action="store_true", help="run the mypy check only (no scheduling)"
    )
    p.add_argument(
        "--dynamic-only", action="store_true", help="run the scheduling check only (no mypy)"
    )


def run(args: argparse.Namespace) -> tuple[str, int]:
    """The report and the exit status (1 when a problem was found).

    Raises:
        UsageError: ``--args`` cannot be read or is not a mapping of mappings; mypy is not
            installed for the static check.
    """
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # as --plugin elsewhere, and python -m
    plugin_args: dict[str, Any] = {}
    if args.args:
        try:
            with open(args.args, encoding="utf-8") as f:
                loaded = yaml.safe_load(f) or {}
        except (OSError, yaml.YAMLError) as e:
            raise UsageError(f"--args {args.args}: {e}") from None
        if not isinstance(loaded, dict) or not all(isinstance(v, dict) for v in loaded.values()):
            raise UsageError(f"--args {args.args}: expected a mapping of plugin name to args")
        plugin_args = loaded
    lines: list[str] = []
    problems: list[str] = []
    if not args.dynamic_only:
        if importlib.util.find_spec("mypy") is None:
            raise UsageError(
                "the static check needs mypy, which is not installed: pip install mypy (or "
                "'schedsim[test]'), or run with --dynamic-only"
            )
        found = static_problems(args.plugin)
        problems += found
        if not found:
            from schedsim.framework.runtime import load_plugin_spec

            for spec in args.plugin:
                checked = ", ".join(protocols_of(load_plugin_spec(spec)[1]))
                lines.append(f"static: {spec}: mypy --strict passes as {checked}")
    if not args.static_only:
        found = dynamic_problems(args.plugin, cluster_paths=args.paths, plugin_args=plugin_args)
        problems += found
        if not found:
            lines.append(
                "dynamic: the default profile with the plugin(s) schedules the cluster "
                "the same on the basic and delta stores, without plugin errors"
            )
    lines += [f"problem: {p}" for p in problems]
    lines.append("conformant" if not problems else f"{len(problems)} problem(s)")
    return "\n".join(lines) + "\n", 1 if problems else 0
