"""Ctrl-C during ``schedsim sweep --ray``: the same clean stop as the local process pool
(`schedsim.sweep.executors`): submitted Ray tasks cancelled, the local Ray instance shut
down, the results already saved kept, ``schedsim: interrupted`` and exit status 130 (the
shell's 128 + SIGINT), no traceback."""

from __future__ import annotations

import importlib.util
import json
import signal
import subprocess
import sys
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from schedsim.sweep import load_clusters, load_spec, scenarios
from schedsim.sweep.ray import RayExecutor

_RAY = importlib.util.find_spec("ray") is not None


def _long_sweep(directory: Path, name: str, variants: int = 40) -> Path:
    """``variants`` node-group files (conftest's ``capped.yaml`` with 3, 4, ... nodes at
    most) x simulate and scale-up on conftest's cluster: long enough on Ray to be
    interrupted halfway."""
    capped = (directory / "capped.yaml").read_text()
    names = []
    for i in range(variants):
        (directory / f"g{i}.yaml").write_text(capped.replace("maxSize: 3", f"maxSize: {3 + i}"))
        names.append(f"g{i}: g{i}.yaml")
    spec = directory / name
    spec.write_text(
        "kind: Sweep\ncluster: [cluster.yaml]\ncommands: [simulate, scale-up]\n"
        "axes:\n  nodeGroups: {" + ", ".join(names) + "}\n"
    )
    return spec


@pytest.mark.skipif(not _RAY, reason="ray is not installed (pip install 'schedsim[ray]')")
def test_ctrl_c_stops_a_ray_sweep_cleanly(sweep_dir: Path) -> None:
    """SIGINT after the first results are saved: exit 130 with ``schedsim: interrupted``
    and no traceback; every saved result is whole JSON, and ``--resume`` finishes the
    grid from them (the interrupted run's results are reused, not redone)."""
    tmp_path = sweep_dir
    spec = _long_sweep(sweep_dir, "long.yaml")
    saved = tmp_path / "results"
    code = "import sys; from schedsim.cli import main; sys.exit(main())"
    command = [sys.executable, "-c", code, "sweep", "--ray", "--resume", str(saved), str(spec)]
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        if saved.is_dir() and len(list(saved.glob("*.json"))) >= 2:
            break
        time.sleep(0.05)
    if proc.poll() is not None:
        _, err = proc.communicate()
        if "ray.init" in err:
            pytest.skip(f"Ray cannot start here: {err.strip()[-300:]}")
        pytest.fail(f"the sweep ended before it could be interrupted: {proc.returncode} {err}")
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("the sweep did not stop within 120 s of SIGINT")
    assert proc.returncode == 130
    assert err.rstrip().splitlines()[-1] == "schedsim: interrupted"
    assert "Traceback" not in err
    kept = sorted(saved.glob("*.json"))
    assert 2 <= len(kept) < 80
    for path in kept:
        json.loads(path.read_text())  # whole, not cut off by the interrupt
    mtimes = {p.name: p.stat().st_mtime_ns for p in kept}
    rerun = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "sweep",
            "--serial",
            "--resume",
            str(saved),
            str(spec),
            "-o",
            "csv",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert rerun.returncode == 0, rerun.stderr
    assert len(rerun.stdout.strip().splitlines()) == 1 + 80  # header + every scenario
    assert {p.name: p.stat().st_mtime_ns for p in saved.glob("*.json") if p.name in mtimes} == (
        mtimes
    )


class _FakeRay(types.ModuleType):
    """The calls `RayExecutor.run` makes, recorded; tasks never finish on their own."""

    def __init__(self) -> None:
        super().__init__("ray")
        self.started = False
        self.cancelled: list[tuple[int, bool]] = []
        self.submitted = 0

    def is_initialized(self) -> bool:
        return self.started

    def init(self, address: Any = None, **kwargs: Any) -> None:
        self.started = True

    def shutdown(self) -> None:
        self.started = False

    def put(self, value: Any) -> Any:
        return value

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": 1.0}

    def remote(self, fn: Any) -> Any:
        fake = self

        class _Task:
            @staticmethod
            def remote(*args: Any) -> int:
                fake.submitted += 1
                return fake.submitted

        return _Task

    def wait(self, refs: list[int], num_returns: int) -> tuple[list[int], list[int]]:
        raise KeyboardInterrupt  # Ctrl-C while the driver waits for results

    def cancel(self, ref: int, force: bool = False) -> None:
        self.cancelled.append((ref, force))


def test_interrupt_shuts_down_the_instance_it_started(
    sweep_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A KeyboardInterrupt in ``ray.wait`` shuts down the local instance the executor
    started (which ends its workers and their tasks) and propagates to the command line;
    no task is cancelled one by one there (a forced cancel racing a task's completion can
    abort Ray's driver)."""
    fake = _FakeRay()
    monkeypatch.setitem(sys.modules, "ray", fake)
    spec = load_spec(str(sweep_dir / "sweep.yaml"))
    run: Iterator[Any] = RayExecutor().run(load_clusters(spec), scenarios(spec))
    with pytest.raises(KeyboardInterrupt):
        next(run)
    assert fake.submitted > 0
    assert fake.cancelled == []
    assert not fake.started


def test_interrupt_cancels_submitted_tasks_on_a_cluster_it_did_not_start(
    sweep_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ray already initialized by the caller (a shared cluster): a KeyboardInterrupt in
    ``ray.wait`` cancels every submitted task (force: a running task's worker is ended,
    ray.cancel's documented way to stop a running task), leaves the instance running and
    propagates."""
    fake = _FakeRay()
    fake.started = True
    monkeypatch.setitem(sys.modules, "ray", fake)
    spec = load_spec(str(sweep_dir / "sweep.yaml"))
    run: Iterator[Any] = RayExecutor().run(load_clusters(spec), scenarios(spec))
    with pytest.raises(KeyboardInterrupt):
        next(run)
    assert fake.submitted > 0
    assert fake.cancelled == [(i, True) for i in range(1, fake.submitted + 1)]
    assert fake.started
