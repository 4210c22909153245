"""Plugin results: `Code` and `Status`, mirroring k8s.io/kube-scheduler/framework.

A plugin returns ``None`` for success (as a nil ``*Status`` in Go), so a passing Filter
allocates nothing; rejections are best returned as module-level constant `Status` objects.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

import attrs

__all__ = ["SUCCESS", "Code", "Status"]


class Code(enum.Enum):
    """Status codes of kube-scheduler's framework (same names and meaning)."""

    Success = "Success"
    Error = "Error"
    """Internal error: the scheduling attempt is aborted."""
    Unschedulable = "Unschedulable"
    """The node does not fit now; preemption might help."""
    UnschedulableAndUnresolvable = "UnschedulableAndUnresolvable"
    """The node does not fit and preemption cannot help."""
    Wait = "Wait"
    Skip = "Skip"
    """PreFilter: skip this plugin's Filter for the cycle."""
    Pending = "Pending"


def _as_reasons(value: str | Iterable[str]) -> tuple[str, ...]:
    # `Status(code, "reason")` is an easy slip: a bare string would become its characters.
    return (value,) if isinstance(value, str) else tuple(value)


_REJECTED = frozenset({Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Pending})


@attrs.frozen
class Status:
    """The outcome of one plugin call.

    Attributes:
        code: the `Code`.
        reasons: reason strings, identical to kube-scheduler's (e.g. ``"Insufficient cpu"``).
        plugin: name of the plugin that produced it (the runtime fills it in when empty).
    """

    code: Code
    reasons: tuple[str, ...] = attrs.field(default=(), converter=_as_reasons)
    plugin: str = ""

    @property
    def is_success(self) -> bool:
        """Code is Success."""
        return self.code is Code.Success

    @property
    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending (IsRejected upstream)."""
        return self.code in _REJECTED

    @property
    def message(self) -> str:
        """Reasons joined by ``", "`` (Status.Message upstream)."""
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        """A copy naming ``plugin`` as the source."""
        return Status(self.code, self.reasons, plugin)


SUCCESS = Status(Code.Success)
"""The shared success status."""
