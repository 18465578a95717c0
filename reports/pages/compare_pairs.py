"""Which pairs of runs the site's Compare page can show, and each pair's page data (pure).

A static site cannot run the analysis core, so the verdicts of a bounded set of pairs are
computed when the site is built, by `orchestrator.verdicts.compare_pairs` (the reads and core
behind `tidemark compare`), and the page loads one pair's file when a reader picks it. All
pairs of 1,000 runs are half a million reports; the set is chosen in this order, each pair
(older run as the baseline) only when the two runs share a series, until
`COMPARISON_BUDGET` series comparisons are spent:

1. each of the newest `NEWEST_RUNS` runs against its previous comparable run and against the
   configured baseline (what the Summary and `tidemark gate` ask);
2. every pair among those newest runs;
3. older runs, newest first, against their previous comparable run and the configured baseline.

A small history gets every pair of its newest runs; a long one its newest corner. For any other
pair the page shows the `tidemark compare` command that answers it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Sequence

from orchestrator.analysis.compare import Report
from orchestrator.analysis.partner import RunCoverage, previous_comparable
from orchestrator.compare_format import change_text, ci_text, footer_lines, headline, num

from .format import anchor, slug
from .tables import describe

NEWEST_RUNS = 8
# Series comparisons (one per series and metric, a bootstrap CI and a U test each) the site
# spends on precomputed pairs: about 2 s of the core on this 2-core machine (README).
COMPARISON_BUDGET = 1000


@dataclass(frozen=True)
class PairPlan:
    pairs: tuple[tuple[str, str], ...]  # (base, candidate), in the order they were chosen
    previous: Mapping[str, str]  # run → its previous comparable run (for the runs considered)
    comparisons: int  # series comparisons the pairs cost
    complete: bool  # False when the budget stopped the choice before every tier was done


class _Chooser:
    """Adds pairs in order until the budget is spent; remembers each run's previous run."""

    def __init__(self, coverage: Sequence[RunCoverage], budget: int):
        self.coverage, self.budget = coverage, budget
        self.series = {run.run_id: run.series for run in coverage}
        self.chosen: dict[tuple[str, str], int] = {}
        self.previous: dict[str, str] = {}
        self.spent, self.full = 0, False

    def previous_of(self, run_id: str) -> str | None:
        if run_id not in self.previous:
            found = previous_comparable(self.coverage, run_id)
            if found is None:
                return None
            self.previous[run_id] = found
        return self.previous[run_id]

    def add(self, base: str | None, cand: str) -> None:
        if self.full or base is None or base == cand or (base, cand) in self.chosen:
            return
        shared = len(self.series.get(base, frozenset()) & self.series.get(cand, frozenset()))
        if not shared:
            return
        if self.spent + shared > self.budget and self.chosen:
            self.full = True
            return
        self.chosen[(base, cand)] = shared
        self.spent += shared


def _older_first(coverage: Sequence[RunCoverage], a: str, b: str) -> tuple[str, str]:
    order = {run.run_id: i for i, run in enumerate(coverage)}  # newest first
    return (a, b) if order[a] > order[b] else (b, a)


def choose_pairs(coverage: Sequence[RunCoverage], baseline: str | None,
                 newest: int = NEWEST_RUNS, budget: int = COMPARISON_BUDGET) -> PairPlan:
    """The pairs to precompute (see the module doc); `coverage` newest first (store.reads)."""
    chooser = _Chooser(coverage, budget)
    recent = [run.run_id for run in coverage[:newest]]
    for run_id in recent:
        chooser.add(chooser.previous_of(run_id), run_id)
        if baseline is not None:
            chooser.add(*_older_first(coverage, baseline, run_id))
    for i, cand in enumerate(recent):
        for base in recent[i + 1:]:
            chooser.add(base, cand)
    for run in coverage[newest:]:
        if chooser.full:  # finding a previous comparable run reads the whole history
            break
        chooser.add(chooser.previous_of(run.run_id), run.run_id)
        if baseline is not None:
            chooser.add(*_older_first(coverage, baseline, run.run_id))
    return PairPlan(tuple(chooser.chosen), dict(chooser.previous), chooser.spent,
                    not chooser.full)


def pair_file(base: str, cand: str) -> str:
    """The file of a pair's verdicts under compare/ (slugs never hold '_')."""
    return f"{slug(base)}__{slug(cand)}.json"


def run_page(run_id: str) -> str:
    """A run page's built address from the site root (the Compare page's JavaScript writes
    links into the built page, so they are .html, not the .md MkDocs rewrites)."""
    return f"runs/{slug(run_id)}.html"


def _finite(value: float) -> float | None:
    return value if isinstance(value, (int, float)) and math.isfinite(value) else None


def _side(point: Mapping[str, Any] | None, run_id: str, median: float, n: int) -> dict[str, Any]:
    """A median as the CLI prints it, linked to the first invocation of its series in its run."""
    href = run_page(run_id) + (f"#{anchor(point['first_seq'])}" if point is not None else "")
    return {"text": num(median), "value": _finite(median), "n": n, "href": href}


def _rows(report: Report, points: Mapping[tuple[str, str], Mapping[str, Any]]) -> Iterator[dict]:
    base_id, cand_id = report.base["run_id"], report.cand["run_id"]
    for row in report.rows:
        c = row.comparison
        base_point, cand_point = points.get((base_id, row.series_key)), points.get(
            (cand_id, row.series_key))
        shown = cand_point or base_point
        # The workload leads: rows of several workloads share engine, threads and params.
        series = f"{shown['workload']} · {describe(shown)}" if shown is not None else row.label
        yield {"label": row.label, "series": series,
               "series_key": row.series_key, "metric": row.metric,
               "base": _side(base_point, base_id, c.base_median, c.base_n),
               "cand": _side(cand_point, cand_id, c.cand_median, c.cand_n),
               "change": change_text(row), "change_pct": _finite(c.change_pct), "ci": ci_text(row),
               "p": num(c.p_value), "test": c.test, "threshold": f"{c.threshold * 100:.1f}%",
               "verdict": c.verdict, "failed": list(row.failed), "notes": list(c.notes),
               "differences": list(row.differences)}


def _facts(facts: Mapping[str, Any]) -> dict[str, Any]:
    return {"run_id": facts.get("run_id"), "href": run_page(str(facts.get("run_id"))),
            "engine": facts.get("engine"), "engine_version": facts.get("engine_version"),
            "build_variant": facts.get("build_variant"), "label": facts.get("label"),
            "status": facts.get("status"), "started": str(facts.get("started_at") or "")}


def compare_command(base: str, cand: str) -> str:
    return f"tidemark compare {base} {cand}"


def pair_payload(base: str, cand: str, result: Report | Exception,
                 points: Mapping[tuple[str, str], Mapping[str, Any]]) -> dict[str, Any]:
    """What the Compare page shows for one pair: the core's rows with the CLI's text, the
    differing keys it named, links to both runs; or the error the CLI prints."""
    head = {"base": base, "cand": cand, "command": compare_command(base, cand)}
    if not isinstance(result, Report):
        return {**head, "problem": str(result)}
    return {**head, "base_run": _facts(result.base), "cand_run": _facts(result.cand),
            "headline": headline(result), "rows": list(_rows(result, points)),
            "named": list(result.named), "differences": list(result.differences),
            "only_base": list(result.only_base), "only_cand": list(result.only_cand),
            "footer": footer_lines(result)}
