"""Executors: where a sweep's scenarios run.

Each executor takes the loaded clusters (`load_clusters`: one per ``traces`` variant) once and
yields `ScenarioResult` objects as they
finish (in completion order; `schedsim.sweep.run_sweep` puts them back in scenario order).
Every worker runs `run_scenario`, which turns a failure into a failed result, so one bad
scenario never stops the others.

- `SerialExecutor`: in this process, one after another (the reference).
- `PoolExecutor`: a local process pool, one worker per core by default. The clusters are
  pickled once per worker (the pool's initializer), not once per scenario; workers are
  started by a fork server (no fork of a process running threads) that has imported
  schedsim and built the default profile once (`schedsim.sweep.warm`). Ctrl-C is the
  parent's alone: the fork server is started with ``SIGINT`` ignored (so are the workers it
  forks, and their initializer ignores it again), and on ``KeyboardInterrupt`` the parent
  cancels what is queued, ends the workers (``SIGTERM``) and lets the interrupt go on to the
  command line (exit 130, ``schedsim: interrupted``); results already saved stay whole.
  ``SIGTERM`` and ``SIGHUP`` to the parent are the same ``KeyboardInterrupt`` there
  (`schedsim.cli.output.Interrupted`), so the workers are ended for them too.
- `schedsim.sweep.ray.RayExecutor`: Ray tasks (``--ray``), each cluster put once in Ray's
  object store.
"""

from __future__ import annotations

import functools
import itertools
import multiprocessing
import multiprocessing.forkserver
import os
import signal
import threading
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from typing import Protocol

from schedsim.engine import Engine
from schedsim.sweep.results import ScenarioResult
from schedsim.sweep.scenarios import Scenario, SweepInput, run_scenario

__all__ = [
    "IN_FLIGHT_PER_WORKER",
    "Executor",
    "PoolExecutor",
    "SerialExecutor",
    "default_workers",
]


class Executor(Protocol):
    """Runs scenarios on a cluster."""

    def run(
        self, clusters: Mapping[str, SweepInput], scenarios: Iterable[Scenario]
    ) -> Iterator[ScenarioResult]:
        """Yield one result per scenario (run on ``clusters[scenario.cluster_key]``), as
        they finish; ``scenarios`` is consumed as the runs go (a grid is streamed, never
        built whole)."""
        ...


class SerialExecutor:
    """Runs the scenarios in this process, in order (one Engine per config, reused)."""

    def run(
        self, clusters: Mapping[str, SweepInput], scenarios: Iterable[Scenario]
    ) -> Iterator[ScenarioResult]:
        """Yield each scenario's result in turn (one scenario taken at a time)."""
        engines: dict[str, Engine] = {}
        for s in scenarios:
            yield run_scenario(clusters, s, engines)


def default_workers() -> int:
    """One worker per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


IN_FLIGHT_PER_WORKER = 4
"""Scenarios a pool or Ray run submits ahead per worker (enough to keep every worker busy;
the grid itself is streamed)."""

_clusters: Mapping[str, SweepInput] = {}
_engines: dict[str, Engine] = {}


def _start_fork_server() -> None:
    """Start the fork server (if it is not running) with ``SIGINT`` ignored: the server
    and the workers it forks inherit that, so Ctrl-C, which a terminal sends to the whole
    process group, reaches only the parent's handler (it ends the workers itself): no
    ``KeyboardInterrupt`` traceback from the server's preload or a worker's start (a
    ``SemLock._rebuild`` ``FileNotFoundError`` once the parent had gone)."""
    if threading.current_thread() is not threading.main_thread():
        multiprocessing.forkserver.ensure_running()
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        multiprocessing.forkserver.ensure_running()
    finally:
        signal.signal(signal.SIGINT, previous)


_DEFERRED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals `_sigint_deferred` holds back: Ctrl-C, and the two the command line handles
as Ctrl-C is (`schedsim.cli.output.interrupt_signals`)."""


@contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Hold Ctrl-C (and ``SIGTERM``, ``SIGHUP`` when Python handles them) back while the
    block runs, then deliver it: a submit may start a worker,
    and a parent interrupted while it sends the worker its start-up data leaves a worker it
    does not know of, which then prints a traceback of its own (``pickle data was
    truncated``, or ``SemLock._rebuild``'s ``FileNotFoundError`` once the parent is gone)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = {
        signum: signal.signal(signum, lambda signum, frame: held.append(signum))
        for signum in _DEFERRED
        if signum == signal.SIGINT or callable(signal.getsignal(signum))
    }
    try:
        yield
    finally:
        for restored, handler in previous.items():
            signal.signal(restored, handler)
    for signum in dict.fromkeys(held):
        handler = previous[signal.Signals(signum)]
        if callable(handler):
            handler(signum, None)
        elif handler == signal.SIG_DFL:  # pragma: no cover - schedsim's main has a handler
            signal.raise_signal(signum)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Cancel the queued scenarios and end the workers at once (they ignore ``SIGINT``;
    ``SIGTERM``'s default action ends them without a word), waiting until they are gone
    so that none outlives the parent (a worker still starting would then fail to open the
    pool's semaphores and print a traceback)."""
    # the pool keeps its workers in `_processes` (Python 3.14 adds terminate_workers()),
    # which shutdown() drops: taken first
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        try:
            process.terminate()
        except (OSError, ValueError, AttributeError):  # pragma: no cover - already gone
            pass
    for process in processes:
        try:
            process.join(5)
        except (OSError, ValueError, AttributeError, AssertionError):  # pragma: no cover
            pass


def _init_worker(clusters: Mapping[str, SweepInput]) -> None:
    global _clusters
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's (_stop_workers)
    _clusters = clusters
    _engines.clear()


def _run_in_worker(scenario: Scenario, cluster: SweepInput | None = None) -> ScenarioResult:
    used = _clusters if cluster is None else {scenario.cluster_key: cluster}
    return run_scenario(used, scenario, _engines)


class PoolExecutor:
    """A local process pool.

    Args:
        workers: processes (default: `default_workers`).
        ship_per_scenario: send the scenario's cluster with it instead of all clusters once
            per worker
            (only to measure what shipping once saves: benchmarks/sweep.py).

    Failures of the pool itself (a worker killed) become failed results of the scenarios it
    held.
    """

    def __init__(self, workers: int | None = None, *, ship_per_scenario: bool = False) -> None:
        self.workers = workers if workers is not None else default_workers()
        self.ship_per_scenario = ship_per_scenario

    def run(
        self, clusters: Mapping[str, SweepInput], scenarios: Iterable[Scenario]
    ) -> Iterator[ScenarioResult]:
        """Yield results as workers finish them; at most `IN_FLIGHT_PER_WORKER` scenarios
        per worker are submitted ahead, the rest taken from ``scenarios`` as results come."""
        source = iter(scenarios)
        window = self.workers * IN_FLIGHT_PER_WORKER
        first = list(itertools.islice(source, window))
        if not first:
            return
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["schedsim.sweep.executors", "schedsim.sweep.warm"])
        _start_fork_server()
        shipped = {} if self.ship_per_scenario else dict(clusters)
        with ProcessPoolExecutor(
            max_workers=min(self.workers, len(first)),
            mp_context=ctx,
            initializer=functools.partial(_init_worker, shipped),
        ) as pool:

            def submit(s: Scenario) -> Future[ScenarioResult]:
                cluster = (clusters[s.cluster_key],) if self.ship_per_scenario else ()
                with _sigint_deferred():  # it may start a worker
                    return pool.submit(_run_in_worker, s, *cluster)

            pending: dict[Future[ScenarioResult], Scenario] = {}
            try:
                for s in first:
                    pending[submit(s)] = s
                while pending:
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for f in done:
                        s = pending.pop(f)
                        error = f.exception()
                        if error is None:
                            yield f.result()
                        else:
                            yield ScenarioResult.failed(
                                s.name,
                                s.index,
                                s.axes,
                                s.fingerprint,
                                f"{type(error).__name__}: {error}",
                                0.0,
                            )
                    for s in itertools.islice(source, len(done)):
                        pending[submit(s)] = s
            except BaseException:  # Ctrl-C, or the consumer stopped (GeneratorExit)
                _stop_workers(pool)
                raise
