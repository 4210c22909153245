"""CA's ``BenchmarkScheduleRevert`` (DRA: schedule pods with shared and pod-owned claims between
forks, commits and reverts) over the clone design and the delta (PatchSet) design.

Run: ``pytest benchmarks/test_dra_schedule_revert.py --benchmark-enable`` (select with ``-k``,
e.g. ``-k "100x100/OwnedClaims/ForkRevert"`` or ``-k delta``). Workload, designs and the
memory measure are described in ``benchmarks/dra_schedule_revert.py``; the table with ratios
comes from ``python benchmarks/dra_schedule_revert.py`` (same workload, same code).

Environment:

* ``SCHEDSIM_BENCH_DRA_LOOP``: nodes the per-iteration loop visits, a number or ``all``
  (default 1; the clone designs take ~1 s per deep copy of a 100-node claim map, CA's full loop
  of 100 nodes would take hours). Every design runs the same loop, so ratios are exact.
* ``SCHEDSIM_BENCH_DRA_MAX_CLONE_FORKS`` (default 6): a clone design whose iteration makes
  more deep copies of the claim map is skipped (the skip message gives the count).
* ``SCHEDSIM_BENCH_DRA_ROUNDS``: pedantic rounds (default 3 for delta, 1 for the clone designs).

Each test first runs one unchecked-timing iteration asserting that every pod was scheduled
and every claim it uses is allocated and reserved for it, then times the iterations, then
records the tracemalloc peak of one more iteration in ``extra_info["peak_bytes"]``.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from dra_schedule_revert import DESIGNS, Config, configs, peak_bytes, run_iteration

_LOOP_ENV = os.environ.get("SCHEDSIM_BENCH_DRA_LOOP", "1")
LOOP: int | None = None if _LOOP_ENV == "all" else int(_LOOP_ENV)
MAX_CLONE_FORKS = int(os.environ.get("SCHEDSIM_BENCH_DRA_MAX_CLONE_FORKS", "6"))
_ROUNDS = os.environ.get("SCHEDSIM_BENCH_DRA_ROUNDS")


def _rounds(design: str) -> int:
    if _ROUNDS:
        return int(_ROUNDS)
    return 3 if design == "delta" else 1


@pytest.mark.parametrize("design", DESIGNS)
@pytest.mark.parametrize("cfg", configs(), ids=lambda c: c.name)
def test_schedule_revert(benchmark: Any, cfg: Config, design: str) -> None:
    """One BenchmarkScheduleRevert configuration on one design."""
    visited = cfg.nodes if LOOP is None else min(LOOP, cfg.nodes)
    if design != "delta":
        copies = cfg.clone_forks_per_node(design) * visited
        if copies > MAX_CLONE_FORKS:
            pytest.skip(
                f"{design}: {copies} deep copies of the claim map per iteration "
                f"(> SCHEDSIM_BENCH_DRA_MAX_CLONE_FORKS={MAX_CLONE_FORKS})"
            )
    benchmark.group = f"ScheduleRevert {cfg.name}"
    run_iteration(design, cfg, LOOP, check=True)  # a benchmark of failures is worthless
    benchmark.pedantic(
        run_iteration, args=(design, cfg, LOOP), rounds=_rounds(design), iterations=1
    )
    benchmark.extra_info["loop_nodes"] = visited
    benchmark.extra_info["peak_bytes"] = peak_bytes(design, cfg, LOOP)
