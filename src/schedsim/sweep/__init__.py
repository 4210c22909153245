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

from collections.abc import Callable, Mapping

from schedsim.engine import Cluster
from schedsim.sweep.executors import Executor, PoolExecutor, SerialExecutor, default_workers
from schedsim.sweep.results import ResultStore, ScenarioResult, to_csv, to_json, to_table
from schedsim.sweep.scenarios import Scenario, load_clusters, run_scenario, scenarios
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
    "load_clusters",
    "load_spec",
    "run_scenario",
    "run_sweep",
    "scenarios",
    "to_csv",
    "to_json",
    "to_table",
]


def run_sweep(
    spec: SweepSpec,
    executor: Executor,
    *,
    clusters: Mapping[str, Cluster] | None = None,
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
        on_result: called with each result (resumed ones first) and the total, as they come
            (a progress bar).

    Raises:
        ManifestError: the cluster's manifests are malformed.
        OSError: a result cannot be saved.
    """
    if clusters is None:
        clusters = load_clusters(spec)
    todo = scenarios(spec)
    results: list[ScenarioResult] = []
    if store is not None:
        kept = [store.load(s.name, s.fingerprint) for s in todo]
        results = [r for r in kept if r is not None]
        todo = [s for s, r in zip(todo, kept, strict=True) if r is None]
    total = len(results) + len(todo)
    if on_result is not None:
        for r in results:
            on_result(r, total)
    for r in executor.run(clusters, todo):
        if store is not None:
            store.save(r)
        results.append(r)
        if on_result is not None:
            on_result(r, total)
    return sorted(results, key=lambda r: r.index)
