"""Merging a run bundle's database into the history: the store's side of `tidemark ingest`.

The bundle's database was written by the same Store, so its tables are the history's tables:
every row is copied as it is, in one transaction with the bundle's own row in `bundles` (all or
nothing). Only log paths change, from where the job wrote its logs to where `ingest` put them.
Machines, builds and series are shared between runs and keyed: a row the history already has is
kept. A build the history knows under the same id but with another binary sha256 (built again on
another node: the build key matched, the bytes did not) is merged and named in the bundle's
notes, so the fleet page can say the two nodes did not run the same binary.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb

from ..errors import BundleError

SHARED_KEYS = {"machines": "fingerprint", "builds": "build_id", "series": "series_key"}
NOT_MERGED = ("schema_version", "bundles")
SOURCE = "bundle"  # the attached bundle database's name in SQL


@dataclass(frozen=True)
class BundleRow:
    """What `bundles` records about one bundle, and where its logs move."""

    bundle_id: str
    source: str
    host: str
    created_at: str | None
    schema_version: int
    manifest: dict[str, Any]
    logs_from: str  # the log path prefix the job wrote
    logs_to: str  # the prefix the history keeps them under
    clock_skew_s: float | None = None  # the node's clock minus ingest's (history/clock.py)


def _columns(con: duckdb.DuckDBPyConnection, database: str, table: str) -> list[str]:
    rows = con.execute("SELECT column_name FROM duckdb_columns() WHERE database_name = ? AND "
                       "schema_name = 'main' AND table_name = ? ORDER BY column_index",
                       [database, table]).fetchall()
    return [name for (name,) in rows]


def _tables(con: duckdb.DuckDBPyConnection, database: str) -> list[str]:
    rows = con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND "
                       "schema_name = 'main' ORDER BY table_name", [database]).fetchall()
    return [name for (name,) in rows if name not in NOT_MERGED]


def already_merged(con: duckdb.DuckDBPyConnection, bundle_id: str) -> list[str] | None:
    """The run ids a bundle brought, when it was merged before; None otherwise."""
    row = con.execute("SELECT run_ids FROM bundles WHERE bundle_id = ?", [bundle_id]).fetchone()
    return json.loads(row[0]) if row else None


def _check_runs(con: duckdb.DuckDBPyConnection, bundle: BundleRow, run_ids: list[str]) -> None:
    """The bundle holds the runs its manifest names, none of them already in the history."""
    found = sorted(r for (r,) in con.execute(f"SELECT run_id FROM {SOURCE}.runs").fetchall())
    if found != sorted(bundle.manifest["run_ids"]):
        raise BundleError(f"bundle {bundle.source}: its database holds runs {found}, its manifest "
                          f"names {sorted(bundle.manifest['run_ids'])}; nothing was written from it")
    present = con.execute(f"SELECT run_id FROM runs WHERE run_id IN (SELECT run_id FROM "
                          f"{SOURCE}.runs)").fetchall()
    if present:
        raise BundleError(f"bundle {bundle.source}: run {present[0][0]} is already in the history "
                          f"from another source (a direct run or another bundle); nothing was "
                          f"written from it")


def _binary_mismatches(con: duckdb.DuckDBPyConnection) -> list[str]:
    rows = con.execute(f"SELECT b.build_id, h.binary_sha256, b.binary_sha256 FROM {SOURCE}.builds b "
                       f"JOIN builds h USING (build_id) WHERE h.binary_sha256 IS DISTINCT FROM "
                       f"b.binary_sha256").fetchall()
    return [f"build {build_id}: binary sha256 {theirs[:12]} differs from the history's "
            f"{ours[:12]} (built again elsewhere; not the same binary)"
            for build_id, ours, theirs in rows]


def _history(con: duckdb.DuckDBPyConnection) -> str:
    return con.execute("SELECT current_database()").fetchone()[0]


def _copy_table(con: duckdb.DuckDBPyConnection, table: str, bundle: BundleRow) -> None:
    theirs = set(_columns(con, SOURCE, table))
    selected = [c for c in _columns(con, _history(con), table) if c in theirs]
    values = ", ".join(
        "CASE WHEN starts_with(log_path, $from) THEN $to || substr(log_path, length($from) + 1) "
        "ELSE log_path END" if c == "log_path" else c for c in selected)
    conflict = " ON CONFLICT DO NOTHING" if table in SHARED_KEYS else ""
    params = {"from": bundle.logs_from, "to": bundle.logs_to} if "log_path" in selected else {}
    con.execute(f"INSERT INTO {table} ({', '.join(selected)}) SELECT {values} FROM "
                f"{SOURCE}.{table}{conflict}", params)


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    """Roll back after a failed write; a COMMIT that failed (a full disk) has ended the
    transaction already, and saying so would hide why it failed."""
    try:
        con.execute("ROLLBACK")
    except duckdb.TransactionException:
        pass


def _correct_clock(con: duckdb.DuckDBPyConnection, run_ids: list[str], skew_s: float) -> str:
    """The merged runs' times moved onto the ingest side's clock, the skew kept with each run
    (the node's own times are the stored ones plus `clock_skew_s`): trends and `latest` order
    runs by these times, and a node hours off would otherwise misplace its runs."""
    shift = int(round(skew_s * 1e6))
    con.execute("UPDATE runs SET started_at = started_at - to_microseconds($shift), "
                "finished_at = finished_at - to_microseconds($shift), clock_skew_s = $skew "
                "WHERE run_id IN (SELECT unnest($runs))",
                {"shift": shift, "skew": skew_s, "runs": run_ids})
    con.execute("UPDATE invocations SET started_at = started_at - to_microseconds($shift), "
                "ended_at = ended_at - to_microseconds($shift) WHERE run_id IN "
                "(SELECT unnest($runs))", {"shift": shift, "runs": run_ids})
    return f"clock: the node's clock was {skew_s:+.0f} s off; run times corrected by it"


def merge_bundle(con: duckdb.DuckDBPyConnection, source_db: Path, bundle: BundleRow) -> list[str]:
    """Copy the (checked, migrated) bundle database's rows into the history, in one transaction;
    the run ids merged."""
    con.execute(f"ATTACH '{source_db}' AS {SOURCE} (READ_ONLY)")
    try:
        run_ids = list(bundle.manifest["run_ids"])
        _check_runs(con, bundle, run_ids)
        notes = _binary_mismatches(con)
        con.execute("BEGIN")
        try:
            theirs = set(_tables(con, SOURCE))
            for table in _tables(con, _history(con)):
                if table in theirs:
                    _copy_table(con, table, bundle)
            if bundle.clock_skew_s is not None:
                notes.append(_correct_clock(con, run_ids, bundle.clock_skew_s))
            con.execute("INSERT INTO bundles VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [bundle.bundle_id, json.dumps(run_ids), bundle.source, bundle.host,
                         bundle.created_at, datetime.now(timezone.utc), bundle.schema_version,
                         json.dumps(bundle.manifest, sort_keys=True), json.dumps(notes)])
            con.execute("COMMIT")
        except BaseException:
            rollback(con)
            raise
    finally:
        con.execute(f"DETACH {SOURCE}")
    return run_ids
