"""The hashes of whole tables that a site build's run fingerprints start from (read_cache.py;
side effects: none, the DB read-only). A module of its own, light to import (DuckDB alone): the
CLI computes them on the DB's copy in the thread that took the copy, while the main thread
imports the site's modules (0.6 s on one core, the other idle), instead of after that.

Per run: a hash of its `runs` row, the count and summed hash of its invocations' rows and of
the notes people wrote about it; and the count and summed hash of the whole metrics table,
which the per-run metrics hashes must add up to (read_cache.run_fingerprints)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb

from orchestrator.store.connection import has_table

_RUN_ROWS = """
    SELECT r.run_id, hash(r) AS row_hash, coalesce(i.n, 0) AS n, coalesce(i.h, 0) AS h,
           {notes} AS notes_hash
    FROM runs r LEFT JOIN (SELECT run_id, count(*) AS n, sum(hash(i)) AS h
                           FROM invocations i GROUP BY run_id) i USING (run_id)
    {notes_join}"""
# The notes people wrote about a run (`tidemark note`, schema v8) are in a table of their own.
_NOTES_JOIN = """LEFT JOIN (SELECT run_id, count(*) AS n, sum(hash(t)) AS h FROM run_notes t
                            GROUP BY run_id) t USING (run_id)"""
_ALL_METRICS = "SELECT count(*), coalesce(sum(hash(m)), 0) FROM metrics m"


@dataclass(frozen=True)
class TableHashes:
    runs: dict[str, tuple[Any, int, int, Any]]  # run id → (row hash, invocations, their hash, notes)
    metrics: tuple[int, int]  # rows of the metrics table and the sum of their hashes


def table_hashes(con: duckdb.DuckDBPyConnection) -> TableHashes:
    """Every row and column of runs, invocations, metrics and run_notes read once (DuckDB checks
    their blocks' checksums as it reads them: read_cache.READ_IN_FULL)."""
    notes = has_table(con, "run_notes")
    query = _RUN_ROWS.format(notes="(coalesce(t.n, 0), coalesce(t.h, 0))" if notes else "NULL",
                             notes_join=_NOTES_JOIN if notes else "")
    runs = {run: (row_hash, int(n), int(h), notes_hash)
            for run, row_hash, n, h, notes_hash in con.execute(query).fetchall()}
    count, total = con.execute(_ALL_METRICS).fetchone()
    return TableHashes(runs, (int(count), int(total)))
