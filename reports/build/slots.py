"""HTML that goes around MkDocs (side effects): a generated page's Markdown holds a placeholder
<div>, the HTML for it is saved under the fragments folder, and `fill` puts it into the built
page. Markdown processing of megabytes of tables or chart JSON was most of a long history's
build time, and this HTML (escaped when it was rendered) needs none of it."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

from markupsafe import Markup

from . import forked

_PLACEHOLDER = '<div class="tm-slot" data-slot="{}"></div>'
_SLOT_TAG = _PLACEHOLDER.split(" data-slot")[0].encode()


def placeholder(name: str) -> Markup:
    """What a page's Markdown holds where slot `name` goes (a Jinja2 global: `slot(name)`)."""
    return Markup(_PLACEHOLDER.format(name))


def save(fragments: Path, page: str, name: str, html: str) -> None:
    """The HTML of slot `name` of `page` (its path under docs/ without '.md')."""
    path = fragments / page / f"{name}.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")


@dataclass(frozen=True)
class Finish:
    """A last step on each filled page (its path, its HTML) → HTML. `passes_over(fragment)`:
    true for a fragment the step would leave as it is wherever it stands (a chart without
    tables or headings, for the CSV step): such a fragment is put in after the step, as the
    bytes it was saved as, so megabytes of chart JSON are neither decoded nor searched."""

    apply: Callable[[Path, str], str]
    passes_over: Callable[[bytes], bool] = lambda fragment: False


def fill(site: Path, fragments: Path, finish: Finish | None = None,
         processes: int = 1) -> set[Path]:
    """Put every saved slot into its built page (MkDocs wrote pages as <page>.html); `finish`
    is applied to each filled page before it is written, so a last pass over the built pages
    need not read the big ones again. With `processes` > 1 the pages are shared among forked
    children (nothing else runs at this point of a build). Returns the pages filled."""
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
                finish: Finish | None) -> None:
    for folder, parts in pages:
        page = site / f"{folder.relative_to(fragments)}.html"
        texts, after = _read_parts(parts, finish)
        html = fill_page(page.read_text(encoding="utf-8"), texts, page)
        html = finish.apply(page, html) if finish else html
        if after:
            page.write_bytes(_fill_bytes(html.encode("utf-8"), after, page))
        else:
            page.write_text(html, encoding="utf-8")


def _read_parts(parts: list[Path], finish: Finish | None
                ) -> tuple[dict[str, str], dict[str, bytes]]:
    """(slot → its text, slot → the bytes of a fragment put in after `finish`): after, a
    fragment `finish` passes over that holds no slot (slots are filled in order) and no line
    end that reading it as text would change, while no other fragment holds a slot either."""
    read = {part.stem: part.read_bytes() for part in parts}
    after = {name: data for name, data in read.items() if finish is not None and
             b"\r" not in data and finish.passes_over(data) and not has_tag(data, (_SLOT_TAG,))}
    texts = {name: data.decode("utf-8") for name, data in read.items() if name not in after}
    if any(_SLOT_TAG.decode() in text for text in texts.values()):
        after = {}
        texts = {name: data.decode("utf-8") for name, data in read.items()}
    # As `Path.read_text` reads them: universal newlines.
    return {name: text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
            for name, text in texts.items()}, after


def has_tag(html: bytes, starts: tuple[bytes, ...]) -> bool:
    """Whether a tag of `html` begins with one of `starts` (each begins with '<'): one pass
    for the '<' (a chart's megabytes of JSON hold a handful), not one search per start."""
    at = html.find(b"<")
    while at >= 0:
        if html.startswith(starts, at):
            return True
        at = html.find(b"<", at + 1)
    return False


def _fill_bytes(html: bytes, parts: dict[str, bytes], page: object) -> bytes:
    """`fill_page` on the page's bytes, for fragments kept as bytes."""
    for name, part in parts.items():
        marker = _PLACEHOLDER.format(name).encode("utf-8")
        if marker not in html:
            raise RuntimeError(f"{page} has no slot {name!r}")
        html = html.replace(marker, part, 1)
    return html


def fill_page(html: str, parts: dict[str, str], page: object) -> str:
    """`html` with each slot's placeholder replaced by its HTML (`page` names it in errors)."""
    for name, part in parts.items():
        marker = _PLACEHOLDER.format(name)
        if marker not in html:  # a template lost its placeholder: say so, do not drop HTML
            raise RuntimeError(f"{page} has no slot {name!r}")
        html = html.replace(marker, part, 1)
    return html
