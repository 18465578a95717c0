"""Read the results DB (read-only) into DataFrames: a few aggregated queries, not one per page.

Statistics use only measured invocations that ended ok; everything else is counted and shown,
never averaged in.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import duckdb
import numpy as np
import pandas as pd

from orchestrator.errors import UserError
from orchestrator.store import connect
from orchestrator.store.reads import has_column, has_table, rejected_attempt_sql

# The headline throughput of one invocation (an aggregate over its metrics rows): db_bench's
# ops/s, else Google Benchmark's items/s (whose rows store both, so never count both).
HEADLINE_OPS = """coalesce(max(value) FILTER (WHERE name = 'ops_per_sec'),
                    max(value) FILTER (WHERE name = 'items_per_second'))"""


def _filtered(name: str) -> str:
    return f"max(value) FILTER (WHERE name = '{name}')"


# Column → (its value from an invocation's metrics rows, the metric names it reads).
_PIVOTED = {
    "ops": (HEADLINE_OPS, ("ops_per_sec", "items_per_second")),
    "p50": (_filtered("p50_us"), ("p50_us",)),
    "p95": (_filtered("p95_us"), ("p95_us",)),
    "p99": (_filtered("p99_us"), ("p99_us",)),
    "p999": (_filtered("p99_9_us"), ("p99_9_us",)),
    "pmax": (_filtered("max_us"), ("max_us",)),
    "mb": (f"coalesce({_filtered('mb_per_sec')}, {_filtered('bytes_per_second')} / 1e6)",
           ("mb_per_sec", "bytes_per_second")),
    "residency": (_filtered("page_cache_residency_pct"), ("page_cache_residency_pct",)),
    # Software counters of `perf stat` around the process (runners/process.py).
    "page_faults": (_filtered("perf_page_faults"), ("perf_page_faults",)),
    "context_switches": (_filtered("perf_context_switches"), ("perf_context_switches",)),
    "migrations": (_filtered("perf_cpu_migrations"), ("perf_cpu_migrations",)),
    "cpu_clock_ms": (_filtered("perf_cpu_clock"), ("perf_cpu_clock",)),
}


def _pivot(columns: tuple[str, ...]) -> str:
    """SELECT list of `columns` (of _PIVOTED), one row per invocation_id."""
    return "".join(f", {_PIVOTED[c][0]} AS {c}" for c in columns)


def _pivot_names(columns: tuple[str, ...]) -> str:
    """The metric names `columns` read, as a SQL list: rows of other metrics need no pivot."""
    return ", ".join(f"'{name}'" for c in columns for name in _PIVOTED[c][1])


# One row per invocation with the metrics the pages show, pivoted in DuckDB.
_METRICS_WIDE = f"""
    SELECT invocation_id{_pivot(tuple(_PIVOTED))}
    FROM metrics {{where}} GROUP BY invocation_id"""
# The invocations of the runs a read is about (its parameter: their ids), for the pivot above.
_OF_RUNS = """WHERE invocation_id IN (SELECT invocation_id FROM invocations
                                    WHERE run_id IN (SELECT unnest(?::VARCHAR[])))"""

_RUNS = """
    WITH counts AS (
        SELECT run_id, count(*) AS n_invocations,
               count(*) FILTER (WHERE status = 'ok') AS n_ok,
               count(*) FILTER (WHERE status <> 'ok') AS n_failed,
               list(DISTINCT workload ORDER BY workload)
                   FILTER (WHERE phase = 'measured') AS workloads
        FROM invocations GROUP BY run_id)
    SELECT r.run_id, r.started_at, r.finished_at, r.status, r.engine, r.engine_version,
           r.build_variant, r.build_id, r.build_cached, r.machine_fingerprint, r.suite, r.label,
           r.cache_state, r.config::VARCHAR AS config, r.overrides::VARCHAR AS overrides,
           r.tidemark_sha, r.machine_state::VARCHAR AS machine_state, r.planned_invocations,
           r.notes::VARCHAR AS notes, coalesce(r.verified, true) AS verified, {resumable}
           coalesce(r.runner, 'host') AS runner,
           {imported}
           m.hostname, m.cpu_model, m.logical_cpus, m.ram_gib, m.facts::VARCHAR AS machine_facts,
           b.source_kind, b.source_package, b.source_version, b.compiler, b.compiler_version,
           b.cmake_version, b.cmake_flags::VARCHAR AS cmake_flags, b.build_seconds,
           b.binary_sha256, json_extract(b.provenance, '$.images')::VARCHAR AS build_images,
           b.commit_sha, b.commit_subject, b.commit_author, b.commit_date, b.commit_dirty,
           coalesce(c.n_invocations, 0) AS n_invocations, coalesce(c.n_ok, 0) AS n_ok,
           coalesce(c.n_failed, 0) AS n_failed, coalesce(c.workloads, []) AS workloads
    FROM runs r
    LEFT JOIN machines m ON m.fingerprint = r.machine_fingerprint
    LEFT JOIN builds b ON b.build_id = r.build_id
    LEFT JOIN counts c ON c.run_id = r.run_id
    ORDER BY r.started_at DESC, r.run_id DESC"""

# The runs in the order they started, the runs without a start last: the points' runs, each
# workload's newest run and the published history's blocks (history_parquet.run_blocks).
RUN_ORDER = "started_at NULLS LAST, run_id"
# The points' order: oldest run first, then workload, threads and series (a total order: one
# point per run and series), wherever points are read or put together.
POINTS_ORDER = f"{RUN_ORDER}, workload, threads, series_key"
# The invocations a point is made of. An attempt the interference policy rejected and ran
# again is not a repetition.
_POINT_INVOCATIONS = f"i.phase = 'measured' AND NOT {rejected_attempt_sql('i')}"

# One row per (run, series): the medians and spread over its measured repetitions.
_POINTS = f"""
    WITH measured AS (
        SELECT i.*, m.ops, m.p50, m.p95, m.p99, m.p999, m.pmax, m.mb, m.residency,
               m.page_faults, m.context_switches, m.migrations, m.cpu_clock_ms,
               -- The data set on disk: read before a reader ran, or written by a writer.
               coalesce(TRY_CAST(json_extract(i.conditions, '$.data_bytes_written') AS DOUBLE),
                        TRY_CAST(json_extract(i.conditions, '$.data_bytes') AS DOUBLE))
                   AS data_bytes,
               TRY_CAST(json_extract(i.conditions, '$.table_bytes_written') AS DOUBLE)
                   AS table_bytes,
               i.status = 'ok' AS ok,
               -- Measured to the end, but maybe not under the declared cache state.
               i.status IN ('ok', 'condition_not_met') AS ran
        FROM invocations i LEFT JOIN metrics_wide m USING (invocation_id)
        WHERE {_POINT_INVOCATIONS} {{runs}})
    SELECT x.run_id, x.series_key, any_value(x.workload) AS workload,
           any_value(x.benchmark) AS benchmark, any_value(x.threads) AS threads,
           any_value(x.params::VARCHAR) AS params, any_value(x.cache_state) AS cache_state,
           count(*) AS n, count(*) FILTER (WHERE ok) AS n_ok,
           coalesce(min(x.seq) FILTER (WHERE ok), min(x.seq)) AS first_seq,
           median(x.ops) FILTER (WHERE ok) AS ops_median,
           min(x.ops) FILTER (WHERE ok) AS ops_min,
           max(x.ops) FILTER (WHERE ok) AS ops_max,
           avg(x.ops) FILTER (WHERE ok) AS ops_mean,
           stddev_samp(x.ops) FILTER (WHERE ok) AS ops_std,
           median(x.p50) FILTER (WHERE ok) AS p50_median,
           median(x.p99) FILTER (WHERE ok) AS p99_median,
           median(x.mb) FILTER (WHERE ok) AS mb_median,
           median(x.p95) FILTER (WHERE ok) AS p95_median,
           median(x.p999) FILTER (WHERE ok) AS p999_median,
           median(x.pmax) FILTER (WHERE ok) AS max_median,
           count(*) FILTER (WHERE x.status = 'condition_not_met') AS n_not_met,
           -- Kept, but above machine.interference_max_pct: other tasks may have moved it.
           count(*) FILTER (WHERE ok AND json_extract(x.conditions, '$.interference.flagged')::VARCHAR
                            = 'true') AS n_interfered,
           median(TRY_CAST(json_extract(x.conditions, '$.interference.other_pct') AS DOUBLE))
               FILTER (WHERE ok) AS interference_median,
           count(*) FILTER (WHERE NOT ran) AS n_failed,
           median(x.ops) FILTER (WHERE ran) AS ops_ran_median,
           median(x.p50) FILTER (WHERE ran) AS p50_ran_median,
           median(x.p99) FILTER (WHERE ran) AS p99_ran_median,
           median(x.residency) AS residency_median,
           median(x.page_faults) FILTER (WHERE ok) AS page_faults_median,
           median(x.context_switches) FILTER (WHERE ok) AS context_switches_median,
           median(x.migrations) FILTER (WHERE ok) AS migrations_median,
           median(x.cpu_clock_ms) FILTER (WHERE ok) AS cpu_clock_median,
           median(x.data_bytes) FILTER (WHERE x.data_bytes > 0) AS data_bytes_median,
           median(x.table_bytes) FILTER (WHERE x.data_bytes > 0) AS table_bytes_median,
           max(x.max_rss_kb) AS rss_max_kb,
           any_value(r.started_at) AS started_at, any_value(r.engine) AS engine,
           any_value(r.engine_version) AS engine_version,
           any_value(r.build_variant) AS build_variant,
           any_value(r.machine_fingerprint) AS machine_fingerprint,
           any_value(r.build_id) AS build_id,
           coalesce(any_value(r.runner), 'host') AS runner
    FROM measured x JOIN runs r USING (run_id)
    GROUP BY x.run_id, x.series_key
    ORDER BY {POINTS_ORDER}"""

# The columns of every invocation row; the newest runs' pages add their ids and the detail
# columns.
_INVOCATION_COLUMNS = """i.run_id, i.seq, i.workload, i.benchmark, i.phase,
    i.repetition, i.threads, i.status, i.wall_s, i.max_rss_kb, m.ops, m.p50, m.p99, m.residency,
    TRY_CAST(json_extract(i.conditions, '$.interference.other_pct') AS DOUBLE) AS interference"""
_DETAIL_COLUMNS = """, i.params::VARCHAR AS params, i.cache_state, i.series_key, i.error,
    i.exit_code, i.command::VARCHAR AS command, i.log_path, i.notes::VARCHAR AS notes,
    i.conditions::VARCHAR AS conditions, m.mb, m.page_faults, m.context_switches, m.migrations,
    m.cpu_clock_ms"""
_INVOCATIONS = """
    SELECT {columns}
    FROM invocations i LEFT JOIN metrics_wide m USING (invocation_id)
    WHERE i.run_id IN (SELECT unnest(?::VARCHAR[]))
    ORDER BY i.run_id, i.seq"""
# The metrics an older run's compact table shows, pivoted from their rows only: most of a long
# history's invocations are on compact tables, and the whole pivot of their metrics (a few
# million rows) was most of reading them.
_COMPACT_COLUMNS = ("ops", "p50", "p99", "residency")
_COMPACT_INVOCATIONS = f"""
    WITH m AS (
        SELECT invocation_id{_pivot(_COMPACT_COLUMNS)}
        FROM metrics
        WHERE name IN ({_pivot_names(_COMPACT_COLUMNS)})
          AND {_OF_RUNS.removeprefix("WHERE ")}
        GROUP BY invocation_id)
    SELECT {_INVOCATION_COLUMNS}
    FROM invocations i LEFT JOIN m USING (invocation_id)
    WHERE i.run_id IN (SELECT unnest(?::VARCHAR[]))
    ORDER BY i.run_id, i.seq"""

_JSON_COLUMNS = ("config", "overrides", "machine_state", "notes", "machine_facts", "cmake_flags",
                 "params", "command", "conditions", "resumes", "sweep", "build_images",
                 "source_meta")
# Schema v6 (resumable runs) and v2 (imports); a site may read an older file, which it cannot
# migrate read-only.
_RESUMABLE = "r.resumes::VARCHAR AS resumes, r.sweep::VARCHAR AS sweep,"
_IMPORTED = "coalesce(r.source, 'run') AS source, r.source_meta::VARCHAR AS source_meta,"


def open_results(db: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection to a DB that holds at least one run; UserError otherwise."""
    con = connect(db, read_only=True)
    tables = {row[0] for row in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    if "runs" not in tables or con.execute("SELECT count(*) FROM runs").fetchone()[0] == 0:
        con.close()
        raise UserError(f"no runs in results database {db}; run 'tidemark run' first")
    return con


def decode_json(df: pd.DataFrame) -> pd.DataFrame:
    """JSON text columns → Python objects, so page builders never parse. Equal texts (params
    and notes repeat across runs) are decoded once and share one object: builders never mutate."""
    for column in _JSON_COLUMNS:
        if column in df.columns:
            df[column] = _decoded(df[column])
    # One block per dtype: page builders copy and slice these frames hundreds of times, and
    # pandas merges the blocks of a frame read column by column again on every copy.
    return df.copy()


def share_equal_texts(df: pd.DataFrame) -> pd.DataFrame:
    """Each text column's equal texts made one object (a read gives each row its own): the
    forked processes that write pages then touch a few objects where they touched 200,000
    per column, each touch (a reference counted) copying a page of the parent's memory, which
    cost the analysis and machine pages' processes about a third of their time."""
    for column in df.columns:
        if column in _JSON_COLUMNS or df[column].dtype != object:
            continue
        values = df[column].to_numpy()
        if pd.api.types.infer_dtype(values, skipna=True) != "string":
            continue  # not only texts: equal numbers of two types must stay two values
        codes, uniques = pd.factorize(values)
        shared = np.asarray(uniques, dtype=object)[codes]
        missing = codes < 0
        shared[missing] = values[missing]  # None stays None, NaN stays NaN
        df[column] = shared
    return df


def _decoded(texts: pd.Series) -> pd.Series:
    """Each distinct text parsed once (found by hashing in pandas, not a lookup per row; a long
    history has 200,000 points and a few hundred params); None for a missing or empty text."""
    codes, uniques = pd.factorize(texts)
    objects = np.empty(len(uniques) + 1, dtype=object)  # the last: missing (code -1)
    objects[:-1] = [json.loads(text) if text else None for text in uniques.tolist()]
    return pd.Series(objects[codes], index=texts.index, dtype=object)


def _metrics_wide(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str] | None = None) -> None:
    """Pivot the metrics of `run_ids`' invocations (None: every run's) into the temporary table
    the reads join (the DB stays read-only); each read makes its own, for the runs it reads."""
    if run_ids is None:
        con.execute(f"CREATE OR REPLACE TEMP TABLE metrics_wide AS {_METRICS_WIDE.format(where='')}")
    else:
        con.execute(f"CREATE OR REPLACE TEMP TABLE metrics_wide AS "
                    f"{_METRICS_WIDE.format(where=_OF_RUNS)}", [list(run_ids)])


def read_runs(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every run, newest first, with its build, machine and invocation counts."""
    resumable = _RESUMABLE if has_column(con, "runs", "resumes") else \
        "NULL::VARCHAR AS resumes, NULL::VARCHAR AS sweep,"
    imported = _IMPORTED if has_column(con, "runs", "source") else \
        "'run' AS source, NULL::VARCHAR AS source_meta,"
    runs = decode_json(con.execute(_RUNS.format(resumable=resumable, imported=imported)).df())
    notes = read_user_notes(con)
    runs["user_notes"] = [notes.get(run_id, []) for run_id in runs["run_id"]]
    return runs


_NOTES = """SELECT run_id, list({'text': text, 'at': created_at, 'origin': origin}
                              ORDER BY created_at) AS user_notes
             FROM run_notes GROUP BY run_id"""

# Per run, workload and phase of the given runs: what each phase cost (setup, warm-up, measured).
_PHASES = f"""
    SELECT run_id, workload, phase, string_agg(DISTINCT benchmark, ', ' ORDER BY benchmark)
               AS benchmarks,
           count(*) AS n, sum(wall_s) AS wall_total, median(wall_s) AS wall_median,
           min(seq) AS first_seq
    FROM invocations i
    WHERE run_id IN (SELECT unnest(?::VARCHAR[])) AND NOT {rejected_attempt_sql('i')}
    GROUP BY ALL ORDER BY run_id, workload, first_seq"""


# Every metric of the imported runs and of the runs of gbench or command workloads, per series:
# a tool's own figures (hyperfine's wall time, Google Benchmark's real time and bytes/s, a
# command's wall time and MB/s) are shown even where there is no ops/s. (A run's config names
# its workloads' kinds: the runs of db_bench suites alone, most of a long history, are not read.)
_IMPORTED_VALUES = """
    SELECT i.run_id, i.series_key, any_value(i.workload) AS workload,
           any_value(i.benchmark) AS benchmark, any_value(i.threads) AS threads,
           any_value(i.params::VARCHAR) AS params, m.name AS metric, any_value(m.unit) AS unit,
           median(m.value) AS median, min(m.value) AS low, max(m.value) AS high,
           count(*) AS n, min(i.seq) AS first_seq,
           any_value(r.started_at) AS started_at, any_value(r.engine) AS engine,
           any_value(r.engine_version) AS engine_version,
           any_value(r.build_variant) AS build_variant,
           any_value(r.machine_fingerprint) AS machine_fingerprint
    FROM invocations i JOIN metrics m USING (invocation_id) JOIN runs r USING (run_id)
    WHERE (r.source = 'import' OR regexp_matches(r.config::VARCHAR, '"kind": ?"(gbench|command)"'))
      AND i.phase = 'measured' AND i.status = 'ok'
    GROUP BY i.run_id, i.series_key, m.name
    ORDER BY started_at, i.run_id, workload, benchmark, threads, metric"""


def read_imported_values(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Median of every metric of every series of the imported runs and of gbench and command
    workloads' runs (none before schema v2)."""
    if not has_column(con, "runs", "source"):
        return pd.DataFrame(columns=["run_id", "series_key", "workload", "metric"])
    return decode_json(con.execute(_IMPORTED_VALUES).df())


def read_user_notes(con: duckdb.DuckDBPyConnection) -> dict[str, list[dict]]:
    """run id → the notes people wrote about it, oldest first (schema v8; none before)."""
    if not has_table(con, "run_notes"):
        return {}
    return {run_id: list(notes) for run_id, notes in con.execute(_NOTES).fetchall()}


# Instructions per operation (callgrind) of the runs built from a commit, per run and series (a
# callgrind pass reads fewer keys, so its series key is not the timed one's).
_COMMIT_INSTRUCTIONS = f"""
    SELECT i.run_id, i.series_key, any_value(i.workload) AS workload,
           any_value(i.benchmark) AS benchmark, any_value(i.threads) AS threads,
           any_value(i.params::VARCHAR) AS params, any_value(i.cache_state) AS cache_state,
           median(m.value) AS instructions_median, any_value(r.started_at) AS started_at
    FROM invocations i JOIN metrics m USING (invocation_id) JOIN runs r USING (run_id)
    JOIN builds b ON b.build_id = r.build_id
    WHERE i.phase = 'callgrind' AND i.status = 'ok' AND m.name = 'instructions_per_op'
      AND b.commit_sha IS NOT NULL AND NOT {rejected_attempt_sql('i')}
    GROUP BY i.run_id, i.series_key
    ORDER BY started_at, i.run_id, workload, threads, i.series_key"""


def read_commit_instructions(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The Commits page's instruction counts (empty before builds had commits, schema v9)."""
    if not has_column(con, "builds", "commit_sha"):
        return pd.DataFrame(columns=["run_id", "series_key", "workload", "threads",
                                     "instructions_median", "started_at"])
    return decode_json(con.execute(_COMMIT_INSTRUCTIONS).df())


def read_phases(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> pd.DataFrame:
    """Invocations, total and median wall time per run × workload × phase of `run_ids`."""
    return con.execute(_PHASES, [run_ids]).df()


# Invocations per read of the points. One read pivots every metric of the runs it reads: a
# 10,000-run history's 60 M metrics in one query held most of its site build's 11 GB peak. A
# bigger history is read in blocks of consecutive runs of about this many invocations (a
# 1,000-run history's 600,000 are one read; blocks of it: 480 MB at the peak against 1.2 GB).
POINTS_BLOCK_INVOCATIONS = 600_000


def read_points(con: duckdb.DuckDBPyConnection,
                run_ids: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per (run, series) of `run_ids` (None: every run), oldest run first: medians,
    min/max/mean/std of ops/s; equal texts share one object (share_equal_texts). Read in
    blocks of runs (POINTS_BLOCK_INVOCATIONS) joined as one read gives them."""
    blocks = _point_blocks(con, run_ids)
    if len(blocks) <= 1:
        return _read_points(con, run_ids)
    joined = as_one_read(share_equal_texts(
        pd.concat([_read_points(con, block) for block in blocks], ignore_index=True)))
    # One block per dtype (see decode_json), merged in place: a copy of the whole frame was
    # the build's peak (4.16 GiB of a 10,000-run history's main process).
    joined._consolidate_inplace()
    return joined


def _read_points(con: duckdb.DuckDBPyConnection,
                 run_ids: Sequence[str] | None) -> pd.DataFrame:
    _metrics_wide(con, run_ids)
    query, params = _points_of(run_ids)
    return decode_json(share_equal_texts(con.execute(query, params).df()))


def _point_blocks(con: duckdb.DuckDBPyConnection,
                  run_ids: Sequence[str] | None) -> list[list[str]]:
    """`run_ids` (None: every run) in RUN_ORDER, cut where a block would pass
    POINTS_BLOCK_INVOCATIONS invocations (a run is never cut)."""
    where, params = ("", []) if run_ids is None else \
        ("WHERE r.run_id IN (SELECT unnest(?::VARCHAR[]))", [list(run_ids)])
    blocks: list[list[str]] = [[]]
    size = 0
    for run_id, invocations in con.execute(
            f"SELECT r.run_id, coalesce(n.invocations, 0) FROM runs r LEFT JOIN (SELECT "
            f"run_id, count(*) AS invocations FROM invocations GROUP BY run_id) n USING "
            f"(run_id) {where} ORDER BY {RUN_ORDER}",
            params).fetchall():
        if blocks[-1] and size + invocations > POINTS_BLOCK_INVOCATIONS:
            blocks.append([])
            size = 0
        blocks[-1].append(run_id)
        size += invocations
    return [block for block in blocks if block]


def as_one_read(points: pd.DataFrame) -> pd.DataFrame:
    """The column types one read of these rows gives: DuckDB's integers are numpy's where no
    value is NULL and pandas' nullable ones (Int64) where one is, so a part with a NULL (or
    the last build's, with a run since removed) must not decide the type of the whole."""
    for column, dtype in points.dtypes.items():
        if isinstance(dtype, pd.api.extensions.ExtensionDtype) and dtype.kind in "iu" \
                and not points[column].isna().any():
            points[column] = points[column].to_numpy(dtype=dtype.numpy_dtype)
    return points


# Each workload's newest run: the run of its last point in POINTS_ORDER, read without the
# points (the verdicts are read while the points are).
_LATEST_RUNS = f"""
    SELECT w.workload, last(w.run_id ORDER BY {RUN_ORDER})
    FROM (SELECT DISTINCT i.workload, i.run_id FROM invocations i
          WHERE {_POINT_INVOCATIONS}) w JOIN runs r USING (run_id)
    GROUP BY w.workload ORDER BY w.workload"""


def read_latest_runs(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """workload → the newest run that measured it (the run of its newest point)."""
    return dict(con.execute(_LATEST_RUNS).fetchall())


def _points_of(run_ids: Sequence[str] | None) -> tuple[str, list[object]]:
    if run_ids is None:
        return _POINTS.format(runs=""), []
    return _POINTS.format(runs="AND i.run_id IN (SELECT unnest(?::VARCHAR[]))"), [list(run_ids)]


def read_invocations(con: duckdb.DuckDBPyConnection, run_ids: list[str],
                     detail: bool = True) -> pd.DataFrame:
    """The invocations of `run_ids` (all phases and statuses) with their headline metrics;
    without `detail`, only what a compact invocation table shows (no id, command, log,
    conditions)."""
    if not detail:
        return decode_json(con.execute(_COMPACT_INVOCATIONS, [run_ids, run_ids]).df())
    _metrics_wide(con, run_ids)
    columns = "i.invocation_id, " + _INVOCATION_COLUMNS + _DETAIL_COLUMNS
    return decode_json(con.execute(_INVOCATIONS.format(columns=columns), [run_ids]).df())
