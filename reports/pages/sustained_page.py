"""Sustained runs (pure): throughput per reporting interval over a time-bounded run, in windows.

Every measured repetition of the newest run is shown: the table is the median window series
(window by window, the median over the repetitions of each repetition's windowed p50, with the
slowest and fastest repetition beside it) and the chart draws every repetition's intervals. The
drift of a run is the drift of its median window series.
"""
from __future__ import annotations

from typing import Any

import pandas as pd
from markupsafe import Markup

from ..data.aggregates import WINDOW_INTERVALS
from . import charts
from .caveats import caveat_warnings
from .format import Link, anchor, date, escape_text, num, signed_pct
from .labels import describe
from .shared import delta_pct, run_href
from .tables import Page, Section, Table

MIN_WINDOWS = 2  # a first and a last window, or there is no drift


def median_windows(windows: pd.DataFrame) -> pd.DataFrame:
    """One run's windows → per window index: the median, min and max over its repetitions of
    the windowed p50, the seconds it spans and how many repetitions reached it."""
    grouped = windows.groupby("window", sort=True)
    return pd.DataFrame({
        "p50": grouped["qps_p50"].median(), "low": grouped["qps_p50"].min(),
        "high": grouped["qps_p50"].max(), "t_from": grouped["t_from"].median(),
        "t_to": grouped["t_to"].median(), "reps": grouped["seq"].nunique(),
    }).reset_index()


def drift_pct(series: pd.DataFrame) -> float | None:
    """Change of the median window series from its first to its last window, in percent."""
    if len(series) < MIN_WINDOWS:
        return None
    ordered = series.sort_values("window")
    return delta_pct(ordered.iloc[-1]["p50"], ordered.iloc[0]["p50"])


def window_rows(series: pd.DataFrame, href: str) -> list[list[Any]]:
    return [[Link(str(int(w["window"]) + 1), href), f"{w['t_from']:.0f}–{w['t_to']:.0f}",
             str(int(w["reps"])), Link(num(w["p50"]), href),
             Link(f"{num(w['low'])}–{num(w['high'])}", href)]
            for _, w in series.iterrows()]


def history_rows(series_windows: pd.DataFrame) -> list[list[Any]]:
    """The drift of the median window series of every run of one series, newest first."""
    rows = []
    for run_id, windows in series_windows.groupby("run_id", sort=False):
        first = windows.iloc[0]
        href = f"{run_href(run_id, '')}#{anchor(windows['seq'].min())}"
        rows.append((first["started_at"], [
            Link(run_id, href), date(first["started_at"]),
            f"{first['engine']} {first['engine_version']}", str(windows["seq"].nunique()),
            Link(signed_pct(drift_pct(median_windows(windows))), href)]))
    return [row for _, row in sorted(rows, key=lambda r: r[0], reverse=True)]


def repetition_lines(intervals: pd.DataFrame, median: pd.DataFrame) -> list[dict[str, Any]]:
    """The chart's lines: each repetition's intervals, thin, under the median window series."""
    lines = [{"label": f"repetition {i + 1} (#{int(seq)})", "t": rep["t"].tolist(),
              "qps": rep["value"].tolist(), "width": 1, "mode": "lines"}
             for i, (seq, rep) in enumerate(intervals.groupby("seq", sort=True))]
    lines.append({"label": "median window series", "color": "#000000", "width": 3,
                  "t": ((median["t_from"] + median["t_to"]) / 2).tolist(),
                  "qps": median["p50"].tolist()})
    return lines


def sustained_section(key: str, series: pd.DataFrame, intervals: pd.DataFrame,
                      index: int) -> Section | None:
    newest = series.sort_values(["started_at", "run_id"]).iloc[-1]
    run = series[series["run_id"] == newest["run_id"]]
    median = median_windows(run)
    if len(median) < MIN_WINDOWS:  # a short run: too few intervals for a first and a last window
        return None
    first_seq = run["seq"].min()
    href = f"{run_href(newest['run_id'], '')}#{anchor(first_seq)}"
    mine = intervals[(intervals["series_key"] == key) & (intervals["run_id"] == newest["run_id"])]
    chart = charts.drift_chart(repetition_lines(mine, median), f"drift-{index}") \
        if len(mine) else ""
    reps = run["seq"].nunique()
    text = Markup("Newest run [{}]({}), {} measured repetition(s): drift of the median window "
                  "series from the first to the last window **{}**. Each window: the median over "
                  "the repetitions of each one's windowed p50, and the slowest to the fastest "
                  "repetition.").format(escape_text(newest["run_id"]), href, reps,
                                        signed_pct(drift_pct(median)))
    tables = [Table(("Window", "Seconds", "Repetitions", "p50 ops/s (median)",
                     "p50 ops/s, slowest–fastest repetition"), window_rows(median, href),
                    (False, False, True, True, True)),
              Table(("Run", "Started", "Engine", "Repetitions", "Drift %"), history_rows(series),
                    (False, False, False, True, True))]
    return Section(f"{newest['workload']} · {describe(newest)}", text=text, tables=tables,
                   chart=chart, warnings=caveat_warnings(run))


def sustained_page(windows: pd.DataFrame, intervals: pd.DataFrame) -> Page:
    sections = [section for index, (key, series) in
                enumerate(windows.groupby("series_key", sort=False))
                if (section := sustained_section(key, series, intervals, index)) is not None]
    intro = Markup(
        "Time-bounded runs that report throughput per interval (RocksDB `--report_interval_seconds`"
        "). Intervals are grouped into windows of five. Every measured repetition counts: a "
        "window's figure is the median over the repetitions of each repetition's windowed p50 "
        "(the *median window series*), shown with the slowest and fastest repetition, and the "
        "chart draws each repetition's intervals under it. **Drift %** = (last window − first "
        "window) ÷ first window × 100 of the median window series: a negative drift means the "
        "engine slowed down as it ran (compaction debt, cache churn). The second table gives "
        "the drift of every run of the series.")
    reported = windows["series_key"].nunique() if len(windows) else 0
    empty = ("No run has reported interval throughput yet (run suite=nightly on RocksDB)."
             if not reported else
             f"{reported} series reported interval throughput, but none had the "
             f"{MIN_WINDOWS * WINDOW_INTERVALS} intervals (two windows) a drift needs: run them "
             f"longer (workload.params.duration).")
    return Page("Sustained runs", intro, sections, empty=empty)

