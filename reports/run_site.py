"""The runs list and one page per run (wiring): each run page's Markdown, the key its HTML is
cached under, and its big HTML tables. MkDocs builds the runs list and the page shell; the run
pages themselves are built beside it (run_assembly.py, page_shell.py), each only when its key
or what its links point to changed since the last build into the same out folder."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import duckdb
import jinja2
import pandas as pd
from markupsafe import Markup

from . import queries, render
from .caveats import IMPORTED
from .format import Link, slug
from .html_tables import table_html
from .page_shell import SHELL, shell_markdown
from .run_page import result_rows, run_page
from .run_tables import COMPACT_HEADER, HEADER, compact_rows, detailed_rows
from .site_cache import digest
from .slots import placeholder
from .tables import Table

LOG_TAIL_BYTES = 4096  # the end of each invocation's stdout shown on its run page
# The newest runs' pages show each invocation's command, conditions and log; older ones keep a
# row (and its permalink) per invocation without them, so a long history builds quickly.
DETAILED_RUN_PAGES = 100
FOLDER = "runs"
# MkDocs builds only these pages of the folder; it still sees the others, to resolve links.
BUILT_BY_MKDOCS = ("index.md", f"{SHELL}.md")


@dataclass(frozen=True)
class RunPage:
    """One run's page: its Markdown source (docs-relative) and the hash of everything its HTML
    body is made from: the page's context, the run's fingerprint in the DB, its logs."""

    run_id: str
    src: str
    key: str
    detailed: bool
    imported: bool  # `tidemark import`ed: its page shows every metric in Markdown, no results table


def detailed_runs(runs: pd.DataFrame) -> set[str]:
    """The runs (newest first in `runs`) whose pages show every invocation in detail."""
    return set(runs["run_id"].head(DETAILED_RUN_PAGES))


def recent_points(db: Path, runs: pd.DataFrame) -> pd.DataFrame:
    """The points of the detailed runs only: their pages' results tables, read by the run
    pages' worker while the parent reads every run's."""
    con = queries.open_results(db)
    try:
        return queries.read_points(con, sorted(detailed_runs(runs)))
    finally:
        con.close()


def exclude_from_mkdocs() -> str:
    """The generated config's exclude_docs: every run page but the list and the shell."""
    return "".join([f"/{FOLDER}/*.md\n"] + [f"!/{FOLDER}/{name}\n" for name in BUILT_BY_MKDOCS])


def log_files(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> dict[str, str]:
    """run id → a hash of the size and time of each of its invocations' logs: a detailed page
    shows the end of every log still on disk, so a log that changed or went changes the page."""
    rows = con.execute("SELECT run_id, seq, log_path FROM invocations WHERE run_id IN "
                       "(SELECT unnest(?::VARCHAR[])) ORDER BY run_id, seq", [run_ids]).fetchall()
    facts: dict[str, list[object]] = {run: [] for run in run_ids}
    for run_id, seq, log_path in rows:
        path = Path(log_path) if log_path else None
        stat = path.stat() if path is not None and path.is_file() else None
        facts[run_id].append((seq, log_path, stat and (stat.st_size, stat.st_mtime_ns)))
    return {run: digest(found) for run, found in facts.items()}


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


@dataclass(frozen=True)
class RunMarkdown:
    """The run pages' Markdown as written (in the run pages' worker): every page, and what
    its body needs besides the converted Markdown."""

    pages: list[RunPage]  # every run's page, newest run first
    contexts: dict[str, dict[str, Any]]  # run id → its page's context
    written: dict[str, dict[str, str]]  # run id → slot → HTML, of the pages written now

    def table_slots(self, env: jinja2.Environment, run_id: str) -> dict[str, str]:
        """slot → HTML of the page's tables in slots (a page kept from the last build renders
        its Markdown again, unwritten, for them)."""
        if run_id not in self.written:
            self.written[run_id] = _render_run_page(env, self.contexts[run_id])[1]
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
                    points: pd.DataFrame, fingerprints: dict[str, str], logs: dict[str, str],
                    previous: dict[str, str], phases: pd.DataFrame | None = None,
                    imported: pd.DataFrame | None = None) -> RunMarkdown:
    """The shell and runs/<id>.md of every run, newest first (runs/index.md is site_pages'); a
    run page whose key is the one in `previous` (run id → key of the last build) keeps last
    build's file.
    `points`: at least the detailed runs' (`recent_points`); `phases`: at least theirs
    (`queries.read_phases`); `imported`: every metric of the imported runs."""
    folder = docs / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{SHELL}.md").write_text(shell_markdown(), encoding="utf-8")
    detailed, with_points = detailed_runs(runs), set(points["run_id"])
    # Each run's own rows, split once (a thousand filters of the whole frame are not free).
    phases_of, values_of = (dict(tuple(frame.groupby("run_id"))) if frame is not None else {}
                            for frame in (phases, imported))
    pages, contexts, written = [], {}, {}
    for _, run in runs.iterrows():
        run_id = run["run_id"]
        page = run_page(run, has_results=run_id in detailed and run_id in with_points,
                        compact=run_id not in detailed, phases=phases_of.get(run_id),
                        values=values_of.get(run_id))
        source = folder / f"{slug(run_id)}.md"
        key = digest(page, fingerprints[run_id], logs.get(run_id), run_id in detailed)
        if previous.get(run_id) != key or not source.is_file():
            markdown, written[run_id] = _render_run_page(env, page)
            source.write_text(markdown, encoding="utf-8")
        contexts[run_id] = page
        pages.append(RunPage(run_id, f"{FOLDER}/{source.name}", key, run_id in detailed,
                             run.get("source") == IMPORTED))
    current = {Path(page.src).name for page in pages} | set(BUILT_BY_MKDOCS)
    for stale in folder.glob("*.md"):  # removed runs: their links must not resolve any more
        if stale.name not in current:
            stale.unlink()
    return RunMarkdown(pages, contexts, written)


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


def run_tables(env: jinja2.Environment, db: Path, pages: list[RunPage],
               points: pd.DataFrame) -> dict[str, dict[str, str]]:
    """run id → slot name → the HTML of that run page's results and invocation tables."""
    recent = sorted(page.run_id for page in pages if page.detailed)
    older = sorted(page.run_id for page in pages if not page.detailed)
    con = queries.open_results(db)
    try:
        detail = queries.read_invocations(con, recent) if recent else None
        compact = queries.read_invocations(con, older, detail=False) if older else None
    finally:
        con.close()
    results, invocations = (env.get_template(f"run_{name}.html.j2")
                            for name in ("results", "invocations"))
    tables: dict[str, dict[str, str]] = {}
    if detail is not None:
        table = _around_rows(invocations, header=HEADER, compact=False)
        rows = detailed_rows(detail, _log_tails(detail), table)
        # An imported run's page shows every metric of its own, in Markdown.
        mine = points[points["run_id"].isin({page.run_id for page in pages
                                             if page.detailed and not page.imported})]
        for run_id, run_points in mine.groupby("run_id"):
            tables.setdefault(run_id, {})["results"] = results.render(
                results=result_rows(run_points))
        for run_id in recent:
            tables.setdefault(run_id, {})["invocations"] = rows.get(run_id, "".join(table))
    if compact is not None:
        table = _around_rows(invocations, header=COMPACT_HEADER, compact=True)
        rows = compact_rows(compact, table)
        for run_id in older:
            tables[run_id] = {"invocations": rows.get(run_id, "".join(table))}
    return tables


def _around_rows(template: jinja2.Template, **context: object) -> tuple[str, str]:
    """The invocation table's HTML before and after its rows: the rows (megabytes on a long
    history) go straight in between, not through the template."""
    marker = "\0rows\0"
    parts = template.render(rows=Markup(marker), **context).split(marker)
    if len(parts) != 2:
        raise RuntimeError(f"{template.name} must show its rows once, not {len(parts) - 1} times")
    return parts[0], parts[1]
