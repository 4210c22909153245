"""Where every ``schedsim`` command's output goes: whole or not at all, and warnings kept.

Every command renders its whole output as text first, then hands it to `deliver`, which
writes it to standard output or, with ``--output-file FILE``, to a temporary file in FILE's
directory that is renamed over FILE only once every byte is written (the rename is atomic on
POSIX, so FILE holds the old or the new output, never a part). Every write is checked: a
short write (a file size limit), ``EPIPE`` (the reader went away, as with ``| head``),
``ENOSPC`` (``/dev/full``, a full disk) or a closed standard output raise `OutputError`,
which the command line turns into one ``schedsim: error: WHERE: cannot write the output:
PROBLEM (HOW TO GO ON)`` line and exit status 2 (`OUTPUT_ERROR_STATUS`).

`run_command` is the one wrapper around a command: it also turns Ctrl-C (``SIGINT``) into one
``schedsim: interrupted`` line and exit status 130 (the shell's 128 + SIGINT), after removing
any temporary file. ``SIGTERM`` and ``SIGHUP`` (``kill``, ``timeout``, a CI cancellation, a
closed ssh session) are handled the same way while `interrupt_signals` is in force (the
command line's `main`): they raise `Interrupted`, a ``KeyboardInterrupt``, so every clean-up
Ctrl-C gets runs for them too (the temporary file removed, a sweep's pool workers ended), and
the exit status is 128 + the signal's number (143, 129) with ``schedsim: interrupted
(SIGTERM)``.

`warn` is the one way a command prints a warning: it goes to standard error at once
(``warning: ...``) and is recorded, so the JSON outputs can carry the same warnings in their
top-level ``warnings`` list (`recorded_warnings`).
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from schedsim.api.loading import inputs

__all__ = [
    "INTERRUPT_SIGNALS",
    "OUTPUT_ERROR_STATUS",
    "STDOUT_NAME",
    "Interrupted",
    "OutputError",
    "Parser",
    "check_not_input",
    "check_outputs",
    "check_writable",
    "deliver",
    "deliver_later",
    "error_line",
    "interrupt_signals",
    "interrupted_status",
    "output_problem",
    "recorded_warnings",
    "run_command",
    "stdout_problem",
    "warn",
    "write_all",
]

STDOUT = 1
"""The file descriptor of standard output."""

OUTPUT_ERROR_STATUS = 2
"""The exit status when the output cannot be written: a problem with what the command was
given (the path, the descriptor), as bad input is."""

_warnings: list[dict[str, str]] = []


class OutputError(Exception):
    """The output could not be written whole (the message says why, in a user's words)."""


STDOUT_NAME = "standard output"
"""How messages name standard output."""


class Interrupted(KeyboardInterrupt):
    """``SIGTERM`` or ``SIGHUP`` arrived (`interrupt_signals`): stops the command as Ctrl-C
    does, with the signal's number (``signum``) for the exit status."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


INTERRUPT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""The signals handled as Ctrl-C is (`interrupt_signals`)."""


def _raise_interrupted(signum: int, frame: object) -> None:
    raise Interrupted(signum)


@contextmanager
def interrupt_signals() -> Iterator[None]:
    """While the block runs, ``SIGTERM`` and ``SIGHUP`` raise `Interrupted` (where their
    disposition is the default one: a signal ignored, as ``nohup`` ignores ``SIGHUP``, or
    handled by an embedding application, is left alone); restored afterwards. Only in the
    main thread (where Python runs signal handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, Any] = {}
    for signum in INTERRUPT_SIGNALS:
        if signal.getsignal(signum) == signal.SIG_DFL:
            previous[signum] = signal.signal(signum, _raise_interrupted)
    try:
        yield
    finally:
        for restored, handler in previous.items():
            signal.signal(restored, handler)


def interrupted_status(e: KeyboardInterrupt) -> int:
    """Print the one ``schedsim: interrupted`` line for ``e`` (naming the signal when it was
    not Ctrl-C) and return the exit status: 128 + the signal's number, as a shell reports a
    command the signal ended (130 for Ctrl-C, 143 for ``SIGTERM``, 129 for ``SIGHUP``)."""
    signum = e.signum if isinstance(e, Interrupted) else signal.SIGINT
    if signum == signal.SIGINT:
        error_line("schedsim: interrupted")
    else:
        error_line(f"schedsim: interrupted ({signal.Signals(signum).name})")
    return 128 + signum


def output_problem(where: str, problem: str) -> str:
    """The error line's text for output that cannot be written, as schedsim's input errors
    are worded (``FILE: problem``) and saying how to go on: ``WHERE: cannot write the
    output: PROBLEM (HOW TO GO ON)``."""
    if where == STDOUT_NAME:
        hint = "write it to a file with --output-file FILE instead"
    else:
        hint = "give a path that can be written"
    return f"{where}: cannot write the output: {problem} ({hint})"


def _why(e: OSError, where: str) -> str:
    if e.errno == errno.EPIPE:
        return output_problem(where, "the reader went away (broken pipe)")
    if e.errno == errno.EBADF:
        return output_problem(where, "it is closed")
    if e.errno == errno.EFBIG:
        return output_problem(where, "file size limit exceeded")
    return output_problem(where, str(e.strerror or e))


def write_all(fd: int, data: bytes, where: str) -> None:
    """Write every byte of ``data`` to ``fd``, retrying short writes.

    A write that makes no progress or fails is an error: nothing is dropped silently.

    Raises:
        OutputError: the write failed (``where`` names the target in the message).
    """
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except InterruptedError:  # pragma: no cover - PEP 475 retries these already
            continue
        except OSError as e:
            raise OutputError(_why(e, where)) from None
        if n <= 0:  # pragma: no cover - POSIX write returns an error rather than 0
            raise OutputError(output_problem(where, "nothing was written"))
        view = view[n:]


def _stdout_fd() -> int | None:
    """1 when ``sys.stdout`` is the process's standard output (written with `write_all`);
    None when a caller replaced it (a test runner's capture, an embedding application)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    return fd if fd == STDOUT else None


def _to_stdout(text: str) -> None:
    where = STDOUT_NAME
    fd = _stdout_fd()
    try:
        sys.stdout.flush()  # whatever was printed before goes first
        if fd is None:
            sys.stdout.write(text)
            sys.stdout.flush()
            return
    except OSError as e:
        raise OutputError(_why(e, where)) from None
    write_all(fd, text.encode("utf-8"), where)


def stdout_problem() -> str | None:
    """Why standard output cannot be written, checked before a command runs (a closed
    descriptor: a file the command opens could otherwise take its number); None if fine."""
    if sys.stdout is None:
        return output_problem(STDOUT_NAME, "it is closed")
    if _stdout_fd() is None:
        return None
    try:
        os.fstat(STDOUT)
    except OSError as e:
        return _why(e, STDOUT_NAME)
    return None


MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
"""The files a directory given as input is read for (schedsim.api.loading.loader)."""


def check_not_input(path: str, flag: str = "") -> None:
    """Refuse an output path that is (or links to) a file this command reads, or a
    manifest-named file (`MANIFEST_SUFFIXES`) inside a directory it reads (a later run on
    that directory would read the output as a manifest).

    Raises:
        OutputError: ``path`` is an input file, or inside an input directory
            (`schedsim.api.loading.inputs`).
    """
    read = inputs.output_conflict(path)
    name = f" ({flag})" if flag else ""
    if read is None:
        directory = inputs.directory_conflict(path)
        if directory is not None and path.endswith(MANIFEST_SUFFIXES):
            raise OutputError(
                f"{path}: cannot write the output{name}: it is inside the input directory "
                f"{directory}, and would be read as an input next time (write it to another "
                "path: schedsim never writes into an input)"
            )
        return
    same = "it is the input file" if read == path else "it is the same file as the input"
    raise OutputError(
        f"{path}: cannot write the output{name}: {same} {read} (write it to another path: "
        "schedsim never replaces an input)"
    )


def check_outputs(outputs: dict[str, str | None]) -> None:
    """Refuse outputs (flag -> path) that name an input file or one another's file, or that
    cannot be written (`check_writable`), before the command runs.

    Raises:
        OutputError: the first such output.
    """
    both = inputs.outputs_conflict(outputs.items())
    if both is not None:
        (flag1, first), (flag2, second) = both
        raise OutputError(
            f"{second}: cannot write the output: {flag2} {second} and {flag1} {first} name "
            "the same file (give each output its own path)"
        )
    for flag, path in outputs.items():
        if path:
            check_not_input(path, flag)
    for path in outputs.values():
        if path and path != "-":
            check_writable(path)


def _resolve(path: str) -> tuple[str, int | None]:
    """The file writing ``path`` replaces (a symbolic link's target) and its mode (None: no
    such file yet, or it cannot be examined: the write says why).

    Raises:
        OutputError: a symbolic link loop, or a directory.
    """
    target = os.path.realpath(path) if os.path.islink(path) else path
    if os.path.islink(target):  # realpath leaves a symlink loop unresolved: open(2) says ELOOP
        raise OutputError(_why(OSError(errno.ELOOP, os.strerror(errno.ELOOP)), path))
    try:
        mode: int | None = os.stat(target).st_mode
    except OSError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):  # "DIR/" too (its rename said ENOTDIR)
        raise OutputError(_why(OSError(errno.EISDIR, os.strerror(errno.EISDIR)), path))
    return target, mode


def _temporary(path: str, target: str) -> tuple[int, str]:
    """A new temporary file ``.NAME.XXXX.tmp`` beside ``target``: (descriptor, path).

    Raises:
        OutputError: it cannot be made (no such directory, not writable, ...).
    """
    directory = os.path.dirname(os.path.abspath(target))
    try:
        return tempfile.mkstemp(
            dir=directory, prefix=f".{os.path.basename(target)}.", suffix=".tmp"
        )
    except OSError as e:
        raise OutputError(_why(e, path)) from None


def check_writable(path: str) -> None:
    """Refuse, before the command runs, an output file that could not be written at its
    end: its directory does not exist, is not a directory or cannot be written (a temporary
    file is made there and removed at once, as `deliver` will make one), or it is a
    directory. The message is the one `deliver` would give. A device, FIFO or socket is
    left to the write (opening a FIFO would wait for its reader).

    Raises:
        OutputError: ``path`` cannot be written.
    """
    target, mode = _resolve(path)
    if mode is not None and not stat.S_ISREG(mode):
        return
    fd, tmp = _temporary(path, target)
    os.close(fd)
    try:
        os.unlink(tmp)
    except OSError:  # pragma: no cover - removed meanwhile
        pass


def _new_file_mode(path: str) -> int:
    try:
        return os.stat(path).st_mode & 0o7777  # replacing a file keeps its permissions
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _write_directly(data: bytes, target: str, path: str) -> None:
    """Write ``data`` to a device, FIFO or socket ``target`` in place (no temporary file);
    errors name ``path`` as given."""
    try:
        fd = os.open(target, os.O_WRONLY)
    except OSError as e:
        raise OutputError(_why(e, path)) from None
    try:
        write_all(fd, data, path)
    finally:
        os.close(fd)


def deliver(text: str, path: str | None = None) -> None:
    """Write a command's whole output to standard output (``path`` None or ``-``) or to the
    file ``path``.

    A regular file (new or existing; a symbolic link is followed to its target first) is
    written to a temporary file in its directory (``.NAME.XXXX.tmp``), flushed to disk and
    renamed over it: readers see the old file or the new one, never a part. On any failure,
    or an interrupt, the temporary file is removed and the file is untouched. Anything else
    (a device such as ``/dev/null``, a FIFO, a socket) is opened and written directly: a
    rename would replace it with a regular file.

    Raises:
        OutputError: a write, the flush or the rename failed.
    """
    if path is None or path == "-":
        _to_stdout(text)
        return
    _prepare(text, path).commit()


class _Prepared:
    """An output file written but not yet in place (`_prepare`): `commit` puts it there,
    `discard` drops it (the file untouched)."""

    def __init__(self, path: str, target: str, tmp: str | None, data: bytes) -> None:
        self.path = path
        self.target = target
        self.tmp = tmp  # None: a device, FIFO or socket, written only at commit
        self.data = data

    def commit(self) -> None:
        """Write a device, or rename the temporary file over the target.

        Raises:
            OutputError: that failed (the temporary file is then removed).
        """
        if self.tmp is None:
            _write_directly(self.data, self.target, self.path)
            return
        try:
            os.replace(self.tmp, self.target)
            self.tmp = None
        except OSError as e:
            raise OutputError(_why(e, self.path)) from None
        finally:
            self.discard()

    def discard(self) -> None:
        """Remove the temporary file (if any is left)."""
        if self.tmp is not None:
            try:
                os.unlink(self.tmp)
            except OSError:
                pass
            self.tmp = None


def _prepare(text: str, path: str) -> _Prepared:
    """The file ``path``'s new content, written whole to its temporary file (flushed to
    disk), not yet renamed over it (`deliver`'s first half).

    Raises:
        OutputError: the output is an input file, or a write or the flush failed (the
            temporary file is removed).
    """
    check_not_input(path)
    data = text.encode("utf-8")
    # a symlink stays a symlink: its target is what gets replaced
    target, mode = _resolve(path)
    if mode is not None and not stat.S_ISREG(mode):
        return _Prepared(path, target, None, data)
    fd, tmp = _temporary(path, target)
    prepared = _Prepared(path, target, tmp, data)
    done = False
    try:
        try:
            os.fchmod(fd, _new_file_mode(target))
            write_all(fd, data, path)
            os.fsync(fd)  # a full disk may only show here (NFS, some FUSE file systems)
        finally:
            os.close(fd)
        done = True
    except OSError as e:
        raise OutputError(_why(e, path)) from None
    finally:
        if not done:
            prepared.discard()
    return prepared


_held: list[_Prepared] | None = None
"""The output files prepared and held back by `deliver_later` while `run_command` runs its
command (None outside it)."""


def deliver_later(text: str, path: str) -> None:
    """Write the file ``path`` as `deliver` does, but while `run_command` runs, put it in
    place only with the command's own output, once that is written too: when one of a
    command's outputs (``--report``, ``--output-file``) cannot be written, neither is left
    behind. Outside `run_command`, `deliver` at once.

    Raises:
        OutputError: the output is an input file, or it could not be written.
    """
    if _held is None or path == "-":
        deliver(text, path)
        return
    _held.append(_prepare(text, path))


@contextmanager
def _holding() -> Iterator[list[_Prepared]]:
    global _held
    saved, _held = _held, []
    held = _held
    try:
        yield held
    finally:
        _held = saved
        for prepared in held:  # what was not committed: a failure, an interrupt
            prepared.discard()


def _deliver_all(text: str | None, path: str | None, held: list[_Prepared]) -> None:
    """Write the command's output and put the held outputs in place: devices and standard
    output first (their writes may fail), the renames last, each only if everything before
    it was written."""
    if text is not None and path not in (None, "-"):
        held.append(_prepare(text, path))
    for p in held:
        if p.tmp is None:
            p.commit()
    if text is not None and path in (None, "-"):
        _to_stdout(text)
    for p in held:
        if p.tmp is not None:
            p.commit()


_NAMED = re.compile(
    r"(?:^|: )(?:(?P<kind>[A-Z][A-Za-z]+)|(?P<pod>pod)) "
    r"(?P<name>[a-z0-9][-a-z0-9.]*(?:/[a-z0-9][-a-z0-9.]*)?):"
)
"""The object a warning names the way schedsim's messages do: ``FILE: KIND NS/NAME: ...``
or ``pod NS/NAME: ...``."""


def named_object(message: str) -> str | None:
    """The first object ``message`` names (``KIND NS/NAME`` or ``KIND NAME``), or None."""
    m = _NAMED.search(message)
    if m is None:
        return None
    return f"{m['kind'] or 'Pod'} {m['name']}"


def warn(message: str, obj: str | None = None) -> None:
    """Print ``warning: MESSAGE`` on standard error and record it for the JSON outputs.

    Args:
        message: the warning, naming the file/object/field it is about.
        obj: the object it is about, ``KIND NS/NAME`` (or ``KIND NAME``); by default the
            first one the message names (`named_object`), if any.
    """
    error_line(f"warning: {message}")
    about = obj or named_object(message)
    _warnings.append({"message": message, **({"object": about} if about else {})})


def recorded_warnings() -> list[dict[str, str]]:
    """The warnings printed so far by this command, for a JSON output's ``warnings`` list:
    ``[{"message": str, "object": "KIND NS/NAME"}]`` (``object`` only when known)."""
    return [dict(w) for w in _warnings]


def error_line(line: str) -> None:
    """Print one line on standard error (nothing when there is no standard error)."""
    if sys.stderr is None:  # closed at start: print(file=None) would write to stdout
        return
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):  # no standard error either: say nothing
        pass


@contextmanager
def _recording() -> Iterator[None]:
    saved = list(_warnings)
    _warnings.clear()
    try:
        yield
    finally:
        _warnings[:] = saved


def run_command(
    command: Callable[[], tuple[str | None, int]],
    path: str | None = None,
    *,
    outputs: dict[str, str | None] | None = None,
    read: Iterable[object] = (),
    read_dirs: Iterable[object] = (),
) -> int:
    """Run ``command`` (which returns its whole output, None when it failed before having
    any, and its exit status) and deliver its output; the exit status.

    Returns ``status``; 2 when the output could not be written whole (one error line on
    standard error, `output_problem`'s); 130 on Ctrl-C (one ``schedsim: interrupted`` line;
    no output, no partial file), 128 + the signal's number on `Interrupted`. Errors
    ``command`` raises pass through (the caller maps them to statuses). ``outputs`` (flag ->
    path, e.g. ``{"--report": "r.html"}``) and the paths ``read`` (files among them are
    noted as inputs) are checked first: no output may replace an input file or name another
    output's file (`check_outputs`).
    """
    try:
        with _recording(), inputs.recording():
            inputs.note_all(read)
            inputs.note_dirs(read_dirs)
            check_outputs({"--output-file": path, **(outputs or {})})
            problem = stdout_problem() if path in (None, "-") else None
            if problem is not None:
                raise OutputError(problem)
            with _holding() as held:
                out, status = command()
                _deliver_all(out, path, held)
    except OutputError as e:
        error_line(f"schedsim: error: {e}")
        _quiet_stdout()
        return OUTPUT_ERROR_STATUS
    except KeyboardInterrupt as e:
        return interrupted_status(e)
    return status


def _quiet_stdout() -> None:
    """Point standard output at /dev/null so the interpreter's last flush cannot fail again
    (Python's documented recipe for ``BrokenPipeError``)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, STDOUT)
        os.close(devnull)
    except OSError:  # pragma: no cover
        pass


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose ``--help`` and ``--version`` text goes through
    `write_all` too (argparse itself ignores a failed write and exits 0).

    Raises:
        OutputError: from ``parse_args`` when that text could not be written whole.
    """

    def _print_message(self, message: str, file: Any = None) -> None:
        if not message:
            return
        if file is not None and file is not sys.stdout:
            super()._print_message(message, file)
            return
        problem = stdout_problem()
        if problem is not None:
            raise OutputError(problem)
        _to_stdout(message)
