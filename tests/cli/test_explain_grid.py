"""The --explain grid is never cut: with the default profile's nine Filter and five Score
plugins on the shipped demo, every row keeps its TOTAL column (docs/cli.md: the grid shows
each plugin's reason or score "and the total"). Found by the fresh-user pass: the grid was
cut at 213 columns, losing TOTAL."""

from __future__ import annotations

import pytest

from schedsim.cli import main


def test_explain_grid_keeps_the_total_column(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--explain", "shop/web-1"]) == 0
    out = capsys.readouterr().out
    grid = out[out.index("shop/web-1: ") :].splitlines()
    header = next(line for line in grid if "NODE" in line)
    assert header.rstrip().endswith("TOTAL ┃")
    rows = [line for line in grid if line.startswith("│")]
    assert rows and all(line.rstrip().endswith("│") for line in rows)
