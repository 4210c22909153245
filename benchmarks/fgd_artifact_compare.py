"""schedsim's FGD curves beside the FGD artifact's published ones (issue 27's independent
check).

The artifact (``hkust-adsl/kubernetes-scheduler-simulator``) publishes its results as
``experiments/analysis/expected_results/``: ``analysis_allo_discrete.csv`` (GPU allocation,
% of the cluster's milli-GPU), ``analysis_frag_ratio_discrete.csv`` (fragmentation ratio, %
of idle GPU milli) and ``analysis_frag_discrete.csv`` (fragmentation amount, % of GPU
capacity), written by its ``merge_*_discrete.py``: one row per ``workload,sc_policy,tune,seed``
(``openb_pod_list_default``, ``06-FGD``, ``1.3``, ``42``) and one column per arrived percent
``0``..``130`` (empty where the run had no event near that percent). schedsim's side is a
``schedsim sweep`` of the ``experiment`` command (``examples/gpu-sharing-policies/
fgd-grid.yaml`` or a cut copy): its ``-o json`` document or its ``--resume`` directory, read
through `schedsim.sweep.curves`; or ``benchmarks/fgd_curves.py``'s ``--out`` directory (one
experiment's ``-o json`` per ``TRACE-POLICY-SEED.json``). A sweep trace variant matches a
workload by the name after ``openb_pod_list_`` and a ``schedulerConfig`` variant matches a
policy by the name after ``NN-``, case aside (``default`` / ``fgd``, as fgd-grid.yaml names
them).

Run:

    python benchmarks/fgd_artifact_compare.py --artifact EXPECTED_RESULTS_DIR \\
        --schedsim RUNS_DIR_OR_SWEEP.json [...] [-o sides|deviation|summary]

(or ``--allocation CSV --fragmentation-ratio CSV --fragmentation-amount CSV`` for the
three files). Prints Markdown. ``-o sides`` (default): a table per trace: per policy and
metric, a ``schedsim`` row and an ``artifact`` row with the mean (min-max) over seeds at
50/80/90/100/110/120/130 % arrived, the seeds behind each, and on the schedsim row the
largest absolute difference of the two means over those points (``max |d|``); a schedsim
cell ends in ``*`` when its seed range and the artifact's do not overlap (to the printed
decimal). ``-o deviation``: one table, a row per trace, policy and metric with schedsim's
mean minus the artifact's at each point (``*`` as above) and ``max |d|``. ``-o summary``: a
row per trace and policy with the three metrics' ``max |d|`` and how many of the paired
cells are apart. The artifact's side takes all its seeds (42-51): the two simulators'
random streams differ (Go ``math/rand`` against Python ``random``), so seed numbers do not
pair runs. Bad input is one line ``FILE: problem`` on stderr, exit 2.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from schedsim.sweep.curves import POINTS, curve_series, mean_range_text, values_at
from schedsim.sweep.results import ScenarioResult

METRICS: Final = (
    ("GPU alloc %", 1, "analysis_allo_discrete.csv"),
    ("frag % idle", 2, "analysis_frag_ratio_discrete.csv"),
    ("frag % capacity", 3, "analysis_frag_discrete.csv"),
)
"""(label, the schedsim `CurveRow` field, the artifact's file) per metric."""

POLICIES: Final = ("random", "dotprod", "gpuclustering", "gpupacking", "bestfit", "fgd")
"""The artifact's policies in its order (``01-Random`` .. ``06-FGD``): the table's order."""

_KEYS: Final = ("workload", "sc_policy", "tune", "seed")
_TRACE_PREFIX: Final = "openb_pod_list_"
_POLICY_PREFIX: Final = re.compile(r"^\d+-")

Curves = dict[tuple[str, str], dict[int, dict[int, float]]]
"""(trace, policy) -> seed -> arrived percent -> value (percent), one metric's runs."""


class InputError(Exception):
    """An input file that cannot be read: the message is ``FILE: problem``."""


def artifact_name(workload: str, policy: str) -> tuple[str, str]:
    """The sweep's (trace, policy) variant names of an artifact row:
    ``openb_pod_list_default``, ``06-FGD`` -> ``default``, ``fgd``."""
    trace = workload.removeprefix(_TRACE_PREFIX).lower()
    return trace, _POLICY_PREFIX.sub("", policy).lower()


def read_artifact_csv(path: str) -> Curves:
    """One of the artifact's ``analysis_*_discrete.csv`` files.

    Columns other than `_KEYS` and the integers 0..130 (``total_gpus``, the pandas index)
    are ignored; empty cells are left out of the seed's curve.

    Raises:
        InputError: the file cannot be read, lacks a key column, or a cell is not a number.
    """
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            header = reader.fieldnames or []
            missing = [k for k in _KEYS if k not in header]
            if missing:
                raise InputError(f"{path}: no column {missing[0]!r} (header: {','.join(header)})")
            points = [c for c in header if c.isdigit()]
            out: Curves = {}
            for number, row in enumerate(reader, 2):
                where = (
                    f"{path}: line {number} ({row['workload']} {row['sc_policy']} {row['seed']})"
                )
                try:
                    seed = int(row["seed"])
                except ValueError:
                    raise InputError(f"{where}: seed: not an integer: {row['seed']!r}") from None
                curve: dict[int, float] = {}
                for c in points:
                    cell = (row[c] or "").strip()
                    if not cell:
                        continue
                    try:
                        curve[int(c)] = float(cell)
                    except ValueError:
                        raise InputError(f"{where}: {c}: not a number: {cell!r}") from None
                key = artifact_name(row["workload"], row["sc_policy"])
                out.setdefault(key, {})[seed] = curve
            return out
    except OSError as e:
        raise InputError(f"{path}: {e.strerror or e}") from None
    except csv.Error as e:
        raise InputError(f"{path}: {e}") from None


def read_schedsim(paths: Iterable[str]) -> list[ScenarioResult]:
    """The finished scenarios of schedsim's outputs: a ``schedsim sweep -o json`` document,
    a ``--resume`` directory (one row per ``*.json``), or ``benchmarks/fgd_curves.py``'s
    ``--out`` directory (one ``schedsim replay --inflate -o json`` document per
    ``TRACE-POLICY-SEED.json``, read as the sweep scenario of those three variants). A
    scenario named twice is kept once.

    Raises:
        InputError: a path is missing, not JSON, or holds a row that is not a scenario's.
    """
    by_name: dict[str, ScenarioResult] = {}
    for path in paths:
        p = Path(path)
        files = sorted(p.glob("*.json")) if p.is_dir() else [p]
        for f in files:
            try:
                doc = json.loads(f.read_text(encoding="utf-8"))
            except OSError as e:
                raise InputError(f"{f}: {e.strerror or e}") from None
            except ValueError as e:
                raise InputError(f"{f}: not JSON: {e}") from None
            if isinstance(doc, dict) and "experiment" in doc and "scenario" not in doc:
                result = experiment_result(f, doc, len(by_name))
                by_name.setdefault(result.name, result)
                continue
            rows = doc.get("scenarios") if isinstance(doc, dict) and "scenarios" in doc else [doc]
            if not isinstance(rows, list):
                raise InputError(f"{f}: scenarios: not a list")
            for i, row in enumerate(rows):
                try:
                    result = ScenarioResult.from_dict(row)
                except (KeyError, TypeError, ValueError, AttributeError) as e:
                    raise InputError(f"{f}: scenario {i}: not a sweep result row: {e!r}") from None
                by_name.setdefault(result.name, result)
    return sorted(by_name.values(), key=lambda r: r.name)


def experiment_result(path: Path, doc: Mapping[str, Any], index: int) -> ScenarioResult:
    """One ``fgd_curves.py`` run (``TRACE-POLICY-SEED.json``, an experiment's ``-o json``)
    as the sweep scenario ``TRACE+POLICY+SEED`` with those ``traces``, ``schedulerConfig``
    and ``seeds`` variants.

    Raises:
        InputError: the name is not ``TRACE-POLICY-SEED`` or the curve is malformed.
    """
    parts = path.stem.rsplit("-", 2)
    if len(parts) != 3 or not parts[2].isdigit() or not all(parts):
        raise InputError(f"{path}: an experiment's JSON not named TRACE-POLICY-SEED.json")
    trace, policy, seed = parts
    try:
        curve = tuple(
            (int(c["arrived"]), c["gpuAllocation"], c["fragmentation"], c["fragmentationAmount"])
            for c in doc["curve"]
        )
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(f"{path}: curve: not an experiment's curve: {e!r}") from None
    return ScenarioResult(
        name=f"{trace}+{policy}+{seed}",
        index=index,
        axes=(("traces", trace), ("schedulerConfig", policy), ("seeds", seed)),
        fingerprint="",
        curve=curve,
    )


def _stats(values: Sequence[float]) -> tuple[float, float, float] | None:
    return (sum(values) / len(values), min(values), max(values)) if values else None


def _apart(m: tuple[float, float, float], t: tuple[float, float, float]) -> bool:
    """The two seed ranges are disjoint as printed (to one decimal): 80.04 beside
    79.98-80.02 reads as equal."""
    return round(m[1], 1) > round(t[2], 1) or round(m[2], 1) < round(t[1], 1)


Point = tuple[list[float], list[float]]
"""schedsim's values and the artifact's at one arrived percent (one per seed each)."""


def paired(
    results: Iterable[ScenarioResult], artifact: Mapping[int, Curves]
) -> list[tuple[str, str, str, int, int, list[Point]]]:
    """Per schedsim series (trace, policy; the artifact's policy order) and `METRICS` row:
    ``trace, policy, metric label, schedsim seeds, artifact seeds`` and the two sides'
    values at each of `POINTS`. ``artifact`` maps a `METRICS` field to its curves."""

    def order(series: tuple[str, str, object]) -> tuple[str, int, str]:
        p = series[1].lower()
        return series[0], POLICIES.index(p) if p in POLICIES else len(POLICIES), p

    out = []
    for trace, policy, runs in sorted(curve_series(results), key=order):
        for label, column, _ in METRICS:
            theirs = artifact.get(column, {}).get((trace.lower(), policy.lower()), {})
            points = [
                (values_at(runs, a, column), [c[a] for _, c in sorted(theirs.items()) if a in c])
                for a in POINTS
            ]
            out.append((trace, policy, label, len(runs), len(theirs), points))
    return out


def compare_rows(
    results: Iterable[ScenarioResult], artifact: Mapping[int, Curves]
) -> list[tuple[str, ...]]:
    """The comparison table's rows: per schedsim series (trace, policy) and metric, a
    schedsim row then an artifact row, each ``trace, policy, metric, side, seeds`` and one
    cell per `POINTS` (``mean (min-max)``; ``*`` appended to a schedsim cell whose range
    and the artifact's are disjoint to one decimal, as printed), then ``max |d|``: the
    largest absolute difference of the two means over the points where both have one
    (schedsim row; "" on the artifact row, "-" when nothing pairs). ``artifact`` maps a
    `METRICS` field to its curves."""
    rows: list[tuple[str, ...]] = []
    for trace, policy, label, n_mine, n_theirs, points in paired(results, artifact):
        mine_cells, their_cells, diffs = [], [], []
        for mine, other in points:
            m, t = _stats(mine), _stats(other)
            cell = mean_range_text(mine)
            if m and t:
                diffs.append(abs(m[0] - t[0]))
                if _apart(m, t):
                    cell += " *"
            mine_cells.append(cell)
            their_cells.append(mean_range_text(other))
        biggest = f"{max(diffs):.1f}" if diffs else "-"
        rows.append((trace, policy, label, "schedsim", str(n_mine), *mine_cells, biggest))
        rows.append((trace, policy, label, "artifact", str(n_theirs), *their_cells, ""))
    return rows


def deviation_rows(
    results: Iterable[ScenarioResult], artifact: Mapping[int, Curves]
) -> list[tuple[str, ...]]:
    """One row per series and metric: ``trace, policy, metric, seeds`` (``schedsim/artifact``),
    then at each of `POINTS` schedsim's mean minus the artifact's (signed, one decimal;
    ``*`` appended when the seed ranges are disjoint as printed; "-" when a side has no
    value), then ``max |d|`` as in `compare_rows`."""
    rows: list[tuple[str, ...]] = []
    for trace, policy, label, n_mine, n_theirs, points in paired(results, artifact):
        cells, diffs = [], []
        for mine, other in points:
            m, t = _stats(mine), _stats(other)
            if not (m and t):
                cells.append("-")
                continue
            d = m[0] - t[0]
            diffs.append(abs(d))
            text = f"{d:+.1f}" if round(d, 1) != 0 else "0.0"
            cells.append(text + (" *" if _apart(m, t) else ""))
        biggest = f"{max(diffs):.1f}" if diffs else "-"
        rows.append((trace, policy, label, f"{n_mine}/{n_theirs}", *cells, biggest))
    return rows


def summary_rows(
    results: Iterable[ScenarioResult], artifact: Mapping[int, Curves]
) -> list[tuple[str, ...]]:
    """One row per series: ``trace, policy, seeds`` (``schedsim/artifact``), then per
    `METRICS` the ``max |d|`` of `deviation_rows`, then the number of cells (of the
    metrics x `POINTS`) whose seed ranges are disjoint, as ``n/total``."""
    by_series: dict[tuple[str, str], list[tuple[str, ...]]] = {}
    for row in deviation_rows(results, artifact):
        by_series.setdefault((row[0], row[1]), []).append(row)
    out = []
    for (trace, policy), rows in by_series.items():
        cells = [c for r in rows for c in r[4:-1]]
        apart = sum(c.endswith("*") for c in cells)
        paired_cells = sum(c != "-" for c in cells)
        out.append((trace, policy, rows[0][3], *(r[-1] for r in rows), f"{apart}/{paired_cells}"))
    return out


def _markdown(head: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def deviation_table(rows: Sequence[tuple[str, ...]]) -> str:
    """`deviation_rows` as one Markdown table ("" when there are no rows)."""
    if not rows:
        return ""
    head = ("trace", "policy", "metric", "seeds", *(f"{p} %" for p in POINTS), "max |d|")
    return _markdown(head, rows)


def summary_table(rows: Sequence[tuple[str, ...]]) -> str:
    """`summary_rows` as one Markdown table ("" when there are no rows)."""
    if not rows:
        return ""
    head = ("trace", "policy", "seeds", *(f"max |d| {m}" for m, _, _ in METRICS), "apart")
    return _markdown(head, rows)


def compare_table(rows: Sequence[tuple[str, ...]]) -> str:
    """`compare_rows` as Markdown: one table per trace, in row order, a blank line between
    (empty string when there are no rows)."""
    head = ("trace", "policy", "metric", "side", "seeds", *(f"{p} %" for p in POINTS), "max |d|")
    by_trace: dict[str, list[tuple[str, ...]]] = {}
    for row in rows:
        by_trace.setdefault(row[0], []).append(row)
    return "\n".join(_markdown(head, trace_rows) for trace_rows in by_trace.values())


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--artifact", metavar="DIR", help="the artifact's expected_results folder")
    for flag, (_, _, name) in zip(
        ("--allocation", "--fragmentation-ratio", "--fragmentation-amount"), METRICS, strict=True
    ):
        ap.add_argument(flag, metavar="CSV", help=f"the artifact's {name} (beats --artifact)")
    ap.add_argument(
        "--schedsim",
        nargs="+",
        required=True,
        metavar="PATH",
        help="schedsim sweep -o json output(s) or --resume directories",
    )
    ap.add_argument(
        "--output",
        "-o",
        choices=("sides", "deviation", "summary"),
        default="sides",
        help="sides: both sides' mean (min-max) per trace (default); deviation: schedsim's "
        "mean minus the artifact's per point; summary: max |d| per series and metric",
    )
    args = ap.parse_args(argv)
    given = (args.allocation, args.fragmentation_ratio, args.fragmentation_amount)
    paths = [
        path or (str(Path(args.artifact) / name) if args.artifact else None)
        for path, (_, _, name) in zip(given, METRICS, strict=True)
    ]
    if any(p is None for p in paths):
        ap.error("give --artifact DIR, or the three CSVs")
    try:
        artifact = {
            column: read_artifact_csv(str(p))
            for (_, column, _), p in zip(METRICS, paths, strict=True)
        }
        results = read_schedsim(args.schedsim)
    except InputError as e:
        print(e, file=sys.stderr)
        return 2
    if args.output == "deviation":
        table = deviation_table(deviation_rows(results, artifact))
    elif args.output == "summary":
        table = summary_table(summary_rows(results, artifact))
    else:
        table = compare_table(compare_rows(results, artifact))
    if not table:
        print(f"{' '.join(args.schedsim)}: no finished experiment run", file=sys.stderr)
        return 2
    print(table, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
