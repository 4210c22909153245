"""``schedsim sweep SPEC.yaml``: run a grid of what-if scenarios (`schedsim.sweep`).

Thin: parse the flags, pick the executor (a local process pool by default, ``--serial``,
``--ray [ADDRESS]``), call `schedsim.sweep.run_sweep`, render the rows as a table, JSON or
CSV, and with ``--report FILE.html`` the page comparing them (`schedsim.sweep.report`). A
progress bar shows on standard error when it is a terminal; each failed scenario gets one
``error: scenario NAME: ...`` line and makes the exit status 1 (the others still run and are
printed); a bad spec is ``schedsim: error: FILE: FIELD: problem`` and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from schedsim.api.errors import ManifestError, first_few
from schedsim.api.loading import inputs
from schedsim.cli.common import output_path, write_report
from schedsim.cli.output import check_outputs, error_line, recorded_warnings, warn
from schedsim.sweep import (
    Executor,
    PoolExecutor,
    ResultStore,
    ScenarioResult,
    SerialExecutor,
    load_clusters,
    load_spec,
    run_sweep,
    to_csv,
    to_json,
    to_table,
)
from schedsim.sweep.curves import curve_table
from schedsim.sweep.report import sweep_page
from schedsim.sweep.results import axes_without_effect

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Register ``sweep`` on the ``schedsim`` subparsers."""
    p = sub.add_parser(
        "sweep",
        help="run a grid of scenarios (traces x node groups x configs x gates x commands)",
        description="Run every scenario of SPEC (the cartesian product of its axes and "
        "commands) on the cluster it names, parsed once, and print one row per scenario. "
        "Runs on a local process pool (one worker per core) by default.",
    )
    p.add_argument("spec", metavar="SPEC", help="the sweep spec (YAML; see README 'Sweeps')")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--serial", action="store_true", help="run in this process, in order")
    where.add_argument(
        "--workers", type=int, metavar="N", help="process pool size (default: one per core)"
    )
    where.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="run on Ray: a local instance (ray.init()) or the cluster at ADDRESS "
        "(needs pip install 'schedsim[ray]')",
    )
    p.add_argument(
        "--resume",
        metavar="DIR",
        help="keep one JSON per finished scenario in DIR and skip scenarios whose result "
        "is already there (made from the same inputs)",
    )
    p.add_argument(
        "--output",
        "-o",
        choices=("table", "json", "yaml", "csv"),
        default="table",
        help="table (default), json, yaml (the json document as YAML) or csv",
    )
    p.add_argument(
        "--report",
        metavar="FILE.html",
        type=output_path,
        help="also write a self-contained HTML page comparing the scenarios (a table and "
        "bar charts of the headline metrics)",
    )


def _executor(args: argparse.Namespace) -> Executor:
    if args.ray is not None:
        from schedsim.sweep.ray import RayExecutor

        return RayExecutor(args.ray or None)
    if args.serial:
        return SerialExecutor()
    if args.workers is not None and args.workers < 1:
        raise ManifestError(f"--workers: expected at least 1, got {args.workers}")
    return PoolExecutor(args.workers)


@contextmanager
def _progress() -> Iterator[Callable[[ScenarioResult, int], None]]:
    """Reports each failed scenario at once, and a progress bar on a terminal's stderr."""
    bar = None
    if sys.stderr is not None and sys.stderr.isatty():
        bar = Progress(
            TextColumn("sweep"),
            BarColumn(),
            MofNCompleteColumn(),
            console=Console(stderr=True),
            transient=True,
        )
    task = None if bar is None else bar.add_task("sweep", total=None)

    def report(result: ScenarioResult, total: int) -> None:
        if not result.ok:
            error_line(f"error: scenario {result.name}: {result.error}")
        if bar is not None and task is not None:
            bar.update(task, total=total, advance=1)

    if bar is None:
        yield report
        return
    with bar:
        yield report


_NO_EFFECT_HINTS = {
    "workloadScale": " (it scales the replicas of workload controllers; bare pods, as in a "
    "trace of pods, are not scaled)",
}


def _warn_scenarios(results: list[ScenarioResult]) -> None:
    """Each distinct warning of the runs once, with the scenarios that gave it."""
    by_text: dict[str, list[str]] = {}
    for r in results:
        for w in r.warnings:
            by_text.setdefault(w, []).append(r.name)
    for w, names in by_text.items():
        warn(f"{w} (scenario(s) {first_few(names)})")


def run(args: argparse.Namespace) -> tuple[str, int]:
    """Run ``schedsim sweep`` as ``args`` say: the whole output and the exit status (1 when a
    scenario failed).

    Raises:
        ManifestError: a bad spec, cluster or flag (exit status 2).
    """
    spec = load_spec(args.spec)
    for w in spec.warnings:
        warn(w)
    # the files the spec names are inputs too: refuse an output over one before running
    check_outputs({"--output-file": args.output_file, "--report": args.report})
    if args.resume:  # nor a results directory in (or that is) a directory the spec reads
        directory = inputs.directory_conflict(args.resume)
        if directory is not None:
            where = "it is" if inputs.same_directory(args.resume, directory) else "it is inside"
            raise ManifestError(
                f"--resume {args.resume}: {where} the input directory {directory} of the "
                "spec: its result files would be read as manifests (give another directory: "
                "schedsim never writes into an input)"
            )
    executor = _executor(args)
    clusters = load_clusters(spec)
    for name, cluster in clusters.items():
        for w in cluster.warnings:
            warn(f"trace {name}: {w}" if name else w)
    store = None
    if args.resume:
        try:
            store = ResultStore(args.resume)
        except FileExistsError:  # mkdir on a path that is a file
            raise ManifestError(
                f"--resume {args.resume}: not a directory: give a directory for the results "
                "(new, or one an earlier run of this spec wrote)"
            ) from None
        except OSError as e:
            raise ManifestError(f"--resume {args.resume}: {e.strerror or e}") from None
    try:
        with _progress() as report:
            results = run_sweep(spec, executor, clusters=clusters, store=store, on_result=report)
    except RuntimeError as e:  # RayUnavailableError
        raise ManifestError(str(e)) from None
    _warn_scenarios(results)
    for axis, variants in axes_without_effect(results):
        hint = _NO_EFFECT_HINTS.get(axis, "")
        warn(
            f"sweep axis {axis}: its variants ({', '.join(variants)}) gave the same results "
            f"in every scenario: it has no effect on this input{hint}"
        )
    if args.report:
        write_report(args.report, sweep_page(results, f"schedsim sweep {args.spec}"))
    failed = sum(1 for r in results if not r.ok)
    if failed:
        error_line(f"schedsim: error: {failed} of {len(results)} scenario(s) failed")
    if args.output == "json":
        out = to_json(results, recorded_warnings())
    elif args.output == "csv":
        out = to_csv(results)
    else:
        out = to_table(results) + curve_table(results)
    return out, 1 if failed else 0
