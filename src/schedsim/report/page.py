"""One self-contained HTML page: headings, paragraphs, tables and plotly charts, with
plotly.js embedded once (the page opens offline; nothing is fetched).

A `Page` is built section by section (`Page.heading`, `Page.text`, `Page.table`,
`Page.chart`) and rendered whole by `Page.render`; the command line writes it with
``schedsim.cli.output.deliver`` (a temporary file renamed over the target: whole or not at
all). The same sections give the same bytes (chart ids are numbered, nothing is random or
timed).

Nothing is wider than the window: headings and paragraphs wrap (inside a long path too),
table cells wrap between words (at most 40em wide), a table still too wide scrolls inside its
own box (``div.table``) and charts take the page's width.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import plotly.graph_objects as go
import plotly.io as pio
import plotly.offline

__all__ = ["Page"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
h1, h2, p { overflow-wrap: anywhere; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 1.6em; }
div.table { max-width: 100%; overflow-x: auto; margin: 0.5em 0 1em; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top;
  overflow-wrap: break-word; max-width: 40em; }
th { background: #f2f2f2; } td.num { text-align: right; }
.chart { width: 100%; max-width: 1100px; height: 360px; }
p.note { color: #555; font-size: 0.9em; }
"""


class Page:
    """An HTML report under construction.

    Args:
        title: the page's title and first heading.
    """

    def __init__(self, title: str) -> None:
        self.title = title
        self._parts: list[str] = []
        self._charts = 0

    def heading(self, text: str) -> None:
        """A section heading."""
        self._parts.append(f"<h2>{html.escape(text)}</h2>")

    def text(self, text: str, *, note: bool = False) -> None:
        """A paragraph (escaped)."""
        cls = ' class="note"' if note else ""
        self._parts.append(f"<p{cls}>{html.escape(text)}</p>")

    def table(
        self, header: Sequence[str], rows: Sequence[Sequence[object]], *, limit: int = 2000
    ) -> None:
        """A table; cells are escaped, numbers right-aligned; beyond ``limit`` rows a note
        says how many were left out (the JSON output has them all)."""
        out = ['<div class="table"><table><thead><tr>']
        out.extend(f"<th>{html.escape(h)}</th>" for h in header)
        out.append("</tr></thead><tbody>")
        for row in rows[:limit]:
            out.append("<tr>")
            for cell in row:
                if isinstance(cell, float):
                    out.append(f'<td class="num">{cell:.3f}</td>')
                elif isinstance(cell, int):
                    out.append(f'<td class="num">{cell}</td>')
                else:
                    out.append(f"<td>{html.escape(str(cell))}</td>")
            out.append("</tr>")
        out.append("</tbody></table></div>")
        self._parts.append("".join(out))
        if len(rows) > limit:
            self.text(f"{len(rows) - limit} more rows not shown.", note=True)

    def chart(self, figure: go.Figure, *, height: int = 360) -> None:
        """A plotly chart (drawn by the embedded plotly.js when the page loads), ``height``
        pixels high and as wide as the page."""
        self._charts += 1
        figure.update_layout(margin={"l": 60, "r": 20, "t": 40, "b": 40})
        self._parts.append(
            pio.to_html(
                figure,
                include_plotlyjs=False,
                full_html=False,
                div_id=f"chart-{self._charts}",
                default_height=f"{height}px",
                config={"displaylogo": False, "responsive": True},
            )
        )

    @property
    def charts(self) -> int:
        """Charts added so far."""
        return self._charts

    def render(self) -> str:
        """The whole page (plotly.js inlined in the head)."""
        js = plotly.offline.get_plotlyjs()
        title = html.escape(self.title)
        return (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{title}</title><style>{_STYLE}</style>"
            f'<script type="text/javascript">{js}</script></head><body>'
            f"<h1>{title}</h1>{''.join(self._parts)}</body></html>\n"
        )
