"""What a site build reads per run, reused from the previous build into the same out folder
(side effects: the DB read-only, out/cache).

Each run gets a fingerprint from the DB itself: a hash of its `runs` row (label, notes, status,
machine state…), of the notes people wrote about it, of every column of its invocations and of
every row of their metrics. Points (one row per run × series, `queries.create_points_table`)
of runs whose fingerprint is unchanged come from the files earlier builds wrote; only the other
runs' are computed (and written to a file of their own), and DuckDB puts them together and
orders them exactly as one read of every run would (same SQL types, same ORDER BY), so the
pages cannot tell a reused point from a fresh one.

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
from .downloads import sql_text
from .site_cache import SiteCache, digest

FINGERPRINTS = "run-fingerprints"
POINTS = "points"
MAX_FILES = 8  # files of points kept between builds before they are put into one again

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
    where: dict[str, str] = facts.get("where", {})
    present = {name for name in set(where.values()) if cache.file(POINTS, name).is_file()}
    known = facts.get("runs", {})
    kept = {run: where[run] for run, key in fingerprints.items()
            if known.get(run) == key and where.get(run) in present}
    changed = sorted(set(fingerprints) - set(kept))
    try:
        points, where = _points_read(con, cache, kept, changed, fingerprints)
    except duckdb.Error:  # a damaged file of the last build: read every run's points again
        points, where = _points_read(con, cache, {}, sorted(fingerprints), fingerprints)
    cache.store(POINTS, POINTS, POINTS, {"runs": dict(fingerprints), "where": where,
                                         "files": sorted(set(where.values()))})
    return queries.decode_json(queries.share_equal_texts(points))


def _points_read(con: duckdb.DuckDBPyConnection, cache: SiteCache, kept: dict[str, str],
                 changed: list[str], fingerprints: dict[str, str]) -> tuple[pd.DataFrame, dict]:
    """Every run's points, oldest first, and run → the file of the cache that holds them: the
    changed runs' points written to a file of their own, the kept ones read from theirs. Every
    MAX_FILES files (or with nothing kept) all points go into one file again, so that a run
    changed build after build (a running run) leaves no trail of files."""
    if changed or not kept:
        queries.create_points_table(con, "tm_new_points", changed if kept else None)
    parts, params = _kept_parts(cache, kept)
    parts += ["SELECT * FROM tm_new_points"] if changed or not kept else []
    source, written = f"({' UNION ALL '.join(parts)})", "tm_new_points"
    if not kept:  # every run read: one table, written whole
        source = written = "tm_new_points"
    elif changed and len(set(kept.values())) >= MAX_FILES:  # put into one file again
        con.execute(f"CREATE OR REPLACE TEMP TABLE tm_points AS {source[1:-1]}", params)
        source, written, params, kept = "tm_points", "tm_points", [], {}
    points = con.execute(f"SELECT * FROM {source} ORDER BY {queries.POINTS_ORDER}",
                         params).df()
    if changed:
        runs = sorted(set(fingerprints) - set(kept))
        name = f"{digest(written, [(run, fingerprints[run]) for run in runs])}.parquet"
        target = cache.file(POINTS, name)
        target.parent.mkdir(parents=True, exist_ok=True)
        con.execute(f"COPY {written} TO {sql_text(str(target))} (FORMAT parquet)")
        kept = {**kept, **{run: name for run in runs}}
    return points, kept


def _kept_parts(cache: SiteCache, kept: dict[str, str]) -> tuple[list[str], list[Any]]:
    """One SELECT per file of the cache: the points of the kept runs it holds (a file may also
    hold older points of runs changed since, which are not read)."""
    by_file: dict[str, list[str]] = {}
    for run, name in sorted(kept.items()):
        by_file.setdefault(name, []).append(run)
    parts, params = [], []
    for name, runs in sorted(by_file.items()):
        parts.append("SELECT * FROM read_parquet(?) WHERE run_id IN (SELECT unnest(?::VARCHAR[]))")
        params += [str(cache.file(POINTS, name)), runs]
    return parts, params
