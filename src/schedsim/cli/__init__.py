"""The ``schedsim`` command.

``schedsim simulate [PATH ...] [--config FILE] [--output table|json] [--feature-gates A=true]``
loads manifests, places bound pods, schedules the pending ones and prints where each lands
and, for the others, kube-scheduler's message, with the devices allocated to each pod's
ResourceClaims. With no PATH it runs the example cluster shipped with schedsim.
``schedsim scale-up`` / ``scale-down`` (see `schedsim.cli.autoscaling`) ask the Cluster
Autoscaler's what-if questions; ``schedsim plugins`` lists plugins and a profile's order.

Exit status: 0 done (whether or not every pod fits), 2 bad input or usage (the message names
the file, object and field) or the output could not be written whole (``FILE: cannot write
the output: ...``: a full disk, a file size limit, a reader that went away as with
``| head``), 1 a plugin failed, 130 Ctrl-C (143 ``SIGTERM``, 129 ``SIGHUP``: handled as
Ctrl-C is).
Output is written whole or not at all (`schedsim.cli.output`).

The commands live in their own modules (`schedsim.cli.parser` the flags,
`schedsim.cli.options` the engine they configure, `schedsim.cli.simulate`,
`schedsim.cli.plugins`, `schedsim.cli.autoscaling`, `schedsim.cli.replay`,
`schedsim.cli.sweep`); this module dispatches to them.
"""

from __future__ import annotations

# ruff: noqa: E402 (the Ctrl-C handler goes in before the imports)
import os
import re
import signal
import sys
import threading


def _interrupted_while_starting(signum: int, frame: object) -> None:  # pragma: no cover
    """Ctrl-C (or ``SIGTERM``, ``SIGHUP``) while the command's modules are imported (a
    second or more): one line and exit status 128 + the signal's number (130 for Ctrl-C), no
    traceback, no output (nothing was written yet)."""
    try:
        how = b"" if signum == signal.SIGINT else f" ({signal.Signals(signum).name})".encode()
        os.write(2, b"schedsim: interrupted" + how + b"\n")
    finally:
        os._exit(128 + signum)


# the imports below take most of a second: until `main`'s handlers are in place, Ctrl-C (and
# SIGTERM, SIGHUP where their default action is in force) ends the process quietly (restored
# at the end of this module, so importing it changes nothing)
_STARTING = threading.current_thread() is threading.main_thread() and (
    signal.getsignal(signal.SIGINT) is signal.default_int_handler
)
_STARTING_SIGNALS = [
    s
    for s in (signal.SIGTERM, signal.SIGHUP)
    if _STARTING and signal.getsignal(s) == signal.SIG_DFL
]
if _STARTING:
    signal.signal(signal.SIGINT, _interrupted_while_starting)
    for _signum in _STARTING_SIGNALS:
        signal.signal(_signum, _interrupted_while_starting)

import argparse
from collections.abc import Sequence

from schedsim.api.errors import ManifestError, UnknownFieldError
from schedsim.cli import autoscaling as cli_autoscaling
from schedsim.cli import check_plugin as cli_check_plugin
from schedsim.cli import output as cli_output
from schedsim.cli import replay as cli_replay
from schedsim.cli import sweep as cli_sweep
from schedsim.cli.common import UsageError, json_to_yaml
from schedsim.cli.options import make_engine
from schedsim.cli.parser import MANIFEST_COMMANDS, build_parser
from schedsim.cli.plugins import list_plugins
from schedsim.cli.simulate import EXAMPLE, simulate
from schedsim.framework import debug
from schedsim.framework.runtime import PluginError
from schedsim.scheduler.scheduling import gc_paused
from schedsim.snapshot.errors import SchedulingError

__all__ = ["EXAMPLE", "MANIFEST_COMMANDS", "main"]

if _STARTING and signal.getsignal(signal.SIGINT) is _interrupted_while_starting:
    signal.signal(signal.SIGINT, signal.default_int_handler)  # main catches it from here on
for _signum in _STARTING_SIGNALS:
    if signal.getsignal(_signum) is _interrupted_while_starting:
        signal.signal(_signum, signal.SIG_DFL)  # main's interrupt_signals from here on


def _autoscaling(args: argparse.Namespace) -> tuple[str | None, int]:
    engine, _ = make_engine(args)
    return cli_autoscaling.run(args, engine)


_NEGATIVE_LOOKING = re.compile(r"-[0-9.]")


def _value_options(parser: argparse.ArgumentParser) -> set[str]:
    """The option strings, of the parser and its subcommands, that take exactly one value."""
    out: set[str] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out |= _value_options(sub)
        elif action.option_strings and action.nargs is None:
            out.update(action.option_strings)
    return out


def _join_negative_values(parser: argparse.ArgumentParser, argv: Sequence[str]) -> list[str]:
    """``--opt -5s`` as ``--opt=-5s`` for an option that takes one value: argparse reads a
    token starting with ``-`` as an option unless it is a plain negative number, and would
    say ``expected one argument``; joined, the value reaches the option's own check, whose
    message says what is wrong with it (a duration must not be negative)."""
    options = _value_options(parser)
    out: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok == "--":
            out.extend(argv[i:])
            break
        if tok in options and i + 1 < len(argv) and _NEGATIVE_LOOKING.match(argv[i + 1]):
            out.append(f"{tok}={argv[i + 1]}")
            i += 2
            continue
        out.append(tok)
        i += 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0, 1, 2, or 130 on Ctrl-C; 143 on
    ``SIGTERM`` and 129 on ``SIGHUP``, which stop it as Ctrl-C does:
    `cli_output.interrupt_signals`)."""
    with cli_output.interrupt_signals():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(
            _join_negative_values(parser, sys.argv[1:] if argv is None else argv)
        )
    except cli_output.OutputError as e:  # --help or --version could not be written whole
        cli_output.error_line(f"schedsim: error: {e}")
        return cli_output.OUTPUT_ERROR_STATUS
    except KeyboardInterrupt as e:
        return cli_output.interrupted_status(e)
    outputs = {f"--{d.replace('_', '-')}": getattr(args, d, None) for d in _OUTPUTS}
    output_file = outputs.pop("--output-file")
    read = [  # every path-like value of the command line: the files among them are inputs
        v
        for d, value in vars(args).items()
        if d not in _OUTPUTS
        for v in (value if isinstance(value, list) else [value])
    ]
    paths = getattr(args, "paths", None) or []
    return cli_output.run_command(
        lambda: _run(args), output_file, outputs=outputs, read=read, read_dirs=paths
    )


VALIDATE_HINT = (
    "fix the field names, or to go on without them run again with --validate=warn (a "
    "warning for each, then ignored) or --validate=ignore"
)
"""How to go on after strict validation refused unknown fields (kubectl: "turn validation
off with --validate=false"): the ``--validate`` values."""

_OUTPUTS = ("output_file", "report", "save")
"""The options naming a file a command writes (`cli_output.check_outputs`)."""


def _run(args: argparse.Namespace) -> tuple[str | None, int]:
    """The command's whole output (None: nothing to write) and exit status; ``-o yaml`` is
    the ``-o json`` document written as YAML."""
    debug.set_enabled(bool(getattr(args, "debug", False)))  # --debug: for this command only
    try:
        if getattr(args, "output", None) != "yaml":
            return _run_command(args)
        args.output = "json"
        out, code = _run_command(args)
        return (None if out is None else json_to_yaml(out)), code
    finally:
        debug.set_enabled(False)


def _run_command(args: argparse.Namespace) -> tuple[str | None, int]:
    """The command's whole output (None: nothing to write) and exit status; bad input and
    failures become statuses with their error line."""
    try:
        if args.command == "plugins":
            return list_plugins(args), 0
        if args.command in ("scale-up", "scale-down"):
            return _autoscaling(args)
        if args.command == "replay":
            with gc_paused():
                return cli_replay.run(args, make_engine(args)[0])
        if args.command == "sweep":
            return cli_sweep.run(args)
        if args.command == "check-plugin":
            return cli_check_plugin.run(args)
        # Loading creates hundreds of thousands of objects and almost no reference
        # cycles: collections of the oldest generation would walk them again and again
        # (docs/performance.md).
        with gc_paused():
            return simulate(args)
    except (ManifestError, UsageError, PluginError) as e:
        text = str(e)
        if isinstance(e, UnknownFieldError) and args.command in MANIFEST_COMMANDS:
            text += f"\n{VALIDATE_HINT}"
        for line in text.splitlines() or [""]:  # one line per problem
            cli_output.error_line(f"schedsim: error: {line}")
        return None, 2
    except SchedulingError as e:
        cli_output.error_line(f"schedsim: error: {e}")
        return None, 1
