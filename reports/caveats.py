"""Caveats and notes that go with a run's numbers wherever they are shown (pure).

A run gets an automatic caveat when its numbers must not be read like a release run's: an
instrumented build (debug, asan: `instrumented: true` in conf/build/) measures its
instrumentation too, and an imported run was measured by another tool under conditions
Tidemark did not set or verify. Notes are what people wrote: a run's (`tidemark note`,
`note=`), a workload's (`notes` in its config) and a target's gap note (`gap_notes`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping

import pandas as pd

from .format import date
from .pages import records
from .queries import blocks_side_by_side

IMPORTED = "import"  # runs.source of `tidemark import`
MARK = "⚠"


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


def caveat_warnings(points: pd.DataFrame | Iterable[Mapping[str, Any]]) -> list[str]:
    """One warning naming every distinct caveat among the rows a page shows (their labels
    carry ⚠), or none."""
    if isinstance(points, pd.DataFrame):  # a long history's page: its column, not its rows
        texts = points["caveat"].unique() if "caveat" in points else []
    else:
        texts = [row.get("caveat") for row in points]
    seen = list(dict.fromkeys(text for text in texts if isinstance(text, str) and text))
    if not seen:
        return []
    return [f"{MARK} marks numbers that are not a release run's. " +
            " ".join(f"{text[0].upper()}{text[1:]}." for text in seen)]


def note_lines(run: Mapping[str, Any]) -> list[str]:
    """A run's notes as people wrote them, each with its date."""
    return [f"{note['text']} ({date(pd.Timestamp(note['at']))})"
            for note in run.get("user_notes") or []]
