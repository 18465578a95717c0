"""Read what the A/B page needs (read-only): each `tidemark ab` job and its comparison, made by
orchestrator.verdicts as `tidemark ab` makes it."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator import verdicts
from orchestrator.analysis.compare import Report
from orchestrator.errors import UserError
from orchestrator.gate import GateConf
from orchestrator.store import connect
from orchestrator.store.reads import has_column, has_table


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
    design: str = "interleaved"  # ab_pairs.design (analysis.paired)
    adaptive: dict[str, Any] | None = None  # the stopping rule's budget and what it used


@dataclass(frozen=True)
class StatsData:
    ab_pairs: list[AbPair]
    # `tidemark gate --confirm`'s confirmations and `tidemark bisect`'s bisects, newest first,
    # as stored (store: confirmations, bisects; JSON columns decoded).
    confirmations: list[dict[str, Any]] = field(default_factory=list)
    bisects: list[dict[str, Any]] = field(default_factory=list)
    alerts: list[dict[str, Any]] = field(default_factory=list)  # `tidemark alert`'s, newest first


_AB = ("SELECT ab_id, run_a, run_b, seed, same_build, overrides_a::VARCHAR, overrides_b::VARCHAR, "
       "schedule::VARCHAR, {} FROM ab_pairs ORDER BY created_at DESC")
_DESIGN = "design, adaptive::VARCHAR"  # schema v5; a read-only DB not migrated yet has neither


def read_stats(db: Path, conf: GateConf) -> StatsData:
    con = connect(db, read_only=True)
    try:
        design = _DESIGN if has_column(con, "ab_pairs", "design") else "NULL, NULL"
        rows = con.execute(_AB.format(design)).fetchall() if has_table(con, "ab_pairs") else []
        pairs = []
        for ab_id, run_a, run_b, seed, same, over_a, over_b, schedule, design, adaptive in rows:
            report, error = None, ""
            try:
                report = verdicts.compare_runs(con, run_a, run_b, conf.summary_metrics, conf.thresholds,
                                               allow_different=True)
            except UserError as exc:  # a pair whose runs failed is shown with why, not dropped
                error = str(exc)
            pairs.append(AbPair(ab_id, run_a, run_b, seed, bool(same), json.loads(over_a or "[]"),
                                json.loads(over_b or "[]"), json.loads(schedule or "[]"), report,
                                error, design or "interleaved",
                                json.loads(adaptive) if adaptive else None))
        confirmations = _rows(con, "confirmations", "created_at", ("between", "paired"))
        bisects = _rows(con, "bisects", "created_at", ("overrides", "commits", "steps"))
        alerts = _rows(con, "alerts", "created_at", ())
    finally:
        con.close()
    return StatsData(pairs, confirmations, bisects, alerts)


def _rows(con: Any, table: str, order: str, json_columns: tuple[str, ...]) -> list[dict[str, Any]]:
    """Every row of a table (none before its schema version), newest first, JSON decoded."""
    if not has_table(con, table):
        return []
    cursor = con.execute(f"SELECT * FROM {table} ORDER BY {order} DESC")
    names = [d[0] for d in cursor.description]
    rows = [dict(zip(names, row)) for row in cursor.fetchall()]
    for row in rows:
        for column in json_columns:
            row[column] = json.loads(row[column]) if row[column] else None
    return rows
