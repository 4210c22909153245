"""`schedsim.cli_table`: the fast path prints exactly what rich prints.

The reference is rich itself (the library the CLI printed its tables with before): a default
`rich.table.Table` on a colourless 120-column console, cells escaped for markup as the CLI
escaped them. Hypothesis draws tables of printable ASCII, short and long, so that both the
fast path (nothing wraps) and the fallback (rich lays out the cells that wrap) are taken.
"""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from schedsim.cli_table import _fast, rich_table_text, table_text


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


# printable ASCII without ':' (rich's markup path would turn ':name:' into an emoji; the
# module prints it as written, checked separately below)
_cell = st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=126, blacklist_characters=":"),
    max_size=40,
)


@st.composite
def _tables(draw: st.DrawFn) -> tuple[list[str], list[list[str]]]:
    n = draw(st.integers(1, 4))
    headers = draw(
        st.lists(st.sampled_from(["POD", "NODE", "REASON", "DEVICES"]), min_size=n, max_size=n)
    )
    rows = draw(st.lists(st.lists(_cell, min_size=n, max_size=n), max_size=6))
    return headers, rows


@settings(max_examples=300, deadline=None)
@given(_tables(), st.sampled_from([30, 60, 120]))
def test_same_text_as_rich(table: tuple[list[str], list[list[str]]], width: int) -> None:
    """Fast path or not, the text equals rich's, and the CLI's earlier rendering for cells
    without a backslash."""
    headers, rows = table
    columns = [(h, "ellipsis") for h in headers]
    got = table_text(columns, rows, width)
    assert got == rich_table_text(columns, rows, width)
    if not any("\\" in c for row in rows for c in row):
        # rich's escape() doubled a cell's trailing backslash; printed as written now
        assert got == _old_cli_rendering(headers, rows, width)


def test_fast_path_taken_for_a_big_placement_table() -> None:
    """10,000 short rows that fit 120 columns: built without rich, identical to rich."""
    rows = [[f"default/pod-{i}", f"node-{i % 100}", ""] for i in range(10_000)]
    columns = [("POD", "ellipsis"), ("NODE", "ellipsis"), ("REASON", "ellipsis")]
    fast = _fast([h for h, _ in columns], rows, 120)
    assert fast is not None
    assert fast == rich_table_text(columns, rows, 120)
    assert fast.splitlines()[1] == "┃ POD              ┃ NODE    ┃ REASON ┃"


def test_wrapping_and_newlines_go_through_rich() -> None:
    """A message wider than the console wraps (rich's layout), a newline makes two lines."""
    long = "0/4 nodes are available: " + "1 Insufficient memory, " * 8
    rows = [["default/a", "<none>", long], ["default/b", "n1\nn2", ""]]
    columns = [("POD", "ellipsis"), ("NODE", "ellipsis"), ("REASON", "ellipsis")]
    assert _fast([h for h, _ in columns], rows, 120) is None
    assert table_text(columns, rows, 120) == rich_table_text(columns, rows, 120)


def test_cells_are_plain_text() -> None:
    """Markup, emoji codes and a trailing backslash print as written (a pod message is
    data, not markup)."""
    rows = [["[bold]x[/bold]", ":smile:", "a\\"]]
    out = table_text([("A", "ellipsis"), ("B", "ellipsis"), ("C", "ellipsis")], rows, 120)
    assert "│ a\\ │" in out
    assert "[bold]x[/bold]" in out
    assert ":smile:" in out
