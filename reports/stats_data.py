"""Read what the statistics pages need (read-only): A/B pairs, A/A changes, declared targets."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from orchestrator.compare import Report, compare_runs
from orchestrator.errors import UserError
from orchestrator.stats import Thresholds
from orchestrator.store import connect

from . import comparisons


@dataclass(frozen=True)
class AbPair:
    ab_id: str
    run_a: str
    run_b: str
    seed: int
    same_build: bool
    overrides_a: list[str]
    overrides_b: list[str]
    schedule: list[dict[str, Any]]
    report: Report | None  # None when the pair has no measured ok invocations to compare
    error: str = ""


@dataclass(frozen=True)
class StatsData:
    ab_pairs: list[AbPair]
    aa_changes: dict[str, list[float]]  # series key → ratio − 1 of each A/A pair
    declarations: dict[str, dict[str, Any]]  # run id → workload → {"targets", "bars"}


def _tables(con: Any) -> set[str]:
    return {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}


def _ab_rows(con: Any) -> list[tuple]:
    if "ab_pairs" not in _tables(con):
        return []
    return con.execute("SELECT ab_id, run_a, run_b, seed, same_build, overrides_a::VARCHAR, "
                       "overrides_b::VARCHAR, schedule::VARCHAR FROM ab_pairs "
                       "ORDER BY created_at DESC").fetchall()


def _declarations(con: Any) -> dict[str, dict[str, Any]]:
    from orchestrator.targets import workload_declarations

    out = {}
    for run_id, config in con.execute("SELECT run_id, config::VARCHAR FROM runs").fetchall():
        declared = workload_declarations(json.loads(config) if config else {})
        if declared:
            out[run_id] = declared
    return out


def aa_changes(points: pd.DataFrame, pairs: list[AbPair]) -> dict[str, list[float]]:
    """ratio − 1 of ops/s medians per series, over A/A pairs (same build on both sides)."""
    same = pd.DataFrame([(p.run_a, p.run_b) for p in pairs if p.same_build],
                        columns=["run_a", "run_b"])
    return comparisons.aa_changes(points, same)


def read_stats(db: Path, points: pd.DataFrame, thresholds: Thresholds) -> StatsData:
    con = connect(db, read_only=True)
    try:
        rows, declarations = _ab_rows(con), _declarations(con)
    finally:
        con.close()
    pairs = []
    for ab_id, run_a, run_b, seed, same, over_a, over_b, schedule in rows:
        report, error = None, ""
        try:
            report = compare_runs(db, run_a, run_b, thresholds=thresholds, allow_different=True)
        except UserError as exc:  # a pair whose runs failed is shown with why, not dropped
            error = str(exc)
        pairs.append(AbPair(ab_id, run_a, run_b, seed, bool(same), json.loads(over_a or "[]"),
                            json.loads(over_b or "[]"), json.loads(schedule or "[]"), report, error))
    return StatsData(pairs, aa_changes(points, pairs), declarations)
