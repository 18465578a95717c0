"""Latest refresh, percentiles and sustained-run pages (pure)."""
from __future__ import annotations

from typing import Any

import pandas as pd
from markupsafe import Markup

from . import charts
from .format import Link, anchor, date, escape_text, latency, num, signed_pct, slug
from .pages import delta_pct, run_href, workload_href
from .tables import Page, Section, Table, describe, linked, point_href


def latest_points(points: pd.DataFrame) -> pd.DataFrame:
    """Each workload's newest run's points (a workload's runs differ; each has its latest)."""
    if points.empty:
        return points
    newest = points.sort_values(["started_at", "run_id"]).groupby("workload")["run_id"].last()
    return points[points["run_id"] == points["workload"].map(newest)]


def notes_text(point: pd.Series) -> str:
    """What a reader needs to read the number: value size, threads, cache, what went wrong."""
    params = point["params"] or {}
    notes = [f"value size {params['value_size']} B" if "value_size" in params else "",
             f"{point['threads']} thread{'s' if point['threads'] != 1 else ''}",
             f"{point['cache_state']} cache", point["build_variant"]]
    if point["n_not_met"]:
        notes.append(f"⚠ {int(point['n_not_met'])} missed the cache condition")
    if point.get("n_interfered"):
        notes.append(f"⚠ {int(point['n_interfered'])} flagged for interference")
    if point["n_failed"]:
        notes.append(f"⚠ {int(point['n_failed'])} failed")
    return ", ".join(n for n in notes if n)


def latest_refresh_page(points: pd.DataFrame) -> Page:
    sections = []
    for workload, mine in latest_points(points).groupby("workload", sort=True):
        first = mine.iloc[0]
        rows = [[describe(p, ("threads", "cache_state", "build_variant")),
                 Link(latency(p["p50_median"]), point_href(p, "")), linked(p["ops_median"], p, ""),
                 notes_text(p)] for _, p in mine.sort_values(["threads", "cache_state"]).iterrows()]
        text = Markup("Run [{}]({}) · {} · {} {} · [all runs of this workload]({})").format(
            escape_text(first["run_id"]), run_href(first["run_id"], ""), date(first["started_at"]),
            escape_text(first["engine"]), escape_text(first["engine_version"]),
            workload_href(workload, ""))
        sections.append(Section(workload, text=text, anchor=slug(workload).lower(), tables=[
            Table(("Series", "p50 latency µs", "p50 throughput ops/s", "Notes"), rows,
                  (False, True, True, False))]))
    intro = Markup("The newest run of every workload: median latency (p50 of each process, median "
                   "over repetitions) and median throughput, with what the number depends on.")
    return Page("Latest refresh", intro, sections)


def percentiles_page(points: pd.DataFrame) -> Page:
    sections = []
    for workload, mine in latest_points(points).groupby("workload", sort=True):
        rows = [[describe(p), *(Link(latency(p[c]), point_href(p, "")) for c in
                                ("p50_median", "p95_median", "p99_median", "p999_median",
                                 "max_median")),
                 Link(p["run_id"], run_href(p["run_id"], ""))]
                for _, p in mine.sort_values(["threads", "cache_state"]).iterrows()]
        sections.append(Section(workload, anchor=slug(workload).lower(), tables=[
            Table(("Series", "p50 µs", "p95 µs", "p99 µs", "p99.9 µs", "max µs", "Run"), rows,
                  (False, True, True, True, True, True, False))]))
    intro = Markup("Latency percentiles of each workload's newest run, in microseconds per "
                   "operation: each is the median over the measured repetitions of the value one "
                   "process reported (or that was interpolated from its histogram, see "
                   "[methodology](methodology.md#latency-percentiles)). max is the median of the "
                   "per-process maxima.")
    return Page("Percentiles", intro, sections)


def drift_pct(windows: pd.DataFrame) -> float | None:
    """Change of the windowed p50 from the first to the last window, in percent."""
    ordered = windows.sort_values("window")
    if len(ordered) < 2:
        return None
    return delta_pct(ordered.iloc[-1]["qps_p50"], ordered.iloc[0]["qps_p50"])


def window_rows(windows: pd.DataFrame, href: str) -> list[list[Any]]:
    return [[Link(str(int(w["window"]) + 1), href), f"{w['t_from']:.0f}–{w['t_to']:.0f}",
             num(w["intervals"]), Link(num(w["qps_p50"]), href), Link(num(w["qps_p95"]), href),
             Link(num(w["qps_min"]), href)]
            for _, w in windows.sort_values("window").iterrows()]


def _history_rows(series_windows: pd.DataFrame) -> list[list[Any]]:
    """Drift of the first measured invocation of every run of one series, newest first."""
    rows = []
    firsts = series_windows.sort_values("seq").groupby("run_id", sort=False)
    for run_id, windows in firsts:
        first_seq = windows["seq"].min()
        mine = windows[windows["seq"] == first_seq]
        href = f"{run_href(run_id, '')}#{anchor(first_seq)}"
        rows.append((mine.iloc[0]["started_at"], [
            Link(run_id, href), date(mine.iloc[0]["started_at"]),
            f"{mine.iloc[0]['engine']} {mine.iloc[0]['engine_version']}",
            Link(signed_pct(drift_pct(mine)), href)]))
    return [row for _, row in sorted(rows, key=lambda r: r[0], reverse=True)]


def sustained_page(windows: pd.DataFrame, intervals: pd.DataFrame) -> Page:
    sections = []
    for index, (key, series) in enumerate(windows.groupby("series_key", sort=False)):
        newest = series.sort_values(["started_at", "run_id"]).iloc[-1]
        run = series[series["run_id"] == newest["run_id"]]
        first = run[run["seq"] == run["seq"].min()]
        if len(first) < 2:  # a short run: too few intervals for a first and a last window
            continue
        href = f"{run_href(newest['run_id'], '')}#{anchor(first.iloc[0]['seq'])}"
        points = intervals[(intervals["series_key"] == key)]
        chart = charts.drift_chart([{"label": f"run {newest['run_id']}",
                                     "t": points["t"].tolist(), "qps": points["value"].tolist()}],
                                   f"drift-{index}") if len(points) else ""
        text = Markup("Newest run [{}]({}): drift of the windowed p50 from the first to the last "
                      "window **{}**.").format(escape_text(newest["run_id"]), href,
                                               signed_pct(drift_pct(first)))
        tables = [Table(("Window", "Seconds", "Intervals", "p50 ops/s", "p95 ops/s", "min ops/s"),
                        window_rows(first, href), (False, False, True, True, True, True)),
                  Table(("Run", "Started", "Engine", "Drift %"), _history_rows(series),
                        (False, False, False, True))]
        title = f"{newest['workload']} · {describe(newest)}"
        sections.append(Section(title, text=text, tables=tables, chart=chart))
    intro = Markup(
        "Time-bounded runs that report throughput per interval (RocksDB `--report_interval_seconds`"
        "). Intervals are grouped into windows of five; each window shows the p50 and p95 of its "
        "interval throughputs. **Drift %** = (p50 of the last window − p50 of the first) ÷ p50 "
        "of the first × 100: a negative drift means the engine slowed down as it ran "
        "(compaction debt, cache churn). The second table gives the drift of every run of the "
        "series.")
    return Page("Sustained runs", intro, sections,
                empty="No run has reported interval throughput yet (run suite=nightly on RocksDB).")

