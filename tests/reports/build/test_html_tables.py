"""html_tables renders a table as the HTML Python-Markdown makes of its Markdown (pure)."""
from __future__ import annotations

import markdown

from reports.build import render
from reports.pages.format import Link
from reports.build.html_tables import table_html
from reports.pages.tables import Table

# The base config's extensions (mkdocs.yml) that touch a table.
EXTENSIONS = ["tables", "attr_list", "md_in_html", "toc"]


def markdown_html(table: Table) -> str:
    """The table through `_table.md.j2` (no slots) and Python-Markdown."""
    env = render.environment()
    text = env.from_string('{% from "_table.md.j2" import table %}{{ table(t) }}').render(t=table)
    return markdown.markdown(text, extensions=EXTENSIONS)


def test_a_table_is_the_html_markdown_makes_of_it() -> None:
    table = Table(("Series | name", "ops/s", "Δ"), [
        ["fill_random *x* [a]", Link("1,234", "../runs/r1.html#inv-0001", "tm-slower"), "+1.0%"],
        ["two\nlines & <b>", Link("5 `x`", "../runs/r 2.html"), None],
        ["  padded  ", "", float("nan")],
        ["\xa0kept\xa0", Link(" spaced ", "../runs/r3.html"), "x"],
        ["short row"],
        ["long", "row", "with", "extra"],
    ], numeric=(False, True, True))
    assert table_html(table) == markdown_html(table)


def test_an_empty_table_has_no_row() -> None:
    """Python-Markdown gives a header-only table an empty row (its CSV then had an empty line);
    the slot's HTML has none."""
    table = Table(("Cache state", "Steps"), [])
    assert "<tbody>\n</tbody>" in table_html(table)
    assert markdown_html(table).replace("<tr>\n<td></td>\n<td></td>\n</tr>\n", "") == \
        table_html(table)
