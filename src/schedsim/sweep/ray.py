"""`RayExecutor`: a sweep's scenarios as Ray tasks (``schedsim sweep --ray [ADDRESS]``).

The only module that imports ``ray`` (an optional extra: ``pip install 'schedsim[ray]'``).
Each cluster is put once in Ray's object store (``ray.put``) and every task receives the
reference of its scenario's, so each node fetches it once; each worker process keeps one
Engine per config. Results come back as tasks finish (``ray.wait``).
"""

from __future__ import annotations

import itertools
import signal
import socket
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from schedsim.engine import Engine
from schedsim.sweep.executors import IN_FLIGHT_PER_WORKER
from schedsim.sweep.results import ScenarioResult
from schedsim.sweep.scenarios import Scenario, SweepInput, run_scenario

__all__ = ["PROBE_TIMEOUT_S", "RayExecutor", "RayUnavailableError", "probe_address"]


class RayUnavailableError(RuntimeError):
    """Ray is not installed (``pip install 'schedsim[ray]'``) or cannot connect."""


_engines: dict[str, Engine] = {}

PROBE_TIMEOUT_S = 5.0
"""Seconds to wait for a TCP connection to a ``--ray HOST:PORT`` address before ``ray.init``
(which retries an unreachable address for minutes)."""


def probe_address(address: str) -> None:
    """Check that ``HOST:PORT`` (or ``ray://HOST:PORT``) accepts a TCP connection.

    ``auto`` and addresses without a port are left to ``ray.init``.

    Raises:
        RayUnavailableError: nothing listens there (within `PROBE_TIMEOUT_S` seconds).
    """
    hostport = address.removeprefix("ray://")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        return
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_TIMEOUT_S):
            pass
    except OSError as e:
        raise RayUnavailableError(
            f"cannot reach Ray at {address}: {e.strerror or e}; start a cluster there "
            "(ray start --head) or give --ray without an address for a local instance"
        ) from None


def _task(cluster: SweepInput, scenario: Scenario) -> ScenarioResult:
    return run_scenario({scenario.cluster_key: cluster}, scenario, _engines)


def _sigterm_handler() -> Any:
    """The Python ``SIGTERM`` handler in force, to be put back after ``ray.init``; None when
    there is none (Ray's own is then kept) or outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        return None
    handler = signal.getsignal(signal.SIGTERM)
    return handler if callable(handler) else None


def _restore_sigterm(handler: Any) -> None:
    if handler is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, handler)


def _cancel(ray: Any, pending: Mapping[Any, Scenario]) -> None:
    """Cancel the submitted tasks (``force``: a running task's worker is killed), each
    on its own; one already finished or lost is no reason to leave the others."""
    for ref in pending:
        try:
            ray.cancel(ref, force=True)
        except Exception:  # finished, or the cluster is already gone
            continue


class RayExecutor:
    """Runs scenarios as Ray tasks.

    Args:
        address: an existing cluster's address (``ray://HOST:10001`` or ``auto``), or None
            for a local instance (``ray.init()``). When Ray is already initialized in this
            process, that instance is used and left running.
        num_cpus: CPUs of a local instance (default: all).

    Raises:
        RayUnavailableError: from `run`, when ray cannot be imported or ``ray.init`` fails.
    """

    def __init__(self, address: str | None = None, *, num_cpus: int | None = None) -> None:
        self.address = address
        self.num_cpus = num_cpus

    def run(
        self, clusters: Mapping[str, SweepInput], scenarios: Iterable[Scenario]
    ) -> Iterator[ScenarioResult]:
        """Yield results as tasks finish, with at most `IN_FLIGHT_PER_WORKER` tasks per Ray
        CPU submitted ahead (the grid is streamed); a task that raised (a worker died)
        becomes a failed result."""
        try:
            import ray
        except ImportError as e:
            raise RayUnavailableError(
                f"--ray needs Ray: pip install 'schedsim[ray]' ({e})"
            ) from None
        started = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if self.num_cpus is not None and self.address is None:
                kwargs["num_cpus"] = self.num_cpus
            if self.address:
                probe_address(self.address)
            # ray.init puts its own SIGTERM handler in (sys.exit): the command line's, which
            # stops the sweep as Ctrl-C does (schedsim.cli.output.interrupt_signals), is put back
            sigterm = _sigterm_handler()
            try:
                ray.init(address=self.address, **kwargs)
                _restore_sigterm(sigterm)
            except KeyboardInterrupt:
                # Ctrl-C while Ray starts: end what was started, then let the command line
                # report it (exit 130)
                if ray.is_initialized():
                    ray.shutdown()
                raise
            except Exception as e:
                raise RayUnavailableError(f"ray.init({self.address or ''}) failed: {e}") from None
            started = True
        pending: dict[Any, Scenario] = {}
        try:
            refs = {key: ray.put(c) for key, c in clusters.items()}
            task = ray.remote(_task)
            source = iter(scenarios)
            cpus = int(ray.cluster_resources().get("CPU", 1))  # type: ignore[no-untyped-call]
            window = max(1, cpus) * IN_FLIGHT_PER_WORKER
            for s in itertools.islice(source, window):  # one by one: Ctrl-C may come here
                pending[task.remote(refs[s.cluster_key], s)] = s
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                for obj in done:
                    s = pending.pop(obj)
                    try:
                        yield ray.get(obj)
                    except Exception as e:
                        yield ScenarioResult.failed(
                            s.name, s.index, s.axes, s.fingerprint, f"{type(e).__name__}: {e}", 0.0
                        )
                for s in itertools.islice(source, len(done)):
                    pending[task.remote(refs[s.cluster_key], s)] = s
        except (KeyboardInterrupt, GeneratorExit):
            # Ctrl-C (or the consumer stopped): results already yielded (and saved) stay.
            # On a cluster this executor did not start, the submitted tasks are cancelled,
            # not left running; one it started is shut down below, which ends its workers
            # (a forced ray.cancel racing a task's completion there can abort the driver:
            # task_manager.cc "Tried to complete task that was not pending").
            if not started:
                _cancel(ray, pending)
            raise
        finally:
            if started:
                ray.shutdown()
