"""Run pages' HTML beside MkDocs (side effects: out/cache, out/site/runs).

A page's body (its Markdown through MkDocs' pipeline, with its big tables put in) is made in a
forked worker while the parent writes the other pages and MkDocs builds them: the tables need
only the DB, the Markdown only the docs folder once every page is in it. A body is reused from
the last build into the same out folder while the page's key is the same and every link of it
still resolves as it did. Once MkDocs has built the shell, each page is the shell around its
body, stored in the cache under (body, shell) and hard-linked into the site: a build that
changed neither costs a link per page. Those links are made by the worker while MkDocs runs,
for the shell MkDocs built last time, into a folder that becomes the site's runs/ folder in
one rename when MkDocs built that shell again (nothing is left to the parent after MkDocs).
An older run's page has no body: the page at its address (run_site.stub_html) and its data
file are kept and linked the same way, whatever shell MkDocs built (`converted` None).
"""
from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import shutil
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Callable

import jinja2

from ..data.site_cache import SiteCache, digest, place
from . import forked, render, slots
from .page_shell import SHELL, Converted, MkDocsPages, Shell
from .run_site import (FOLDER, RunContexts, RunMarkdown, RunPage, data_file_name,
                       fill_table_slots, run_tables, stub_html, write_run_pages)
from .site_reads import RunReads, points_of_runs
from .table_csv import csv_downloads

BODIES = "run-pages"
SHARED_FROM = 40  # bodies to make from which half are made in a second process
SHELLS = "run-page-shell"  # the shell MkDocs built last time, which the next build stages for
STAGED = "runs-staged"  # out/<this>: the site's runs/ folder, made while MkDocs builds the site
RETIRED = "runs-retired"  # out/<this>: the last build's runs/ folder, the worker's to stage in


def previous_keys(cache: SiteCache) -> dict[str, str]:
    """run id → the key its page was built under last time."""
    return {run_id: key for run_id, (key, _) in cache.entries(BODIES).items()}


def _reusable(pages: list[RunPage], cache: SiteCache) -> dict[str, dict[str, Any]]:
    """run id → the stored facts of each page whose key is unchanged and whose files exist
    (an older run's data file is its page)."""
    found = {}
    for page in pages:
        facts = cache.lookup(BODIES, page.run_id, page.key)
        if facts is not None and all(cache.file(BODIES, name).is_file() for name in
                                     (facts["body"], *facts["beside"].values())):
            found[page.run_id] = facts
    return found


def _ids(pages: list[RunPage]) -> list[str]:
    return [page.run_id for page in pages]


def _make_bodies(env: jinja2.Environment, db: Path, config: Path, markdown: RunMarkdown,
                 cache: SiteCache, docs_ready: Any) -> Bodies:
    """In the worker: every page's body, made anew where it cannot be reused."""
    pages = markdown.pages
    reused = _reusable(pages, cache)
    stale = [page for page in pages if page.run_id not in reused]
    if len(stale) < SHARED_FROM:
        # A few pages (one run added): needed at the end only, they yield to the parent's
        # reads and pages, which every other child waits for. Not a full build's thousand:
        # niced, they were late, and the build took 22.6-24.5 s instead of 20.8-21.6.
        os.nice(forked.LATER)
    tables, data_files = run_tables(env, db, stale, markdown.contexts.points(_ids(stale)),
                                    markdown.contexts) if stale else ({}, {})
    docs_ready.wait()
    mkdocs = MkDocsPages(config)
    relinked = [page for page in pages if page.run_id in reused and page.detailed and
                not mkdocs.still_valid(reused[page.run_id]["converted"].lookups)]
    if relinked:  # a link target came or went: convert again (the tables are unchanged, but
        tables.update(run_tables(env, db, relinked,  # are not kept between builds)
                                 markdown.contexts.points(_ids(relinked)),
                                 markdown.contexts)[0])
    maker = _BodyMaker(env, mkdocs, markdown, tables, data_files, cache)
    todo = stale + relinked
    # A full build's detailed bodies are its last work, long after MkDocs' child is done:
    # half of them in a process of their own, or the other core idles. An older run's page
    # costs a file or two: made here.
    converted = [page for page in todo if page.detailed]
    half = converted[::2] if len(converted) >= SHARED_FROM else []
    first_half = (forked.start(lambda: maker.make_all(half), "tidemark-run-pages-2") if half
                  else (lambda: {}))
    halved = set(half)
    made = maker.make_all([page for page in todo if page not in halved])
    made = {**first_half(), **made}
    # The shell as MkDocs' pipeline makes it, while MkDocs builds it into the site: here,
    # with the pipeline already loaded, rather than loaded again in the parent.
    shell = mkdocs.convert(f"{FOLDER}/{SHELL}.md")
    facts = {**reused, **made}
    return Bodies(pages, facts, len(made), shell,
                  _stage(config.parent / STAGED, pages, facts, cache))


@dataclass(frozen=True)
class _BodyMaker:
    """What makes a run page's body once the docs are ready (in the worker, or a process it
    forks): MkDocs' pipeline, the pages' Markdown and their tables' HTML."""

    env: jinja2.Environment
    mkdocs: MkDocsPages
    markdown: RunMarkdown
    tables: dict[str, dict[str, str]]  # a detailed run's slots → their HTML
    data_files: dict[str, bytes]  # an older run's data file
    cache: SiteCache

    def make_all(self, pages: list[RunPage]) -> dict[str, dict[str, Any]]:
        return {page.run_id: self.make(page) for page in pages}

    def make(self, page: RunPage) -> dict[str, Any]:
        """The page's body into the cache; its facts (what `place_run_pages` needs)."""
        if not page.detailed:
            return self._make_older(page)
        converted = self.mkdocs.convert(page.src)
        converted.check_shell_ready(page.src)
        body = fill_table_slots(converted.content,
                                self.markdown.table_slots(self.env, page.run_id), page.src)
        body = slots.fill_page(body, self.tables.get(page.run_id, {}), page.src)
        # Its tables' CSV files are made with it (the shell holds no table); the invocations'
        # CSV is the database export's, written for every detailed run (tools_site.py).
        body, csv_files = csv_downloads(body, built_path(page), lambda _: True)
        # Named by what the links resolved to as well: a page converted again for a link
        # target that came or went must not meet last build's file of the same key.
        stem = digest(page.key, converted.lookups)
        target = self.cache.file(BODIES, f"{stem}.html")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")
        beside = {name: text.encode() for name, text in csv_files.items()}
        return {"converted": replace(converted, content=""), "body": target.name,
                "beside": self._keep_beside(stem, beside)}

    def _make_older(self, page: RunPage) -> dict[str, Any]:
        """An older run's page at its address (no shell: it is the same whatever MkDocs
        builds) and its data file, into the cache; `converted` None: nothing of MkDocs'."""
        data = self.data_files.get(page.run_id)
        if data is None:
            raise RuntimeError(f"{page.src}: no data file was made for the older run")
        stem = digest(page.key)
        target = self.cache.file(BODIES, f"{stem}.html")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(stub_html(page.run_id), encoding="utf-8")
        return {"converted": None, "body": target.name,
                "beside": self._keep_beside(stem, {data_file_name(page.run_id): data})}

    def _keep_beside(self, stem: str, beside: dict[str, bytes]) -> dict[str, str]:
        """The files beside a page into the cache: their names there, by their names in the
        site."""
        for name, content in beside.items():
            self.cache.file(BODIES, f"{stem}.{name}").write_bytes(content)
        return {name: f"{stem}.{name}" for name in beside}


@dataclass(frozen=True)
class Bodies:
    pages: list[RunPage]  # every run's page, newest run first
    facts: dict[str, dict[str, Any]]  # run id → its body's facts (reused or new)
    rebuilt: int  # how many were made in this build
    shell: Converted  # the page shell (runs/_shell.md) before the theme's template
    staged: str | None = None  # the key of the shell the pages were staged for (`_stage`)


class RunPagesWorker:
    """The forked worker of the run pages: it writes their Markdown at once, then, when told
    the other pages and the config are written, makes the bodies that cannot be reused."""

    def __init__(self, db: Path, docs: Path, config: Path, first: RunReads, cache: SiteCache):
        context = multiprocessing.get_context("fork")
        self._markdown, self._docs = context.Event(), context.Event()

        def work() -> Bodies:
            try:
                env = render.environment()
                contexts = RunContexts(first.runs, first.phases, first.imported,
                                       partial(points_of_runs, db, first=first))
                markdown = write_run_pages(env, docs, first.runs, contexts, first.fingerprints,
                                           first.logs, previous_keys(cache))
            finally:
                self._markdown.set()  # after an error too: the parent hears of it in bodies()
            return _make_bodies(env, db, config, markdown, cache, self._docs)

        self._wait = forked.start(work, "tidemark-run-pages")

    def wait_for_markdown(self) -> None:
        """MkDocs must see every run page's Markdown, to resolve the links to them."""
        self._markdown.wait()

    def go_on(self) -> None:
        """The docs and the config are written (or the build failed: the worker then ends)."""
        self._docs.set()

    def bodies(self) -> Bodies:
        return self._wait()


def built_path(page: RunPage) -> str:
    """Where a run page is in the built site, from its root."""
    return Path(page.src).with_suffix(".html").as_posix()


def _stage(folder: Path, pages: list[RunPage], facts: dict[str, dict[str, Any]],
           cache: SiteCache) -> str | None:
    """In the worker, while MkDocs builds the site: every run page, around the shell MkDocs
    built last time, and its tables' CSV files, linked into `folder`, which becomes the site's
    runs/ folder at once if MkDocs built that shell again (`place_run_pages`). The last build's
    folder (`retire_run_pages`) is where it starts: a file that is a link to the very file of
    the cache it must be stays (one run added: 2 pages of a thousand linked, not all of them,
    nor all of the last build's removed). Returns that shell's key (None: no shell known,
    nothing staged)."""
    retired = folder.parent / RETIRED
    shutil.rmtree(folder, ignore_errors=True)
    last = cache.entries(SHELLS).get(SHELLS)
    if last is None:
        shutil.rmtree(retired, ignore_errors=True)
        return None
    shell = last[1]["shell"]
    shell_key = digest(shell)  # of the shell itself: the parent stages nothing for another
    if retired.is_dir():
        os.replace(retired, folder)
    else:
        folder.mkdir(parents=True)
    present, cached = _inodes(folder), cache.file(BODIES, "")
    # An inode names one file only within one file system (across two, `place` copies).
    one_file_system = bool(present) and cached.is_dir() and \
        os.stat(folder).st_dev == os.stat(cached).st_dev
    linked = _inodes(cached) if one_file_system else {}

    def linked_already(target: str, kept: str) -> bool:
        return one_file_system and target in present and present[target] == linked.get(kept)

    wanted: set[str] = set()
    for page in pages:
        wanted.update(_link_page(folder, page, facts[page.run_id], shell, shell_key, cache,
                                 linked_already))
    for name in present.keys() - wanted:  # removed runs' files, MkDocs' own of last time
        path = folder / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    return shell_key


def _inodes(folder: Path) -> dict[str, int]:
    """name → inode of each entry of `folder` (from the directory itself: no stat per file)."""
    try:
        with os.scandir(folder) as entries:
            return {entry.name: entry.inode() for entry in entries}
    except FileNotFoundError:
        return {}


def _link_page(folder: Path, page: RunPage, page_facts: dict[str, Any], shell: Shell,
               shell_key: str, cache: SiteCache,
               linked_already: Callable[[str, str], bool] = lambda target, kept: False
               ) -> list[str]:
    """The run page around `shell` (written into the cache if new) and its CSV files linked
    into `folder`, but those `linked_already` (name in `folder`, name in the cache) says are
    links to their file of the cache; returns their names in `folder`, the page's first."""
    name = _final_name(page_facts, shell_key)
    final = cache.file(BODIES, name)
    if page_facts["converted"] is not None and not final.is_file():
        body = cache.file(BODIES, page_facts["body"]).read_text(encoding="utf-8")
        written = final.with_suffix(".tmp")  # never a page cut short under a final name
        written.write_text(shell.wrap(page_facts["converted"], body), encoding="utf-8")
        os.replace(written, final)
    files = {Path(page.src).with_suffix(".html").name: name, **page_facts["beside"]}
    for target, kept in files.items():
        if not linked_already(target, kept):
            place(cache.file(BODIES, kept), folder / target)
    return list(files)


def _final_name(page_facts: dict[str, Any], shell_key: str) -> str:
    """The cache's file of a run page as the site gets it: its body around the shell, or an
    older run's page as it was made."""
    if page_facts["converted"] is None:
        return page_facts["body"]
    return f"{digest(page_facts['body'], shell_key)}.html"


def retire_run_pages(site: Path) -> None:
    """Move the last build's runs/ folder out of the site, before MkDocs cleans it: the
    worker (niced, while MkDocs builds) stages this build's run pages in it (`_stage`), and
    MkDocs, whose build the rest of the site waits for, has not its thousands of files to
    remove. Call it before the worker is told the docs are ready."""
    retired = site.parent / RETIRED
    shutil.rmtree(retired, ignore_errors=True)  # left by a build killed before its worker ran
    with contextlib.suppress(FileNotFoundError):
        os.replace(site / FOLDER, retired)


def place_run_pages(site: Path, bodies: Bodies, cache: SiteCache) -> set[Path]:
    """Every run page into the built site: the shell MkDocs built around each body, and its
    tables' CSV files (staged by the worker when the shell is last build's); returns the pages
    placed."""
    folder = site / FOLDER
    shell_file = folder / f"{SHELL}.html"
    shell = Shell.split(shell_file.read_text(encoding="utf-8"), bodies.shell)
    shell_file.unlink()  # a build artefact, not a page of the site
    shell_key = digest(shell)
    staged = site.parent / STAGED
    ready = bodies.staged == shell_key and _into_staged(folder, staged)
    shutil.rmtree(staged, ignore_errors=True)
    entries, placed = [], set()
    for page in bodies.pages:
        page_facts = bodies.facts[page.run_id]
        name = _final_name(page_facts, shell_key)
        if not ready:
            _link_page(folder, page, page_facts, shell, shell_key, cache)
        placed.add(site / built_path(page))
        cache.store(BODIES, page.run_id, page.key,
                    {**page_facts, "files": [page_facts["body"], name,
                                             *page_facts["beside"].values()]})
        if page_facts["converted"] is not None:
            entries += page_facts["converted"].search
    cache.store(SHELLS, SHELLS, shell_key, {"shell": shell})
    _add_to_search_index(site, entries)
    return placed


def _into_staged(folder: Path, staged: Path) -> bool:
    """MkDocs' files of the runs folder (its list) moved into the staged folder, which then
    takes the folder's place; False, with nothing moved, where a name is in both."""
    if not staged.is_dir():
        return False
    built = list(folder.iterdir())
    if any(path.is_dir() or (staged / path.name).exists() for path in built):
        return False
    for path in built:
        os.replace(path, staged / path.name)
    folder.rmdir()
    os.replace(staged, folder)
    return True


def _add_to_search_index(site: Path, entries: list[dict[str, Any]]) -> None:
    """The run pages' entries into the index MkDocs' search plugin wrote (its JSON layout)."""
    index = site / "search" / "search_index.json"
    if not entries or not index.is_file():
        return
    data = json.loads(index.read_text(encoding="utf-8"))
    data["docs"] += entries
    index.write_text(json.dumps(data, separators=(",", ":"), default=str), encoding="utf-8")
