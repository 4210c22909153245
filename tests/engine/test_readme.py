"""README's "As a library" runs as written and prints what the README says it prints."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_library_snippet_runs() -> None:
    """The snippet schedules the shipped DRA example (three GPUs from a template, one shared
    claim, a two-GPU job that fits nowhere) and drives the same cluster's snapshot."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## As a library") :]
    code, expected = re.findall(r"```(?:python)?\n(.*?)```", section, re.S)[:2]
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)  # the snippet reads src/schedsim/examples/gpu-cluster.yaml
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    finally:
        os.chdir(cwd)
    assert out.getvalue() == expected
