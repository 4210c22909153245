"""What every ``schedsim`` command shares: the manifest-input options, the input's warnings,
``--report`` writing and the usage error (exit status 2)."""

from __future__ import annotations

import argparse
import json

import yaml

from schedsim.api.loading.gate_hints import feature_gate_hints
from schedsim.cli.output import deliver, warn
from schedsim.engine import Cluster, Engine
from schedsim.report import Page

__all__ = ["UsageError", "add_input_args", "json_to_yaml", "warn_input", "write_report"]

_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # the C emitter when built with it


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


def write_report(path: str, page: Page) -> None:
    """Write the HTML report of ``--report`` whole or not at all (`cli_output.deliver`).

    Raises:
        OutputError: it cannot be written (exit status 1, as for the output itself).
    """
    deliver(page.render(), path)


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
