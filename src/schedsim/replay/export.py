"""A replay's metrics as JSON and CSV (what ``schedsim replay -o json|csv`` prints).

JSON: one object, ``{"summary": ..., "samples": [...], "events": [...], "nodes": [...],
"unschedulable": {...}, "latencies": {...}}``; times in seconds since the trace's start,
cpu in milli-CPU, memory in bytes, GPUs as counts. CSV: one row per sample, the columns of
`CSV_COLUMNS` followed by ``nodes:<group>`` and ``upcoming:<group>`` per node group (sorted).
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any, Final

from schedsim.replay.metrics import ReplayMetrics, Sample

__all__ = ["CSV_COLUMNS", "metrics_to_csv", "metrics_to_data", "metrics_to_json", "sample_row"]

CSV_COLUMNS: Final = (
    "time",
    "pending",
    "running",
    "cpuRequested",
    "cpuAllocatable",
    "memoryRequested",
    "memoryAllocatable",
    "gpuRequested",
    "gpuAllocatable",
    "gpuFragmentation",
    "gpuFragmentationRatio",
    "cost",
)


def sample_row(s: Sample) -> dict[str, Any]:
    """One sample as plain data (the JSON object of a sample)."""
    return {
        "time": s.time,
        "pending": s.pending,
        "running": s.running,
        "nodes": dict(s.nodes),
        "upcoming": dict(s.upcoming),
        "cpuRequested": s.cpu_requested,
        "cpuAllocatable": s.cpu_allocatable,
        "memoryRequested": s.memory_requested,
        "memoryAllocatable": s.memory_allocatable,
        "gpuRequested": s.gpu_requested,
        "gpuAllocatable": s.gpu_allocatable,
        "gpuFragmentation": round(s.gpu_fragmentation, 6),
        "gpuFragmentationRatio": round(s.gpu_fragmentation_ratio, 6),
        "cost": round(s.cost, 6),
    }


def metrics_to_data(m: ReplayMetrics) -> dict[str, Any]:
    """The metrics as plain data (see the module docstring)."""
    return {
        "summary": m.summary(),
        "samples": [sample_row(s) for s in m.samples],
        "events": [
            {
                "time": e.time,
                "kind": e.kind,
                "group": e.group,
                "nodes": list(e.nodes),
                "reason": e.reason,
                "pods": list(e.pods),
            }
            for e in m.events
        ],
        "nodes": [
            {
                "name": n.name,
                "group": n.group,
                "added": n.added,
                "removed": n.removed,
                "hours": round(n.hours, 6),
                "cpu": round(n.cpu, 6),
                "memory": round(n.memory, 6),
                "gpu": round(n.gpu, 6),
                "pods": n.pods,
            }
            for n in m.nodes
        ],
        "unschedulable": dict(m.unschedulable),
        "latencies": dict(m.latencies),
    }


def metrics_to_json(m: ReplayMetrics) -> str:
    """`metrics_to_data` as indented JSON, with a final newline. Always JSON: a number that
    is not finite (JSON has no ``Infinity``/``NaN``) is written as ``null``."""
    return json.dumps(_finite(metrics_to_data(m)), indent=2, allow_nan=False) + "\n"


def _finite(value: Any) -> Any:
    """``value`` with every non-finite float replaced by None (JSON ``null``)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def metrics_to_csv(m: ReplayMetrics) -> str:
    """The samples as CSV (see the module docstring)."""
    groups = sorted({g for s in m.samples for g in (*s.nodes, *s.upcoming)})
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([*CSV_COLUMNS, *(f"nodes:{g}" for g in groups), *(f"upcoming:{g}" for g in groups)])
    for s in m.samples:
        row = sample_row(s)
        w.writerow(
            [
                *(row[c] for c in CSV_COLUMNS),
                *(s.nodes.get(g, 0) for g in groups),
                *(s.upcoming.get(g, 0) for g in groups),
            ]
        )
    return buf.getvalue()
