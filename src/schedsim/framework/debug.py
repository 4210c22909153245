"""Debug mode for plugin authors: the traceback of an exception a plugin raised.

The runtime turns a plugin's exception into an ``Error`` status naming the exception type,
the plugin and the extension point (``running "Mine" filter plugin: KeyError: 'x'``), as
kube-scheduler does, and goes on with the next pod. That message has no file or line; in
debug mode (``schedsim --debug``, or ``SCHEDSIM_DEBUG=1`` in the environment) the runtime also
prints the exception's traceback on stderr, once per exception, when it words the failure
(`schedsim.framework.plugin_results.describe_exception`).
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Final, TextIO

__all__ = ["ENV", "enabled", "report", "set_enabled"]

ENV: Final = "SCHEDSIM_DEBUG"
"""The environment variable that turns debug mode on (``1``, ``true`` or ``yes``)."""

_state = {"on": False}
_seen: list[int] = []  # ids of the last exceptions reported (one report each)


def enabled() -> bool:
    """Whether debug mode is on: `set_enabled`, or `ENV` set in the environment."""
    return _state["on"] or os.environ.get(ENV, "").strip().lower() in ("1", "true", "yes")


def set_enabled(on: bool) -> None:
    """Turn debug mode on or off (``--debug`` turns it on for one command)."""
    _state["on"] = on


def report(e: BaseException, file: TextIO | None = None) -> None:
    """In debug mode, print ``e``'s traceback on ``file`` (stderr) under one line naming it;
    an exception already reported is not printed again. Does nothing otherwise."""
    if not enabled() or id(e) in _seen:
        return
    _seen.append(id(e))
    del _seen[:-32]
    out = file if file is not None else sys.stderr
    print(f"schedsim: debug: a plugin raised {type(e).__name__}; its traceback:", file=out)
    traceback.print_exception(type(e), e, e.__traceback__, file=out)
