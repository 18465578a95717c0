"""A run's invocation table: each invocation with every metric it measured as a column
(read-only on the DB). The one definition of its columns, for the site's downloads
(reports/build/downloads.py: runs/<run>.invocations.csv beside each run page) and for
`tidemark export RUN --format csv|parquet` (`write_run_table`).

The columns: RUN_TABLE_COLUMNS of the invocation (its command, log path and conditions, JSON
and large, are in the published invocations' Parquet files), then one per metric name, named as
the metric, or `metric_<name>` where that name is taken by an invocation column or one the
site's CSV files add (ADDED_COLUMNS): json_map imports name their metrics freely.
"""
from __future__ import annotations

from pathlib import Path

import duckdb

RUN_TABLE_COLUMNS = ("seq", "workload", "benchmark", "phase", "repetition", "threads",
                     "params", "cache_state", "series_key", "status", "error", "exit_code",
                     "wall_s", "user_s", "sys_s", "max_rss_kb", "started_at", "ended_at")
# Columns the site's CSV files add beside these (reports/build/downloads.py).
ADDED_COLUMNS = ("part", "run_started_at", "engine_version", "label", "run_page")
# COPY's options per format of `write_run_table`.
TABLE_FORMATS = {"csv": "FORMAT csv, HEADER", "parquet": "FORMAT parquet, COMPRESSION zstd"}


def sql_text(value: str) -> str:
    """A SQL string literal (COPY takes its file name as a literal, not a parameter)."""
    return "'" + value.replace("'", "''") + "'"


def metric_column(name: str, taken: set[str]) -> str:
    """A metric's column, quoted: its name, or `metric_<name>` where a column is named so."""
    column = name.replace('"', "")
    return f'"metric_{column}"' if column.lower() in taken else f'"{column}"'


def metric_columns(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> dict[str, str]:
    """Metric name → its column: one per name any of `run_ids`' invocations measured."""
    taken = {c.lower() for (c,) in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'invocations'")
        .fetchall()} | set(ADDED_COLUMNS)
    return {n: metric_column(n, taken) for (n,) in con.execute(
        """SELECT DISTINCT name FROM metrics WHERE invocation_id IN
           (SELECT invocation_id FROM invocations WHERE run_id IN (SELECT unnest(?::VARCHAR[])))
           ORDER BY name""", [run_ids]).fetchall()}


def invocations_wide(con: duckdb.DuckDBPyConnection, columns: dict[str, str],
                     runs: list[str]) -> str:
    """tm_wide (a temporary table): the invocations of `runs` with every metric they have, one
    column per name (`columns`); returns those columns for a SELECT list."""
    pivot = "".join(f", max(value) FILTER (WHERE name = {sql_text(n)}) AS {c}"
                    for n, c in columns.items())
    con.execute("CREATE OR REPLACE TEMP TABLE tm_wide_runs AS SELECT unnest(?::VARCHAR[]) AS "
                "run_id", [runs])
    con.execute(f"""CREATE OR REPLACE TEMP TABLE tm_wide AS
        SELECT i.*, w.* EXCLUDE (invocation_id) FROM invocations i JOIN tm_wide_runs USING (run_id)
        LEFT JOIN (SELECT m.invocation_id{pivot} FROM metrics m
                   JOIN invocations USING (invocation_id) JOIN tm_wide_runs USING (run_id)
                   GROUP BY m.invocation_id) w USING (invocation_id)""")
    return "".join(f", w.{c}" for c in columns.values())


def run_table_select(metrics: str) -> str:
    """The SELECT list of the table over tm_wide `w` (`metrics`: invocations_wide's)."""
    return ", ".join(f"w.{c}" for c in RUN_TABLE_COLUMNS) + metrics


def write_run_table(con: duckdb.DuckDBPyConnection, run_id: str, path: Path, fmt: str) -> int:
    """One run's table as `fmt` (TABLE_FORMATS) at `path`, in invocation order; returns its
    rows."""
    metrics = invocations_wide(con, metric_columns(con, [run_id]), [run_id])
    query = f"SELECT {run_table_select(metrics)} FROM tm_wide w ORDER BY w.seq"
    return con.execute(f"COPY ({query}) TO {sql_text(str(path))} ({TABLE_FORMATS[fmt]})"
                       ).fetchone()[0]
