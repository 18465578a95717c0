"""The runs list and one page per run (wiring): the Markdown pages go to MkDocs, their big HTML
tables are rendered while MkDocs builds and put into the built pages afterwards."""
from __future__ import annotations

from pathlib import Path

import jinja2
import pandas as pd

from . import queries, render, slots
from .format import slug
from .pages import runs_index
from .run_page import result_rows, run_page
from .run_tables import COMPACT_HEADER, HEADER, compact_rows, detailed_rows

LOG_TAIL_BYTES = 4096  # the end of each invocation's stdout shown on its run page
# The newest runs' pages show each invocation's command, conditions and log; older ones keep a
# row (and its permalink) per invocation without them, so a long history builds quickly.
DETAILED_RUN_PAGES = 100


def detailed_runs(runs: pd.DataFrame) -> set[str]:
    """The runs (newest first in `runs`) whose pages show every invocation in detail."""
    return set(runs["run_id"].head(DETAILED_RUN_PAGES))


def write_run_pages(env: jinja2.Environment, docs: Path, runs: pd.DataFrame,
                    points: pd.DataFrame, phases: pd.DataFrame | None = None,
                    imported: pd.DataFrame | None = None) -> None:
    """runs/index.md and runs/<id>.md for every run (every run keeps its permalink); each page
    has slots for its tables (`write_run_tables`)."""
    render.write_page(env, "runs.md.j2", docs / "runs" / "index.md", page=runs_index(runs))
    detailed, with_points = detailed_runs(runs), set(points["run_id"])
    template = env.get_template("run.md.j2")
    for _, run in runs.iterrows():
        run_id = run["run_id"]
        values = imported[imported["run_id"] == run_id] if imported is not None else None
        page = run_page(run, has_results=run_id in detailed and run_id in with_points,
                        compact=run_id not in detailed, phases=phases, values=values)
        (docs / "runs" / f"{slug(run_id)}.md").write_text(template.render(page=page),
                                                          encoding="utf-8")


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


def write_run_tables(env: jinja2.Environment, fragments: Path, db: Path, runs: pd.DataFrame,
                     points: pd.DataFrame) -> None:
    """The results and invocation tables of each run page, as HTML slots (see slots.py)."""
    detailed = detailed_runs(runs)
    older = [run_id for run_id in runs["run_id"] if run_id not in detailed]
    con = queries.open_results(db)
    try:
        recent = queries.read_invocations(con, sorted(detailed))
        compact = queries.read_invocations(con, older, detail=False)
    finally:
        con.close()
    results, invocations = (env.get_template(f"run_{name}.html.j2")
                            for name in ("results", "invocations"))
    points_by_run = dict(tuple(points[points["run_id"].isin(detailed)].groupby("run_id")))
    recent_rows = detailed_rows(recent, _log_tails(recent))
    imported = set(runs.loc[runs["source"] == "import", "run_id"])
    for run_id in detailed:
        page = f"runs/{slug(run_id)}"
        if run_id in points_by_run and run_id not in imported:  # theirs: every metric, in Markdown
            slots.save(fragments, page, "results",
                       results.render(results=result_rows(points_by_run[run_id])))
        slots.save(fragments, page, "invocations", invocations.render(
            header=HEADER, compact=False, rows=recent_rows.get(run_id, "")))
    compact_by_run = compact_rows(compact)
    for run_id in older:
        slots.save(fragments, f"runs/{slug(run_id)}", "invocations", invocations.render(
            header=COMPACT_HEADER, compact=True, rows=compact_by_run.get(run_id, "")))
