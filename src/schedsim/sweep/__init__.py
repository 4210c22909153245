"""What-if sweeps: the same cluster under a grid of traces, node groups, scheduler
configurations, feature gates and commands (``simulate``, ``scale-up``, ``scale-down``,
``replay``), run serially, on a local process pool or on Ray.

.. code-block:: python

    from schedsim.sweep import PoolExecutor, load_spec, run_sweep

    results = run_sweep(load_spec("sweep.yaml"), PoolExecutor())

Layers: `spec` (the YAML format) -> `scenarios` (the product, `run_scenario`) ->
`executors` (serial, pool) and `ray` (Ray) -> `results` (rows, resume directory, table /
JSON / CSV) -> `report` (the HTML page comparing scenarios). The command line
(``schedsim sweep``) is `schedsim.cli.sweep`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from schedsim.sweep.executors import Executor, PoolExecutor, SerialExecutor, default_workers
from schedsim.sweep.results import ResultStore, ScenarioResult, to_csv, to_json, to_table
from schedsim.sweep.scenarios import (
    Scenario,
    SweepInput,
    iter_scenarios,
    load_clusters,
    run_scenario,
    scenario_count,
    scenarios,
)
from schedsim.sweep.spec import SweepSpec, load_spec

__all__ = [
    "Executor",
    "PoolExecutor",
    "ResultStore",
    "Scenario",
    "ScenarioResult",
    "SerialExecutor",
    "SweepSpec",
    "default_workers",
    "iter_scenarios",
    "load_clusters",
    "load_spec",
    "run_scenario",
    "run_sweep",
    "scenario_count",
    "scenarios",
    "to_csv",
    "to_json",
    "to_table",
]


def run_sweep(
    spec: SweepSpec,
    executor: Executor,
    *,
    clusters: Mapping[str, SweepInput] | None = None,
    store: ResultStore | None = None,
    on_result: Callable[[ScenarioResult, int], None] | None = None,
) -> list[ScenarioResult]:
    """Run every scenario of ``spec`` on ``executor``; results in scenario order.

    Args:
        spec: the loaded spec.
        executor: where to run (`SerialExecutor`, `PoolExecutor`, ``RayExecutor``).
        clusters: the clusters by ``traces`` variant (default: `load_clusters`, each
            loaded once).
        store: the resume directory: scenarios with a matching stored result are not run,
            each new successful result is saved as soon as it arrives.
        on_result: called with each result and the total, as they come (a progress bar);
            a resumed result when the stream reaches its scenario.

    Raises:
        ManifestError: the cluster's manifests are malformed.
        OSError: a result cannot be saved.
    """
    if clusters is None:
        clusters = load_clusters(spec)
    total = scenario_count(spec)
    results: list[ScenarioResult] = []

    def todo() -> Iterator[Scenario]:
        # the grid is streamed: a scenario is built when the executor takes it, and one
        # with a stored result is reported and skipped then
        for s in iter_scenarios(spec):
            kept = store.load(s.name, s.fingerprint) if store is not None else None
            if kept is None:
                yield s
                continue
            results.append(kept)
            if on_result is not None:
                on_result(kept, total)

    for r in executor.run(clusters, todo()):
        if store is not None:
            store.save(r)
        results.append(r)
        if on_result is not None:
            on_result(r, total)
    return sorted(results, key=lambda r: r.index)
