"""Output written whole or not at all, through the real console script (issue 15, repro 5).

docs/cli.md promises: exit status 1 and one ``schedsim: error: ...`` line when the output
could not be written whole (a file size limit, a reader that went away, a full device, a
closed standard output), 130 and one line on Ctrl-C, and ``--output-file FILE`` holding the
whole output or nothing (written to a temporary file and renamed, as ``install``, ``sort -o``
and ``rsync`` do). Each case runs ``schedsim`` in a subprocess: the failures are the
operating system's (``RLIMIT_FSIZE``, ``/dev/full``, a closed descriptor, ``SIGINT``).
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_proc import schedsim_script

COMMANDS = [
    ["simulate"],
    ["simulate", "-o", "json"],
    ["simulate", "-o", "kss"],
    ["scale-up"],
    ["scale-up", "-o", "json"],
    ["scale-down", "-o", "json"],
    ["plugins"],
]
"""Every command and output format (each prints more than `LIMIT` bytes on the example)."""

LIMIT = 1024
"""The file size limit (bytes) of the short-write cases."""


def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def _run(
    argv: list[str],
    cwd: Path,
    *,
    stdout: Any = subprocess.PIPE,
    preexec: Callable[[], None] | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [schedsim_script(), *argv],
        cwd=cwd,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=preexec,
        env={**os.environ, **(env or {})},
    )


def _one_error_line(proc: subprocess.CompletedProcess[str], why: str) -> None:
    """Exit 2 and one line ``WHERE: cannot write the output: PROBLEM (how to go on)``, as
    schedsim words bad input (``FILE: problem``); ``why`` is ``WHERE: PROBLEM``."""
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if not ln.startswith("warning: ")]
    where, problem = why.split(": ", 1)
    hint = (
        "write it to a file with --output-file FILE instead"
        if where == "standard output"
        else "give a path that can be written"
    )
    want = f"schedsim: error: {where}: cannot write the output: {problem} ({hint})"
    assert lines == [want], proc.stderr


@pytest.mark.parametrize("unbuffered", ["", "1"])
@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_file_size_limit_is_an_error(argv: list[str], unbuffered: str, tmp_path: Path) -> None:
    """A short write (``ulimit -f``; the repro also set ``PYTHONUNBUFFERED=1``) is exit 1 with
    one line, never a silent 0 with part of the output."""
    with open(tmp_path / "out", "w") as out:
        proc = _run(
            argv,
            tmp_path,
            stdout=out,
            preexec=_limit_file_size,
            env={"PYTHONUNBUFFERED": unbuffered},
        )
    _one_error_line(proc, "standard output: file size limit exceeded")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("argv", [*COMMANDS, ["--version"], ["--help"]], ids=" ".join)
def test_full_device_is_an_error(argv: list[str], tmp_path: Path) -> None:
    """``ENOSPC`` (``>/dev/full``), ``--version`` and ``--help`` included: exit 1, one line."""
    with open("/dev/full", "w") as full:
        proc = _run(argv, tmp_path, stdout=full)
    _one_error_line(proc, "standard output: No space left on device")


@pytest.mark.parametrize("argv", [*COMMANDS, ["--version"]], ids=" ".join)
def test_closed_stdout_is_an_error(argv: list[str], tmp_path: Path) -> None:
    """``schedsim ... >&-``: one line, exit 1, no traceback."""
    proc = _run(argv, tmp_path, stdout=None, preexec=lambda: os.close(1))
    _one_error_line(proc, "standard output: it is closed")


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_reader_gone_is_an_error(argv: list[str], tmp_path: Path) -> None:
    """``EPIPE`` (the reader of a pipe exited): exit 1 as docs/cli.md promises, one line."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = _run(argv, tmp_path, stdout=write_end)
    finally:
        os.close(write_end)
    _one_error_line(proc, "standard output: the reader went away (broken pipe)")


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_output_file_holds_what_stdout_would(argv: list[str], tmp_path: Path) -> None:
    """``--output-file FILE`` writes exactly the standard output's text, nothing else there,
    and leaves no temporary file."""
    plain = _run(argv, tmp_path)
    assert plain.returncode == 0, plain.stderr
    to_file = _run([*argv, "--output-file", "result"], tmp_path)
    assert (to_file.returncode, to_file.stdout, to_file.stderr) == (0, "", plain.stderr)
    assert (tmp_path / "result").read_text() == plain.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result"]


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_output_file_too_big_leaves_the_old_file(argv: list[str], tmp_path: Path) -> None:
    """A short write to ``--output-file``: exit 1, one line, the previous file untouched and
    no partial or temporary file left."""
    (tmp_path / "result").write_text("previous\n")
    proc = _run([*argv, "--output-file", "result"], tmp_path, preexec=_limit_file_size)
    _one_error_line(proc, "result: file size limit exceeded")
    assert (tmp_path / "result").read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result"]


def test_bad_input_writes_no_output_file(tmp_path: Path) -> None:
    """Exit 2 (bad input): the output file is not created."""
    (tmp_path / "bad.yaml").write_text("kind: Pod\napiVersion: v1\nmetadata: {name: [x]}\n")
    proc = _run(["simulate", "bad.yaml", "--output-file", "result"], tmp_path)
    assert proc.returncode == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml"]


SLOW_PLUGIN = """\
import pathlib, time
class Slow:
    name = "Slow"
    def __init__(self, args, handle): pass
    def schedsim_filter(self, state, pod, node_info):
        pathlib.Path("started").touch()
        time.sleep(60)
"""
SLOW_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    filter: {enabled: [{name: Slow}]}
"""


@pytest.mark.parametrize("to_file", [True, False], ids=["output-file", "stdout"])
def test_ctrl_c_exits_130_without_partial_output(to_file: bool, tmp_path: Path) -> None:
    """``SIGINT`` during a run: exit 130 (128 + SIGINT, as shells report it), the one line
    ``schedsim: interrupted``, no traceback, nothing on stdout, and no output file (nor
    temporary file)."""
    (tmp_path / "slow_plugin.py").write_text(SLOW_PLUGIN)
    (tmp_path / "config.yaml").write_text(SLOW_CONFIG)
    argv = [
        schedsim_script(),
        "simulate",
        "--config",
        "config.yaml",
        "--plugin",
        "slow_plugin:Slow",
    ]
    if to_file:
        argv += ["--output-file", "result"]
    proc = subprocess.Popen(
        argv,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a shell's background job inherits SIGINT ignored, and Python then keeps it so:
        # the child gets the default disposition, as a command started from a terminal
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "started").exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the slow plugin never ran"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (proc.returncode, out, err) == (130, "", "schedsim: interrupted\n")
    left = {p.name for p in tmp_path.iterdir()} - {"slow_plugin.py", "config.yaml", "started"}
    assert left <= {"__pycache__"}


@pytest.mark.parametrize("command", ["simulate", "sweep"])
@pytest.mark.parametrize("delay", [0.4, 0.7, 1.0, 1.5])
def test_ctrl_c_while_starting_exits_130_without_a_traceback(
    command: str, delay: float, tmp_path: Path
) -> None:
    """``SIGINT`` while the command's modules are still imported printed a
    ``KeyboardInterrupt`` traceback (fresh-user attack, ``kill -INT`` 1.2 s after start):
    exit 130 and the one line ``schedsim: interrupted`` from the first line of schedsim's
    code on (before Python's own handler is in, the signal's default ends the process:
    -SIGINT, silent; within Python's start-up, site's traceback is Python's)."""
    argv = [schedsim_script(), command]
    if command == "sweep":
        (tmp_path / "s.yaml").write_text("commands: [simulate]\n")
        argv.append("s.yaml")
    proc = subprocess.Popen(
        argv,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    if "init_import_site" in err:  # pragma: no cover - a slow machine: Python's own start
        pytest.skip("interrupted in Python's start-up (site), before schedsim's code runs")
    assert "Traceback" not in err, err
    if proc.returncode == 0:  # pragma: no cover - finished first (a fast machine)
        return
    if command == "simulate" and " scheduled, " in (out.rstrip().splitlines() or [""])[-1]:
        # pragma: no cover - a quiet machine: the whole table was out before the signal
        # (it may still land during interpreter exit: -SIGINT after complete output)
        return
    if command == "sweep" and proc.returncode == 2 and "cluster: required" in err:
        # pragma: no cover - a quiet machine: the spec's error (exit 2) came before the signal
        return
    assert (proc.returncode, out) in ((130, ""), (-signal.SIGINT, "")), (proc.returncode, err)
    if proc.returncode == 130:
        assert err.strip().splitlines()[-1] == "schedsim: interrupted"


def _group_processes(pgid: int) -> dict[int, str]:
    """The live processes of process group ``pgid``: pid -> command line (from /proc)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:  # ended meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            found[int(entry.name)] = cmdline
    return found


def _slow_sweep(tmp_path: Path) -> None:
    """A sweep of 8 scenarios of about a second or more each (300 nodes, 1,500 pods)."""
    nodes = "".join(
        f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\n"
        f'status: {{allocatable: {{cpu: "4", memory: 16Gi, pods: "110"}}}}\n'
        for i in range(300)
    )
    pods = "".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, namespace: default}}\n"
        "spec: {containers: [{name: c, image: busybox, resources: {requests: "
        '{cpu: "100m", memory: 100Mi}}}]}\n'
        for i in range(1500)
    )
    (tmp_path / "cluster.yaml").write_text(nodes + pods)
    (tmp_path / "s.yaml").write_text(
        "cluster: [cluster.yaml]\ncommands: [simulate]\naxes: {seeds: [1, 2, 3, 4, 5, 6, 7, 8]}\n"
    )


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize(
    ("started", "after"),
    [(1, 0.3), (2, 0.0), (3, 1.0)],
    ids=["server", "first-worker", "workers+1s"],
)
def test_ctrl_c_during_a_pool_sweep(started: int, after: float, tmp_path: Path) -> None:
    """Ctrl-C (``SIGINT`` to the whole process group, as a terminal sends it) while a sweep
    runs on the process pool printed a worker's traceback (``SemLock._rebuild``
    ``FileNotFoundError``, forkserver) and waited for the running scenarios: exit 130 and the
    one line ``schedsim: interrupted`` from the parent, no traceback from any process, no
    process of the sweep left, and the resume directory holding whole results only (a rerun
    resumes them). The signal comes ``after`` seconds once ``started`` processes run the
    fork server's command line (1: the server, preloading schedsim; 2: it and the first
    worker, the others still starting; 3: two workers, mid-scenario)."""
    _slow_sweep(tmp_path)
    proc = subprocess.Popen(
        [schedsim_script(), "sweep", "s.yaml", "--workers", "3", "--resume", "state"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the test sends it a terminal's ^C
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 120
        # the fork server and the workers it forks share its command line
        while sum("forkserver" in c for c in _group_processes(proc.pid).values()) < started:
            if proc.poll() is not None:  # pragma: no cover - a fast machine: all done
                break
            assert time.monotonic() < deadline, "the pool's workers never started"
            time.sleep(0.02)
        time.sleep(after)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        deadline = time.monotonic() + 10
        while _group_processes(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = _group_processes(proc.pid)
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in _group_processes(proc.pid):  # pragma: no cover - the failure path
            os.kill(pid, signal.SIGKILL)
    assert "Traceback" not in err, err
    assert not left, left
    if proc.returncode == 0:  # pragma: no cover - every scenario done before the signal
        return
    assert (proc.returncode, out, err) == (130, "", "schedsim: interrupted\n")
    saved = sorted((tmp_path / "state").iterdir())
    assert all(p.name.endswith("+simulate.json") for p in saved), saved
    for p in saved:
        assert json.loads(p.read_text())["scenario"] == p.name.removesuffix(".json")
    rerun = _run(["sweep", "s.yaml", "--serial", "--resume", "state"], tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    assert rerun.stdout.count("resumed") == len(saved)


TERMINATING = [signal.SIGTERM, signal.SIGHUP]
"""The signals schedsim handles as Ctrl-C (F12: ``kill``, ``timeout``, CI cancellation send
``SIGTERM``, a closed ssh session ``SIGHUP``); a shell reports 128 + the number for a command
they end (143, 129), as it reports 130 for Ctrl-C."""


@pytest.mark.parametrize("signum", TERMINATING, ids=lambda s: signal.Signals(s).name)
@pytest.mark.parametrize("to_file", [True, False], ids=["output-file", "stdout"])
def test_sigterm_and_sighup_stop_a_run_as_ctrl_c(
    signum: int, to_file: bool, tmp_path: Path
) -> None:
    """``SIGTERM``/``SIGHUP`` during a run ended the process by the signal's default action
    (no clean-up): exit 128 + signum, the one line ``schedsim: interrupted (SIGTERM)``, no
    traceback, nothing on stdout, no output (nor temporary) file."""
    (tmp_path / "slow_plugin.py").write_text(SLOW_PLUGIN)
    (tmp_path / "config.yaml").write_text(SLOW_CONFIG)
    argv = [
        schedsim_script(),
        "simulate",
        "--config",
        "config.yaml",
        "--plugin",
        "slow_plugin:Slow",
    ]
    if to_file:
        argv += ["--output-file", "result"]
    proc = subprocess.Popen(
        argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "started").exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the slow plugin never ran"
            time.sleep(0.05)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    name = signal.Signals(signum).name
    assert (proc.returncode, out, err) == (128 + signum, "", f"schedsim: interrupted ({name})\n")
    left = {p.name for p in tmp_path.iterdir()} - {"slow_plugin.py", "config.yaml", "started"}
    assert left <= {"__pycache__"}


_SIGNAL_IN_WRITE = """\
import os, signal, sys
from schedsim import cli
from schedsim.cli import output
real = output.write_all
def write_all(fd, data, where):
    real(fd, data[: len(data) // 2], where)  # half the output in the temporary file
    os.kill(os.getpid(), int(sys.argv[1]))
    real(fd, data[len(data) // 2 :], where)
output.write_all = write_all
sys.exit(cli.main(["simulate", "-o", "json", "--output-file", "result.json"]))
"""


@pytest.mark.parametrize("signum", TERMINATING, ids=lambda s: signal.Signals(s).name)
def test_sigterm_while_the_output_file_is_written_leaves_no_temporary_file(
    signum: int, tmp_path: Path
) -> None:
    """The signal arriving while ``--output-file``'s temporary file is half written (F12:
    ``timeout -s TERM`` just before the end left ``.result.json.XXXX.tmp``, tens of MB): exit
    128 + signum and neither the file nor a temporary file left."""
    proc = subprocess.run(
        [sys.executable, "-c", _SIGNAL_IN_WRITE, str(int(signum))],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    name = signal.Signals(signum).name
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        128 + signum,
        "",
        f"schedsim: interrupted ({name})\n",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("signum", TERMINATING, ids=lambda s: signal.Signals(s).name)
def test_sigterm_to_a_pool_sweep_ends_its_workers(signum: int, tmp_path: Path) -> None:
    """``kill -TERM`` (or ``-HUP``) to the parent of a pool sweep, mid-scenario, left the fork
    server, the resource tracker and the workers running, re-parented to pid 1 (F12): exit
    128 + signum, one line, no process of the sweep left, whole results only in the resume
    directory (a rerun resumes them), as for Ctrl-C (`test_ctrl_c_during_a_pool_sweep`)."""
    _slow_sweep(tmp_path)
    proc = subprocess.Popen(
        [schedsim_script(), "sweep", "s.yaml", "--workers", "2", "--resume", "state"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: what is left of it can be found
    )
    try:
        deadline = time.monotonic() + 120
        while sum("forkserver" in c for c in _group_processes(proc.pid).values()) < 3:
            if proc.poll() is not None:  # pragma: no cover - a fast machine: all done
                break
            assert time.monotonic() < deadline, "the pool's workers never started"
            time.sleep(0.02)
        time.sleep(1.0)
        if proc.poll() is None:
            proc.send_signal(signum)  # the parent only, as `kill PID` does
        out, err = proc.communicate(timeout=60)
        deadline = time.monotonic() + 10
        while _group_processes(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = _group_processes(proc.pid)
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in _group_processes(proc.pid):  # the failure path: no orphan outlives the test
            os.kill(pid, signal.SIGKILL)
    assert not left, left
    if proc.returncode == 0:  # pragma: no cover - every scenario done before the signal
        return
    name = signal.Signals(signum).name
    assert (proc.returncode, out, err) == (128 + signum, "", f"schedsim: interrupted ({name})\n")
    saved = sorted((tmp_path / "state").iterdir())
    assert all(p.name.endswith("+simulate.json") for p in saved), saved
    rerun = _run(["sweep", "s.yaml", "--serial", "--resume", "state"], tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    assert rerun.stdout.count("resumed") == len(saved)
