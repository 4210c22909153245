"""The command line's surface (issue 31): ``-o yaml`` wherever ``-o json`` exists, one
spelling per flag across commands (the Cluster Autoscaler's name, the old spelling kept as an
alias), and help text for every option."""

from __future__ import annotations

import argparse
import json

import pytest
import yaml

from schedsim.cli import main
from schedsim.cli.parser import build_parser


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def _options(p: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in p._actions if not isinstance(a, argparse._HelpAction)]


def test_every_option_has_help_that_says_what_it_does() -> None:
    missing = [
        f"{name} {'/'.join(a.option_strings) or a.dest}"
        for name, p in _subparsers().items()
        for a in _options(p)
        # "default 10m" alone says nothing about what the option does
        if not a.help or a.help.startswith("default")
    ]
    assert missing == []


def test_yaml_wherever_json() -> None:
    for name, p in _subparsers().items():
        for a in _options(p):
            if "--output" in a.option_strings and a.choices is not None:
                assert ("json" in a.choices) <= ("yaml" in a.choices), name


def test_one_spelling_per_flag_across_commands() -> None:
    """An option two commands share means the same in both: each spelling of one is a
    spelling of the same option everywhere (no command refuses another's spelling)."""
    spellings: dict[str, set[frozenset[str]]] = {}
    for p in _subparsers().values():
        for a in _options(p):
            for s in a.option_strings:
                spellings.setdefault(s, set()).add(frozenset(a.option_strings))
    # scale-down and replay: CA's --scale-down-utilization-threshold, alias kept
    assert spellings["--utilization-threshold"] == {
        frozenset({"--scale-down-utilization-threshold", "--utilization-threshold"})
    }
    assert spellings["--gpu-utilization-threshold"] == {
        frozenset({"--scale-down-gpu-utilization-threshold", "--gpu-utilization-threshold"})
    }
    for flag in ("--output", "--max-nodes-per-scaleup", "--expander", "--node-groups"):
        assert len({frozenset(x) for x in spellings[flag]}) == 1, flag


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate"],
        ["scale-up"],
        ["scale-down"],
        ["scale-down", "--scale-down-utilization-threshold", "0.6"],
        ["scale-down", "--utilization-threshold", "0.6"],
    ],
)
def test_yaml_is_the_json_document(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert main([*argv, "-o", "json"]) in (0, 1)
    as_json = json.loads(capsys.readouterr().out)
    assert main([*argv, "-o", "yaml"]) in (0, 1)
    assert yaml.safe_load(capsys.readouterr().out) == as_json


def test_both_spellings_of_the_threshold_agree(capsys: pytest.CaptureFixture[str]) -> None:
    main(["scale-down", "--utilization-threshold", "0.6", "-o", "json"])
    old = json.loads(capsys.readouterr().out)
    main(["scale-down", "--scale-down-utilization-threshold", "0.6", "-o", "json"])
    assert json.loads(capsys.readouterr().out) == old
    assert old["summary"]["threshold"] == 0.6
