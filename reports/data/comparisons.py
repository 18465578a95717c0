"""The verdicts the site shows, asked of the analysis core once per site build (read-only).

The Summary, Gate, Targets and workload pages render these; none of them decides. They come
from orchestrator.verdicts, the functions `tidemark compare` and `tidemark gate` call, so the
site and the CLI give the same answer to the same question.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable

import duckdb

from orchestrator import verdicts
from orchestrator.analysis.compare import Report, summarizing_with
from orchestrator.analysis.decide import GateResult
from orchestrator.analysis.noise import History
from orchestrator.analysis.partner import (RunCoverage, gate_partner, previous_comparable,
                                           summarized_run)
from orchestrator.analysis.stats import FASTER, NO_CHANGE, NOT_ENOUGH, SLOWER, SampleSummary
from orchestrator.errors import UserError
from orchestrator.gate import GateConf
from orchestrator.store import reads

from .verdict_cache import KeptSummaries

# Verdicts in the order the summary lists them.
VERDICT_ORDER = {SLOWER: 0, FASTER: 1, NO_CHANGE: 2, NOT_ENOUGH: 3}

# (connection, series keys, metrics) → History, as reads.load_history answers.
HistoryReader = Callable[[duckdb.DuckDBPyConnection, list[str], list[str]], History]
CoverageReader = Callable[[duckdb.DuckDBPyConnection], list[RunCoverage]]


@dataclass(frozen=True)
class Baseline:
    """The configured baseline as the site resolved it: its selector (`baseline` in the gate
    config, or `tidemark site --baseline`), the run it matched, or why there is none."""

    selector: str
    run_id: str | None
    problem: str = ""  # set when run_id is None


@dataclass(frozen=True)
class Comparison:
    """A run against another, as the core compared them; `problem` when they could not be."""

    cand: str
    base: str | None
    report: Report | None
    problem: str = ""


@dataclass(frozen=True)
class SiteVerdicts:
    candidate: str  # the summarized run
    previous: Comparison  # … against its previous comparable run
    against_baseline: Comparison | None  # … against the configured baseline (None: none/itself)
    baseline: Baseline
    gate: GateResult | None
    gate_problem: str
    latest: dict[str, Comparison] = field(default_factory=dict)  # run → vs its previous comparable
    targets: dict[str, list[Any]] = field(default_factory=dict)  # run → its TargetResults
    # What these verdicts were read from, for the Compare page's comparisons (build/compare_site.py),
    # which read the same snapshot: every run's series (newest first) and the history. A site
    # build's verdicts' child keeps them to itself (site_reads.start_verdicts).
    coverage: list[RunCoverage] | None = None
    histories: tuple[reads.RememberedHistory, ...] = ()
    # The samples' summaries these verdicts computed, by verdict_cache.summary_key: the Compare
    # page's comparisons keep them for the next build.
    summaries: dict[str, SampleSummary] = field(default_factory=dict)


def _compare(con: duckdb.DuckDBPyConnection, base: str | None, cand: str,
             conf: GateConf) -> Comparison:
    if base is None:
        return Comparison(cand, None, None, "no earlier run measured any of its series")
    try:
        return Comparison(cand, base, verdicts.compare_runs(con, base, cand, conf.summary_metrics,
                                                            conf.thresholds))
    except UserError as error:
        return Comparison(cand, base, None, str(error))


def _targets(con: duckdb.DuckDBPyConnection, comparison: Comparison) -> list[Any]:
    return verdicts.check_targets(con, comparison.report) if comparison.report else []


def read_verdicts(con: duckdb.DuckDBPyConnection, conf: GateConf, latest_runs: Iterable[str],
                  read_history: HistoryReader | None = None,
                  read_coverage: CoverageReader | None = None) -> SiteVerdicts:
    """The summary's, gate's and workload pages' comparisons. `latest_runs`: each workload's
    newest run, compared with its previous comparable run on the workload pages.
    `read_history`, `read_coverage`: ones that answer as `reads.load_history` and
    `reads.load_coverage` do (history_cache.py)."""
    coverage: list[RunCoverage] = (read_coverage or reads.load_coverage)(con)
    with reads.remembering_history(con) as histories:
        # One read of the history serves every comparison below: each asks for a part of it.
        keys = sorted(set().union(*(c.series for c in coverage)))
        metrics = sorted({*conf.summary_metrics, *conf.metrics})
        if read_history is None:
            reads.load_history(con, keys, metrics)  # remembered by the block
        else:
            histories.append((frozenset(keys), frozenset(metrics),
                              read_history(con, keys, metrics)))
        recorded = KeptSummaries()
        with summarizing_with(recorded):
            found = _comparisons(con, conf, latest_runs, coverage)
    return replace(found, coverage=coverage, histories=tuple(histories), summaries=recorded.used)


def _comparisons(con: duckdb.DuckDBPyConnection, conf: GateConf, latest_runs: Iterable[str],
                 coverage: list[RunCoverage]) -> SiteVerdicts:
    cand, previous = summarized_run(coverage)
    configured, problem = verdicts.resolve_baseline(con, conf.baseline)
    baseline = Baseline(conf.baseline, configured, problem)
    against = _compare(con, configured, cand, conf) if configured and configured != cand else None
    partner = gate_partner(coverage, cand, configured, problem)
    gate, gate_problem = None, partner.why
    if partner.run_id is not None:
        try:
            gate = verdicts.gate_runs(con, partner, cand, conf)
        except UserError as error:
            gate_problem = str(error)
    latest = {cand: _compare(con, previous, cand, conf)}
    for run_id in latest_runs:
        if run_id not in latest:
            latest[run_id] = _compare(con, previous_comparable(coverage, run_id), run_id, conf)
    targets = {run_id: _targets(con, c) for run_id, c in latest.items()}
    if gate is not None:  # bars against the gate's partner, as `tidemark gate --targets` checks
        targets[cand] = verdicts.check_targets(con, gate.report)
    return SiteVerdicts(cand, latest[cand], against, baseline, gate, gate_problem, latest, targets)


def summary_reports(found: SiteVerdicts) -> dict[tuple[str, str], Report]:
    """(base, candidate) → the report of each pair compared on the summary's metrics (the
    previous runs' and the baseline's comparisons; the gate's is on the gate's metrics)."""
    compared = [*found.latest.values(), found.previous, found.against_baseline]
    return {(c.base, c.cand): c.report for c in compared
            if c is not None and c.base is not None and c.report is not None}


def sorted_rows(report: Report) -> list[Any]:
    """A report's rows, regressions first, then improvements, larger changes first."""
    return sorted(report.rows, key=lambda r: (VERDICT_ORDER.get(r.comparison.verdict, 9),
                                              -abs(r.comparison.ratio - 1.0)
                                              if r.comparison.ratio == r.comparison.ratio else 0))
