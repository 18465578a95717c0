"""The history published with the site (side effects, read-only on the DB): every table as
Parquet with a manifest naming the schema version, every series' raw repetitions and every
run's invocations as CSV. Written by DuckDB's COPY from the checked snapshot the site is built
from, so the files agree with the pages; only orchestrator/store writes the results DB.

Layout under the built site:
    data/<table>.parquet, data/manifest.json      the whole history, one file per table
    data/series/<series>.csv                      one row per repetition × metric of a series
    runs/<run>.invocations.csv                    beside the run page: its invocation table
"""
from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

import duckdb
import pandas as pd

from orchestrator.store import connect
from orchestrator.store.reads import has_table
from orchestrator.store.schema import LATEST_VERSION

from .format import slug

DATA = "data"
SERIES = "series"
INVOCATIONS_SUFFIX = ".invocations.csv"
# Invocation columns of the per-run CSV; the command, log path and conditions (JSON, large)
# are in invocations.parquet. Every metric the invocation has follows, one column each.
_INVOCATION_CSV_COLUMNS = ("seq", "workload", "benchmark", "phase", "repetition", "threads",
                           "params", "cache_state", "series_key", "status", "error", "exit_code",
                           "wall_s", "user_s", "sys_s", "max_rss_kb", "started_at", "ended_at")
# Columns the CSV files add (a metric of the same name gets a prefix).
_CSV_NAMES = ("part", "run_started_at", "engine_version", "label", "run_page")


def sql_text(value: str) -> str:
    """A SQL string literal (COPY takes its file name as a literal, not a parameter)."""
    return "'" + value.replace("'", "''") + "'"


def _schema_version(con: duckdb.DuckDBPyConnection) -> int | None:
    if not has_table(con, "schema_version"):
        return None
    return con.execute("SELECT max(version) FROM schema_version").fetchone()[0]


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[dict[str, str]]:
    return [{"name": name, "type": kind} for name, kind in con.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? "
        "ORDER BY ordinal_position", [table]).fetchall()]


def export_parquet(con: duckdb.DuckDBPyConnection, dest: Path) -> dict[str, Any]:
    """dest/<table>.parquet for every table and dest/manifest.json; returns the manifest."""
    dest.mkdir(parents=True, exist_ok=True)
    tables = [t for (t,) in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE NOT temporary ORDER BY table_name").fetchall()]
    entries = []
    for table in tables:
        path = dest / f"{table}.parquet"
        con.execute(f'COPY "{table}" TO {sql_text(str(path))} (FORMAT parquet, COMPRESSION zstd)')
        rows = con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
        entries.append({"name": table, "file": path.name, "rows": rows,
                        "bytes": path.stat().st_size, "columns": _columns(con, table)})
    manifest = {"schema_version": _schema_version(con), "tidemark_schema_version": LATEST_VERSION,
                "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "tables": entries,
                # Where each run's page is (the SQL page links result rows to it).
                "run_pages": {run_id: f"runs/{slug(run_id)}.html" for (run_id,) in
                              con.execute("SELECT run_id FROM runs").fetchall()}}
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return manifest


def _partitioned(con: duckdb.DuckDBPyConnection, query: str, folder: Path,
                 names: Iterable[tuple[str, Path]]) -> None:
    """COPY `query` (with a `part` column) as one CSV per part in one pass, then move each
    part's file to its name: (part, path) pairs."""
    staging = folder / ".parts"
    shutil.rmtree(staging, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    con.execute(f"COPY ({query}) TO {sql_text(str(staging))} "
                f"(FORMAT csv, HEADER, PARTITION_BY (part), OVERWRITE_OR_IGNORE)")
    for part, path in names:
        written = sorted((staging / f"part={part}").glob("*.csv"))
        if written:  # a run without invocations has no part
            path.parent.mkdir(parents=True, exist_ok=True)
            written[0].replace(path)
    shutil.rmtree(staging, ignore_errors=True)


def _register_slugs(con: duckdb.DuckDBPyConnection, name: str, column: str,
                    values: Iterable[str]) -> dict[str, str]:
    """A table `name`(column, part): value → its slug, the file name the site gives it (safe
    in a folder name, as DuckDB writes one folder per part)."""
    slugs = {value: slug(value) for value in values}
    con.register(name, pd.DataFrame({column: list(slugs), "part": list(slugs.values())},
                                    dtype="object"))
    return slugs


def _invocations_wide(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> str:
    """tm_wide: the invocations of `run_ids` with every metric they have, one column per name;
    returns those columns for a SELECT list."""
    con.execute("CREATE OR REPLACE TEMP TABLE tm_runs AS SELECT unnest(?::VARCHAR[]) AS run_id",
                [run_ids])
    con.execute("""CREATE OR REPLACE TEMP TABLE tm_metrics AS
                   SELECT m.invocation_id, m.name, m.value FROM metrics m
                   JOIN invocations i USING (invocation_id) JOIN tm_runs USING (run_id)""")
    taken = {c.lower() for (c,) in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'invocations'")
        .fetchall()} | set(_CSV_NAMES)
    columns = {n: metric_column(n, taken) for (n,) in con.execute(
        "SELECT DISTINCT name FROM tm_metrics ORDER BY name").fetchall()}
    pivot = "".join(f", max(value) FILTER (WHERE name = {sql_text(n)}) AS {c}"
                    for n, c in columns.items())
    con.execute(f"""CREATE OR REPLACE TEMP TABLE tm_wide AS
        SELECT i.*, w.* EXCLUDE (invocation_id) FROM invocations i JOIN tm_runs USING (run_id)
        LEFT JOIN (SELECT invocation_id{pivot} FROM tm_metrics GROUP BY invocation_id)
             w USING (invocation_id)""")
    return "".join(f", w.{c}" for c in columns.values())


def metric_column(name: str, taken: set[str]) -> str:
    """A metric's column in the CSV, quoted: its name, or `metric_<name>` where a metric is
    named like a column already there (json_map imports name their metrics freely)."""
    column = name.replace('"', "")
    return f'"metric_{column}"' if column.lower() in taken else f'"{column}"'


def export_invocation_csv(con: duckdb.DuckDBPyConnection, runs_dir: Path, run_ids: list[str],
                          metrics: str) -> list[str]:
    """runs_dir/<run>.invocations.csv for each run: every invocation with every metric it has
    (`metrics`: tm_wide's metric columns), in the order of its run page's table; returns the
    runs written."""
    slugs = _register_slugs(con, "tm_invocation_parts", "run_id", run_ids)
    columns = ", ".join(f"w.{c}" for c in _INVOCATION_CSV_COLUMNS)
    query = f"""SELECT p.part, {columns}{metrics}
                FROM tm_wide w JOIN tm_invocation_parts p USING (run_id)
                ORDER BY p.part, w.seq"""
    _partitioned(con, query, runs_dir,
                 [(part, runs_dir / f"{part}{INVOCATIONS_SUFFIX}") for part in slugs.values()])
    return [r for r, part in slugs.items() if (runs_dir / f"{part}{INVOCATIONS_SUFFIX}").exists()]


def export_series_csv(con: duckdb.DuckDBPyConnection, dest: Path,
                      metrics: str) -> dict[str, str]:
    """dest/<series>.csv: every measured (and callgrind) repetition of each series in the runs
    of tm_wide, one row each with every metric, linked to its row on its run page; a failure is
    a row without metrics. Returns series key → file name."""
    keys = [k for (k,) in con.execute("SELECT DISTINCT series_key FROM tm_wide WHERE phase IN "
                                      "('measured', 'callgrind')").fetchall()]
    slugs = _register_slugs(con, "tm_series_parts", "series_key", keys)
    _register_slugs(con, "tm_run_pages", "run_id",
                    [r for (r,) in con.execute("SELECT run_id FROM tm_runs").fetchall()])
    query = f"""
        SELECT s.part, w.run_id, r.started_at AS run_started_at, r.engine_version, r.label,
               w.seq, w.phase, w.repetition, w.status{metrics},
               'runs/' || p.part || '.html#inv-' || lpad(w.seq::VARCHAR, 4, '0') AS run_page
        FROM tm_wide w JOIN tm_series_parts s USING (series_key) JOIN runs r USING (run_id)
        JOIN tm_run_pages p USING (run_id)
        WHERE w.phase IN ('measured', 'callgrind')
        ORDER BY s.part, r.started_at, w.run_id, w.seq"""
    _partitioned(con, query, dest, [(part, dest / f"{part}.csv") for part in slugs.values()])
    return {key: f"{part}.csv" for key, part in slugs.items()}


def export_history(db: Path, site_dir: Path, csv_runs: list[str]) -> dict[str, Any]:
    """Everything above into site_dir (a folder merged into the built site), the CSV files for
    `csv_runs` (the newest runs: their pages show every invocation in detail); returns the
    Parquet manifest with what the CSV files cover (for the Downloads page)."""
    con = connect(db, read_only=True)
    try:
        manifest = export_parquet(con, site_dir / DATA)
        metrics = _invocations_wide(con, csv_runs)
        manifest["run_files"] = export_invocation_csv(con, site_dir / "runs", csv_runs, metrics)
        manifest["series_files"] = export_series_csv(con, site_dir / DATA / SERIES, metrics)
    finally:
        con.close()
    return manifest
