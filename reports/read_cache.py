"""What a site build reads per run, reused from the previous build into the same out folder
(side effects: the DB read-only, out/cache).

Each run gets a fingerprint from the DB itself: a hash of its `runs` row (label, notes, status,
machine state…), of the notes people wrote about it, of every column of its invocations and of
every row of their metrics. Points
(one row per run × series, `queries.create_points_table`) of runs whose fingerprint is
unchanged come from the last build's file; only the other runs' are computed, and DuckDB puts
both together and orders them exactly as one read of every run would (same SQL types, same
ORDER BY), so the pages cannot tell a reused point from a fresh one.

Hashing every metric row joined to its run would cost most of what it saves on a long
history, so a run's metrics hash is reused while its invocations are unchanged (the store writes
a run's metrics with its invocations and deletes them with it), and checked: the hashes of all
runs must add up to the hash of the whole metrics table, else every run's is read again.
"""
from __future__ import annotations

from typing import Any

import duckdb
import pandas as pd

from orchestrator.store.reads import has_table

from . import queries
from .site_cache import SiteCache, digest

FINGERPRINTS = "run-fingerprints"
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
    rows = {run: (row_hash, int(n), int(h), notes_hash)
            for run, row_hash, n, h, notes_hash in con.execute(query).fetchall()}
    metrics: dict[str, tuple[int, int]] = {}
    for run, row in rows.items():
        known = cache.lookup(FINGERPRINTS, run, digest(row))
        if known is not None:
            metrics[run] = known
    metrics.update(_metrics_of(con, [run for run in rows if run not in metrics]))
    count, total = con.execute(_ALL_METRICS).fetchone()
    if (sum(n for n, _ in metrics.values()), sum(h for _, h in metrics.values())) != \
            (int(count), int(total)):
        # Metrics changed under an unchanged run, or belong to no invocation: read them all.
        metrics = _metrics_of(con, list(rows))
    for run, row in rows.items():
        cache.store(FINGERPRINTS, run, digest(row), metrics[run])
    return {run: digest(row, metrics[run]) for run, row in rows.items()}


def read_points(con: duckdb.DuckDBPyConnection, cache: SiteCache,
                fingerprints: dict[str, str]) -> pd.DataFrame:
    """`queries.read_points`, computing only the runs whose fingerprint changed."""
    stored = cache.entries(POINTS).get(POINTS)
    facts: dict[str, Any] = stored[1] if stored else {}
    path = cache.file(POINTS, facts["files"][0]) if facts.get("files") else None
    known = facts.get("runs", {}) if path is not None and path.is_file() else {}
    kept = sorted(run for run, key in fingerprints.items() if known.get(run) == key)
    try:
        _points_table(con, path, kept, sorted(set(fingerprints) - set(kept)))
    except duckdb.Error:  # a damaged file of the last build: read every run's points again
        kept = []
        _points_table(con, None, [], sorted(fingerprints))
    points = con.execute(f"SELECT * FROM tm_points ORDER BY {queries.POINTS_ORDER}").df()
    if len(kept) != len(fingerprints) or set(known) != set(fingerprints):
        name = f"{digest(sorted(fingerprints.items()))}.parquet"
        target = cache.file(POINTS, name)
        target.parent.mkdir(parents=True, exist_ok=True)
        con.execute(f"COPY tm_points TO '{_sql_path(target)}' (FORMAT parquet)")
        facts = {"runs": dict(fingerprints), "files": [name]}
    cache.store(POINTS, POINTS, POINTS, facts)
    return queries.decode_json(points)


def _points_table(con: duckdb.DuckDBPyConnection, path: Any, kept: list[str],
                  changed: list[str]) -> None:
    """Temporary table tm_points: the kept runs' points from `path`, the changed runs' read."""
    parts, params = [], []
    if kept:
        parts.append("SELECT * FROM read_parquet(?) WHERE run_id IN (SELECT unnest(?::VARCHAR[]))")
        params += [str(path), kept]
    if changed or not kept:
        queries.create_points_table(con, "tm_new_points", changed if kept else None)
        parts.append("SELECT * FROM tm_new_points")
    con.execute(f"CREATE OR REPLACE TEMP TABLE tm_points AS {' UNION ALL '.join(parts)}", params)


def _sql_path(path: Any) -> str:
    """A file name as a SQL string literal (COPY takes no parameter for it)."""
    return str(path).replace("'", "''")
