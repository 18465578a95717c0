"""Aggregated reads for the analysis pages (read-only SQL; each is one query over the whole DB).

Per-run-and-series figures come from `queries.read_points`; this module adds what is keyed
otherwise: machines, page-cache residency per machine × workload × cache state, windows of
interval throughput (sustained runs).
"""
from __future__ import annotations

import json

import duckdb
import pandas as pd

from orchestrator.store.reads import rejected_attempt_sql


# Intervals per window of a sustained run's throughput time series.
WINDOW_INTERVALS = 5

_MACHINES = """
    SELECT m.fingerprint, m.hostname, m.cpu_model, m.logical_cpus, m.ram_gib,
           m.facts::VARCHAR AS facts, m.first_seen,
           count(r.run_id) AS n_runs, max(r.started_at) AS last_run_at,
           arg_max(r.run_id, r.started_at) AS last_run_id,
           arg_max(r.machine_state::VARCHAR, r.started_at) AS last_state
    FROM machines m LEFT JOIN runs r ON r.machine_fingerprint = m.fingerprint
    GROUP BY ALL ORDER BY last_run_at DESC NULLS LAST"""

# Residency and data-set size as measured right before each measured process, per data set
# (a 100k-key and a 1M-key database are not one row).
_RESIDENCY = f"""
    SELECT r.machine_fingerprint AS fingerprint, i.workload, i.cache_state,
           TRY_CAST(json_extract(i.params, '$.num') AS BIGINT) AS num,
           TRY_CAST(json_extract(i.params, '$.value_size') AS BIGINT) AS value_size,
           count(*) AS n,
           count(*) FILTER (WHERE i.status = 'condition_not_met') AS n_not_met,
           median(TRY_CAST(json_extract(i.conditions, '$.residency_pct') AS DOUBLE))
               AS residency_median,
           median(TRY_CAST(json_extract(i.conditions, '$.data_bytes') AS DOUBLE))
               AS data_bytes_median,
           max(TRY_CAST(json_extract(i.conditions, '$.block_cache_bytes') AS DOUBLE))
               AS block_cache_bytes,
           any_value(json_extract(i.conditions, '$.cache_procedure')::VARCHAR)
               FILTER (WHERE json_extract(i.conditions, '$.cache_procedure') IS NOT NULL)
               AS cache_procedure,
           arg_max(i.run_id, r.started_at) AS last_run_id,
           arg_max(i.seq, r.started_at) AS last_seq
    FROM invocations i JOIN runs r USING (run_id)
    WHERE i.phase = 'measured' AND NOT {rejected_attempt_sql('i')}
    GROUP BY ALL ORDER BY 1, 2, 4, 5, 3"""

_WINDOWS = f"""
    WITH ts AS (
        SELECT invocation_id, t, value,
               (row_number() OVER (PARTITION BY invocation_id ORDER BY t) - 1)
                   // {WINDOW_INTERVALS} AS window
        FROM timeseries WHERE name = 'interval_qps')
    SELECT i.run_id, i.seq, i.series_key, i.workload, i.benchmark, i.threads,
           i.params::VARCHAR AS params, i.cache_state, r.started_at, r.engine,
           r.engine_version, r.build_variant, r.machine_fingerprint,
           ts.window, min(ts.t) AS t_from, max(ts.t) AS t_to, count(*) AS intervals,
           quantile_cont(ts.value, 0.5) AS qps_p50, quantile_cont(ts.value, 0.95) AS qps_p95,
           min(ts.value) AS qps_min
    FROM ts JOIN invocations i USING (invocation_id) JOIN runs r USING (run_id)
    WHERE i.phase = 'measured' AND i.status IN ('ok', 'condition_not_met')
    GROUP BY ALL ORDER BY r.started_at, i.run_id, i.seq, ts.window"""

# Every interval of every measured repetition of each series' newest run that reported
# intervals, for the chart (the sustained page shows all repetitions, not the first).
_INTERVALS = """
    WITH reported AS (
        SELECT i.invocation_id, i.run_id, i.seq, i.series_key, r.started_at
        FROM invocations i JOIN runs r USING (run_id)
        WHERE i.phase = 'measured' AND i.status IN ('ok', 'condition_not_met')
          AND i.invocation_id IN (SELECT DISTINCT invocation_id FROM timeseries
                                  WHERE name = 'interval_qps')),
    newest AS (
        SELECT series_key, arg_max(run_id, started_at::VARCHAR || run_id) AS run_id
        FROM reported GROUP BY series_key)
    SELECT x.run_id, x.seq, x.series_key, t.t, t.value
    FROM reported x JOIN newest n USING (series_key, run_id)
    JOIN timeseries t ON t.invocation_id = x.invocation_id AND t.name = 'interval_qps'
    ORDER BY x.series_key, x.seq, t.t"""


def read_machines(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """One row per machine fingerprint, newest use first, with its last run's state."""
    df = con.execute(_MACHINES).df()
    for column in ("facts", "last_state"):
        df[column] = df[column].map(lambda text: json.loads(text) if text else {})
    return df


def read_residency(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    df = con.execute(_RESIDENCY).df()
    df["cache_procedure"] = df["cache_procedure"].map(lambda t: json.loads(t) if t else [])
    return df


def read_windows(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    df = con.execute(_WINDOWS).df()
    df["params"] = df["params"].map(lambda text: json.loads(text) if text else {})
    return df


def read_intervals(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    return con.execute(_INTERVALS).df()
