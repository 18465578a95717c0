"""The fleet page (pure): the same series on each machine profile, side by side.

A machine here is a machine profile on the hardware its runs measured (profile name and
fingerprint): two hosts that share a profile but differ in hardware are two columns, never one.
Each trend line is one machine; a series is drawn with one line per machine in the same chart,
so machines are compared by eye and never averaged into one line. No verdict is drawn across
machines (the analysis core refuses different machines unless asked, and then names them): this
page shows each machine's own medians, each linked to the invocation that produced it.
"""
from __future__ import annotations

from typing import Any

import pandas as pd
from markupsafe import Markup

from . import charts
from .format import MISSING, Link, num
from .machine_pages import machine_href
from .workload_page import chart_series
from .labels import IMPORT_PREFIX, Labeler, machine_text
from .pages import profile_of, run_href
from .tables import Page, Section, Table, describe, group_key, linked, with_identity

CHARTS_SHOWN = 12  # the series measured on the most machines (then with the most runs)


def with_machines(points: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """points + `machine`: the profile name and the fingerprint it measured on."""
    profiles = dict(zip(runs["run_id"], (profile_of(c) for c in runs["config"])))
    out = with_identity(points)
    out["machine"] = [f"{machine_text(f)} (imported)" if str(f).startswith(IMPORT_PREFIX)
                      else f"{profiles.get(r, 'unknown profile')} · {f[:8]}"
                      for r, f in zip(out["run_id"], out["machine_fingerprint"])]
    return out


def _side_by_side(frame: pd.DataFrame, machines: list[str], keys: list[str]) -> Table:
    """One row per series, those measured on the most machines first (what a fleet view is
    for), labelled by what differs between the rows (the section says what they share)."""
    groups = sorted(frame.groupby(keys, sort=True, dropna=False),
                    key=lambda g: -g[1]["machine"].nunique())
    labeler = _labeler(frame, keys)
    rows = []
    for _, series in groups:
        latest = series.sort_values(["started_at", "run_id"]).groupby("machine").tail(1)
        by_machine = {p["machine"]: p for _, p in latest.iterrows()}
        runs = series.groupby("machine")["run_id"].nunique()
        cells = [linked(by_machine[m]["ops_median"], by_machine[m], "../") if m in by_machine
                 else None for m in machines]
        counts = " / ".join(str(int(runs.get(m, 0))) for m in machines)
        rows.append([series.iloc[-1]["workload"], labeler.label(series.iloc[-1].drop("machine_fingerprint")),
                     *cells, counts])
    return Table(("Workload", "Series", *machines, "Runs per machine"), rows,
                 (False, False, *[True] * len(machines), True))


def _labeler(frame: pd.DataFrame, keys: list[str]) -> Labeler:
    """Labels of the series (not of machines: a row spans them)."""
    one_per_series = frame.drop_duplicates(keys).drop(columns=["machine_fingerprint"])
    return Labeler.of(one_per_series.to_dict("records"))


def _charts(frame: pd.DataFrame, keys: list[str]) -> list[Section]:
    """One chart per series, one line (with its min–max band) per machine."""
    groups = sorted(frame.groupby(keys, sort=False, dropna=False),
                    key=lambda g: (-g[1]["machine"].nunique(), -g[1]["run_id"].nunique(),
                                   describe(g[1].iloc[-1])))
    sections = []
    for index, (_, series) in enumerate(groups[:CHARTS_SHOWN]):
        title = f"{series.iloc[-1]['workload']}: {describe(series.iloc[-1])}"
        sections.append(Section(title, chart=charts.trend_chart(machine_lines(series),
                                                                f"fleet-{index}")))
    return sections


def machine_lines(series: pd.DataFrame) -> list[dict[str, Any]]:
    """The trend lines of one series (rows of `with_machines`), one per machine."""
    lines = chart_series(series.assign(series_key=series["machine"]),
                         Labeler.of(series.drop_duplicates("machine").to_dict("records")))
    for line in lines:
        line["label"] = line["key"]  # the machine, not the series: every line is one machine
    return lines


def _machines_table(frame: pd.DataFrame, runs: pd.DataFrame) -> Table:
    rows = []
    for machine, mine in frame.groupby("machine", sort=True):
        newest = mine.sort_values(["started_at", "run_id"]).iloc[-1]
        run_ids = set(mine["run_id"])
        shas = runs[runs["run_id"].isin(run_ids)]["binary_sha256"].dropna().unique()
        rows.append([Link(machine, machine_href(newest["machine_fingerprint"], "../")),
                     num(len(run_ids)), Link(newest["run_id"], run_href(newest["run_id"], "../")),
                     ", ".join(sorted(s[:12] for s in shas)) or MISSING])
    return Table(("Machine (profile · fingerprint)", "Runs", "Newest run", "Engine binaries (sha256)"),
                 rows, (False, True, False, False))


def fleet_page(points: pd.DataFrame, runs: pd.DataFrame) -> Page:
    """`points` and `runs` as read by reports.queries; links are from fleet/."""
    intro = Markup("The same series measured on each machine profile, side by side: each column "
                   "and each chart line is one machine (profile · hardware fingerprint), never "
                   "several. Numbers are medians of the newest run on that machine and link to the "
                   "invocation behind them; each machine's own history and verdicts are on its "
                   "workload and run pages.")
    if points.empty:
        return Page("Fleet", intro, [])
    frame = with_machines(points[points["ops_median"].notna()], runs)
    machines = sorted(frame["machine"].unique())
    keys = group_key(frame, ("machine_fingerprint",))
    shared = _labeler(frame, keys).shared
    sections = [Section("Machines", tables=[_machines_table(frame, runs)]),
                Section("Same series on each machine",
                        text=Markup("Median ops/s of the newest run per machine, series measured "
                                    "on the most machines first; a dash: not measured there. "
                                    "Every row: {}.").format(shared or MISSING),
                        tables=[_side_by_side(frame, machines, keys)])]
    return Page("Fleet", intro, sections + _charts(frame, keys), wide=True)
