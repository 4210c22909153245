"""Docs that are generated or quoted from code stay in step with it."""

from __future__ import annotations

from pathlib import Path

from schedsim.framework.hookspec import reference_markdown

ROOT = Path(__file__).resolve().parents[2]


def test_hook_reference_is_in_step_with_the_hook_specs() -> None:
    """docs/hooks.md is generated from the hook spec docstrings (command in its header)."""
    assert (ROOT / "docs" / "hooks.md").read_text(encoding="utf-8") == reference_markdown()
