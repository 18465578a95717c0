"""What `tidemark run --resume` reads of a stored run (read-only): its record, its sweep and
what it already measured (orchestrator/plan/resume.py decides what is left)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import duckdb

from ..errors import SelectorError
from ..plan.resume import StoredInvocation
from .reads import has_column, rejected_attempt_sql


@dataclass(frozen=True)
class StoredRun:
    run_id: str
    status: str
    source: str
    overrides: list[str]
    build_id: str
    machine_fingerprint: str
    sweep: dict[str, Any] | None
    in_ab: bool
    max_seq: int


def stored_run(con: duckdb.DuckDBPyConnection, run_id: str) -> StoredRun:
    sweep = "sweep" if has_column(con, "runs", "sweep") else "NULL"
    row = con.execute(
        f"SELECT run_id, status, coalesce(source, 'run'), overrides, build_id, "
        f"machine_fingerprint, {sweep}, "
        f"EXISTS (SELECT 1 FROM ab_pairs WHERE run_a = runs.run_id OR run_b = runs.run_id), "
        f"(SELECT coalesce(max(seq), 0) FROM invocations WHERE run_id = runs.run_id) "
        f"FROM runs WHERE run_id = ?", [run_id]).fetchone()
    if row is None:
        raise SelectorError(f"no run {run_id!r} to resume; `tidemark db check` lists the runs' "
                            f"count, the site's Runs page their ids")
    return StoredRun(row[0], row[1], row[2], json.loads(row[3]) if row[3] else [], row[4] or "",
                     row[5] or "", json.loads(row[6]) if row[6] else None, bool(row[7]),
                     int(row[8]))


def stored_invocations(con: duckdb.DuckDBPyConnection, run_id: str) -> list[StoredInvocation]:
    rows = con.execute(
        f"SELECT phase, workload, benchmark, repetition, threads, params, cache_state, "
        f"status = 'ok' AND NOT {rejected_attempt_sql()}, "
        f"TRY_CAST(json_extract(conditions, '$.process.step_repetition') AS INTEGER) "
        f"FROM invocations WHERE run_id = ?", [run_id]).fetchall()
    return [StoredInvocation(p, w, b, int(r or 0), int(t or 1), json.loads(par) if par else {},
                             c or "", bool(ok), step_rep)
            for p, w, b, r, t, par, c, ok, step_rep in rows]


def sweep_runs(con: duckdb.DuckDBPyConnection, sweep_id: str) -> dict[int, tuple[str, str]]:
    """{job number: (run id, status)} of the runs of one `tidemark run -m` sweep."""
    rows = con.execute("SELECT json_extract(sweep, '$.job')::INTEGER, run_id, status FROM runs "
                       "WHERE json_extract_string(sweep, '$.id') = ? ORDER BY started_at",
                       [sweep_id]).fetchall()
    return {int(job): (run_id, status) for job, run_id, status in rows}
