"""Latest refresh and percentiles pages (pure)."""
from __future__ import annotations

import pandas as pd
from markupsafe import Markup

from ..data.frames import records
from .caveats import caveat_warnings, note_lines
from .format import MISSING, Link, date, escape_text, latency, slug
from .labels import Labeler
from .shared import run_href, workload_href
from .tables import Page, Section, Table, linked, newest_positions, point_href


def latest_points(points: pd.DataFrame) -> pd.DataFrame:
    """Each workload's newest run's points (a workload's runs differ; each has its latest)."""
    if points.empty:
        return points
    newest_point = points.iloc[newest_positions(points, ["workload"])]
    newest = dict(zip(newest_point["workload"], newest_point["run_id"]))
    return points[points["run_id"] == points["workload"].map(newest)]


def notes_text(point: pd.Series) -> str:
    """What went wrong with the number, if anything: failures, a missed cache condition,
    interference (the series label says what it depends on)."""
    notes = []
    if point["n_not_met"]:
        notes.append(f"⚠ {int(point['n_not_met'])} missed the cache condition")
    if point.get("n_interfered"):
        notes.append(f"⚠ {int(point['n_interfered'])} flagged for interference")
    if point["n_failed"]:
        notes.append(f"⚠ {int(point['n_failed'])} failed")
    return ", ".join(notes)


def _sections_in_order(points: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """Each workload's newest run's points: measured workloads first, imported ones after."""
    groups = list(latest_points(points).groupby("workload", sort=True))
    return sorted(groups, key=lambda item: bool((item[1]["build_variant"] == "imported").all()))


def latest_refresh_page(points: pd.DataFrame, runs: pd.DataFrame | None = None,
                        workload_notes: dict[str, list[str]] | None = None) -> Page:
    sections = []
    for workload, mine in _sections_in_order(points):
        first = mine.iloc[0]
        labeler = Labeler.of(records(mine))
        shown = mine[mine["ops_median"].notna() | mine["p50_median"].notna()]
        rows = [[labeler.label(p), Link(latency(p["p50_median"]), point_href(p, "")),
                 linked(p["ops_median"], p, ""), notes_text(p) or MISSING]
                for p in records(shown.sort_values(["threads", "cache_state"]))]
        text = Markup("Run [{}]({}) · {} · {} {} · {} · [all runs of this workload]({})").format(
            escape_text(first["run_id"]), run_href(first["run_id"], ""), date(first["started_at"]),
            escape_text(first["engine"]), escape_text(first["engine_version"]),
            escape_text(labeler.shared or MISSING), workload_href(workload, ""))
        if not rows:
            text += Markup("<br>No latency or throughput in this run: its values are on "
                           "[its page]({}).").format(run_href(first["run_id"], ""))
        run = runs[runs["run_id"] == first["run_id"]] if runs is not None else pd.DataFrame()
        notes = list((workload_notes or {}).get(workload, [])) + \
            [f"run note: {line}" for r in records(run) for line in note_lines(r)]
        tables = [Table(("Series", "p50 latency µs", "p50 throughput ops/s", "Problems"), rows,
                        (False, True, True, False))] if rows else []
        sections.append(Section(workload, text=text, anchor=slug(workload).lower(), tables=tables,
                                warnings=caveat_warnings(mine), notes=notes))
    intro = Markup("The newest run of every workload: median latency (p50 of each process, median "
                   "over repetitions) and median throughput; a row names what differs between "
                   "the series of its workload, the line above the table what they share.")
    return Page("Latest refresh", intro, sections)


def percentiles_page(points: pd.DataFrame) -> Page:
    sections = []
    for workload, mine in _sections_in_order(points):
        mine = mine[mine["p50_median"].notna()]  # a tool that reported no latency has none
        if mine.empty:
            continue
        first, labeler = mine.iloc[0], Labeler.of(records(mine))
        rows = [[labeler.label(p), *(Link(latency(p[c]), point_href(p, "")) for c in
                                     ("p50_median", "p95_median", "p99_median", "p999_median",
                                      "max_median"))]
                for p in records(mine.sort_values(["threads", "cache_state"]))]
        text = Markup("Run [{}]({}) · {} · {}").format(
            escape_text(first["run_id"]), run_href(first["run_id"], ""), date(first["started_at"]),
            escape_text(labeler.shared or MISSING))
        sections.append(Section(workload, anchor=slug(workload).lower(), text=text,
                                warnings=caveat_warnings(mine), tables=[
            Table(("Series", "p50 µs", "p95 µs", "p99 µs", "p99.9 µs", "max µs"), rows,
                  (False, True, True, True, True, True))]))
    intro = Markup("Latency percentiles of each workload's newest run, in microseconds per "
                   "operation: each is the median over the measured repetitions of the value one "
                   "process reported (or that was interpolated from its histogram, see "
                   "[methodology](methodology.md#latency-percentiles)). max is the median of the "
                   "per-process maxima.")
    return Page("Percentiles", intro, sections)
