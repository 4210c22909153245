"""`schedsim.cli.table`: the fast path prints exactly what rich prints.

The reference is rich itself (the library the CLI printed its tables with before): a default
`rich.table.Table` on a colourless 120-column console, cells escaped for markup as the CLI
escaped them. Hypothesis draws tables of printable ASCII, short and long, so that both the
fast path (nothing wraps) and the fallback (rich lays out the cells that wrap) are taken.
"""

from __future__ import annotations

import io
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from schedsim.cli.table import GridColumn, grid_text, rich_grid_text, rich_table_text, table_text


def _old_cli_rendering(headers: list[str], rows: list[list[str]], width: int) -> str:
    """How ``schedsim simulate -o table`` printed its table before this module: markup-
    escaped strings in a default rich Table."""
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None)
    table = Table(title=None, show_lines=False)
    for h in headers:
        table.add_column(h)
    for row in rows:
        table.add_row(*(escape(c) for c in row))
    console.print(table)
    return buf.getvalue()


# ASCII with spaces (words that wrap) and newlines, without ':' (rich's markup path would
# turn ':name:' into an emoji; the module prints it as written, checked separately below)
_cell = st.text(
    alphabet=st.sampled_from([*"abcdefghij0123/-.[]()\\", " ", " ", "\n"]),
    max_size=60,
)


@st.composite
def _tables(draw: st.DrawFn) -> tuple[list[tuple[str, str]], list[list[str]]]:
    n = draw(st.integers(1, 4))
    headers = draw(
        st.lists(
            st.sampled_from(["POD", "NODE", "REASON", "DEVICES", "A LONG HEADER"]),
            min_size=n,
            max_size=n,
        )
    )
    overflow = draw(st.lists(st.sampled_from(["ellipsis", "fold"]), min_size=n, max_size=n))
    rows = draw(st.lists(st.lists(_cell, min_size=n, max_size=n), max_size=6))
    return list(zip(headers, overflow, strict=True)), rows


@settings(max_examples=400, deadline=None)
@given(_tables(), st.sampled_from([20, 30, 60, 120]))
def test_same_text_as_rich(
    table: tuple[list[tuple[str, str]], list[list[str]]], width: int
) -> None:
    """Whatever wraps, folds or fits, the text equals rich's, and the CLI's earlier
    rendering (markup-escaped strings) for cells without a backslash."""
    columns, rows = table
    got = table_text(columns, rows, width)
    assert got == rich_table_text(columns, rows, width)
    if all(o == "ellipsis" for _, o in columns) and not any("\\" in c for row in rows for c in row):
        # rich's escape() doubled a cell's trailing backslash; printed as written now
        assert got == _old_cli_rendering([h for h, _ in columns], rows, width)


def _count_rich_layouts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = Console.render_lines

    def counting(self: Console, *args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Console, "render_lines", counting)
    return calls


def test_fitting_table_built_without_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    """10,000 short rows that fit 120 columns: no cell laid out by rich; same text."""
    rows = [[f"default/pod-{i}", f"node-{i % 100}", ""] for i in range(10_000)]
    columns = [("POD", "ellipsis"), ("NODE", "ellipsis"), ("REASON", "ellipsis")]
    expected = rich_table_text(columns, rows, 120)
    calls = _count_rich_layouts(monkeypatch)
    got = table_text(columns, rows, 120)
    assert calls == [0]
    assert got == expected
    assert got.splitlines()[1] == "┃ POD              ┃ NODE    ┃ REASON ┃"


def test_repeated_long_reason_laid_out_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unschedulable pods with one long reason: the reason wraps (rich's layout, once
    whatever the number of rows), the rest is joined; same text as rich."""
    reason = (
        "0/100 nodes are available: 100 Insufficient cpu. preemption: 0/100 nodes are "
        "available: 100 No preemption victims found for incoming pod."
    )
    columns = [("POD", "ellipsis"), ("NODE", "ellipsis"), ("REASON", "ellipsis")]
    few = [[f"default/pod-{i}", "<none>", reason] for i in range(5)]
    many = [[f"default/pod-{i}", "<none>", reason] for i in range(5, 500)] + few
    expected = rich_table_text(columns, many, 120)
    calls = _count_rich_layouts(monkeypatch)
    table_text(columns, few, 120)
    for_few = calls[0]
    got = table_text(columns, many, 120)
    assert got == expected
    assert calls[0] - for_few == for_few  # as many rich layouts for 500 rows as for 5


def test_not_ascii_goes_through_rich() -> None:
    """A wide character (two terminal columns) is laid out by rich."""
    rows = [["default/a", "n1", "设备"], ["default/b", "n2\tx", ""]]
    columns = [("POD", "ellipsis"), ("NODE", "ellipsis"), ("REASON", "ellipsis")]
    assert table_text(columns, rows, 120) == rich_table_text(columns, rows, 120)


def test_row_length_checked() -> None:
    with pytest.raises(ValueError, match="a row has 1 cells for 2 columns"):
        table_text([("A", "ellipsis"), ("B", "ellipsis")], [["x"]], 120)


def test_cells_are_plain_text() -> None:
    """Markup, emoji codes and a trailing backslash print as written (a pod message is
    data, not markup)."""
    rows = [["[bold]x[/bold]", ":smile:", "a\\"]]
    out = table_text([("A", "ellipsis"), ("B", "ellipsis"), ("C", "ellipsis")], rows, 120)
    assert "│ a\\ │" in out
    assert "[bold]x[/bold]" in out
    assert ":smile:" in out


@st.composite
def _grids(draw: st.DrawFn) -> tuple[str, list[GridColumn], list[list[str]]]:
    n = draw(st.integers(1, 5))
    columns = []
    for _ in range(n):
        header = draw(st.sampled_from(["NODE", "NodeResourcesFit", "TaintToleration score"]))
        lo = draw(st.one_of(st.none(), st.integers(1, 12)))
        hi = draw(st.one_of(st.none(), st.integers(4, 40)))
        columns.append(
            GridColumn(
                header,
                draw(st.sampled_from(["left", "right"])),
                lo,
                hi if hi is None or lo is None else max(lo, hi),
                draw(st.booleans()),
                draw(st.sampled_from(["ellipsis", "fold"])),
            )
        )
    title = draw(st.text(alphabet=st.sampled_from([*"abc/:() 0123"]), min_size=1, max_size=150))
    rows = draw(st.lists(st.lists(_cell, min_size=n, max_size=n), min_size=1, max_size=6))
    return title, columns, rows


@settings(max_examples=400, deadline=None)
@given(_grids(), st.sampled_from([30, 60, 120]))
def test_grid_same_text_as_rich(
    grid: tuple[str, list[GridColumn], list[list[str]]], width: int
) -> None:
    """The --explain grid: titled, right-justified columns, min/max widths, no_wrap; the
    text equals rich's whatever wraps or folds."""
    title, columns, rows = grid
    assert grid_text(title, columns, rows, width) == rich_grid_text(title, columns, rows, width)


def test_explain_sized_grid_built_with_one_rich_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    """1,000 nodes x 3 plugins (an --explain grid, as issue 30's 187 s repro): only the
    proxy table (the header and at most 2 cells per column) goes through rich, the rows are
    joined; same text as rich."""
    columns = [GridColumn("NODE", min_width=7, no_wrap=True)]
    columns += [GridColumn(p, "left", len(p), 32) for p in ("NodeName", "NodeResourcesFit")]
    columns.append(GridColumn("TaintToleration score", "right", 21, 21))
    rows = [
        [f"n{i:04d}", "passed", "passed" if i % 3 else "Insufficient cpu", f"{i % 7}/300"]
        for i in range(1000)
    ]
    title = "default/p: n0000 (1000 of 1000 nodes evaluated)"
    expected = rich_grid_text(title, columns, rows)
    calls = _count_rich_layouts(monkeypatch)
    grid_text(title, columns, rows[:10])
    for_ten = calls[0]
    got = grid_text(title, columns, rows)
    assert got == expected
    assert calls[0] - for_ten == for_ten  # as many rich layouts for 1,000 rows as for 10
    assert (
        got.splitlines()[4] == "│ n0000   │ passed   │ Insufficient cpu │                 0/300 │"
    )


def test_grid_cells_are_plain_text() -> None:
    """As in the summary table, markup and emoji codes in a reason print as written."""
    columns = [GridColumn("NODE"), GridColumn("A")]
    out = grid_text("t", columns, [["n1", "[bold]x:smile:a\\"]], 120)
    assert "[bold]x:smile:a\\" in out
    assert out == rich_grid_text("t", columns, [["n1", "[bold]x:smile:a\\"]], 120)
