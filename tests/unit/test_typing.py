"""mypy --strict over src, plugins and tests/typing, run from pytest so `pytest` is the one
command: the snapshot's NodeInfo/PodInfo satisfy the framework protocols, and a class missing
a protocol member is rejected."""

from __future__ import annotations

from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

ROOT = Path(__file__).resolve().parents[2]


def _mypy(*targets: str) -> tuple[str, int]:
    out, err, status = mypy_api.run(
        ["--strict", "--config-file", str(ROOT / "pyproject.toml"), "--no-error-summary", *targets]
    )
    return out + err, status


def test_mypy_strict_is_clean_on_src_plugins_and_typing_conformance() -> None:
    """The conformance module (tests/typing/conformance.py) assigns snapshot objects to the
    framework protocols; mypy --strict must accept it and the whole code base."""
    out, status = _mypy(
        str(ROOT / "src"),
        str(ROOT / "plugins"),
        str(ROOT / "examples/gpu-guard-plugin/src"),
        str(ROOT / "examples/zone-preference-plugin/src"),
        str(ROOT / "examples/gang-scheduling-plugin/src"),
        str(ROOT / "examples/gpu-sharing-policies/src"),
        str(ROOT / "tests/typing/conformance.py"),
        str(ROOT / "tests/typing/example_plugin_conforms.py"),
    )
    assert status == 0, out


def test_mypy_rejects_a_class_missing_a_protocol_member() -> None:
    """A PodInfo-like class without calculate_resource is not a framework.PodInfo."""
    out, status = _mypy(str(ROOT / "tests/typing/reject_missing_member.py"))
    assert status == 1, out
    assert "reject_missing_member.py:" in out
    assert '"IncompletePodInfo"' in out and "PodInfo" in out
    assert "calculate_resource" in out


def test_mypy_rejects_a_plugin_whose_filter_has_the_wrong_signature() -> None:
    """A Filter returning bool is not a FilterPlugin; mypy says which member is wrong."""
    out, status = _mypy(str(ROOT / "tests/typing/reject_bad_filter.py"))
    assert status == 1, out
    assert (
        'Incompatible types in assignment (expression has type "BoolFilter", variable has '
        'type "FilterPlugin")' in out
    )
    got = "def schedsim_filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> bool"
    assert got in out


def test_mypy_rejects_a_score_hook_with_go_style_parameter_names() -> None:
    """The protocols' parameters are keyword-only, so a Score hook named like Go's
    (``p``, ``nodeInfo``) is not a ScorePlugin; mypy names the member."""
    out, status = _mypy(str(ROOT / "tests/typing/reject_go_style_score.py"))
    assert status == 1, out
    assert (
        'Incompatible types in assignment (expression has type "GoStyleScore", variable has '
        'type "ScorePlugin")' in out
    )
    assert "schedsim_score" in out
    assert "def schedsim_score(self, *, state: CycleState, pod: Pod, node_info: NodeInfo)" in out
