"""What a site build reads (side effects: the DB read-only, out/cache), in the order the build
needs it: first the runs and what keys each run's page, so that the run pages' worker starts at
once; then every run's points here while a child reads the verdicts (`start_verdicts`), so
that the statistics pages' process starts soon after; then the rest (`read_results`)."""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from orchestrator.gate import GateConf
from orchestrator.store.reads import aa_pairs, parse_selector

from ..data import aggregates, history_cache, queries, read_cache
from ..data.caveats import with_caveats
from ..data.comparisons import CoverageReader, HistoryReader, SiteVerdicts, read_verdicts
from ..data.site_cache import SiteCache
from . import forked
from .run_site import detailed_runs, log_files


@dataclass(frozen=True)
class RunReads:
    runs: pd.DataFrame  # with their caveats (caveats.with_caveats)
    fingerprints: dict[str, str]  # run id → a hash of all the DB holds about it (read_cache)
    logs: dict[str, str]  # detailed run id → a hash of its logs' sizes and times
    aa_pairs: list[tuple[str, str]]  # A/A pairs of `tidemark ab`, for the noise tables
    phases: pd.DataFrame  # what each phase of the detailed runs cost (queries.read_phases)
    imported: pd.DataFrame  # every metric of the imported runs (queries.read_imported_values)
    instrumented: frozenset[str]  # build variants whose runs carry a caveat
    latest: dict[str, str]  # workload → its newest run (queries.read_latest_runs)


def read_runs(db: Path, cache: SiteCache, instrumented: set[str]) -> RunReads:
    """The runs and what keys each run's page: all the run pages' worker needs to start (and
    each workload's newest run, which the verdicts' child needs)."""
    con = queries.open_results(db)
    try:
        runs = queries.read_runs(con)
        runs, _ = with_caveats(runs, pd.DataFrame(), instrumented)
        detailed = sorted(detailed_runs(runs))
        return RunReads(runs, read_cache.run_fingerprints(con, cache), log_files(con, detailed),
                        aa_pairs(con), queries.read_phases(con, detailed),
                        queries.read_imported_values(con), frozenset(instrumented),
                        queries.read_latest_runs(con))
    finally:
        con.close()


def read_points(db: Path, cache: SiteCache, first: RunReads
                ) -> tuple[pd.DataFrame, Callable[[], str | None]]:
    """Every run's points (those of runs unchanged since the last build from its cache), with
    their runs' caveats, and a function that waits until a forked child has kept them in the
    cache for the next build (it gives why it could not, or None)."""
    con = queries.open_results(db)
    # One DuckDB thread: the run pages' worker keeps the other core busy meanwhile, and the
    # points' medians (200,000 groups) cost twice the CPU time in a parallel aggregate, whose
    # merge also leaves the means' last bits to chance; one thread gives the same every time.
    con.execute("SET threads = 1")
    try:
        caveats = dict(zip(first.runs["run_id"], first.runs["caveat"]))
        read = read_cache.read_points(con, cache, first.fingerprints, caveats)
    finally:
        con.close()
    kept = forked.start(partial(read_cache.keep_points, cache, read), "tidemark-keep-points",
                        nice=forked.LATER)
    return read.frame, kept


@dataclass(frozen=True)
class Results:
    """Everything the pages need, read once with aggregated queries."""

    runs: pd.DataFrame
    points: pd.DataFrame
    machines: pd.DataFrame
    # Gives the cache states' residency per machine, read where first asked for: the machine
    # pages' child, beside the pages, rather than this process, whose reads the others wait for.
    residency_read: Callable[[], pd.DataFrame]
    windows: pd.DataFrame
    intervals: pd.DataFrame
    aa_pairs: list[tuple[str, str]]  # A/A pairs of `tidemark ab`, for the noise tables
    # Gives what the analysis core decided (summary, gate, targets, workloads): in a build,
    # waits for the child that reads them (`start_verdicts`), so that the pages that need none
    # are written meanwhile.
    verdicts_read: Callable[[], SiteVerdicts]
    gate: GateConf  # its thresholds decide every verdict on the site, as in `tidemark gate`
    phases: pd.DataFrame  # what each phase cost, for the newest runs (queries.read_phases)
    imported: pd.DataFrame  # every metric of the imported runs (queries.read_imported_values)
    # Gives the instruction counts of runs built from a commit (the Commits page), read only
    # when a run has a commit.
    commit_instructions_read: Callable[[], pd.DataFrame] = lambda: pd.DataFrame()

    @property
    def verdicts(self) -> SiteVerdicts:
        return self.verdicts_read()

    @property
    def residency(self) -> pd.DataFrame:
        return self.residency_read()


    @property
    def commit_instructions(self) -> pd.DataFrame:
        return self.commit_instructions_read()


def _read_when_asked(db: Path, read: Callable[[Any], pd.DataFrame]
                     ) -> Callable[[], pd.DataFrame]:
    @functools.cache
    def frame() -> pd.DataFrame:
        con = queries.open_results(db)
        try:
            return read(con)
        finally:
            con.close()

    return frame


def points_of_runs(db: Path, run_ids: list[str], first: RunReads) -> pd.DataFrame:
    """The points of `run_ids` only, as `read_points` gives them (with their runs' caveats),
    for a child that has not the whole frame (the run pages' worker, the comparisons). A run's
    points are made of its own rows only, so they are the same whichever runs are read with
    it."""
    con = queries.open_results(db)
    # One thread, as the parent's read of the points: the other core is busy meanwhile.
    con.execute("SET threads = 1")
    try:
        points = queries.read_points(con, sorted(run_ids))
    finally:
        con.close()
    runs = first.runs[first.runs["run_id"].isin(run_ids)]
    return with_caveats(runs, points, set(first.instrumented))[1]


def start_verdicts(db: Path, gate: GateConf, first: RunReads, cache: SiteCache,
                   then: Callable[[SiteVerdicts], Any]
                   ) -> tuple[Callable[[], SiteVerdicts], Callable[[], Any]]:
    """The verdicts read in a forked child, which needs none of the points: the other core is
    idle while this process reads them. The child then goes on with `then(the verdicts)` (the
    Compare page's comparisons, which use what the verdicts read: the runs' series, the
    history; megabytes this process would only pass on), niced. Returns the functions that wait
    for the verdicts and for `then`'s result; the history the verdicts read is kept in `cache`
    as if read here."""
    def verdicts() -> tuple[tuple[SiteVerdicts, dict[str, Any]], SiteVerdicts]:
        con = queries.open_results(db)
        try:
            found = read_verdicts(con, gate, first.latest.values(),
                                  _history_reader(first, cache), _coverage_reader(first, cache))
        finally:
            con.close()
        sent = replace(found, coverage=None, histories=(), summaries={})
        return (sent, {kind: cache.stored(kind) for kind in _VERDICTS_KINDS}), found

    read, done = forked.start_in_stages(verdicts, then, "tidemark-verdicts",
                                        nice_then=forked.LATER)

    def finish() -> SiteVerdicts:
        found, stored = read()
        for kind, entries in stored.items():  # the same entries again on a second call
            cache.adopt(kind, entries)
        return found

    return finish, done


def read_results(db: Path, gate: GateConf, first: RunReads | None = None,
                 points: pd.DataFrame | None = None, cache: SiteCache | None = None,
                 verdicts: Callable[[], SiteVerdicts] | None = None) -> Results:
    """Everything the pages show; `first` and `points`: the runs and points already read
    (without them, as one read of the DB gives them, without caveats); `cache`: the last
    build's, for the verdicts' history of unchanged runs (with `first`); `verdicts`: waits for
    them, read meanwhile (`start_verdicts`): the Results do not wait for them."""
    con = queries.open_results(db)
    try:
        if gate.baseline:
            parse_selector(gate.baseline)  # a malformed selector is the user's error, not a page
        runs = first.runs if first else queries.read_runs(con)
        points = points if points is not None else queries.read_points(con)
        # Read here while the verdicts' child works.
        machines, windows = aggregates.read_machines(con), aggregates.read_windows(con)
        intervals = aggregates.read_intervals(con)
        latest = first.latest if first else queries.read_latest_runs(con)
        if verdicts is None:
            found = read_verdicts(con, gate, latest.values(), _history_reader(first, cache),
                                  _coverage_reader(first, cache))
            verdicts = lambda: found  # noqa: E731 - read already
        phased = sorted(set(latest.values()) | detailed_runs(runs))
        return Results(runs, points, machines, _read_when_asked(db, aggregates.read_residency),
                       windows, intervals, first.aa_pairs if first else aa_pairs(con), verdicts,
                       gate, queries.read_phases(con, phased),
                       first.imported if first else queries.read_imported_values(con),
                       _read_when_asked(db, queries.read_commit_instructions))
    finally:
        con.close()


# What the verdicts' child keeps in the cache, which the parent's index takes over.
_VERDICTS_KINDS = (history_cache.KIND, history_cache.COVERAGE)


def _coverage_reader(first: RunReads | None, cache: SiteCache | None
                     ) -> CoverageReader | None:
    if first is None or cache is None:
        return None
    return partial(history_cache.read_coverage, cache=cache, fingerprints=first.fingerprints)


def _history_reader(first: RunReads | None, cache: SiteCache | None) -> HistoryReader | None:
    if first is None or cache is None:
        return None
    return partial(history_cache.read_history, cache=cache, fingerprints=first.fingerprints)
