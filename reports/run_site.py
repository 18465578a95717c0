"""The runs list and one page per run (wiring): each run page's Markdown, the key its HTML is
cached under, and its big HTML tables. MkDocs builds the runs list and the page shell; the run
pages themselves are built beside it (run_assembly.py, page_shell.py), each only when its key
or what its links point to changed since the last build into the same out folder."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import jinja2
import pandas as pd
from markupsafe import Markup

from . import queries, render
from .caveats import IMPORTED
from .format import slug
from .page_shell import SHELL, shell_markdown
from .pages import runs_index
from .run_page import result_rows, run_page
from .run_tables import COMPACT_HEADER, HEADER, compact_rows, detailed_rows
from .site_cache import digest

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


def write_run_pages(env: jinja2.Environment, docs: Path, runs: pd.DataFrame,
                    points: pd.DataFrame, fingerprints: dict[str, str], logs: dict[str, str],
                    previous: dict[str, str], phases: pd.DataFrame | None = None,
                    imported: pd.DataFrame | None = None) -> list[RunPage]:
    """runs/index.md, the shell, and runs/<id>.md of every run, newest first; a run page whose
    key is the one in `previous` (run id → key of the last build) keeps last build's file.
    `points`: at least the detailed runs' (`recent_points`); `phases`: at least theirs
    (`queries.read_phases`); `imported`: every metric of the imported runs."""
    folder = docs / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    render.write_page(env, "runs.md.j2", folder / "index.md", page=runs_index(runs))
    (folder / f"{SHELL}.md").write_text(shell_markdown(), encoding="utf-8")
    detailed, with_points = detailed_runs(runs), set(points["run_id"])
    template = env.get_template("run.md.j2")
    # Each run's own rows, split once (a thousand filters of the whole frame are not free).
    phases_of, values_of = (dict(tuple(frame.groupby("run_id"))) if frame is not None else {}
                            for frame in (phases, imported))
    pages = []
    for _, run in runs.iterrows():
        run_id = run["run_id"]
        page = run_page(run, has_results=run_id in detailed and run_id in with_points,
                        compact=run_id not in detailed, phases=phases_of.get(run_id),
                        values=values_of.get(run_id))
        source = folder / f"{slug(run_id)}.md"
        key = digest(page, fingerprints[run_id], logs.get(run_id), run_id in detailed)
        if previous.get(run_id) != key or not source.is_file():
            source.write_text(template.render(page=page), encoding="utf-8")
        pages.append(RunPage(run_id, f"{FOLDER}/{source.name}", key, run_id in detailed,
                             run.get("source") == IMPORTED))
    current = {Path(page.src).name for page in pages} | set(BUILT_BY_MKDOCS)
    for stale in folder.glob("*.md"):  # removed runs: their links must not resolve any more
        if stale.name not in current:
            stale.unlink()
    return pages


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
