"""The Compare page's data (side effects): the chosen pairs' verdicts from the analysis core,
one JSON file per pair under compare/, and compare/index.json with the runs and the pairs.

The page (templates/compare.md.j2, assets/compare.js) renders these files; it never decides.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Sequence

import duckdb
import pandas as pd

from orchestrator import verdicts
from orchestrator.analysis.compare import Report, summarizing_with
from orchestrator.gate import GateConf
from orchestrator.store import connect
from orchestrator.store.reads import load_coverage, remembering_history

from ..data.comparisons import SiteVerdicts, summary_reports
from ..data.frames import records
from ..data.site_cache import SiteCache
from ..data.verdict_cache import KeptSummaries
from ..pages.compare_pairs import (COMPARISON_BUDGET, NEWEST_RUNS, choose_pairs, pair_file,
                                   pair_payload, run_page)
from ..pages.format import date

FOLDER = "compare"


def _points_of(points: pd.DataFrame, runs: set[str]) -> dict[tuple[str, str], dict[str, Any]]:
    """(run, series) → its point, for the links and row labels of the chosen pairs only."""
    mine = points[points["run_id"].isin(runs)]
    return {(p["run_id"], p["series_key"]): p for p in records(mine)}


def _run_entries(runs: pd.DataFrame) -> list[dict[str, Any]]:
    """The runs a reader picks from, newest first."""
    return [{"id": run_id, "href": run_page(run_id), "started": date(started),
             "engine": f"{engine} {version}", "label": label or "", "status": status}
            for run_id, started, engine, version, label, status in zip(
                runs["run_id"], runs["started_at"], runs["engine"], runs["engine_version"],
                runs["label"], runs["status"])]


def _write_json(path: Path, data: Any) -> None:
    # allow_nan=False: a NaN would make the file invalid JSON for the browser.
    path.write_text(json.dumps(data, allow_nan=False, separators=(",", ":"), default=str),
                    encoding="utf-8")


def _verdicts(con: duckdb.DuckDBPyConnection, pairs: Sequence[tuple[str, str]], gate: GateConf,
              read: SiteVerdicts | None, summaries: KeptSummaries
              ) -> dict[tuple[str, str], Report | Exception]:
    """Each pair's report from the analysis core; a pair the site's verdicts already compared
    on the same metrics and thresholds (`read`, from the same snapshot) is not compared again,
    nor is the history they read scanned again; `summaries` answers for samples it knows."""
    known = summary_reports(read) if read is not None else {}
    results: dict[tuple[str, str], Report | Exception] = {
        pair: known[pair] for pair in pairs if pair in known}
    todo = [pair for pair in pairs if pair not in known]
    if todo:
        with remembering_history(con, read.histories if read is not None else ()), \
                summarizing_with(summaries):
            results.update(verdicts.compare_pairs(con, todo, gate.summary_metrics,
                                                  gate.thresholds))
    return results


# The points of some runs as the site's points frame has them (site_reads.points_of_runs).
PointsReader = Callable[[list[str]], pd.DataFrame]


def write_comparisons(db: Path, dest: Path, runs: pd.DataFrame,
                      points: pd.DataFrame | PointsReader,
                      gate: GateConf, baseline: str | None, summarized: str,
                      read: SiteVerdicts | None = None, cache: Path | None = None) -> int:
    """dest/compare/*.json for the chosen pairs; returns how many pairs were written.
    `points`: the runs' points, or what reads the chosen pairs' from `db`;
    `baseline`: the configured baseline's run (None: none); `summarized`: the Summary's run,
    the pair the page opens with; `read`: the site's verdicts, read with `gate` from the same
    DB (what they read and compared is not read again); `cache`: the build's SiteCache folder,
    for the samples' summaries of the last build and the next (data/verdict_cache.py)."""
    recorded = read.summaries if read is not None else {}
    kept = SiteCache(cache) if cache is not None else None
    summaries = (KeptSummaries.of_last_build(kept, recorded) if kept is not None
                 else KeptSummaries(recorded))
    con = connect(db, read_only=True)
    try:
        plan = choose_pairs(read.coverage if read is not None and read.coverage is not None
                            else load_coverage(con), baseline)
        results = _verdicts(con, plan.pairs, gate, read, summaries)
    finally:
        con.close()
    paired = {run for pair in plan.pairs for run in pair}
    lookup = _points_of(points if isinstance(points, pd.DataFrame) else points(sorted(paired)),
                        paired)
    if kept is not None:
        summaries.keep(kept, recorded)
        kept.save()  # this kind only: no other process writes it (data/verdict_cache.py)
    folder = dest / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    for (base, cand), result in results.items():
        _write_json(folder / pair_file(base, cand), pair_payload(base, cand, result, lookup))
    _write_json(folder / "index.json", {
        "runs": _run_entries(runs),
        "pairs": [[base, cand, pair_file(base, cand)] for base, cand in plan.pairs],
        "previous": plan.previous, "baseline": baseline, "baseline_selector": gate.baseline,
        "opening": [plan.previous.get(summarized), summarized],
        "newest_runs": NEWEST_RUNS, "budget": COMPARISON_BUDGET,
        "comparisons": plan.comparisons, "complete": plan.complete})
    return len(plan.pairs)
