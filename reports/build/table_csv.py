"""A CSV beside every table of the built site, and a download link under the table (side
effects on the built pages).

Done once, on the built HTML, after the slots are filled: every table of every page goes
through here, whichever builder or template made it (Markdown tables of page builders,
hand-written templates, HTML put in by slots), so no table is left without its CSV and no
page builder needs to know. Cells are written as shown, numbers without their thousands
separators; each column that links (every number links to the run that produced it) gets a
`<column> link` column beside it with the address from the site's root.

A run's invocation table (class tm-invocations, up to thousands of rows per run) is not
parsed back from HTML: its CSV is written from the database (reports/build/downloads.py) for the
newest runs, and the link points there.
"""
from __future__ import annotations

import bisect
import csv
import functools
import html
import io
import posixpath
import re
from pathlib import Path
from typing import Callable

from ..pages.format import MISSING
from .downloads import INVOCATIONS_SUFFIX
from .slots import has_tag

_TABLE = re.compile(r"<table\b([^>]*)>")
_ROW = re.compile(r"<tr\b[^>]*>(.*?)</tr>", re.S)
_CELL = re.compile(r"<t([hd])\b[^>]*>(.*?)</t\1>", re.S)
_TAG = re.compile(r"<[^>]+>")
_HREF = re.compile(r'<a\b[^>]*?\bhref="([^"]*)"')
_HEADING = re.compile(r'<h[1-6][^>]*\bid="([^"]+)"')
_GROUPED = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$")
FROM_DATABASE = {"tm-invocations": INVOCATIONS_SUFFIX}  # table class → the CSV beside its page
LINK_CLASS = "tm-csv"
_REPEATED_TABLE_CHARS = 20_000
# What `csv_downloads` looks at: tables, headings, the download links it wrote.
_CSV_TAGS = (b"<table", b"</table", b"<h", f'<p class="{LINK_CLASS}"'.encode())


def cell_text(cell: str) -> str:
    """What a reader sees in a cell, as CSV text: tags dropped, entities decoded, a number
    without its thousands separators, the missing-value dash empty."""
    if "<" in cell or "&" in cell:  # most cells are plain text: skip the slow path
        cell = html.unescape(_TAG.sub(" ", cell))
    text = " ".join(cell.split())
    if text == MISSING:
        return ""
    return text.replace(",", "") if _GROUPED.match(text) else text


def _from_root(page: str, href: str) -> str:
    """A link of `page` (its path from the site root) as a path from the site root."""
    if href.startswith(("http://", "https://", "mailto:")):
        return href
    if href.startswith("#"):
        return page + href
    path, _, fragment = href.partition("#")
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(page), path))
    return resolved + (f"#{fragment}" if fragment else "")


def table_rows(table: str, page: str) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of one HTML table; a column that links is followed by its `link` column,
    unless an earlier column links to the same place in each row where it links (one run,
    one link)."""
    parsed: list[list[tuple[str, str]]] = []
    header: list[str] = []
    for row in _ROW.finditer(table):
        cells = list(_CELL.finditer(row.group(1)))
        if cells and all(c.group(1) == "h" for c in cells) and not header:
            header = [cell_text(c.group(2)) for c in cells]
            continue
        parsed.append([(cell_text(c.group(2)), _href(c.group(2), page)) for c in cells])
    width = max([len(header), *(len(r) for r in parsed)]) if parsed or header else 0
    header = _unique(header + [f"column {i + 1}" for i in range(len(header), width)])
    parsed = [row + [("", "")] * (width - len(row)) for row in parsed]
    links: list[tuple[int, list[str]]] = []  # (column, its links) of the link columns kept
    for i in range(width):
        column = [row[i][1] for row in parsed]
        if any(column) and not any(_same_places(column, kept) for _, kept in links):
            links.append((i, column))
    linked = {i for i, _ in links}
    columns = [name for i, name in enumerate(header)
               for name in ((name, f"{name} link") if i in linked else (name,))]
    rows = [[value for i, (text, href) in enumerate(row)
             for value in ((text, href) if i in linked else (text,))] for row in parsed]
    return columns, rows


def _same_places(column: list[str], kept: list[str]) -> bool:
    return all(not href or href == other for href, other in zip(column, kept))


def _unique(names: list[str]) -> list[str]:
    """Column names made unique ('x', 'x (2)'): a CSV reader keys columns by name."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return out


def _href(cell: str, page: str) -> str:
    found = _HREF.search(cell) if "href" in cell else None
    return _from_root(page, html.unescape(found.group(1))) if found else ""


def _csv_text(columns: list[str], rows: list[list[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return out.getvalue()


def _table_csv(table: str, page: str) -> str:
    """One table's CSV text; a small table without links is the same on every page that has
    it (kept for the next page; a big one is not worth its memory)."""
    if "href" not in table and len(table) < _REPEATED_TABLE_CHARS:
        return _link_free_csv(table)
    return _csv_text(*table_rows(table, page))


def table_csv(table_html: str, page: str) -> str:
    """The CSV of one table's HTML (`<table>…</table>`) on `page`, as every table of the site
    gets it: an older run's page (drawn in the browser, never parsed here) carries its tables'
    CSV in its data file."""
    inner = table_html[table_html.index(">") + 1:table_html.rindex("</table>")]
    return _table_csv(inner, page)


@functools.lru_cache(maxsize=64)
def _link_free_csv(table: str) -> str:
    """The CSV of a table none of whose cells links (so no page's path is in it): run pages
    repeat their machine's and build's tables, a thousand times on a long history."""
    return _csv_text(*table_rows(table, ""))


def _link(href: str, what: str) -> str:
    return (f'<p class="{LINK_CLASS}"><a href="{html.escape(href)}" download>'
            f"Download this table as CSV</a>{what}</p>")


def _database_table(csv_name: str, written: bool, root: str) -> str:
    """The link under a table whose CSV the database export wrote (or where to find it)."""
    if written:
        return _link(csv_name, " (every invocation with every metric it measured)")
    return (f'<p class="{LINK_CLASS}">This table\'s CSV is written for the newest runs only; '
            f'every invocation of every run is in the invocations\' Parquet files (the '
            f'<a href="{root}downloads.html">Downloads</a> page lists them, the '
            f'<a href="{root}sql.html">SQL page</a> queries them).</p>')


class _Names:
    """CSV file names for a page's tables: <page>.<heading id>.csv, numbered when repeated."""

    def __init__(self, html_text: str, stem: str):
        self.headings = [(m.start(), m.group(1)) for m in _HEADING.finditer(html_text)]
        self.starts = [start for start, _ in self.headings]
        # The names of the CSV files the database export writes are never reused.
        self.stem, self.used = stem, {stem + suffix for suffix in FROM_DATABASE.values()}

    def name(self, position: int) -> str:
        index = bisect.bisect_left(self.starts, position) - 1
        base = f"{self.stem}.{self.headings[index][1] if index >= 0 else 'table'}"
        name, n = f"{base}.csv", 1
        while name in self.used:
            n += 1
            name = f"{base}-{n}.csv"
        self.used.add(name)
        return name


def csv_downloads(text: str, page: str, database_csv: Callable[[str], bool]
                  ) -> tuple[str, dict[str, str]]:
    """Each table of one built page (`page`: its path from the site root, `text`: its HTML) as
    CSV: (the page's HTML with a download link under each table, CSV file name beside the
    page → its text). `database_csv(name)`: whether the database export wrote that file beside
    the page (pure: the caller writes the files)."""
    if "<table" not in text:
        return text, {}
    root = "../" * page.count("/")
    stem = posixpath.splitext(posixpath.basename(page))[0]
    names, parts, files, done, at = _Names(text, stem), [], {}, 0, 0
    # The next table after the last one handled: a table's rows are not searched for tables.
    while (match := _TABLE.search(text, at)) is not None:
        end = text.find("</table>", match.end())
        if end < 0:
            break
        at = end + len("</table>")
        if text.startswith(f'<p class="{LINK_CLASS}">', at):  # linked by an earlier pass
            continue
        kind = next((k for k in FROM_DATABASE if k in match.group(1)), None)
        if kind:
            name = stem + FROM_DATABASE[kind]
            after = _database_table(name, database_csv(name), root)
        else:
            name = names.name(match.start())
            files[name] = _table_csv(text[match.end():end], page)
            after = _link(name, "")
        parts += [text[done:at], after]
        done = at
    parts.append(text[done:])
    return "".join(parts), files


def passes_over(fragment: bytes) -> bool:
    """Whether `csv_downloads` leaves `fragment` (a part of a page, as UTF-8) as it is wherever
    it stands in a page: it holds no table, no heading (which names a table's CSV file) and
    no download link (a chart: megabytes of JSON that need not be searched for tables)."""
    return not has_tag(fragment, _CSV_TAGS)


def add_csv_downloads(page_file: Path, site: Path, text: str | None = None) -> str:
    """Write each table of one built page (its HTML `text`, else read from the file) as CSV
    beside the page; returns the page's HTML with a download link under each table."""
    text = page_file.read_text(encoding="utf-8") if text is None else text
    html, files = csv_downloads(text, page_file.relative_to(site).as_posix(),
                                lambda name: page_file.with_name(name).is_file())
    for name, content in files.items():
        page_file.with_name(name).write_text(content, encoding="utf-8")
    return html


def add_all_csv_downloads(site: Path, done: set[Path] = frozenset()) -> int:
    """Every built page but MkDocs' 404 page and the pages in `done` (already given their
    links); returns how many pages were rewritten."""
    count = 0
    for page in sorted(site.rglob("*.html")):
        if page.name == "404.html" or page in done:
            continue
        text = page.read_text(encoding="utf-8")
        linked = add_csv_downloads(page, site, text)
        if linked != text:
            page.write_text(linked, encoding="utf-8")
            count += 1
    return count
