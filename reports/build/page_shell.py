"""Pages of one folder built beside MkDocs rather than by it (side effects: reads the docs and
MkDocs' config, renders in this process).

A long history has a thousand run pages, and `mkdocs build` spent most of its time on them:
Markdown → HTML, then the theme's whole template (its nav alone is half of that) per page.
Their Markdown is converted here by MkDocs' own page pipeline (`_populate_page`: the same
extensions, link rewriting and plugin events), each page once, and only when its Markdown or
what its links point to changed (`Converted.lookups`). The theme's template is rendered for
one page of the folder only: MkDocs builds `runs/_shell.md`, whose title, heading and content
are markers, and every other page of the folder is that shell with its own title, skip link,
table of contents (the theme's own partial, rendered here) and content put in. Pages of one
folder share every relative link and, outside the nav, nothing else differs between them;
`Shell.split` refuses a shell where the markers are not where they must be, and
tests/reports/build/test_site_cache.py compares shell-built pages with the pages MkDocs builds itself.
"""
from __future__ import annotations

import logging
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

SHELL = "_shell"  # runs/_shell.md: `format.slug` never makes a name with "_", so no run has it
_TITLE = "TMSHELLTITLE"
_HEADING = "TMSHELLHEADING"
# Meta keys a shell-built page may have: any other (template, description...) changes the
# theme's output in ways a shell cannot carry; what it hides must be what the shell hides.
SHELL_META = frozenset({"title", "search", "hide"})
SHELL_HIDE = ("toc",)  # run pages have no TOC column, so their wide tables fit 1,400 px
_TOC = '{% import "partials/language.html" as lang with context %}{% include "partials/toc.html" %}'
_SKIP = '{% set skip = page.toc | first %}{{ skip.url | url }}'


def shell_markdown() -> str:
    """The shell page's source: marker title and heading, out of the search index."""
    hide = "".join(f"\n  - {part}" for part in SHELL_HIDE)
    return (f"---\ntitle: {_TITLE}\nsearch:\n  exclude: true\nhide:{hide}\n---\n\n"
            f"# {_HEADING}\n")


@dataclass(frozen=True)
class Converted:
    """One page as MkDocs' pipeline made it, before the theme's template."""

    title: str  # the front matter's title, which the theme prints as is
    toc: str  # the theme's table-of-contents partial for the page
    skip: str  # the href of the theme's "skip to content" link
    content: str  # the page's HTML, after the plugins' page events
    search: tuple[dict[str, Any], ...]  # the page's entries in the search index
    lookups: tuple[tuple[str, Any], ...]  # (path, what it resolved to) for every link
    meta_keys: tuple[str, ...] = ()
    hide: tuple[str, ...] = ()  # the parts of the theme's page its front matter hides

    def check_shell_ready(self, src_uri: str) -> None:
        """A page the shell can carry: its own title, a heading, an <h1>, and no meta the
        theme would print elsewhere (RuntimeError: a template broke what the shell needs)."""
        other_meta = sorted(set(self.meta_keys) - SHELL_META)
        problems = [problem for problem, found in (
            (f"meta keys {other_meta}", other_meta),
            (f"hide {list(self.hide)}, not {list(SHELL_HIDE)}", self.hide != SHELL_HIDE),
            ("no title in its front matter", not self.title), ("no heading", not self.skip),
            ("no <h1>", "<h1" not in self.content)) if found]
        if problems:
            raise RuntimeError(f"{src_uri} cannot be built from the page shell: "
                               + "; ".join(problems))


class _RecordingFiles:
    """MkDocs' Files collection that notes every path a page's links looked up, and what it
    found: a page's HTML depends on its Markdown and on these answers only."""

    def __init__(self, files: Any):
        self._files = files
        self.seen: dict[str, Any] = {}

    def get_file_from_path(self, path: str) -> Any:
        found = self._files.get_file_from_path(path)
        self.seen[path] = _resolved(found)
        return found

    def __getattr__(self, name: str) -> Any:  # everything else: the real collection
        return getattr(self._files, name)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._files)


def _resolved(file: Any) -> Any:
    return None if file is None else (file.url, file.inclusion.is_excluded())


@contextmanager
def _quiet() -> Iterator[None]:
    """`mkdocs build -q` prints errors only; so does this process while it converts."""
    logger = logging.getLogger("mkdocs")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


class MkDocsPages:
    """MkDocs' page pipeline in this process, for the config `tidemark site` wrote."""

    def __init__(self, config_file: Path):
        from mkdocs.config import load_config
        from mkdocs.structure.files import get_files, set_exclusions

        with _quiet():
            config = load_config(str(config_file))
            self.config = config.plugins.on_config(config)
            self.config.plugins.on_pre_build(config=self.config)
            self.env = self.config.theme.get_env()
            files = get_files(self.config)
            files.add_files_from_theme(self.env, self.config)
            self.files = self.config.plugins.on_files(files, config=self.config)
            set_exclusions(self.files, self.config)
        self._toc = self.env.from_string(_TOC)
        self._skip = self.env.from_string(_SKIP)
        # The search plugin indexes a page in its page_context event; its entries are taken
        # from its index right after (the index itself is MkDocs', written by `mkdocs build`).
        self._index = next((p.search_index for p in self.config.plugins.values()
                            if hasattr(p, "search_index")), None)

    def still_valid(self, lookups: tuple[tuple[str, Any], ...]) -> bool:
        """Every link of a converted page would resolve as it did when it was converted."""
        return all(_resolved(self.files.get_file_from_path(path)) == found
                   for path, found in lookups)

    def convert(self, src_uri: str) -> Converted:
        """The page `src_uri` (docs-relative) through MkDocs' Markdown pipeline and events."""
        from mkdocs.commands.build import _populate_page
        from mkdocs.structure.pages import Page
        from mkdocs.utils import get_relative_url

        file = self.files.get_file_from_path(src_uri)
        if file is None:
            raise RuntimeError(f"{src_uri} is not among the docs MkDocs sees")
        page = Page(None, file, self.config)
        recording = _RecordingFiles(self.files)
        with _quiet():
            # What `mkdocs build` calls for every page (a private name, of the pinned MkDocs:
            # tests/reports/build/test_site_cache.py compares the pages with the ones MkDocs renders).
            _populate_page(page, self.config, recording)  # type: ignore[arg-type]
            before = len(self._index.entries) if self._index is not None else 0
            page.active = True
            self.config.plugins.on_page_context({}, page=page, config=self.config, nav=None)
            page.active = False
        search = tuple(self._index.entries[before:]) if self._index is not None else ()
        # As MkDocs' get_context: relative links from the page's folder.
        context = {"page": page, "config": self.config,
                   "base_url": get_relative_url(".", page.url)}
        return Converted(str(page.meta.get("title", "")), self._toc.render(context),
                         self._skip.render(context) if page.toc else "", page.content or "",
                         search, tuple(sorted(recording.seen.items())), tuple(page.meta),
                         tuple(page.meta.get("hide") or ()))


@dataclass(frozen=True)
class Shell:
    """The theme's page around the markers: literal pieces, and between them which of the
    page's parts goes there ("title", "skip", "toc", "content")."""

    pieces: tuple[str, ...]
    parts: tuple[str, ...]

    @classmethod
    def split(cls, html: str, shell: Converted) -> Shell:
        markers = {shell.content: "content", shell.toc: "toc", _TITLE: "title",
                   f'href="{shell.skip}" class="md-skip"': "skip"}
        found = sorted((at, marker) for marker in markers
                       for at in _occurrences(html, marker))
        parts = [markers[marker] for _, marker in found]
        if sorted(set(parts)) != ["content", "skip", "title", "toc"] or \
                any(parts.count(part) != 1 for part in ("content", "skip", "toc")):
            raise RuntimeError(f"the page shell does not hold its markers once each: {parts}")
        pieces, start = [], 0
        for at, marker in found:
            if at < start:
                raise RuntimeError("the page shell's markers overlap")
            pieces.append(html[start:at])
            start = at + len(marker)
        pieces.append(html[start:])
        return cls(tuple(pieces), tuple(parts))

    def wrap(self, page: Converted, body: str) -> str:
        """The page's HTML: the shell with the page's parts, `body` in place of its content."""
        values = {"title": page.title, "toc": page.toc, "content": body,
                  "skip": f'href="{page.skip}" class="md-skip"'}
        out = [self.pieces[0]]
        for part, piece in zip(self.parts, self.pieces[1:]):
            out += [values[part], piece]
        return "".join(out)


def _occurrences(text: str, marker: str) -> list[int]:
    found, at = [], text.find(marker)
    while at >= 0:
        found.append(at)
        at = text.find(marker, at + len(marker))
    return found
