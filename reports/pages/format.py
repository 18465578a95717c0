"""Formatting for pages (pure): numbers, links, slugs, and the escaping `cell` filter.

Every string that reaches a page from the database goes through `cell` (or Jinja2 autoescape),
so a workload named `<script>` shows as text and a `|` cannot break a Markdown table.
"""
from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pandas as pd
from markupsafe import Markup, escape

MISSING = "–"
# Characters Markdown would read as syntax inside a table cell; as numeric entities they are text.
_MARKDOWN_SPECIALS = str.maketrans({"|": "&#124;", "*": "&#42;", "_": "&#95;", "`": "&#96;",
                                    "[": "&#91;", "]": "&#93;", "\\": "&#92;", "~": "&#126;"})


@dataclass(frozen=True)
class Link:
    """A table cell that links to the page (and anchor) that produced the value; `css` is a
    class of site/assets/tidemark.css (a verdict's colour, see verdict_words)."""

    text: str
    href: str
    css: str = ""


def is_missing(value: Any) -> bool:
    """None, NaN, NaT or pandas.NA (a value is missing when it differs from itself; NA, a
    nullable column's missing value, has no truth value at all)."""
    if value is None or value is pd.NA:
        return True
    try:
        return bool(value != value)
    except (TypeError, ValueError):  # arrays and pandas.NA have no single truth value
        return False


def num(value: Any, digits: int = 0) -> str:
    """Thousands separators and a fixed number of decimals; a dash when there is no value."""
    if is_missing(value):
        return MISSING
    return f"{float(value):,.{digits}f}"


def value_text(value: Any) -> str:
    """A value of any size and unit: whole numbers with separators from 100 up, else four
    significant digits ('0.009988', '5.5'), never an exponent a reader must decode."""
    if is_missing(value):
        return MISSING
    number = float(value)
    return f"{number:,.0f}" if abs(number) >= 100 else f"{number:.4g}"


def latency_digits(value: float) -> int:
    """Microseconds: two decimals below 100 µs, whole numbers above."""
    return 0 if abs(value) >= 100 else 2


def latency(value: Any) -> str:
    if is_missing(value):
        return MISSING
    return num(value, latency_digits(value))


def signed_pct(value: float | None) -> str:
    return MISSING if is_missing(value) else f"{value:+.1f}%"


def escape_text(value: Any) -> Markup:
    """HTML-escape, then make Markdown table syntax and newlines inert."""
    text = str(escape("" if is_missing(value) else value))
    text = text.translate(_MARKDOWN_SPECIALS)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "<br>")
    return Markup(text)


def shown(value: Any) -> Any:
    """A table cell's value as every table shows it (Markdown, HTML, an older run's drawn
    page): a Link as it is, a missing or empty value as MISSING, any other as it is."""
    return MISSING if not isinstance(value, Link) and (is_missing(value) or value == "") \
        else value


def cell(value: Any) -> Markup:
    """Jinja2 filter for a Markdown table cell: a Link becomes [text](href), all text escaped."""
    value = shown(value)
    if isinstance(value, Link):
        # attr_list gives the link its class (the class names are ours, never the database's).
        css = f"{{ .{value.css} }}" if value.css else ""
        return Markup(f"[{escape_text(value.text)}]({safe_href(value.href)}){css}")
    return escape_text(value)


def html_cell(value: Any) -> Markup:
    """Jinja2 filter for a cell of an HTML table (HTML put into built pages, see build/slots.py):
    a Link becomes <a href>, text is HTML-escaped; hrefs must already point at .html files."""
    value = shown(value)
    if isinstance(value, Link):
        css = f' class="{value.css}"' if value.css else ""
        return Markup(f'<a href="{escape(safe_href(value.href))}"{css}>{escape(value.text)}</a>')
    return escape(str(value))


def safe_href(href: str) -> str:
    """Percent-encode anything in a generated href that is not a plain path, query or anchor."""
    return quote(href, safe="/#.-_~")


def built_href(href: str) -> str:
    """A page link as MkDocs writes it (x.md → x.html), for HTML put into built pages."""
    path, hash_, fragment = href.partition("#")
    if path.endswith(".md"):
        path = path[:-3] + ".html"
    return path + hash_ + fragment


@functools.lru_cache(maxsize=1 << 16)  # pure; every point of every chart links to a run page
def slug(name: str) -> str:
    """A file name for a page about `name`; a hash keeps names that differ only in symbols apart."""
    base = re.sub(r"[^A-Za-z0-9.-]+", "-", name).strip("-.")[:60] or "x"
    if base == name:
        return base
    return f"{base}-{hashlib.sha256(name.encode()).hexdigest()[:6]}"


def anchor(seq: int) -> str:
    """The id of an invocation's row on its run page."""
    return f"inv-{int(seq):04d}"


def date(ts: Any) -> str:
    """A run's start as 'YYYY-MM-DD HH:MM UTC' (the store keeps UTC)."""
    if is_missing(ts):
        return MISSING
    return ts.strftime("%Y-%m-%d %H:%M UTC")


def cpu_ranges(cpus: list[int] | None) -> str:
    """[0, 1, 2, 5] → '0-2,5', the way Linux prints CPU lists."""
    if not cpus:
        return MISSING
    ordered = sorted(set(int(c) for c in cpus))
    parts, start, prev = [], ordered[0], ordered[0]
    for cpu in ordered[1:] + [None]:
        if cpu is not None and cpu == prev + 1:
            prev = cpu
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if cpu is not None:
            start = prev = cpu
    return ",".join(parts)


def nav_title(name: str) -> str:
    """A title for MkDocs' nav: themes print it unescaped (and `striptags` un-escapes it into
    <title>), so a name with anything beyond plain characters is shown by its slug there."""
    return name if re.fullmatch(r"[A-Za-z0-9 ._()-]+", name) else slug(name)
