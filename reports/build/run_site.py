"""The runs list and one page per run (wiring): each run page's Markdown, the key its HTML is
cached under, and its big HTML tables. MkDocs builds the runs list, the page shell and the page
older runs share; the run pages themselves are built beside it (run_assembly.py,
page_shell.py), each only when its key or what its links point to changed since the last build
into the same out folder. An older run's page is a data file and a page at its address that
sends the reader to the shared page, whose script draws it (pages/run_data.py)."""
from __future__ import annotations

import gzip
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import duckdb
import jinja2
import pandas as pd
from markupsafe import Markup, escape

from ..data import queries
from ..data.caveats import IMPORTED
from ..data.site_cache import digest, generator_fingerprint
from ..pages.format import Link, nav_title, slug
from ..pages.run_data import older_run_json
from ..pages.run_page import result_rows, run_page
from ..pages.run_tables import HEADER, compact_rows_json, detailed_rows, no_rows_json
from ..pages.tables import Table
from .html_tables import table_html
from .page_shell import SHELL, shell_markdown
from .slots import placeholder
from .table_csv import table_csv

LOG_TAIL_BYTES = 4096  # the end of each invocation's stdout shown on its run page
# The newest runs' pages show each invocation's command, conditions and log; older ones keep a
# row (and its permalink) per invocation without them, drawn with the rest of the page by the
# script of the page older runs share (OLDER) from the run's data file (DATA_SUFFIX), so a long
# history builds quickly and fits a static host. Fifty: a detailed page of a 600-invocation
# run is 550 KB and its CSV 250 KB; at a hundred they were 80 MB of a 10,000-run site of
# 1,015 MB (GitHub Pages takes 1 GB).
DETAILED_RUN_PAGES = 50
FOLDER = "runs"
OLDER = "_run"  # runs/_run.md: the page every older run is drawn on (no run's slug has "_")
# An older run's facts and invocation rows (pages/run_data.py), beside its address.
DATA_SUFFIX = ".run.json.gz"
ROWS_BLOCK_RUNS = 1000  # older runs whose invocations are read at once (see _data_files)
# MkDocs builds only these pages of the folder; it still sees the others, to resolve links.
BUILT_BY_MKDOCS = ("index.md", f"{SHELL}.md", f"{OLDER}.md")


@dataclass(frozen=True)
class RunPage:
    """One run's page: its Markdown source (docs-relative) and the hash of everything its HTML
    body is made from: the page's context, the run's fingerprint in the DB, its logs."""

    run_id: str
    src: str
    key: str
    detailed: bool  # else an older run's: a data file the shared page draws (OLDER)
    imported: bool  # `tidemark import`ed: its page shows every metric in Markdown, no results table


def detailed_runs(runs: pd.DataFrame) -> set[str]:
    """The runs (newest first in `runs`) whose pages show every invocation in detail: the
    newest, and every imported run (few, and found by their pages in the site's search)."""
    imported = runs["run_id"][pd.Series(_sources(runs), index=runs.index) == IMPORTED]
    return set(runs["run_id"].head(DETAILED_RUN_PAGES)) | set(imported)


def older_markdown() -> str:
    """The page older runs share: its script draws the run its address names (?run=<slug>)."""
    return ("---\ntitle: Run\nsearch:\n  exclude: true\nhide:\n  - toc\n---\n\n# Run\n\n"
            f'<div class="tm-run-data" data-suffix="{DATA_SUFFIX}" markdown="0">\n'
            '<p class="tm-run-note">This older run\'s page is drawn by its script from the '
            "run's data file when the site is served over HTTP (for example python3 -m "
            "http.server in its folder).</p>\n</div>\n")


def stub_html(run_id: str) -> str:
    """An older run's page at its address (runs/<slug>.html, where every link to the run
    points): it sends the reader, and the anchor of an invocation, to the shared page."""
    target = f"{OLDER}.html?run={slug(run_id)}"
    script = json.dumps(target).replace("</", "<\\/")  # a JS string that cannot end the script
    title = escape(f"Run {run_id}")
    return ('<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{title}</title>\n"
            f"<script>location.replace({script} + location.hash);</script>\n"
            f'<meta http-equiv="refresh" content="0; url={escape(target)}">\n'
            f'</head><body><p><a href="{escape(target)}">{title}</a></p></body></html>\n')


def exclude_from_mkdocs() -> str:
    """The generated config's exclude_docs: every run page but BUILT_BY_MKDOCS."""
    return "".join([f"/{FOLDER}/*.md\n"] + [f"!/{FOLDER}/{name}\n" for name in BUILT_BY_MKDOCS])


def log_files(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> dict[str, str]:
    """run id → a hash of the size and time of each of its invocations' logs: a detailed page
    shows the end of every log still on disk, so a log that changed or went changes the page."""
    rows = con.execute("SELECT run_id, seq, log_path FROM invocations WHERE run_id IN "
                       "(SELECT unnest(?::VARCHAR[])) ORDER BY run_id, seq", [run_ids]).fetchall()
    facts: dict[str, list[object]] = {run: [] for run in run_ids}
    for run_id, seq, log_path in rows:
        facts[run_id].append((seq, log_path, _size_and_time(log_path)))
    return {run: digest(found) for run, found in facts.items()}


def _size_and_time(log_path: str | None) -> tuple[int, int] | None:
    """A log file's size and time, None if it is gone (or not a file): one stat per log, as
    every build asks for tens of thousands of them."""
    try:
        found = os.stat(log_path) if log_path else None
    except (OSError, ValueError):  # ValueError: a NUL in the path, which no file has
        return None
    return (found.st_size, found.st_mtime_ns) if found and stat.S_ISREG(found.st_mode) else None


class _TableSlots:
    """A run page's tables as slots (`_table.md.j2` asks `slots.table`): their HTML, the bytes
    Python-Markdown makes of their Markdown (html_tables.py), is kept here for the page's body.
    Python-Markdown spent most of a run page's conversion on these tables' cells. A table that
    links to another page stays Markdown: MkDocs resolves its links (and notes what they
    resolved to, for `Converted.lookups`)."""

    def __init__(self, markdown_table: Callable[[Table], Markup]):
        self._markdown_table = markdown_table
        self.html: dict[str, str] = {}

    def table(self, table: Table) -> Markup:
        if any(isinstance(value, Link) and not value.href.startswith("#")
               for row in table.rows for value in row):
            # The macro's Markdown, less the line end the macro's slot branch adds again.
            return Markup(self._markdown_table(table).removesuffix("\n"))
        name = f"table-{len(self.html) + 1}"
        self.html[name] = table_html(table)
        return placeholder(name)


class RunContexts:
    """Each run page's context (`run_page`), made only for the pages written or rebuilt in this
    build: a page is keyed on what its context is made of (`inputs`), so an unchanged page
    costs a hash, not a context. `points_of(run ids)`: those runs' points, with caveats (read
    once per run, for the results tables of the detailed pages that need them)."""

    def __init__(self, runs: pd.DataFrame, phases: pd.DataFrame | None,
                 imported: pd.DataFrame | None,
                 points_of: Callable[[list[str]], pd.DataFrame]):
        # The rows `DataFrame.iterrows` makes, from one array of the whole frame.
        self._columns, self._names, self._rows = runs.columns, runs.index, runs.values
        self._at = {run_id: i for i, run_id in enumerate(runs["run_id"])}
        self._detailed = detailed_runs(runs)
        # Each run's own rows of the phases and imported values, split once (a filter of the
        # frame per run was 0.4 ms, 4 s of 10,000 older runs' pages).
        self._frames = [(frame, dict(tuple(frame.groupby("run_id", sort=False))))
                        if frame is not None else None for frame in (phases, imported)]
        # Each run's own rows as records, split once (a filter of the frame per run is not free).
        self._records = [_records_by_run(frame) for frame in (phases, imported)]
        self._points_of, self._points = points_of, {}
        self._made: dict[str, dict[str, Any]] = {}

    def inputs(self, run_id: str) -> tuple[Any, ...]:
        """Everything the run's context is made of besides its points (which its run's
        fingerprint covers): its row of the runs, its phases, its imported values."""
        return (tuple(self._columns), tuple(self._rows[self._at[run_id]]),
                *(records.get(run_id) for records in self._records))

    def points(self, run_ids: list[str]) -> pd.DataFrame:
        """The points of the detailed runs of `run_ids` (read once per run)."""
        wanted = [run for run in run_ids if run in self._detailed]
        missing = [run for run in wanted if run not in self._points]
        if missing:
            found = self._points_of(missing)
            self._points.update({run: None for run in missing})
            self._points.update(dict(tuple(found.groupby("run_id"))))
        frames = [self._points[run] for run in wanted if self._points[run] is not None]
        return pd.concat(frames) if frames else pd.DataFrame({"run_id": []})

    def of(self, run_id: str) -> dict[str, Any]:
        if run_id not in self._made:
            self._made[run_id] = self._context(run_id)
        return self._made[run_id]

    def _context(self, run_id: str) -> dict[str, Any]:
        at, detailed = self._at[run_id], run_id in self._detailed
        run = pd.Series(self._rows[at], index=self._columns, name=self._names[at])
        has_points = detailed and len(self.points([run_id])) > 0
        phases, values = (split[1].get(run_id, split[0].iloc[:0]) if split else None
                          for split in self._frames)
        return run_page(run, has_results=has_points, phases=phases, values=values)

    def data_file(self, run_id: str, rows_json: str | None) -> bytes:
        """An older run's data file (its page's blocks and `rows_json`, its invocation rows),
        gzipped; its context is not kept (10,000 of them)."""
        page = self._made.get(run_id) or self._context(run_id)
        address = f"{FOLDER}/{slug(run_id)}.html"
        text = older_run_json(page, Path(address).name, rows_json or no_rows_json(),
                              lambda table: table_csv(table_html(table), address))
        # Compressed with a fixed time, so a build is byte-identical to the last. A run of 600
        # invocations, 75 KB of JSON: 15.3 KB in 1.0 ms at level 4; level 6 gave 14.0 KB in
        # 2.4 ms (13 MB less on a 10,000-run site for 14 CPU-s more), level 1 17.8 KB in 0.8.
        return gzip.compress(text.encode(), compresslevel=4, mtime=0)


def _records_by_run(frame: pd.DataFrame | None) -> dict[str, list[tuple[Any, ...]]]:
    """run id → its rows of `frame` (with the frame's columns first)."""
    if frame is None:
        return {}
    found: dict[str, list[tuple[Any, ...]]] = {}
    at, columns = frame.columns.get_loc("run_id"), tuple(frame.columns)
    for row in frame.itertuples(index=False, name=None):
        found.setdefault(row[at], [columns]).append(row)
    return found


@dataclass(frozen=True)
class RunMarkdown:
    """The run pages' Markdown as written (in the run pages' worker): every page, and what
    its body needs besides the converted Markdown."""

    pages: list[RunPage]  # every run's page, newest run first
    contexts: RunContexts  # run id → its page's context, made when asked
    written: dict[str, dict[str, str]]  # run id → slot → HTML, of the pages written now

    def table_slots(self, env: jinja2.Environment, run_id: str) -> dict[str, str]:
        """slot → HTML of the page's tables in slots (a page kept from the last build renders
        its Markdown again, unwritten, for them)."""
        if run_id not in self.written:
            self.written[run_id] = _render_run_page(env, self.contexts.of(run_id))[1]
        return self.written[run_id]


def _render_run_page(env: jinja2.Environment, page: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """A run page's Markdown and the HTML of its tables in slots. An imported run's page is
    in the search index, which indexes what its Markdown holds: its tables stay Markdown."""
    slots = None if page["imported"] else _TableSlots(
        env.get_template("_table.md.j2").module.table)  # type: ignore[attr-defined]
    markdown = env.get_template("run.md.j2").render(page=page, slots=slots)
    return markdown, slots.html if slots is not None else {}


def fill_table_slots(content: str, tables: dict[str, str], src: str) -> str:
    """A converted run page with its tables put into their slots. Python-Markdown ends an HTML
    block with a line end more than a table: the slot's is dropped with it, so the page is
    the one its Markdown tables made."""
    for name, html in tables.items():
        marker = f"{placeholder(name)}\n"
        if marker not in content:  # a template lost its placeholder: say so, do not drop HTML
            raise RuntimeError(f"{src} has no slot {name!r}")
        content = content.replace(marker, html, 1)
    return content


def write_run_pages(env: jinja2.Environment, docs: Path, runs: pd.DataFrame,
                    contexts: RunContexts, fingerprints: dict[str, str], logs: dict[str, str],
                    previous: dict[str, str]) -> RunMarkdown:
    """The shell, the page older runs share and runs/<id>.md of every run, newest first
    (runs/index.md is site_pages'; an older run's holds its title only: MkDocs resolves links
    to it, but builds neither it nor its page); a run page whose key is the one in `previous`
    (run id → key of the last build) keeps last build's file.
    A page's key hashes what its context is made of (`contexts`), the run's fingerprint in
    the DB (its points, so whether it has a results table, and its invocations), its logs and
    the generator (site_cache.generator_fingerprint)."""
    folder = docs / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{SHELL}.md").write_text(shell_markdown(), encoding="utf-8")
    (folder / f"{OLDER}.md").write_text(older_markdown(), encoding="utf-8")
    detailed = detailed_runs(runs)
    # The generator too: the finished page's file is named from the key, and a new version of
    # the code, templates or Markdown must not meet last version's file of the same name.
    generator = generator_fingerprint()
    pages = [RunPage(run_id, f"{FOLDER}/{slug(run_id)}.md",
                     digest(contexts.inputs(run_id), fingerprints[run_id], logs.get(run_id),
                            run_id in detailed, generator),
                     run_id in detailed, source == IMPORTED)
             for run_id, source in zip(runs["run_id"], _sources(runs))]
    stale = [page for page in pages
             if previous.get(page.run_id) != page.key or not (docs / page.src).is_file()]
    contexts.points([page.run_id for page in stale])  # one read for every page written
    written = {}
    for page in stale:
        if page.detailed:
            markdown, written[page.run_id] = _render_run_page(env, contexts.of(page.run_id))
        else:
            markdown = f"---\ntitle: {json.dumps(f'Run {nav_title(page.run_id)}')}\n---\n"
        (docs / page.src).write_text(markdown, encoding="utf-8")
    current = {Path(page.src).name for page in pages} | set(BUILT_BY_MKDOCS)
    for old in folder.glob("*.md"):  # removed runs: their links must not resolve any more
        if old.name not in current:
            old.unlink()
    return RunMarkdown(pages, contexts, written)


def _sources(runs: pd.DataFrame) -> list[Any]:
    """Each run's `source` (run or import), as `run.get("source")` reads it from its row."""
    return list(runs["source"]) if "source" in runs.columns else [None] * len(runs)


def _log_tails(invocations: pd.DataFrame) -> dict[str, str]:
    """invocation_id → the end of its stdout log, for logs still on this disk."""
    tails = {}
    for iid, log_path in zip(invocations["invocation_id"], invocations["log_path"]):
        path = Path(log_path) if log_path else None
        if path is None or not path.is_file():
            continue
        with path.open("rb") as handle:
            handle.seek(max(0, path.stat().st_size - LOG_TAIL_BYTES))
            tails[iid] = handle.read().decode("utf-8", errors="replace")
    return tails


def run_tables(env: jinja2.Environment, db: Path, pages: list[RunPage], points: pd.DataFrame,
               contexts: RunContexts) -> tuple[dict[str, dict[str, str]], dict[str, bytes]]:
    """(run id → slot name → the HTML of that detailed run page's results and invocation
    tables, older run id → its data file's bytes)."""
    recent = sorted(page.run_id for page in pages if page.detailed)
    older = sorted(page.run_id for page in pages if not page.detailed)
    results, invocations = (env.get_template(f"run_{name}.html.j2")
                            for name in ("results", "invocations"))
    con = queries.open_results(db)
    con.execute("SET threads = 1")  # the other core is busy meanwhile (the parent's pages)
    try:
        detail = queries.read_invocations(con, recent) if recent else None
        data_files = _data_files(con, older, contexts)
    finally:
        con.close()
    tables: dict[str, dict[str, str]] = {}
    if detail is not None:
        table = _around_rows(invocations, header=HEADER)
        rows = detailed_rows(detail, _log_tails(detail), table)
        # An imported run's page shows every metric of its own, in Markdown.
        mine = points[points["run_id"].isin({page.run_id for page in pages
                                             if page.detailed and not page.imported})]
        for run_id, run_points in mine.groupby("run_id"):
            tables.setdefault(run_id, {})["results"] = results.render(
                results=result_rows(run_points))
        for run_id in recent:
            tables.setdefault(run_id, {})["invocations"] = rows.get(run_id, "".join(table))
    return tables, data_files


def _data_files(con: duckdb.DuckDBPyConnection, older: list[str],
                contexts: RunContexts) -> dict[str, bytes]:
    """The older runs' data files, ROWS_BLOCK_RUNS runs' invocations read at a time: 10,000
    runs' 6 M at once held 8 GB in this process."""
    files: dict[str, bytes] = {}
    for start in range(0, len(older), ROWS_BLOCK_RUNS):
        block = older[start:start + ROWS_BLOCK_RUNS]
        rows = compact_rows_json(queries.read_invocations(con, block, detail=False))
        for run_id in block:
            files[run_id] = contexts.data_file(run_id, rows.pop(run_id, None))
    return files


def data_file_name(run_id: str) -> str:
    """The name of an older run's data file, beside its address (runs/<slug>.html)."""
    return f"{slug(run_id)}{DATA_SUFFIX}"


def _around_rows(template: jinja2.Template, **context: object) -> tuple[str, str]:
    """The invocation table's HTML before and after its rows: the rows (megabytes on a long
    history) go straight in between, not through the template."""
    marker = "\0rows\0"
    parts = template.render(rows=Markup(marker), **context).split(marker)
    if len(parts) != 2:
        raise RuntimeError(f"{template.name} must show its rows once, not {len(parts) - 1} times")
    return parts[0], parts[1]
