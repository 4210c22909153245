"""Errors raised while decoding Kubernetes manifests.

`FieldError` is raised by the object decoders (they know the field, not the file);
the loader turns it into a `ManifestError`, which also names the file and the object, in the
form `FILE: KIND NS/NAME: FIELD: problem` that the CLI prints (exit status 2).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["FieldError", "ManifestError", "UnknownFieldError", "first_few", "go_value"]


def go_value(value: object) -> str:
    """A bad value as Go's ``field.Error`` prints it: strings quoted (``%q``), numbers bare."""
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{escaped}"'
    return str(value)


def first_few(names: Sequence[str], shown: int = 5) -> str:
    """``"a, b, c and 4 more"``: the first ``shown`` names of a list in a warning line."""
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


class FieldError(ValueError):
    """A field of one object is malformed.

    Args:
        field: dotted path of the field, e.g. ``spec.containers[0].resources.requests.cpu``.
        problem: what is wrong, e.g. ``quantity "x": not a number``.
    """

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


class ManifestError(ValueError):
    """An input file or one of its objects cannot be used.

    The message is ``FILE: KIND NS/NAME: FIELD: problem`` for object errors and
    ``FILE: problem`` for file-level errors (unreadable file, invalid YAML).
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UnknownFieldError(ManifestError):
    """Strict validation refused an object's unknown fields (the command line adds how to go
    on: its ``--validate`` values)."""
