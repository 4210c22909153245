"""The files a command reads, so that no output overwrites one (`output_conflict`).

Every reader of a file given by the user (manifests, configuration, node groups, sweep
specs and the files they name, traces) calls `note` with the path; ``schedsim.cli.output``
refuses to write an output (``--output-file``, ``--report``, ``--save``) to a file noted
here, and refuses two outputs naming the same file. "The same file" follows symbolic links
and hard links (`os.path.samefile`), as the write itself would. A directory read as input
(its manifests, `note_dir`) is recorded too: no output that a later read of it would take
for an input may be written into it (`directory_conflict`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

__all__ = [
    "directory_conflict",
    "note",
    "note_all",
    "note_dir",
    "note_dirs",
    "output_conflict",
    "outputs_conflict",
    "recording",
    "same_directory",
]

_read: list[str] = []
_dirs: list[str] = []


def _regular(path: str) -> os.stat_result | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def note(path: str) -> None:
    """Record that the command reads ``path`` (``-``, devices, FIFOs and directories'
    non-files are not files an output could replace, and are not recorded)."""
    if path != "-" and path not in _read and _regular(path) is not None:
        _read.append(path)


def note_all(paths: Iterable[object]) -> None:
    """`note` each value that is a path string."""
    for p in paths:
        if isinstance(p, str) and p:
            note(p)


def note_dir(path: str) -> None:
    """Record that the command reads the directory ``path`` (its manifests)."""
    if path not in _dirs and os.path.isdir(path):
        _dirs.append(path)


def note_dirs(paths: Iterable[object]) -> None:
    """`note_dir` each value that is a directory's path."""
    for p in paths:
        if isinstance(p, str) and p and p != "-":
            note_dir(p)


def _inside(path: str, directory: str) -> bool:
    """``path`` is ``directory`` or lies under it (symbolic links followed)."""
    a, d = os.path.realpath(path), os.path.realpath(directory)
    try:
        return os.path.commonpath([a, d]) == d
    except ValueError:  # pragma: no cover - different drives (Windows)
        return False


def same_directory(a: str, b: str) -> bool:
    """``a`` and ``b`` name one directory (symbolic links followed)."""
    return os.path.realpath(a) == os.path.realpath(b)


def directory_conflict(path: str) -> str | None:
    """The input directory (`note_dir`) that ``path`` is or lies under, or None."""
    if path == "-":
        return None
    for d in _dirs:
        if _inside(path, d):
            return d
    return None


def _same(a: str, b: str) -> bool:
    sa, sb = _regular(a), _regular(b)
    if sa is not None and sb is not None:
        return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)
    if sa is None and sb is None and (os.path.exists(a) or os.path.exists(b)):
        return False  # devices and FIFOs (/dev/null twice) may be written twice
    return os.path.realpath(a) == os.path.realpath(b)


def output_conflict(path: str) -> str | None:
    """The input file that output ``path`` would overwrite, or None."""
    if path == "-":
        return None
    for p in _read:
        if _same(path, p):
            return p
    return None


def outputs_conflict(
    outputs: Iterable[tuple[str, str | None]],
) -> tuple[tuple[str, str], tuple[str, str]] | None:
    """Two of the ``outputs`` (name, path; None and ``-`` skipped) that name the same file."""
    seen: list[tuple[str, str]] = []
    for name, p in outputs:
        if not p or p == "-":
            continue
        for q in seen:
            if _same(p, q[1]):
                return q, (name, p)
        seen.append((name, p))
    return None


@contextmanager
def recording() -> Iterator[None]:
    """Record the inputs of one command (nested commands, as in tests, keep their own)."""
    saved, saved_dirs = list(_read), list(_dirs)
    _read.clear()
    _dirs.clear()
    try:
        yield
    finally:
        _read[:] = saved
        _dirs[:] = saved_dirs
