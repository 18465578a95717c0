"""What a site build reads per run, reused from the previous build into the same out folder
(side effects: the DB read-only, out/cache).

Each run gets a fingerprint from the DB itself: a hash of its `runs` row (label, notes, status,
machine state…), of the notes people wrote about it, of every column of its invocations and of
every row of their metrics. Points (one row per run × series, `queries.read_points`)
of runs whose fingerprint is unchanged come from the last build's, pickled as it read them (a
61 MB file of 1,000 runs × 200 series loads in 0.06 s, where DuckDB took 1.4 s to read them
back); only the other runs' are computed, and they are put in the order and column types one
read of every run gives (POINTS_ORDER; integers nullable only where one is NULL), so the pages
cannot tell a reused point from a fresh one.

Hashing every metric row joined to its run would cost most of what it saves on a long
history, so a run's metrics hash is reused while its invocations are unchanged (the store writes
a run's metrics with its invocations and deletes them with it), and checked: the hashes of all
runs must add up to the hash of the whole metrics table, else every run's is read again.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import duckdb
import numpy as np
import pandas as pd

from orchestrator.store.reads import has_table

from . import frames, queries, site_cache
from .caveats import caveat_column
from .site_cache import SiteCache, digest, pickled_into, unpickled

FINGERPRINTS = "run-fingerprints"
# Tables whose every row and column `run_fingerprints` reads in every build (hash() of whole
# rows): DuckDB verifies their blocks' checksums there, so the site's check skips them.
READ_IN_FULL = ("runs", "invocations", "metrics", "run_notes")
POINTS = "points"

_RUN_ROWS = """
    SELECT r.run_id, hash(r) AS row_hash, coalesce(i.n, 0) AS n, coalesce(i.h, 0) AS h,
           {notes} AS notes_hash
    FROM runs r LEFT JOIN (SELECT run_id, count(*) AS n, sum(hash(i)) AS h
                           FROM invocations i GROUP BY run_id) i USING (run_id)
    {notes_join}"""
# The notes people wrote about a run (`tidemark note`, schema v8) are in a table of their own.
_NOTES_JOIN = """LEFT JOIN (SELECT run_id, count(*) AS n, sum(hash(t)) AS h FROM run_notes t
                            GROUP BY run_id) t USING (run_id)"""
_RUN_METRICS = """
    SELECT i.run_id, count(*) AS n, sum(hash(m)) AS h
    FROM metrics m JOIN invocations i USING (invocation_id)
    WHERE i.run_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY i.run_id"""
_ALL_METRICS = "SELECT count(*), coalesce(sum(hash(m)), 0) FROM metrics m"


def _metrics_of(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> dict[str, tuple[int, int]]:
    found = {run: (int(n), int(h)) for run, n, h in con.execute(_RUN_METRICS, [run_ids]).fetchall()}
    return {run: found.get(run, (0, 0)) for run in run_ids}


def run_fingerprints(con: duckdb.DuckDBPyConnection, cache: SiteCache) -> dict[str, str]:
    """run id → a hash of everything the DB holds about the run (see the module's note)."""
    notes = has_table(con, "run_notes")
    query = _RUN_ROWS.format(notes="(coalesce(t.n, 0), coalesce(t.h, 0))" if notes else "NULL",
                             notes_join=_NOTES_JOIN if notes else "")
    # The check of the kept metrics hashes against the whole table (60 M rows at 10,000 runs:
    # 1.7 s of this function's 2.3) on a cursor of its own, in a thread, while this one reads
    # the runs' rows; not made when none is kept (a first build: every hash is read here).
    with _read_meanwhile(con, _ALL_METRICS, cache.entries(FINGERPRINTS)) as whole:
        rows = {run: (row_hash, int(n), int(h), notes_hash)
                for run, row_hash, n, h, notes_hash in con.execute(query).fetchall()}
        metrics: dict[str, tuple[int, int]] = {}
        for run, row in rows.items():
            known = cache.lookup(FINGERPRINTS, run, digest(row))
            if known is not None:
                metrics[run] = known
        kept = bool(metrics)
        metrics.update(_metrics_of(con, [run for run in rows if run not in metrics]))
        if kept and (sum(n for n, _ in metrics.values()),
                     sum(h for _, h in metrics.values())) != tuple(map(int, whole())):
            # Metrics changed under an unchanged run, or belong to no invocation: read them all.
            metrics = _metrics_of(con, list(rows))
    for run, row in rows.items():
        cache.store(FINGERPRINTS, run, digest(row), metrics[run])
    return {run: digest(row, metrics[run]) for run, row in rows.items()}


@contextmanager
def _read_meanwhile(con: duckdb.DuckDBPyConnection, query: str, wanted: Any
                    ) -> Iterator[Callable[[], tuple[Any, ...]]]:
    """Within the block, `query`'s one row read in a thread on a cursor of its own (DuckDB lets
    go of the GIL while it works), if `wanted`; gives the function that waits for it. A block
    that ends without asking (or raises) stops the query; the thread never outlives it."""
    found: list[Any] = []
    cursor = con.cursor()

    def read() -> None:
        try:
            found.append(cursor.execute(query).fetchone())
        except Exception as error:  # noqa: BLE001 - raised where it is asked for
            found.append(error)

    thread = threading.Thread(target=read, name="tidemark-read-meanwhile", daemon=True)
    if wanted:
        thread.start()

    def result() -> tuple[Any, ...]:
        thread.join()
        if isinstance(found[0], Exception):
            raise found[0]
        return found[0]

    try:
        yield result
    finally:
        if thread.is_alive():
            cursor.interrupt()
            thread.join()
        cursor.close()


@dataclass(frozen=True)
class PointsRead:
    """The points `read_points` gave, and the cache file that is to hold exactly them."""
    frame: pd.DataFrame
    file: str  # its name: the generator's fingerprint, the time zone and every run's
    loaded: bool  # the file is the one read for this frame, as it is: nothing to write


def read_points(con: duckdb.DuckDBPyConnection, cache: SiteCache,
                fingerprints: dict[str, str], caveats: dict[str, str]) -> PointsRead:
    """`queries.read_points` with each run's caveat (`caveats`: run id → caveat, see
    caveats.caveat_column), computing only the runs whose fingerprint or caveat changed: the
    others' points are the last build's (`keep_points` pickled them as this returned them,
    their caveats in the same block as the other texts: adding the column to the whole frame
    and merging the blocks again took 0.15 s of every build), if it read them in the same time
    zone (DuckDB gives the start times in the session's)."""
    zone = con.execute("SELECT current_setting('TimeZone')").fetchone()[0]
    stored = cache.entries(POINTS).get(POINTS)
    facts: dict[str, Any] = stored[1] if stored and stored[1].get("timezone") == zone else {}
    known: dict[str, str] = facts.get("runs", {})
    known_caveats: dict[str, str] = facts.get("caveats", {})
    kept = {run for run, key in fingerprints.items()
            if known.get(run) == key and known_caveats.get(run) == caveats.get(run, "")}
    last_file = facts["files"][0] if kept and facts.get("files") else None
    last = _last_points(cache, last_file)
    points = (_with_changed_runs(con, last, kept, fingerprints, caveats) if last is not None
              else None)
    if points is None:  # no usable last build: every run's points, as one read gives them
        points = caveat_column(queries.read_points(con), caveats)
    else:  # as one read gives them (as_one_read may have changed a column's type)
        points = frames.blocks_side_by_side(points)
    of_runs = {run: caveats.get(run, "") for run in fingerprints}
    # A name no other content gets: a new version of the code (or DuckDB) must not meet the
    # last version's file, even where that file could not be written again.
    name = digest(site_cache.generator_fingerprint(), zone, sorted(fingerprints.items()),
                  sorted(of_runs.items())) + ".pkl"
    cache.store(POINTS, POINTS, POINTS, {"runs": dict(fingerprints), "timezone": zone,
                                         "caveats": of_runs, "files": [name]})
    return PointsRead(points, name, last is not None and last_file == name)


def keep_points(cache: SiteCache, read: PointsRead) -> str | None:
    """Pickle what `read_points` returned for the next build (a temporary file first, so that
    a build killed meanwhile leaves none or a whole one). Returns why it could not: the site
    is built all the same, and the next build reads every run's points again."""
    if read.loaded:
        return None
    error = pickled_into(cache.file(POINTS, read.file), read.frame)
    if error is not None:
        return f"the points were not kept for the next build ({error.strerror or error})"
    return None


def _last_points(cache: SiteCache, name: str | None) -> pd.DataFrame | None:
    """The last build's points, or None if it kept none that can be read (a damaged or lost
    file costs a full read, never a wrong page)."""
    if not name:
        return None
    try:
        points = unpickled(cache.file(POINTS, name))
    except Exception:  # noqa: BLE001 - any damage: read the DB instead
        return None
    return points if isinstance(points, pd.DataFrame) else None


def _with_changed_runs(con: duckdb.DuckDBPyConnection, last: pd.DataFrame, kept: set[str],
                       fingerprints: dict[str, str], caveats: dict[str, str]
                       ) -> pd.DataFrame | None:
    """The kept runs' points from `last` and the changed runs' from the DB, in POINTS_ORDER:
    runs ordered by (started_at, run_id), each run's points in the order the DB gave them
    (workload, threads, series). None where one read of every run is not sure to be equal: a
    run without a start time (its place is the DB's choice)."""
    changed = sorted(set(fingerprints) - kept)
    old = last["run_id"].isin(kept).to_numpy()
    parts = [last if old.all() else last.iloc[np.flatnonzero(old)]]
    if changed:
        parts.append(caveat_column(queries.read_points(con, changed), caveats))
    points = queries.as_one_read(pd.concat(parts, ignore_index=True) if len(parts) > 1
                          else parts[0].reset_index(drop=True))
    if points["started_at"].isna().any():
        return None
    order = _run_order(points)
    return points if order is None else points.iloc[order].reset_index(drop=True)


def _run_order(points: pd.DataFrame) -> np.ndarray | None:
    """Row positions that put the runs in (start, run id) order, keeping each run's rows in
    their order; None if they are in that order already (a new run is usually the newest)."""
    runs = points["run_id"].to_numpy()
    bounds = np.flatnonzero(runs[1:] != runs[:-1]) + 1
    firsts = np.concatenate(([0], bounds))
    ends = np.concatenate((bounds, [len(runs)]))
    keys = list(zip(points["started_at"].iloc[firsts], runs[firsts]))
    ranked = sorted(range(len(keys)), key=keys.__getitem__)
    if ranked == list(range(len(keys))):
        return None
    return np.concatenate([np.arange(firsts[i], ends[i]) for i in ranked])
