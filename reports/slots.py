"""HTML that goes around MkDocs (side effects): a generated page's Markdown holds a placeholder
<div>, the HTML for it is saved under the fragments folder, and `fill` puts it into the built
page. Markdown processing of megabytes of tables or chart JSON was most of a long history's
build time, and this HTML (escaped when it was rendered) needs none of it."""
from __future__ import annotations

from collections import defaultdict
from functools import partial
from pathlib import Path
from typing import Callable

from markupsafe import Markup

from . import forked

_PLACEHOLDER = '<div class="tm-slot" data-slot="{}"></div>'


def placeholder(name: str) -> Markup:
    """What a page's Markdown holds where slot `name` goes (a Jinja2 global: `slot(name)`)."""
    return Markup(_PLACEHOLDER.format(name))


def save(fragments: Path, page: str, name: str, html: str) -> None:
    """The HTML of slot `name` of `page` (its path under docs/ without '.md')."""
    path = fragments / page / f"{name}.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")


def fill(site: Path, fragments: Path, finish: Callable[[Path, str], str] | None = None,
         processes: int = 1) -> set[Path]:
    """Put every saved slot into its built page (MkDocs wrote pages as <page>.html); `finish`
    (page, its HTML) → HTML is applied to each filled page before it is written, so a last
    pass over the built pages need not read the big ones again. With `processes` > 1 the
    pages are shared among forked children (nothing else runs at this point of a build).
    Returns the pages filled."""
    by_page: dict[Path, list[Path]] = defaultdict(list)
    for fragment in fragments.rglob("*.html"):
        by_page[fragment.parent].append(fragment)
    pages = sorted(by_page.items())
    waits = [forked.start(partial(_fill_pages, site, fragments, pages[i::processes], finish),
                          "tidemark-fill") for i in range(1, processes)]
    _fill_pages(site, fragments, pages[::processes], finish)
    for wait in waits:
        wait()
    return {site / f"{folder.relative_to(fragments)}.html" for folder in by_page}


def _fill_pages(site: Path, fragments: Path, pages: list[tuple[Path, list[Path]]],
                finish: Callable[[Path, str], str] | None) -> None:
    for folder, parts in pages:
        page = site / f"{folder.relative_to(fragments)}.html"
        html = fill_page(page.read_text(encoding="utf-8"),
                         {part.stem: part.read_text(encoding="utf-8") for part in parts}, page)
        page.write_text(finish(page, html) if finish else html, encoding="utf-8")


def fill_page(html: str, parts: dict[str, str], page: object) -> str:
    """`html` with each slot's placeholder replaced by its HTML (`page` names it in errors)."""
    for name, part in parts.items():
        marker = _PLACEHOLDER.format(name)
        if marker not in html:  # a template lost its placeholder: say so, do not drop HTML
            raise RuntimeError(f"{page} has no slot {name!r}")
        html = html.replace(marker, part, 1)
    return html
