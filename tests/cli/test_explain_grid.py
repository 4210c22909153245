"""The --explain grid is never cut, and fits 120 columns: with the default profile's Filter
and Score plugins on the shipped demo, the grid wraps into tables that each repeat NODE, the
last ending with the TOTAL column (docs/cli.md: the grid shows each plugin's reason or score
"and the total"). Found by the fresh-user pass: the grid was cut at 213 columns, losing
TOTAL; then printed 190-220 columns wide (issue 31)."""

from __future__ import annotations

import pytest

from schedsim.cli import main
from schedsim.cli.simulate import GRID_WIDTH


def _grid(capsys: pytest.CaptureFixture[str], pod: str) -> list[str]:
    assert main(["simulate", "--explain", pod]) == 0
    out = capsys.readouterr().out
    return out[out.index(f"{pod}: ") :].splitlines()


def test_explain_grid_keeps_the_total_column(capsys: pytest.CaptureFixture[str]) -> None:
    grid = _grid(capsys, "shop/web-1")
    headers = [line for line in grid if line.startswith("┃ NODE")]
    assert len(headers) > 1  # wrapped
    assert headers[-1].rstrip().endswith("TOTAL ┃")
    assert all("TOTAL" not in h for h in headers[:-1])
    rows = [line for line in grid if line.startswith("│")]
    assert rows and all(line.rstrip().endswith("│") for line in rows)
    # every node is in every table, the selected one starred
    for name in ("worker-a", "* worker-b", "gpu-1", "worker-c"):
        assert sum(1 for r in rows if r.startswith(f"│ {name} ")) == len(headers)
    # every plugin column appears once
    text = "\n".join(headers)
    for col in ("NodeResourcesFit ┃", "TaintToleration score", "ImageLocality score"):
        assert text.count(col) == 1, col


@pytest.mark.parametrize("pod", ["shop/web-1", "shop/report"])
def test_explain_grid_fits_120_columns(capsys: pytest.CaptureFixture[str], pod: str) -> None:
    grid = _grid(capsys, pod)
    assert GRID_WIDTH == 120
    assert max(len(line.rstrip()) for line in grid) <= 120
