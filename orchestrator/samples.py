"""Read what comparisons need from the results DB (read-only): runs by selector, samples, history.

Only measured invocations that ended ok are samples; warm-ups, setups, failures and invocations
whose cache condition was not met never enter a statistic.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import duckdb

from .comparability import SeriesSide
from .errors import UserError

# Selector keys → runs columns (config names where they differ from column names).
SELECTOR_COLUMNS = {"engine.version": "engine_version", "engine_version": "engine_version",
                    "engine": "engine", "engine.name": "engine", "label": "label",
                    "build": "build_variant", "build.name": "build_variant",
                    "build_variant": "build_variant", "suite": "suite", "run_id": "run_id",
                    "build_id": "build_id"}
SELECTOR = re.compile(r"^(?P<base>[^~]+?)(?:~(?P<back>\d+))?$")


class SelectorError(UserError):
    """A run selector is malformed or matches no run."""


@dataclass(frozen=True)
class SideSeries:
    """One series of one run: its identity and the measured values of each metric."""

    side: SeriesSide
    values: dict[str, list[float]]  # metric → repetitions, in run order
    better: dict[str, str]  # metric → higher | lower
    run_id: str


def parse_selector(selector: str) -> tuple[str, list[str], int]:
    """(SQL condition on runs, its arguments, how many matches back) for a run selector;
    SelectorError names a malformed selector or an unknown key (config checks call this too)."""
    match = SELECTOR.match(selector.strip())
    if not match:
        raise SelectorError(f"bad run selector {selector!r}; use a run id, latest, latest~N or KEY=VALUE")
    base, back = match.group("base"), int(match.group("back") or 0)
    if "=" in base:
        key, value = base.split("=", 1)
        column = SELECTOR_COLUMNS.get(key)
        if column is None:
            raise SelectorError(f"unknown selector key {key!r} in {selector!r}; use one of "
                                f"{', '.join(sorted(SELECTOR_COLUMNS))}")
        return f"{column} = ?", [value], back
    if base != "latest":
        return "run_id LIKE ?", [base + "%"], back
    return "true", [], back


def resolve_run(con: duckdb.DuckDBPyConnection, selector: str) -> str:
    """A run id from `RUN_ID`, `latest`, `latest~1`, `engine.version=7.8.3`, `label=X~2`."""
    where, args, back = parse_selector(selector)
    rows = con.execute(f"SELECT run_id FROM runs WHERE {where} ORDER BY started_at DESC, run_id DESC",
                       args).fetchall()
    if len(rows) <= back:
        known = con.execute("SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 3").fetchall()
        raise SelectorError(f"run selector {selector!r} matches {len(rows)} run(s); latest runs: "
                            f"{', '.join(r[0] for r in known) or 'none'}")
    return rows[back][0]


def run_facts(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, Any]:
    row = con.execute("SELECT run_id, engine, engine_version, build_variant, build_id, "
                      "machine_fingerprint, label, started_at FROM runs WHERE run_id = ?",
                      [run_id]).fetchone()
    keys = ("run_id", "engine", "engine_version", "build_variant", "build_id",
            "machine_fingerprint", "label", "started_at")
    return dict(zip(keys, row)) if row else {}


_SAMPLES = """
    SELECT i.series_key, m.name, m.value, m.better, i.seq,
           s.engine, s.workload, s.benchmark, s.params::VARCHAR, s.threads, s.cache_state,
           s.build_variant, s.compiler_version, s.cmake_flags::VARCHAR, s.machine_fingerprint
    FROM invocations i
    JOIN metrics m USING (invocation_id)
    JOIN series s USING (series_key)
    WHERE i.run_id = ? AND i.phase = 'measured' AND i.status = 'ok' AND m.name IN ({names})
    ORDER BY i.seq"""


def load_side(con: duckdb.DuckDBPyConnection, run_id: str, metrics: list[str]) -> list[SideSeries]:
    """Every series of a run with its measured values of the given metrics."""
    version = run_facts(con, run_id).get("engine_version", "")
    sql = _SAMPLES.format(names=", ".join("?" * len(metrics)))
    by_key: dict[str, SideSeries] = {}
    for row in con.execute(sql, [run_id, *metrics]).fetchall():
        key, name, value, better = row[:4]
        if key not in by_key:
            identity = {"engine": row[5], "workload": row[6], "benchmark": row[7],
                        "params": json.loads(row[8]), "threads": row[9], "cache_state": row[10],
                        "build_variant": row[11], "compiler_version": row[12],
                        "cmake_flags": json.loads(row[13]), "machine_fingerprint": row[14]}
            by_key[key] = SideSeries(SeriesSide(key, identity, version), {}, {}, run_id)
        side = by_key[key]
        side.values.setdefault(name, []).append(float(value))
        side.better[name] = better
    return list(by_key.values())


def history_medians(con: duckdb.DuckDBPyConnection, series_key: str, metric: str,
                    exclude_runs: tuple[str, ...] = ()) -> list[tuple[str, float]]:
    """(run id, median) of one series and metric in every run, oldest first."""
    rows = con.execute(
        """SELECT i.run_id, median(m.value), min(r.started_at) AS t
           FROM invocations i JOIN metrics m USING (invocation_id) JOIN runs r USING (run_id)
           WHERE i.series_key = ? AND m.name = ? AND i.phase = 'measured' AND i.status = 'ok'
           GROUP BY i.run_id ORDER BY t, i.run_id""", [series_key, metric]).fetchall()
    return [(r[0], float(r[1])) for r in rows if r[0] not in exclude_runs]


def aa_changes(con: duckdb.DuckDBPyConnection, series_key: str, metric: str,
               exclude_runs: tuple[str, ...] = ()) -> list[float]:
    """ratio − 1 of this series in every stored A/A comparison (both sides the same build)."""
    if not _has_table(con, "ab_pairs"):
        return []
    rows = con.execute(
        """WITH med AS (
               SELECT i.run_id, median(m.value) AS v FROM invocations i
               JOIN metrics m USING (invocation_id)
               WHERE i.series_key = ? AND m.name = ? AND i.phase = 'measured'
                 AND i.status = 'ok' GROUP BY i.run_id)
           SELECT b.v / a.v - 1, p.run_a, p.run_b FROM ab_pairs p
           JOIN med a ON a.run_id = p.run_a JOIN med b ON b.run_id = p.run_b
           WHERE p.same_build""", [series_key, metric]).fetchall()
    return [float(r[0]) for r in rows
            if r[0] is not None and r[1] not in exclude_runs and r[2] not in exclude_runs]


def _has_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    row = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?",
                      [name]).fetchone()
    return bool(row and row[0])
