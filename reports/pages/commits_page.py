"""Trends in commit order (pure): the runs of engines built from git, per workload.

A date axis hides what an engine team asks of a history: which commit moved a number. Here the
runs whose build has a commit (git or local sources; orchestrator/build/revision.py) are put in
the order of their commits' dates, each commit once on the x axis, named by short sha and
subject; every point and row links to the run that produced it. Where runs counted
instructions (callgrind=true), a second chart per workload draws instructions per operation the
same way: there a few-percent step between two commits stands clear of the machine's noise.
"""
from __future__ import annotations

from typing import Any

import pandas as pd
from markupsafe import Markup

from ..data.frames import records
from .charts import commit_trend_chart
from .format import MISSING, Link, escape_text, num, slug
from .labels import Labeler
from .shared import run_href
from .tables import Page, Section, Table

_COMMIT = ["commit_sha", "commit_subject", "commit_date", "commit_dirty"]


def commit_label(run: pd.Series | dict[str, Any]) -> str:
    """e.g. "3f2a1c9d0b1e fix the cache" (+dirty for uncommitted changes)."""
    dirty = "+dirty" if isinstance(run.get("commit_dirty"), str) and run["commit_dirty"] else ""
    return f"{str(run['commit_sha'])[:12]}{dirty} {run.get('commit_subject') or ''}".strip()


def _committed(points: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """The points of runs built from a commit, with the commit's columns, in commit order."""
    if points.empty or "commit_sha" not in runs or runs["commit_sha"].isna().all():
        return pd.DataFrame()
    commits = runs.loc[runs["commit_sha"].notna(), ["run_id", *_COMMIT]]
    frame = points.merge(commits, on="run_id")
    frame["commit"] = [commit_label(r) for r in records(frame)]
    return frame.sort_values(["commit_date", "started_at"], kind="stable")


def _section(workload: str, mine: pd.DataFrame, index: int) -> Section:
    order = list(dict.fromkeys(mine["commit"]))
    labeler = Labeler.of(records(mine))

    def name(point: Any) -> str:  # the series, or the workload when it has one series
        text = labeler.label(point)
        return workload if text == MISSING else text

    lines = []
    for _, series in mine.groupby("series_key", sort=False):
        first = series.iloc[0]
        lines.append({"label": name(first),
                      "x": list(series["commit"]), "y": list(series["ops_median"]),
                      "runs": list(series["run_id"])})
    rows = [[p["commit"], str(p["commit_date"])[:16], name(p),
             Link(num(p["ops_median"]), run_href(p["run_id"], ""))] for p in records(mine)]
    table = Table(("commit", "committed", "series", "ops/s (median)"), rows,
                  (False, False, False, True))
    text = Markup("{} commits, {} runs · {}").format(
        len(order), mine["run_id"].nunique(), escape_text(labeler.shared or workload))
    return Section(workload, text=text, anchor=slug(workload).lower(), tables=[table],
                   chart=commit_trend_chart(lines, order, f"commits-{index}"))


def _instructions_section(workload: str, mine: pd.DataFrame, index: int) -> Section:
    """`mine`: one workload's instruction counts of committed runs, in commit order, a line per
    series (the callgrind pass's own series: a value size, a compression, a cache state)."""
    order = list(dict.fromkeys(mine["commit"]))
    labeler = Labeler.of(records(mine))

    def name(point: Any) -> str:
        text = labeler.label(point)
        return workload if text == MISSING else text

    lines = [{"label": name(rows.iloc[0]), "x": list(rows["commit"]),
              "y": list(rows["instructions_median"]), "runs": list(rows["run_id"])}
             for _, rows in mine.groupby("series_key", sort=False)]
    rows = [[p["commit"], str(p["commit_date"])[:16], name(p),
             Link(num(p["instructions_median"]), run_href(p["run_id"], ""))]
            for p in records(mine)]
    table = Table(("commit", "committed", "series", "instructions/op (median)"), rows,
                  (False, False, False, True))
    title = f"{workload}: instructions per operation (callgrind)"
    return Section(title, text=Markup("{} commits, {} runs · {}").format(
        len(order), mine["run_id"].nunique(), escape_text(labeler.shared or workload)),
        anchor=f"{slug(workload).lower()}-instructions", tables=[table],
        chart=commit_trend_chart(lines, order, f"commits-instructions-{index}",
                                 "instructions/op",
                                 "instructions per operation (callgrind, median)"))


def commits_page(points: pd.DataFrame, runs: pd.DataFrame,
                 instructions: pd.DataFrame | None = None) -> Page:
    """`instructions`: queries.read_commit_instructions (None or empty: no such chart)."""
    intro = Markup(
        "The runs of engines built from git (or a local checkout), per workload, in the order "
        "of their commits' dates: each commit once on the x axis (short sha and subject), the "
        "median ops/s of each run at its commit. Runs of one commit stand at the same place; "
        "a step between two commits is where to look, and <code>tidemark bisect</code> finds "
        "the commit between two that are far apart.")
    frame = _committed(points, runs)
    counted = pd.DataFrame() if instructions is None or instructions.empty else \
        _committed(instructions, runs)
    sections = []
    for index, workload in enumerate(sorted(set(frame.get("workload", ())) |
                                            set(counted.get("workload", ())))):
        if not frame.empty and (frame["workload"] == workload).any():
            sections.append(_section(workload, frame[frame["workload"] == workload], index))
        if not counted.empty and (counted["workload"] == workload).any():
            sections.append(_instructions_section(
                workload, counted[counted["workload"] == workload], index))
    return Page("Commits", intro, sections,
                empty="No run of an engine built from a commit yet (engine.source.kind=git or "
                      "local).")
