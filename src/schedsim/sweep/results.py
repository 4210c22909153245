"""Sweep results: one row per scenario, the resume directory, and the table / JSON / CSV.

A `ScenarioResult` carries the headline metrics of one scenario (pods scheduled,
unschedulable and preempted, plugin errors, nodes added or removed, and for ``replay`` the
total cost and the scheduling latency percentiles) and its wall time. Everything but the
wall time depends only on the scenario: `ScenarioResult.metrics` is what must be equal
whatever the executor and the order (the tests compare it).

JSON keys and CSV headers are camelCase, as the JSON of ``simulate``, ``scale-up`` and
``scale-down`` (Kubernetes' API style): `COLUMNS` maps each field to its key.

`ResultStore` is the resume directory: one ``NAME.json`` per finished scenario, written to a
temporary file and renamed (atomic on POSIX: a file is whole or absent, even after a crash).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import attrs
from rich.console import Console
from rich.markup import escape
from rich.table import Table

__all__ = [
    "COLUMNS",
    "METRICS",
    "CurveRow",
    "ResultStore",
    "ScenarioResult",
    "axes_without_effect",
    "shown_metrics",
    "to_csv",
    "to_json",
    "to_table",
]

METRICS: Final = (
    "scheduled",
    "unschedulable",
    "plugin_errors",
    "preempted",
    "nodes_added",
    "nodes_removed",
    "cost",
    "latency_p50",
    "latency_p90",
    "latency_p99",
)
"""The headline metrics, in column order (`ScenarioResult` field names)."""

COLUMNS: Final = {
    "scheduled": "scheduled",
    "unschedulable": "unschedulable",
    "plugin_errors": "pluginErrors",
    "preempted": "preempted",
    "nodes_added": "nodesAdded",
    "nodes_removed": "nodesRemoved",
    "cost": "cost",
    "latency_p50": "latencyP50Seconds",
    "latency_p90": "latencyP90Seconds",
    "latency_p99": "latencyP99Seconds",
}
"""Metric field -> its JSON key and CSV header."""

_INTS: Final = frozenset(METRICS[:6])


def _axes(pairs: Iterable[Iterable[str]]) -> tuple[tuple[str, str], ...]:
    out = []
    for pair in pairs:
        axis, variant = pair
        out.append((axis, variant))
    return tuple(out)


def _strings(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


def _optional_float(value: float | None) -> float | None:
    return None if value is None else float(value)


CurveRow = tuple[int, float | None, float | None, float | None]
"""One point of an experiment's curve: arrived percent, GPU allocation (percent of the
cluster's milli-GPU), fragmentation (percent of idle GPU milli), fragmentation amount
(percent of capacity); None where no pod had arrived in that bin."""


def _curve(rows: Iterable[Sequence[Any]]) -> tuple[CurveRow, ...]:
    return tuple(
        (int(a), _optional_float(g), _optional_float(f), _optional_float(m)) for a, g, f, m in rows
    )


@attrs.frozen
class ScenarioResult:
    """The outcome of one scenario.

    Attributes:
        name, index, axes, fingerprint: the scenario's (see `Scenario`).
        scheduled: pending pods placed (simulate), or placed on existing nodes plus those the
            chosen group's new nodes take (scale-up), or placed before planning
            (scale-down), or bound at least once (replay).
        unschedulable: pending pods left without a place (plugin errors counted apart;
            replay: pods still pending at the end, plugin errors included).
        plugin_errors: pods whose attempt failed with a plugin error (0 for replay).
        preempted: running pods evicted by DefaultPreemption (simulate, replay; 0 for
            scale-up and scale-down, which never preempt).
        nodes_added: nodes of the chosen group (scale-up), nodes the autoscaler added
            (replay), else 0.
        nodes_removed: removable nodes (scale-down), nodes the autoscaler removed (replay),
            else 0.
        cost: node-hours x each group's price over the replay (replay only, else None).
        latency_p50, latency_p90, latency_p99: scheduling latency percentiles, arrival to
            first bind (seconds; replay only, None otherwise or when no pod was bound).
        warnings: what the run had to say beyond the cluster's own warnings, one line each.
        curve: the experiment's curve (`CurveRow` per arrived percent 0..130; empty for the
            other commands). ``scheduled`` / ``unschedulable`` are then the tuned workload's
            pods placed and dropped.
        wall_seconds: the run's wall time in the worker (seconds; not part of `metrics`).
        error: ``Type: message`` when the scenario failed (its metrics are then 0 / None
            here, null in JSON and empty in CSV), else None.
        resumed: read from the resume directory rather than run (not saved).
    """

    name: str
    index: int
    axes: tuple[tuple[str, str], ...] = attrs.field(converter=_axes)
    fingerprint: str
    scheduled: int = 0
    unschedulable: int = 0
    plugin_errors: int = 0
    preempted: int = 0
    nodes_added: int = 0
    nodes_removed: int = 0
    cost: float | None = attrs.field(default=None, converter=_optional_float)
    latency_p50: float | None = attrs.field(default=None, converter=_optional_float)
    latency_p90: float | None = attrs.field(default=None, converter=_optional_float)
    latency_p99: float | None = attrs.field(default=None, converter=_optional_float)
    warnings: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    curve: tuple[CurveRow, ...] = attrs.field(default=(), converter=_curve)
    wall_seconds: float = 0.0
    error: str | None = None
    resumed: bool = attrs.field(default=False, eq=False)

    @classmethod
    def failed(
        cls,
        name: str,
        index: int,
        axes: tuple[tuple[str, str], ...],
        fingerprint: str,
        error: str,
        wall_seconds: float,
    ) -> ScenarioResult:
        """A failed scenario's row."""
        return cls(
            name=name,
            index=index,
            axes=axes,
            fingerprint=fingerprint,
            wall_seconds=wall_seconds,
            error=error,
        )

    @property
    def ok(self) -> bool:
        """The scenario ran to the end."""
        return self.error is None

    def metrics(self) -> tuple[object, ...]:
        """Everything that depends only on the scenario: name, axes, the `METRICS`,
        warnings, curve, error."""
        return (
            self.name,
            self.axes,
            *(getattr(self, m) for m in METRICS),
            self.warnings,
            self.curve,
            self.error,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON row (``axes`` as a mapping, axis -> variant; `COLUMNS` keys; cost and
        latencies null when the command does not measure them)."""
        row: dict[str, Any] = {
            "scenario": self.name,
            "index": self.index,
            "axes": dict(self.axes),
            "fingerprint": self.fingerprint,
            "status": "ok" if self.ok else "failed",
        }
        # a failed scenario measured nothing: null, never a 0 that reads like a result
        row.update({COLUMNS[m]: getattr(self, m) if self.ok else None for m in METRICS})
        row["wallSeconds"] = round(self.wall_seconds, 6)
        row["warnings"] = list(self.warnings)
        if self.curve:
            row["curve"] = [
                {"arrived": a, "gpuAllocation": g, "fragmentation": f, "fragmentationAmount": m}
                for a, g, f, m in self.curve
            ]
        if self.error is not None:
            row["error"] = self.error
        return row

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> ScenarioResult:
        """The inverse of `to_dict` (raises KeyError/TypeError/ValueError on a bad row)."""
        metrics = {m: row[COLUMNS[m]] for m in METRICS}
        for m in _INTS:
            metrics[m] = int(metrics[m] or 0)
        return cls(
            name=row["scenario"],
            index=int(row["index"]),
            axes=tuple(dict(row["axes"]).items()),
            fingerprint=str(row["fingerprint"]),
            wall_seconds=float(row["wallSeconds"]),
            error=row.get("error"),
            warnings=tuple(str(w) for w in row["warnings"]),
            curve=tuple(
                (p["arrived"], p["gpuAllocation"], p["fragmentation"], p["fragmentationAmount"])
                for p in row.get("curve", ())
            ),
            **metrics,
        )


class ResultStore:
    """The resume directory: ``DIR/NAME.json`` per finished scenario (failed ones are not
    kept, so a rerun retries them).

    Raises:
        OSError: the directory cannot be created (constructor) or a file written (`save`).
    """

    def __init__(self, directory: str) -> None:
        self.directory = directory
        os.makedirs(directory, exist_ok=True)

    def _path(self, name: str) -> str:
        return os.path.join(self.directory, f"{file_stem(name)}.json")

    def load(self, name: str, fingerprint: str) -> ScenarioResult | None:
        """The stored result of scenario ``name`` when one exists and was made from the same
        inputs (``fingerprint``); None otherwise (absent, unreadable or stale)."""
        try:
            with open(self._path(name), encoding="utf-8") as fh:
                result = ScenarioResult.from_dict(json.load(fh))
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if result.fingerprint != fingerprint or result.name != name or not result.ok:
            return None
        return attrs.evolve(result, resumed=True)

    def save(self, result: ScenarioResult) -> None:
        """Write ``result`` atomically (temporary file in the directory, then rename);
        failed results are not written."""
        if not result.ok:
            return
        fd, tmp = tempfile.mkstemp(
            dir=self.directory, prefix=f".{file_stem(result.name)[:64]}.", suffix=".tmp"
        )
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(result.to_dict(), fh, indent=2)
                fh.write("\n")
            os.replace(tmp, self._path(result.name))
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


def axes_without_effect(results: Iterable[ScenarioResult]) -> list[tuple[str, list[str]]]:
    """The axes whose variants changed nothing: (axis, its variants) for each axis (the
    ``command`` axis aside) with two or more variants such that, among the scenarios that
    ran, any two differing only in that axis have the same `METRICS`, and at least one such
    pair exists. A sweep of ``workloadScale`` over a trace of bare pods is one (it scales
    only controllers' replicas)."""
    done = [r for r in results if r.ok]
    if not done:
        return []
    names = [a for a, _ in done[0].axes if a != "command"]
    out: list[tuple[str, list[str]]] = []
    for axis in names:
        variants = list(dict.fromkeys(dict(r.axes)[axis] for r in done))
        if len(variants) < 2:
            continue
        by_rest: dict[tuple[tuple[str, str], ...], set[tuple[object, ...]]] = {}
        sizes: dict[tuple[tuple[str, str], ...], int] = {}
        for r in done:
            rest = tuple(p for p in r.axes if p[0] != axis)
            by_rest.setdefault(rest, set()).add(tuple(getattr(r, m) for m in METRICS))
            sizes[rest] = sizes.get(rest, 0) + 1
        compared = [k for k, n in sizes.items() if n > 1]
        if compared and all(len(by_rest[k]) == 1 for k in compared):
            out.append((axis, variants))
    return out


_MAX_STEM: Final = 200
"""Bytes of a result file's name before ``.json`` (file systems allow 255)."""


def file_stem(name: str) -> str:
    """The file name (without ``.json``) of scenario ``name``'s result: the name itself
    when it fits in `_MAX_STEM` bytes, else its first bytes, ``~`` and 32 hex digits of its
    SHA-256 (``~`` cannot occur in a scenario name, so a shortened name never equals
    another scenario's, and two long names differ in their digests)."""
    raw = name.encode("utf-8")
    if len(raw) <= _MAX_STEM:
        return name
    head = raw[: _MAX_STEM - 33].decode("utf-8", "ignore")
    return f"{head}~{hashlib.sha256(raw).hexdigest()[:32]}"


def _ordered(results: Iterable[ScenarioResult]) -> list[ScenarioResult]:
    return sorted(results, key=lambda r: r.index)


def to_json(results: Iterable[ScenarioResult], warnings: Sequence[Mapping[str, str]] = ()) -> str:
    """``{"scenarios": [row...], "failed": N, "warnings": [...]}`` (rows in scenario order,
    see `ScenarioResult.to_dict`)."""
    rows = _ordered(results)
    doc = {
        "scenarios": [r.to_dict() for r in rows],
        "failed": sum(1 for r in rows if not r.ok),
        "warnings": list(warnings),
    }
    return json.dumps(doc, indent=2) + "\n"


def _cell(value: object) -> str:
    """A metric in the CSV and the table: None empty, floats to 3 decimals."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def to_csv(results: Iterable[ScenarioResult]) -> str:
    """One header line and one line per scenario: ``scenario``, each axis, ``status``, the
    metrics (`COLUMNS`; empty when the command does not measure them), ``wallSeconds``,
    ``error``."""
    rows = _ordered(results)
    axes = [a for a, _ in rows[0].axes] if rows else []
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["scenario", *axes, "status", *COLUMNS.values(), "wallSeconds", "error"])
    for r in rows:
        values = dict(r.axes)
        w.writerow(
            [
                r.name,
                *(values.get(a, "") for a in axes),
                "ok" if r.ok else "failed",
                *(_cell(getattr(r, m) if r.ok else None) for m in METRICS),
                f"{r.wall_seconds:.3f}",
                r.error or "",
            ]
        )
    return buf.getvalue()


_HEADERS: Final = {
    "plugin_errors": "plugin errors",
    "nodes_added": "nodes added",
    "nodes_removed": "nodes removed",
    "latency_p50": "p50 s",
    "latency_p90": "p90 s",
    "latency_p99": "p99 s",
}


def shown_metrics(results: Sequence[ScenarioResult]) -> list[str]:
    """The `METRICS` worth a column: cost and latencies only when some row has them."""
    return [m for m in METRICS if m in _INTS or any(getattr(r, m) is not None for r in results)]


def to_table(results: Iterable[ScenarioResult]) -> str:
    """A rich table, one row per scenario (failed ones show their error; cost and latency
    columns only when some scenario measured them)."""
    rows = _ordered(results)
    axes = [a for a, _ in rows[0].axes] if rows else []
    metrics = shown_metrics(rows)
    t = Table(title=f"{len(rows)} scenario(s)")
    for a in axes:
        t.add_column(a)
    for m in metrics:
        t.add_column(_HEADERS.get(m, m), justify="right")
    t.add_column("wall s", justify="right")
    t.add_column("status")
    for r in rows:
        values = dict(r.axes)
        status = ("resumed" if r.resumed else "ok") if r.ok else escape(f"failed: {r.error}")
        t.add_row(
            *(escape(values.get(a, "")) for a in axes),
            *(_cell(getattr(r, m)) for m in metrics),
            f"{r.wall_seconds:.2f}",
            status,
        )
    buf = io.StringIO()
    Console(file=buf, width=200, force_terminal=False).print(t)
    return buf.getvalue()
