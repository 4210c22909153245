"""Plain-text tables for the command line: rich's layout, without rich's cost per cell.

`table_text` renders a table exactly as ``rich`` prints a default `rich.table.Table`
(``box.HEAVY_HEAD``, one space of padding each side, a header row) on a console ``width``
columns wide without colour. Cells are plain text: nothing in them is read as markup or as an
emoji code (``[bold]`` and ``:smile:`` print as written).

How, when every cell is ASCII (printable, or a newline):

1. **Column widths.** rich sizes a column from two measures of its cells: the widest cell
   (longest line) and the longest word. They are computed here with string operations; when
   the table's natural width fits ``width``, the widths are the widest cells (plus padding),
   as rich keeps them. Otherwise rich shrinks the columns (wrapping the cells that can wrap):
   rich computes the widths itself, from a proxy table of at most two cells per column (the
   cells that define the column's two measures), which rich sizes exactly as the whole table.
2. **Cells.** A one-line cell that fits its column is padded with string joins; any other
   cell (it wraps, folds, or has several lines) is laid out by rich (`Console.render_lines`
   of the padded `Text`, as rich's table renders a cell), once per distinct (text, width):
   the many rows with the same long reason (unschedulable pods) cost one layout.
3. **Rows.** Lines are joined with the box characters; a row is as high as its highest cell
   (data cells aligned top, header cells bottom, as rich aligns them).

A table with any other character (a tab, a wide or combining character) is laid out by rich
entirely. Rendering 10,000 rows through rich costs ~0.3 ms per row; here ~1 us per row of
fitting cells. ``tests/cli/test_cli_table.py`` checks the text equals rich's on generated
tables, wrapping ones included.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence

import attrs
from rich import box
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

__all__ = [
    "CELL_LIMIT",
    "CLIPPED_NOTE",
    "ColumnSpec",
    "GridColumn",
    "clip",
    "grid_text",
    "rich_grid_text",
    "rich_table_text",
    "table_text",
]

CELL_LIMIT = 10_000
"""The most characters of one cell a table prints: rich's wrapping of a longer text grows
faster than its length (a 6.4 MB reason took 40 s), so the rest is cut, with a note saying how
much (`clip`)."""

CLIPPED_NOTE = "... [{n:,} more characters; -o json has the whole text]"
"""What replaces the end of a cell past `CELL_LIMIT` (``{n}``: the characters left out)."""


def clip(text: str, limit: int = CELL_LIMIT) -> str:
    """``text``, or its first ``limit`` characters and `CLIPPED_NOTE` when it is longer: a
    table stays linear in its input, and says what it left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + CLIPPED_NOTE.format(n=len(text) - limit)


ColumnSpec = tuple[str, str]
"""A column: its header and rich's ``overflow`` for its cells that must be cut (``"fold"``
or ``"ellipsis"``)."""

_BOX = box.HEAVY_HEAD


def _ascii_text(cell: str) -> bool:
    """One terminal column per character, lines split only at newlines (rich's width of
    such text is its length)."""
    return cell.isascii() and (cell.isprintable() or cell.replace("\n", "").isprintable())


def _measure(cell: str) -> tuple[int, int]:
    """rich's (minimum, maximum) width of a `Text` cell of ASCII text, without padding:
    the longest word and the longest line."""
    widest = max(map(len, cell.splitlines()), default=0)
    words = cell.split()
    return (max(map(len, words)) if words else widest), widest


def _defining_cells(
    headers: Sequence[str], rows: Sequence[Sequence[str]]
) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """Per column, (measure, cell) of the cell with the longest word and of the one with the
    longest line, headers included: the two cells that decide rich's width of the column.

    Raises:
        ValueError: a row's length differs from the number of columns.
    """
    n = len(headers)
    best_min = [(-1, "")] * n
    best_max = [(-1, "")] * n
    for i, header in enumerate(headers):
        lo, hi = _measure(header)
        best_min[i], best_max[i] = (lo, header), (hi, header)
    for row in rows:
        if len(row) != n:
            raise ValueError(f"a row has {len(row)} cells for {n} columns")
        for i, cell in enumerate(row):
            lo, hi = _measure(cell)
            if lo > best_min[i][0]:
                best_min[i] = (lo, cell)
            if hi > best_max[i][0]:
                best_max[i] = (hi, cell)
    return best_min, best_max


def _proxy_rows(
    best_min: list[tuple[int, str]], best_max: list[tuple[int, str]]
) -> list[list[str]]:
    """A table of at most two cells per column (the defining ones) that rich sizes exactly
    as the whole table."""
    n = len(best_min)
    proxy: list[list[str]] = []
    for i in range(n):
        for _, cell in (best_min[i], best_max[i]):
            proxy.append([cell if j == i else "" for j in range(n)])
    return proxy


class _Layout:
    """Column widths (with padding) and the cells' lines for one table and console."""

    def __init__(
        self, columns: Sequence[ColumnSpec], rows: Sequence[Sequence[str]], width: int
    ) -> None:
        self.columns = columns
        self.console = Console(
            file=io.StringIO(), width=width, force_terminal=False, color_system=None
        )
        self.widths = self._widths(rows)
        self._lines: dict[tuple[str, int, str], list[str]] = {}

    def _widths(self, rows: Sequence[Sequence[str]]) -> list[int]:
        n = len(self.columns)
        best_min, best_max = _defining_cells([h for h, _ in self.columns], rows)
        natural = [hi + 2 for hi, _ in best_max]
        if sum(natural) + n + 1 <= self.console.width:
            return natural  # rich keeps the natural widths when they fit
        # rich shrinks the columns from the same two measures per column: size a proxy
        # table holding just the cells that define them, read the widths off its top border
        proxy = _proxy_rows(best_min, best_max)
        top = rich_table_text(self.columns, proxy, self.console.width).split("\n", 1)[0]
        return [len(part) for part in top[1:-1].split(_BOX.top_divider)]

    def cell_lines(self, cell: str, column: int) -> list[str]:
        """The cell's lines in its column, padded to the column's width."""
        w = self.widths[column]
        if "\n" not in cell and len(cell) <= w - 2:
            return [f" {cell.ljust(w - 2)} "]
        overflow = self.columns[column][1]
        key = (cell, w, overflow)
        lines = self._lines.get(key)
        if lines is None:
            options = self.console.options.update(
                width=w,
                justify="left",
                no_wrap=False,
                overflow="fold" if overflow == "fold" else "ellipsis",
                height=None,
                highlight=False,
            )
            rendered = self.console.render_lines(Padding(Text(cell), (0, 1)), options)
            lines = self._lines[key] = ["".join(s.text for s in line) for line in rendered]
        return lines


def _row(cells: list[list[str]], widths: list[int], chars: tuple[str, str, str], top: bool) -> str:
    """A row's lines: cells padded to the row's height (blank lines below the text, or
    above it with ``top`` False, as rich aligns header cells), joined with the box's
    characters."""
    left, divider, right = chars
    height = max(len(c) for c in cells)
    if height == 1:
        return f"{left}{divider.join(c[0] for c in cells)}{right}\n"
    shaped = []
    for c, w in zip(cells, widths, strict=True):
        blank = [" " * w] * (height - len(c))
        shaped.append(c + blank if top else blank + c)
    return "".join(f"{left}{divider.join(c[k] for c in shaped)}{right}\n" for k in range(height))


def _body(
    rows: Sequence[Sequence[str]], widths: list[int], cell_lines: Callable[[str, int], list[str]]
) -> list[str]:
    """The data rows (the last one closed by the foot characters) and the bottom border."""
    mid = (_BOX.mid_left, _BOX.mid_vertical, _BOX.mid_right)
    foot = (_BOX.foot_left, _BOX.foot_vertical, _BOX.foot_right)
    last = len(rows) - 1
    out = []
    for r, row in enumerate(rows):
        cells = [cell_lines(c, i) for i, c in enumerate(row)]
        out.append(_row(cells, widths, foot if r == last else mid, top=True))
    out += [_BOX.get_bottom(widths), "\n"]
    return out


def table_text(
    columns: Sequence[ColumnSpec], rows: Sequence[Sequence[str]], width: int = 120
) -> str:
    """The table's text, every line ending in a newline, as rich prints a default `Table` of
    these columns and rows (cells as plain `Text`) on a colourless console ``width`` wide.

    Args:
        columns: (header, overflow) per column, left to right.
        rows: one string per column per row.
        width: the console width in columns.

    A cell longer than `CELL_LIMIT` characters is cut there, with a note (`clip`).

    Raises:
        ValueError: a row's length differs from the number of columns.
    """
    if any(len(c) > CELL_LIMIT for row in rows for c in row):
        rows = [[clip(c) for c in row] for row in rows]
    cells_ascii = all(_ascii_text(h) for h, _ in columns) and all(
        _ascii_text(c) for row in rows for c in row
    )
    if not cells_ascii:
        return rich_table_text(columns, rows, width)
    layout = _Layout(columns, rows, width)
    widths = layout.widths
    b = _BOX
    out = [b.get_top(widths), "\n"]
    header = [layout.cell_lines(h, i) for i, (h, _) in enumerate(columns)]
    out.append(_row(header, widths, (b.head_left, b.head_vertical, b.head_right), top=False))
    out += [b.get_row(widths, "head", edge=True), "\n"]
    out += _body(rows, widths, layout.cell_lines)
    return "".join(out)


def rich_table_text(
    columns: Sequence[ColumnSpec], rows: Sequence[Sequence[str]], width: int = 120
) -> str:
    """`table_text` through rich alone (the reference `table_text` is tested against, and
    its path for text that is not ASCII)."""
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None)
    table = Table(title=None, show_lines=False)
    for header, overflow in columns:
        table.add_column(Text(header), overflow="fold" if overflow == "fold" else "ellipsis")
    for row in rows:
        table.add_row(*(Text(c) for c in row))
    console.print(table)
    return buf.getvalue()


@attrs.frozen
class GridColumn:
    """A column of `grid_text`, with the rich `Table.add_column` settings it mirrors.

    Attributes:
        header: the header text.
        justify: ``"left"`` or ``"right"``.
        min_width: rich's ``min_width`` (columns, without padding), or None.
        max_width: rich's ``max_width`` (columns, without padding), or None.
        no_wrap: rich's ``no_wrap``.
        overflow: rich's ``overflow`` for cells that must be cut (``"fold"`` or ``"ellipsis"``).
    """

    header: str
    justify: str = "left"
    min_width: int | None = None
    max_width: int | None = None
    no_wrap: bool = False
    overflow: str = "fold"


def _grid_table(title: str, columns: Sequence[GridColumn], rows: Sequence[Sequence[str]]) -> Table:
    """The rich `Table` `grid_text` mirrors: a left-justified title, cells as plain `Text`."""
    table = Table(title=Text(title), title_justify="left", show_lines=False)
    for c in columns:
        table.add_column(
            Text(c.header),
            justify="right" if c.justify == "right" else "left",
            overflow="fold" if c.overflow == "fold" else "ellipsis",
            min_width=c.min_width,
            max_width=c.max_width,
            no_wrap=c.no_wrap,
        )
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def rich_grid_text(
    title: str, columns: Sequence[GridColumn], rows: Sequence[Sequence[str]], width: int = 120
) -> str:
    """`grid_text` through rich alone (its reference, and its path for text that is not
    plain ASCII)."""
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None)
    console.print(_grid_table(title, columns, rows))
    return buf.getvalue()


def grid_text(
    title: str, columns: Sequence[GridColumn], rows: Sequence[Sequence[str]], width: int = 120
) -> str:
    """The text rich prints for a titled `Table` of these columns and rows on a colourless
    console ``width`` wide. Title, headers and cells are plain text: nothing in them is read
    as markup or as an emoji code.

    Costs one rich layout of a proxy table (the title, the header and the at most two cells
    per column that decide the column widths, as in `table_text`) plus string joins per row:
    an ``--explain`` grid of 1,000 nodes is ~1 us per fitting cell instead of rich's ~50 us.

    Args:
        title: the title line(s) above the table, left-justified as rich does.
        columns: the columns, left to right.
        rows: one string per column per row.
        width: the console width in columns.

    Raises:
        ValueError: a row's length differs from the number of columns.
    """
    n = len(columns)
    if any(len(row) != n for row in rows):
        raise ValueError(f"a row has cells for other than {n} columns")
    if any(len(c) > CELL_LIMIT for row in rows for c in row):
        rows = [[clip(c) for c in row] for row in rows]  # as in table_text
    plain = (
        rows
        and _ascii_text(title)
        and all(_ascii_text(c.header) for c in columns)
        and all(_ascii_text(cell) for row in rows for cell in row)
    )
    if not plain:
        return rich_grid_text(title, columns, rows, width)
    proxy = _proxy_rows(*_defining_cells([c.header for c in columns], rows))
    lines = rich_grid_text(title, columns, proxy, width).splitlines(keepends=True)
    # the title is ASCII: the first box-drawn lines are the top border and the header
    top = next(k for k, line in enumerate(lines) if line.startswith(_BOX.top_left))
    head_end = next(k for k, line in enumerate(lines) if line.startswith(_BOX.head_row_left))
    border = lines[top].rstrip("\n")
    widths = [len(part) for part in border[1:-1].split(_BOX.top_divider)]
    if len(widths) != n or not border.endswith(_BOX.top_right) or min(widths) < 3:
        # wider than the console (cropped), or a column too narrow for its padding
        return rich_grid_text(title, columns, rows, width)
    layout = _GridLayout(columns, widths, width)
    out = lines[: head_end + 1]
    out += _body(rows, widths, layout.cell_lines)
    return "".join(out)


class _GridLayout:
    """The cells' lines of a `grid_text` table whose column widths (with padding) are known."""

    def __init__(self, columns: Sequence[GridColumn], widths: list[int], width: int) -> None:
        self.columns = columns
        self.widths = widths
        self.console = Console(
            file=io.StringIO(), width=width, force_terminal=False, color_system=None
        )
        self._lines: dict[tuple[str, int], list[str]] = {}

    def cell_lines(self, cell: str, column: int) -> list[str]:
        """The cell's lines in its column, padded to the column's width."""
        w = self.widths[column]
        c = self.columns[column]
        if "\n" not in cell and len(cell) <= w - 2:
            if c.justify == "right":  # rich strips a right-justified line's trailing space
                return [f" {cell.rstrip().rjust(w - 2)} "]
            return [f" {cell.ljust(w - 2)} "]
        key = (cell, column)
        lines = self._lines.get(key)
        if lines is None:
            options = self.console.options.update(
                width=w,
                justify="right" if c.justify == "right" else "left",
                no_wrap=c.no_wrap,
                overflow="fold" if c.overflow == "fold" else "ellipsis",
                height=None,
                highlight=False,
            )
            rendered = self.console.render_lines(Padding(Text(cell), (0, 1)), options)
            lines = self._lines[key] = ["".join(s.text for s in line) for line in rendered]
        return lines
