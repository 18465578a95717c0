"""A generated page's tables and charts as HTML slots (side effects: writes fragments).

Python-Markdown spent nine tenths of its time on a history's pages in their tables (every cell
through its inline patterns, every link through MkDocs' link rewriting), and Material's search
plugin parsed their HTML again to index thousands of numbers. A page rendered with slots holds
a placeholder where each table or chart goes; its HTML, the very bytes Python-Markdown's
`tables` extension makes of `_table.md.j2`'s Markdown, is saved as a fragment and put into the
built page by `slots.fill` (tests/reports/build/test_html_tables.py compares the two; an empty table
differs: Markdown gave it one empty row). What the reader sees is unchanged; the search index
keeps the pages' headings and prose, not their numbers. A page link becomes its .html address
as MkDocs rewrites it, without MkDocs' check that the page exists: tests/e2e/test_site.py checks
every local link of the built site.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from markupsafe import Markup, escape

from ..pages.format import Link, built_href, escape_text, safe_href, shown
from ..pages.tables import Table
from .slots import placeholder, save

_RIGHT = ' style="text-align: right;"'


class PageSlots:
    """The slots of one page (`page`: its path under docs/ without '.md'), numbered in the
    order the template asks for them."""

    def __init__(self, fragments: Path, page: str):
        self._fragments, self._page, self._count = fragments, page, 0

    def table(self, table: Table) -> Markup:
        return self._slot("table", table_html(table))

    def chart(self, chart: str) -> Markup:
        """A plotly fragment from `charts`, in the block the Markdown templates put it in."""
        return self._slot("chart", f'<div class="tm-chart">\n{chart}\n</div>')

    def _slot(self, kind: str, html: str) -> Markup:
        self._count += 1
        name = f"{kind}-{self._count}"
        save(self._fragments, self._page, name, html)
        return placeholder(name)


def table_html(table: Table) -> str:
    """`table` as Python-Markdown renders its Markdown table: a right-aligned column's cells
    styled, a short row padded with empty cells, a long one cut."""
    styles = [_RIGHT if right else "" for right in table.right_aligned]
    width = len(styles)
    head = "".join(f"<th{style}>{_cell_html(column)}</th>\n"
                   for column, style in zip(table.columns, styles))
    rows = []
    for row in table.rows:
        cells = [_cell_html(value) for value in row[:width]] + [""] * (width - len(row))
        rows.append("<tr>\n" + "".join(f"<td{style}>{cell}</td>\n"
                                       for cell, style in zip(cells, styles)) + "</tr>\n")
    return (f"<table>\n<thead>\n<tr>\n{head}</tr>\n</thead>\n<tbody>\n{''.join(rows)}"
            f"</tbody>\n</table>")


def _cell_html(value: Any) -> str:
    """What `format.cell`'s Markdown becomes: escaped text; a Link with its class first, as
    attr_list writes it, and the .html address MkDocs rewrites a page link to."""
    value = shown(value)
    if isinstance(value, Link):
        css = f'class="{value.css}" ' if value.css else ""
        href = escape(built_href(safe_href(value.href)))
        return f'<a {css}href="{href}">{escape_text(value.text)}</a>'
    return escape_text(value).strip(" ")  # a cell's spaces, as Markdown strips them
