"""The analysts' tools on the site (wiring): the Compare page, Downloads and the SQL page.

Their data is written in two forked children while the parent writes the pages and MkDocs
builds them (this machine has 2 cores): the Parquet files of the whole history and the CSV of
raw repetitions and invocations as soon as the runs are read (they need only the DB, and the
other core has nothing else to do yet), into out/cache (kept for the next build,
downloads.py); the precomputed comparisons once the verdicts are read, into out/tools/. All go
into the built site once MkDocs has built it. The CSV of every table is written once the built
pages are complete (the run pages' with their bodies, run_assembly.py).
"""
from __future__ import annotations

import json
import shutil
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, Callable

import jinja2
import pandas as pd

from orchestrator.gate import GateConf

from ..data.comparisons import SiteVerdicts
from ..data.frames import records
from ..data.site_cache import KeptFiles, SiteCache, place
from ..pages.compare_pairs import COMPARISON_BUDGET, NEWEST_RUNS
from ..pages.sql_page import EXAMPLES, copy_bundle, missing_files, package_version
from ..pages.tables import describe
from . import forked, render, slots
from .compare_site import FOLDER, write_comparisons
from .downloads import DATA, export_history
from .history_parquet import BLOCK_RUNS
from .run_site import DETAILED_RUN_PAGES, detailed_runs
from .site_reads import RunReads, points_of_runs
from .table_csv import add_all_csv_downloads, add_csv_downloads, passes_over

STAGING = "tools"  # under the build's out folder: the child's files, before the site exists
KIND = "tool-data"  # the published files kept in out/cache between builds


def thresholds_text(gate: GateConf) -> str:
    t = gate.thresholds
    return (f"U test at alpha {t.alpha:g}, a change of at least {t.min_effect:.0%} and "
            f"{t.noise_k:g} × the series' noise between runs, and between two separate runs the "
            f"{t.tail_quantile:g} quantile of its run-to-run changes")


def write_tool_pages(env: jinja2.Environment, docs: Path, gate: GateConf) -> list[dict[str, str]]:
    """compare.md, downloads.md, sql.md; returns their nav entries."""
    render.write_page(env, "compare.md.j2", docs / "compare.md", thresholds=thresholds_text(gate),
                      newest=NEWEST_RUNS, budget=COMPARISON_BUDGET, index=f"{FOLDER}/index.json")
    render.write_page(env, "downloads.md.j2", docs / "downloads.md", csv_runs=DETAILED_RUN_PAGES,
                      block_runs=BLOCK_RUNS)
    render.write_page(env, "sql.md.j2", docs / "sql.md", examples=EXAMPLES,
                      version=package_version(), available=not missing_files())
    return [{"Compare runs": "compare.md"}, {"Downloads": "downloads.md"},
            {"SQL over the history": "sql.md"}]


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return ""


def _series_rows(points: pd.DataFrame, files: dict[str, str]) -> list[dict[str, str]]:
    """The Downloads page's series list: each series as its rows are labelled elsewhere."""
    newest = {p["series_key"]: p
              for p in records(points.drop_duplicates("series_key", keep="last"))}
    rows = [{"label": describe(newest[key]) if key in newest else key,
             "workload": newest[key]["workload"] if key in newest else "", "file": file}
            for key, file in files.items()]
    return sorted(rows, key=lambda row: (row["workload"], row["label"]))


def _downloads_html(manifest: dict[str, Any], points: pd.DataFrame) -> str:
    for table in manifest["tables"]:
        table["size"] = _size(table["bytes"])  # the sum of its files
        table["column_names"] = ", ".join(c["name"] for c in table["columns"])
        for part in table["files"]:
            part["size"] = _size(part["bytes"])
    return render.environment().get_template("downloads_files.html.j2").render(
        manifest=manifest, series=_series_rows(points, manifest["series_files"]))


def start_history_export(db: Path, out: Path, runs: pd.DataFrame, fingerprints: dict[str, str],
                         cache: SiteCache, generated: datetime) -> Callable[[], Any]:
    """Write the history's Parquet and CSV files in a forked child; returns the function that
    waits for it and gives (manifest, path in the site → file, the cache's files used). They
    are kept in `cache` and reused while their content is unchanged (`fingerprints`: run id →
    a hash of all the DB holds about the run, data/read_cache.py)."""
    staging = out / STAGING
    shutil.rmtree(staging, ignore_errors=True)
    csv_runs = sorted(detailed_runs(runs))  # the pages that link their invocations' CSV
    files = KeptFiles(cache, KIND)

    def work() -> tuple[dict[str, Any], dict[str, Path], dict[str, Any]]:
        manifest, placed = export_history(db, files, staging / ".csv", csv_runs, fingerprints,
                                          generated)
        (staging / DATA).mkdir(parents=True, exist_ok=True)
        (staging / DATA / "manifest.json").write_text(json.dumps(manifest, indent=2),
                                                      encoding="utf-8")
        return manifest, placed, files.used

    return forked.start(work, "tidemark-history-export", nice=forked.LATER)


def comparisons_writer(db: Path, out: Path, first: RunReads,
                       gate: GateConf) -> Callable[[SiteVerdicts], int]:
    """What writes the Compare page's precomputed comparisons from the site's verdicts, with
    what they read (run in the verdicts' child: site_reads.start_verdicts, which has not the
    points: it reads the chosen pairs'), and keeps the verdicts' sample summaries in
    out/cache, the build's SiteCache."""
    return lambda found: write_comparisons(
        db, out / STAGING, first.runs, partial(points_of_runs, db, first=first), gate,
        found.baseline.run_id, found.candidate, found, out / "cache")


def place_tool_data(exported: Callable[[], Any], compared: Callable[[], Any], out: Path,
                    site: Path, fragments: Path, points: pd.DataFrame, cache: SiteCache) -> None:
    """Wait for the children's files and put them into the built site, with DuckDB-WASM;
    the Downloads page's list of them into its slot."""
    manifest, placed, used = exported()
    compared()
    slots.save(fragments, "downloads", "files", _downloads_html(manifest, points))
    KeptFiles.keep(cache, KIND, used)
    for target, source in placed.items():
        place(source, site / target)
    staging = out / STAGING
    shutil.rmtree(staging / ".csv", ignore_errors=True)
    for path in sorted(staging.rglob("*")):
        if path.is_file():
            target = site / path.relative_to(staging)
            target.parent.mkdir(parents=True, exist_ok=True)
            path.replace(target)
    shutil.rmtree(staging, ignore_errors=True)
    copy_bundle(site)


def csv_when_filled(site: Path) -> slots.Finish:
    """`slots.fill`'s last step: the CSV of each table of a page with slots, while its HTML
    is in memory (its charts, which hold no table, are put in after it)."""
    return slots.Finish(lambda page, html: add_csv_downloads(page, site, html), passes_over)


def add_table_csv(site: Path, done: set[Path]) -> int:
    """A CSV and a download link for every table of the other built pages (table_csv.py)."""
    return add_all_csv_downloads(site, done)
