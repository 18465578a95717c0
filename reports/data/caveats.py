"""Which runs' numbers carry a caveat (pure): the caveat each run gets and the column that puts it
beside every point. What a page says about them is reports/pages/caveats.py's.

A run gets an automatic caveat when its numbers must not be read like a release run's: an
instrumented build (debug, asan: `instrumented: true` in conf/build/) measures its
instrumentation too, and an imported run was measured by another tool under conditions
Tidemark did not set or verify.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from .frames import blocks_side_by_side, records

IMPORTED = "import"  # runs.source of `tidemark import`


def run_caveat(run: Mapping[str, Any], instrumented: set[str]) -> str:
    """Why this run's numbers are not a release run's, or ''."""
    if run.get("source") == IMPORTED:
        meta = run.get("source_meta") or {}
        name = Path(str(meta.get("file") or "a file")).name
        return (f"imported from {name} ({meta.get('format', 'unknown format')}): measured by "
                f"another tool, under conditions Tidemark did not set or verify; its series "
                f"are never mixed with measured ones")
    if run.get("build_variant") in instrumented:
        return (f"{run['build_variant']} build (instrumented): its numbers measure the "
                f"instrumentation too; never compare them with a release build's")
    return ""


def with_caveats(runs: pd.DataFrame, points: pd.DataFrame,
                 instrumented: set[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """runs and points with a `caveat` column (per run; '' for a release run)."""
    caveats = {run["run_id"]: run_caveat(run, instrumented) for run in records(runs)}
    runs = runs.assign(caveat=runs["run_id"].map(caveats).fillna(""))
    return runs, caveat_column(points, caveats)


def caveat_column(points: pd.DataFrame, caveats: Mapping[str, str]) -> pd.DataFrame:
    """`points` with their runs' caveats (run id → caveat) in a `caveat` column."""
    # A shallow copy: assign() would copy every column of a long history's points first.
    points = points.copy(deep=False)
    points["caveat"] = (points["run_id"].map(caveats).fillna("") if len(points)
                        else pd.Series(dtype=str))
    # One block per dtype again: every page filters these frames, and a frame with a block
    # added would be consolidated (copied) by each filter of a long history.
    return blocks_side_by_side(points)
