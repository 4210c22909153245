"""``schedsim check-plugin``: a plugin package's conformance for its CI (issue 31), statically
(mypy --strict against the typed protocols) and dynamically (the runtime's validation, a run on
both stores), exiting 1 with the exact problem; and the pytest plugin's entry point."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

import pytest

from schedsim.cli import main

ROOT = Path(__file__).resolve().parents[2]

if not any(  # a checkout whose entry points are not installed: the fixtures from the module
    ep.value == "schedsim.testing.pytest_plugin"
    for ep in importlib.metadata.entry_points(group="pytest11")
):
    from schedsim.testing.pytest_plugin import (  # noqa: F401
        schedsim_cluster,
        schedsim_run_profile,
        schedsim_store,
    )

GOOD = """
from collections.abc import Mapping
from typing import Any

from schedsim.api.core import Pod
from schedsim.framework import CycleState, Handle, NodeInfo, Status


class Good:
    name = "Good"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    def schedsim_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None
"""

WRONG_TYPE = (
    GOOD.replace("class Good:", "class WrongType:")
    .replace('name = "Good"', 'name = "WrongType"')
    .replace("-> Status | None:\n        return None", "-> str:\n        return 'ok'")
)

RAISES = (
    GOOD.replace("class Good:", "class Raises:")
    .replace('name = "Good"', 'name = "Raises"')
    .replace("return None", "raise KeyError('missing')")
)

TYPO = (
    GOOD.replace("class Good:", "class Typo:")
    .replace('name = "Good"', 'name = "Typo"')
    .replace("def schedsim_filter(", "def schedsim_filtr(")
)


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, text in (
        ("good_plugin", GOOD),
        ("wrong_type_plugin", WRONG_TYPE),
        ("raises_plugin", RAISES),
        ("typo_plugin", TYPO),
    ):
        (tmp_path / f"{name}.py").write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    code = main(["check-plugin", *argv])
    return code, capsys.readouterr().out.splitlines()


def test_a_conformant_plugin(plugins: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = _check(capsys, "--plugin", "good_plugin:Good")
    assert code == 0
    assert lines[0] == "static: good_plugin:Good: mypy --strict passes as FilterPlugin"
    assert lines[-1] == "conformant"


def test_a_wrong_result_type_is_a_static_problem(
    plugins: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = _check(capsys, "--plugin", "wrong_type_plugin:WrongType", "--static-only")
    assert code == 1
    [problem] = [line for line in lines if line.startswith("problem: ")]
    assert problem.startswith(
        "problem: mypy --strict: wrong_type_plugin:WrongType as FilterPlugin: error: "
        'Incompatible types in assignment (expression has type "WrongType", variable has '
        'type "FilterPlugin")'
    )
    assert lines[-1] == "1 problem(s)"


def test_an_exception_is_a_dynamic_problem(
    plugins: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = _check(capsys, "--plugin", "raises_plugin:Raises", "--dynamic-only")
    assert code == 1
    problems = [line for line in lines if line.startswith("problem: ")]
    # the demo's first pending pod, in kube-scheduler's words
    assert problems[0].endswith(
        ": the attempt failed: running \"Raises\" filter plugin: KeyError: 'missing'"
    )


def test_a_misspelled_hook(plugins: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = _check(capsys, "--plugin", "typo_plugin:Typo")
    assert code == 1
    assert "problem: typo_plugin:Typo: implements no extension point (no schedsim_* hook)" in lines
    assert any("unknown hook(s) schedsim_filtr" in line for line in lines)


def test_without_mypy_the_static_check_says_how_to_go_on(
    plugins: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain ``pip install .`` has no mypy (a test extra): one error line, exit 2, no
    traceback (found by a fresh user); ``--dynamic-only`` still runs."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "mypy" else real(name, *a)
    )
    code = main(["check-plugin", "--plugin", "good_plugin:Good"])
    err = capsys.readouterr().err
    assert code == 2
    assert "the static check needs mypy, which is not installed" in err
    assert "--dynamic-only" in err and "Traceback" not in err
    assert _check(capsys, "--plugin", "good_plugin:Good", "--dynamic-only")[0] == 0


def test_the_pytest_plugin_is_an_entry_point() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    points = meta["project"]["entry-points"]["pytest11"]
    assert points == {"schedsim": "schedsim.testing.pytest_plugin"}


def test_the_fixtures(
    schedsim_cluster: object, schedsim_store: str, schedsim_run_profile: object
) -> None:
    """This suite gets them as any plugin's does (the entry point, or the examples' conftest
    import without it)."""
    assert schedsim_store in ("basic", "delta")
    assert callable(schedsim_cluster) and callable(schedsim_run_profile)
