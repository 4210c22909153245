"""How the runtime words a plugin's result: the exception, the wrong result type, the Error
status naming the plugin and the point (`RUNNING`, `plugin_error`), a rejection attributed to
its plugin (`attributed`). One wording, used by every extension point and by plugin loading;
and `PluginStatusError`, what a Framework that aborts on plugin errors raises instead of
returning such a status."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from schedsim.api.core import Pod
from schedsim.framework import debug
from schedsim.framework.status import Code, Status

__all__ = [
    "PLUGIN_FAILURES",
    "RUNNING",
    "PluginStatusError",
    "attributed",
    "describe_exception",
    "error_status",
    "failure",
    "load_failure",
    "plugin_error",
    "returned_problem",
]

PLUGIN_FAILURES = (Exception, GeneratorExit, SystemExit)
"""What a plugin call may raise that counts as the plugin failing (an Error status naming
it): any Exception, and the two BaseExceptions a plugin's own code can raise by mistake
(``GeneratorExit`` from a generator it misused, ``SystemExit`` from ``sys.exit()``), which
must not end schedsim without a word. KeyboardInterrupt still stops the run."""


def describe_exception(e: BaseException) -> str:
    """``KeyError: 'x'``: the exception type helps plugin authors more than the bare text
    (``SystemExit`` alone when there is no text). In debug mode (`schedsim.framework.debug`)
    the traceback goes to stderr too."""
    debug.report(e)
    text = str(e)
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def load_failure(e: BaseException) -> str:
    """Why an import failed: an Exception's text (``No module named 'x'``), or the type of
    anything else that escaped the import (``SystemExit: 0``)."""
    return str(e) if isinstance(e, Exception) and str(e) else describe_exception(e)


def error_status(message: str, plugin: str) -> Status:
    """An ``Error`` status with ``message``, attributed to ``plugin``."""
    return Status(Code.Error, (message,), plugin)


RUNNING: Final[Mapping[str, str]] = {
    "PreEnqueue": 'running PreEnqueue plugin "{}"',
    "PreFilter": 'running PreFilter plugin "{}"',
    "PreFilterAddPod": 'running AddPod on PreFilter plugin "{}"',
    "PreFilterRemovePod": 'running RemovePod on PreFilter plugin "{}"',
    "Filter": 'running "{}" filter plugin',
    "PostFilter": 'running PostFilter plugin "{}"',
    "PreScore": 'running PreScore plugin "{}"',
    "Score": 'running Score plugins: plugin "{}" failed with',
    "NormalizeScore": 'running Normalize on Score plugins: plugin "{}" failed with',
    "Reserve": 'running Reserve plugin "{}"',
    "Unreserve": 'running Unreserve plugin "{}"',
    "Permit": 'running Permit plugin "{}"',
    "PreBindPreFlight": 'running PreBindPreFlight "{}"',
    "PreBind": 'running PreBind plugin "{}"',
    "Bind": 'running Bind plugin "{}"',
    "PostBind": 'running PostBind plugin "{}"',
}
"""Extension point (and the PreFilter extensions, Unreserve and PreBindPreFlight) -> how
kube-scheduler's ``RunXPlugins`` names the failing plugin (``{}``) before the failure, as
its ``fmt.Errorf("running %q filter plugin: %w", ...)`` calls word it (framework.go)."""


def failure(point: str, plugin: str, detail: str) -> str:
    """``<RUNNING[point] naming plugin>: <detail>``, e.g. ``running "NodePorts" filter
    plugin: KeyError: 'x'``.

    Raises:
        KeyError: ``point`` is not in `RUNNING`.
    """
    return f"{RUNNING[point].format(plugin)}: {detail}"


def plugin_error(point: str, plugin: str, detail: str) -> Status:
    """The ``Error`` status a Run method returns for ``plugin`` failing at ``point``: the
    `failure` message, attributed to the plugin."""
    return Status(Code.Error, (failure(point, plugin, detail),), plugin)


def attributed(status: Status, plugin: str) -> Status:
    """``status`` naming ``plugin`` as its source (``status.WithPlugin(pl.Name())``
    upstream): the same object when it already does, else a copy; what every Run method
    returns for a plugin's rejection."""
    return status if status.plugin == plugin else status.with_plugin(plugin)


def returned_problem(value: object, want: str = "a Status or None") -> str:
    """The problem of a hook result of the wrong type, e.g. ``returned 'ok' (str), want a
    Status or None``: what came back, shortened, and its type."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"returned {text} ({type(value).__name__}), want {want}"


class PluginStatusError(Exception):
    """A PreFilter, Filter or Reserve plugin returned an Error status for ``pod`` (or an
    Unreserve raised), raised by a `Framework` whose ``abort_on_plugin_error`` is set
    (kube-scheduler's "an Error status aborts the scheduling attempt").

    ``str(error)`` is ``pod <namespace>/<name>: <first line of the message>``.

    Attributes:
        pod: the pod being scheduled.
        message: the status message (``running "X" filter plugin: ...``), possibly several
            lines (CEL compile errors add the expression and a caret line).
    """

    def __init__(self, pod: Pod, message: str) -> None:
        self.pod = pod
        self.message = message
        super().__init__(f"pod {pod.key}: {self.first_line}")

    @property
    def first_line(self) -> str:
        """The message's first line, without surrounding blanks ("" for an empty one)."""
        lines = self.message.strip().splitlines()
        return lines[0].rstrip() if lines else ""
