"""The command reference in docs/cli.md, generated from the argument parser.

docs/cli.md is hand-written prose around generated blocks, one per command plus one for
``schedsim`` itself, each between two markers::

    <!-- generated: schedsim simulate (python -m schedsim.cli.reference docs/cli.md) -->
    ...
    <!-- end generated: schedsim simulate -->

A block holds the command's usage line, its description and a table of every argument
(positionals first, then the options in the order ``--help`` lists them), each with all its
option strings (``--output``, ``-o``: the aliases are named), its value (the metavar, or the
choices joined by ``|``) and its help text exactly as `schedsim.cli.parser.build_parser`
gives it. ``python -m schedsim.cli.reference docs/cli.md`` rewrites the blocks in place and
leaves every line outside them alone; a test (tests/unit/test_docs.py) fails when the file is
stale, as the one for docs/hooks.md does for the hook specs.

The usage line is rendered here rather than by argparse, whose wrapping depends on the
terminal width and whose layout changed between Python versions: the same parser gives the
same page everywhere.

Errors (`MarkerError`): a command of the parser without a block, a block naming no
command, a block opened and never closed or closed without being opened. From the command
line each is one ``schedsim-reference: error: FILE: problem`` line and exit status 2.

argparse has no public API to list a parser's arguments; like every tool that documents
argparse parsers (sphinx-argparse, argparse-manpage), this module reads ``_actions``,
``_mutually_exclusive_groups`` and the subparsers action's ``choices``.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

from schedsim.cli.parser import build_parser

__all__ = ["MarkerError", "command_blocks", "main", "option_strings", "rewrite"]

PROG = "schedsim"
"""The program name every block starts from."""

USAGE_WIDTH = 96
"""Columns of a usage line before it wraps (continuation lines are indented)."""

_NBSP = "\u00a0"
"""Joins the words of one usage part so that a line never breaks inside it."""

_BEGIN = re.compile(r"^<!-- generated: (?P<name>[^()]+?) \(python -m schedsim\.cli\.reference")
_END = re.compile(r"^<!-- end generated: (?P<name>.+?) -->$")


class MarkerError(ValueError):
    """docs/cli.md's markers do not match the parser's commands (the message says how)."""


def _begin_marker(name: str) -> str:
    return f"<!-- generated: {name} (python -m schedsim.cli.reference docs/cli.md) -->"


def _end_marker(name: str) -> str:
    return f"<!-- end generated: {name} -->"


def _subcommands(
    parser: argparse.ArgumentParser,
) -> tuple[dict[str, argparse.ArgumentParser], dict[str, str]]:
    """The parser's subcommands by name, and each one's one-line ``help``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            return dict(action.choices), helps
    return {}, {}


def _value(action: argparse.Action) -> str:
    """What an option takes: ``FILE``, ``table|json``, ``[NS/NAME]``, ``PATH ...``, or ''."""
    if action.nargs == 0:
        return ""
    if action.choices is not None and action.metavar is None:
        one = "|".join(str(c) for c in action.choices)
    elif isinstance(action.metavar, tuple):
        one = " ".join(action.metavar)
    else:
        one = action.metavar or (action.dest if not action.option_strings else action.dest.upper())
    if action.nargs == "?":
        return f"[{one}]"
    if action.nargs == "*":
        return f"[{one} ...]"
    if action.nargs == "+":
        return f"{one} [{one} ...]"
    if isinstance(action.nargs, int) and action.nargs > 1:
        return " ".join([one] * action.nargs)
    return one


def _usage_part(action: argparse.Action) -> str:
    value = _value(action)
    if not action.option_strings:
        return value
    flag = action.option_strings[0]  # as argparse's usage
    return f"{flag} {value}" if value else flag


def _usage(prog: str, parser: argparse.ArgumentParser) -> str:
    """``usage: PROG [OPTIONS] POSITIONALS``, wrapped at `USAGE_WIDTH` columns."""
    grouped: dict[int, argparse._MutuallyExclusiveGroup] = {}
    for each in parser._mutually_exclusive_groups:
        for action in each._group_actions:
            grouped[id(action)] = each
    parts: list[str] = []
    done: set[int] = set()
    actions = [a for a in parser._actions if a.help != argparse.SUPPRESS]
    for action in [a for a in actions if a.option_strings]:
        group = grouped.get(id(action))
        if group is None:
            part = _usage_part(action)
            parts.append(part if action.required else f"[{part}]")
        elif id(group) not in done:
            done.add(id(group))
            inner = " | ".join(_usage_part(a) for a in group._group_actions)
            parts.append(f"({inner})" if group.required else f"[{inner}]")
    parts += [_value(a) for a in actions if not a.option_strings]
    head = f"usage: {prog}"
    return textwrap.fill(
        " ".join(part.replace(" ", _NBSP) for part in parts),
        width=USAGE_WIDTH,
        initial_indent=head + " ",
        subsequent_indent=" " * (len(head) + 1),
        break_on_hyphens=False,
        break_long_words=False,
    ).replace(_NBSP, " ")


def _cell(text: str) -> str:
    """Markdown table cell text: one line, ``|`` escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _help(action: argparse.Action) -> str:
    return (action.help or "").replace("%%", "%")


def _options_table(parser: argparse.ArgumentParser) -> list[str]:
    rows = ["| argument | value | help |", "|---|---|---|"]
    actions = [a for a in parser._actions if a.help != argparse.SUPPRESS]
    positionals = [a for a in actions if not a.option_strings]
    options = [a for a in actions if a.option_strings]
    for action in positionals + options:
        if isinstance(action, argparse._SubParsersAction):
            continue
        names = ", ".join(f"`{s}`" for s in action.option_strings)
        value = _value(action)
        if not names:  # a positional: its value is its name
            names, value = f"`{value}`", ""
        rows.append(
            f"| {names} | {_cell(f'`{value}`') if value else ''} | {_cell(_help(action))} |"
        )
    return rows


def _block(prog: str, parser: argparse.ArgumentParser, extra: Sequence[str] = ()) -> str:
    lines = ["```", _usage(prog, parser), "```", ""]
    if parser.description:
        lines += [_cell(parser.description), ""]
    lines += [*extra, *_options_table(parser)]
    return "\n".join(lines)


def command_blocks(parser: argparse.ArgumentParser | None = None) -> dict[str, str]:
    """The generated text of every block, by block name (``schedsim``, ``schedsim simulate``,
    ...), in the parser's order.

    Args:
        parser: the parser to document; default `schedsim.cli.parser.build_parser` ().

    Returns:
        Markdown per block, without the markers and without a final newline.
    """
    parser = parser or build_parser()
    commands, helps = _subcommands(parser)
    listing = ["| command | what it does |", "|---|---|"]
    listing += [f"| `{PROG} {name}` | {_cell(helps.get(name, ''))} |" for name in commands]
    blocks = {PROG: _block(PROG, parser, [*listing, ""])}
    for name, sub in commands.items():
        blocks[f"{PROG} {name}"] = _block(f"{PROG} {name}", sub)
    return blocks


def rewrite(text: str, blocks: dict[str, str] | None = None) -> str:
    """``text`` (docs/cli.md) with every generated block replaced by its current content.

    Args:
        text: the page; lines outside the markers are kept as they are.
        blocks: from `command_blocks`; default: those of the schedsim parser.

    Returns:
        The page with each block's lines between its markers rewritten.

    Raises:
        MarkerError: a marker names a block that does not exist, is opened twice, is
            closed without being opened or never closed, or a block has no markers.
    """
    blocks = command_blocks() if blocks is None else blocks
    out: list[str] = []
    seen: set[str] = set()
    open_name: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        begin, end = _BEGIN.match(line), _END.match(line)
        if open_name is not None:
            if end is None:
                continue
            if end["name"] != open_name:
                raise MarkerError(
                    f"line {number}: block {end['name']!r} closed inside block {open_name!r}"
                )
            out += [_begin_marker(open_name), blocks[open_name], _end_marker(open_name)]
            open_name = None
        elif begin is not None:
            name = begin["name"]
            if name not in blocks:
                raise MarkerError(
                    f"line {number}: no command {name!r} (commands: {', '.join(blocks)})"
                )
            if name in seen:
                raise MarkerError(f"line {number}: block {name!r} appears twice")
            seen.add(name)
            open_name = name
        elif end is not None:
            raise MarkerError(f"line {number}: block {end['name']!r} closed but not opened")
        else:
            out.append(line)
    if open_name is not None:
        raise MarkerError(f"block {open_name!r} is never closed ({_end_marker(open_name)})")
    missing = [name for name in blocks if name not in seen]
    if missing:
        raise MarkerError(
            "no generated block for "
            + ", ".join(missing)
            + f" (add {_begin_marker(missing[0])} and {_end_marker(missing[0])})"
        )
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def option_strings(parser: argparse.ArgumentParser | None = None) -> frozenset[str]:
    """Every option string of ``schedsim`` and of its commands (``--output``, ``-o``, ...)."""
    parser = parser or build_parser()
    found = {s for a in parser._actions for s in a.option_strings}
    for sub in _subcommands(parser)[0].values():
        found |= option_strings(sub)
    return frozenset(found)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m schedsim.cli.reference FILE``: rewrite FILE's generated blocks in place.

    Returns:
        0 (FILE rewritten, or already in step), 2 when FILE cannot be read or its markers are
        wrong (one ``schedsim-reference: error: ...`` line on stderr).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m schedsim.cli.reference docs/cli.md", file=sys.stderr)
        return 2
    path = Path(args[0])
    try:
        text = path.read_text(encoding="utf-8")
        new = rewrite(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
    except (OSError, MarkerError) as e:
        print(f"schedsim-reference: error: {path}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
