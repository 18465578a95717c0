"""The verdicts' history kept between builds (side effects: out/cache).

The analysis core measures each series' noise from every run's median of it
(`store.reads.load_history`): a scan of every metric row of the history, the main process's
largest read on a long one, and a million Python objects made of it. A run's medians depend on
its own invocations and metrics only, so the History of the last build is kept (a pickle: its
values as the core had them): the medians of runs whose fingerprint (read_cache.py) is
unchanged come from it, the other runs' are read with the core's own query
(`reads.history_rows_sql`), and each series' medians are put in the core's order, oldest run
first (the rank of each run by the same ORDER BY as `reads.history_lists_sql`): the verdicts
cannot tell a kept median from a fresh one.

Likewise the runs' coverage (`reads.load_coverage`: every run and the series it measured, which
picks each run's previous comparable run): a run's is made of its own invocations and its start
time is in its fingerprint, so unchanged runs' come from the last build's file and only the
changed runs' are read (a scan of every invocation and 200,000 texts made of it).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import duckdb

from orchestrator.analysis.noise import History
from orchestrator.analysis.partner import RunCoverage
from orchestrator.store import reads

from .site_cache import SiteCache, digest, pickled_into, unpickled

KIND = "history"
COVERAGE = "coverage"
Medians = dict[tuple[str, str], tuple[tuple[str, float], ...]]
# Each run's place in every series' list of medians: history_lists_sql's order.
_RUN_ORDER = "SELECT run_id, row_number() OVER (ORDER BY started_at, run_id) FROM runs"


def read_history(con: duckdb.DuckDBPyConnection, series_keys: Sequence[str],
                 metrics: Sequence[str], *, cache: SiteCache,
                 fingerprints: dict[str, str]) -> History:
    """`reads.load_history(con, series_keys, metrics)` with the medians of unchanged runs from
    the cache: the file holds the History of the series and metrics asked for when it was
    written, so it serves the same question only."""
    stored = cache.entries(KIND).get(KIND)
    facts: dict[str, Any] = stored[1] if stored else {}
    question = digest(sorted(series_keys), sorted(metrics))
    known = _kept_file(cache, facts) if facts.get("question") == question else None
    if known is None:
        lists = con.execute(reads.history_lists_sql(reads.history_rows_sql()),
                            [list(series_keys), list(metrics)]).fetchall()
        medians, kept = reads.history_of(lists, ()).medians, set()
    else:
        kept = {run for run, key in fingerprints.items() if facts["runs"].get(run) == key}
        medians = _merged(con, known, kept if kept != set(facts["runs"]) else None,
                          sorted(set(fingerprints) - kept), series_keys, metrics)
    reused = known is not None and kept == set(facts["runs"]) == set(fingerprints)
    # Every median came from the kept file: it stays. Else a file of this build's.
    name = (facts["files"][0] if reused
            else f"{digest(sorted(fingerprints.items()), question)}.pkl")
    if reused or pickled_into(cache.file(KIND, name), medians) is None:
        cache.store(KIND, KIND, KIND, {"runs": dict(fingerprints), "question": question,
                                       "files": [name]})
    return History(medians, tuple(reads.aa_pairs(con)), reads.run_builds(con),
                   reads.experiment_runs(con))


def _kept_file(cache: SiteCache, facts: dict[str, Any]) -> Medians | None:
    """The medians the last build kept, or None (none, lost or damaged: read them all)."""
    files = facts.get("files") or []
    path: Path | None = cache.file(KIND, files[0]) if files else None
    try:
        known = unpickled(path) if path is not None else None
    except Exception:  # noqa: BLE001 - a damaged file of the last build is not trusted
        return None
    return known if isinstance(known, dict) else None


def _merged(con: duckdb.DuckDBPyConnection, known: Medians, kept: set[str] | None,
            changed: list[str], series_keys: Sequence[str], metrics: Sequence[str]) -> Medians:
    """The kept runs' medians from `known` (`kept` None: all of its runs), the changed runs'
    read, each series' in run order. A kept run's place among the kept ones cannot move (its
    start time is in its fingerprint), so a series' kept medians stay in order and the read ones
    go after them, unless a changed run is older: then the series' list is sorted anew."""
    fresh: dict[tuple[str, str], list[tuple[str, float]]] = {}
    if changed:
        for key, name, run, value in con.execute(
                reads.history_rows_sql("AND i.run_id IN (SELECT unnest(?::VARCHAR[]))"),
                [list(series_keys), list(metrics), changed]).fetchall():
            fresh.setdefault((key, name), []).append((run, float(value)))
    place = dict(con.execute(_RUN_ORDER).fetchall())
    out: Medians = {}
    for series in known.keys() | fresh.keys():
        old = known.get(series, ())
        if kept is not None:
            old = tuple(pair for pair in old if pair[0] in kept)
        new = sorted((pair for pair in fresh.get(series, ()) if pair[0] in place),
                     key=lambda pair: place[pair[0]])
        if new and old and place[old[-1][0]] > place[new[0][0]]:
            out[series] = tuple(sorted(old + tuple(new), key=lambda pair: place[pair[0]]))
        elif old or new:
            out[series] = old + tuple(new)
    return out


def read_coverage(con: duckdb.DuckDBPyConnection, *, cache: SiteCache,
                  fingerprints: dict[str, str]) -> list[RunCoverage]:
    """`reads.load_coverage(con)`, the unchanged runs' from the last build's file (`fingerprints`:
    every run's, read_cache.run_fingerprints)."""
    stored = cache.entries(COVERAGE).get(COVERAGE)
    facts: dict[str, Any] = stored[1] if stored else {}
    known = _kept_coverage(cache, facts)
    kept = {run for run, key in fingerprints.items()
            if facts["runs"].get(run) == key and run in known} if known else set()
    coverage = [RunCoverage(run, *known[run]) for run in kept]
    coverage += reads.load_coverage(con, sorted(set(fingerprints) - kept))
    # The core's order: newest first, runs without a start time last, then by run id.
    coverage.sort(key=lambda run: (run.started_at is not None,
                                   run.started_at if run.started_at is not None else 0,
                                   run.run_id), reverse=True)
    reused = bool(known) and kept == set(known) == set(fingerprints)
    # Every run's came from the kept file: it stays. Else a file of this build's.
    name = facts["files"][0] if reused else f"{digest(sorted(fingerprints.items()))}.pkl"
    shared: dict[frozenset[str], frozenset[str]] = {}  # most runs measure the same series
    if reused or pickled_into(cache.file(COVERAGE, name), {
            run.run_id: (run.started_at, shared.setdefault(run.series, run.series))
            for run in coverage}) is None:
        cache.store(COVERAGE, COVERAGE, COVERAGE, {"runs": dict(fingerprints), "files": [name]})
    return coverage


def _kept_coverage(cache: SiteCache, facts: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """run → (start, series) the last build kept, or {} (none, lost or damaged: read all)."""
    files = facts.get("files") or []
    try:
        known = unpickled(cache.file(COVERAGE, files[0])) if files else {}
    except Exception:  # noqa: BLE001 - a damaged file of the last build is not trusted
        return {}
    return known if isinstance(known, dict) else {}
