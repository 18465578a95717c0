"""Read what the A/B page needs (read-only): each `tidemark ab` job and its comparison, made by
orchestrator.verdicts as `tidemark ab` makes it."""
from __future__ import annotations

import json
from dataclasses import dataclass
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
    finally:
        con.close()
    return StatsData(pairs)
