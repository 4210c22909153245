"""Docs that are generated or quoted from code stay in step with it."""

from __future__ import annotations

from pathlib import Path

from schedsim.framework.hookspec import reference_markdown

ROOT = Path(__file__).resolve().parents[2]


def test_hook_reference_is_in_step_with_the_hook_specs() -> None:
    """docs/hooks.md is generated from the hook spec docstrings (command in its header)."""
    assert (ROOT / "docs" / "hooks.md").read_text(encoding="utf-8") == reference_markdown()


def test_score_plugin_walk_through_shows_the_tested_example_verbatim() -> None:
    """docs/writing-plugins.md section 6 quotes examples/zone-preference-plugin (whose tests
    run with the suite and whose types test_typing checks) file for file."""
    doc = (ROOT / "docs" / "writing-plugins.md").read_text(encoding="utf-8")
    example = ROOT / "examples" / "zone-preference-plugin"
    for path in (
        example / "src" / "schedsim_zone_preference" / "__init__.py",
        example / "tests" / "test_zone_preference.py",
    ):
        code = path.read_text(encoding="utf-8")
        assert f"```python\n{code}```" in doc, path
