"""The fleet page (pure): the same series on each machine profile, side by side.

A machine here is a machine profile on the hardware its runs measured (profile name and
fingerprint): two hosts that share a profile but differ in hardware are two columns, never one.
Each trend line is one machine; a series is drawn with one line per machine in the same chart,
so machines are compared by eye and never averaged into one line. No verdict is drawn across
machines (the analysis core refuses different machines unless asked, and then names them): this
page shows each machine's own medians, each linked to the invocation that produced it.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd
from markupsafe import Markup

from ..data.frames import records
from . import charts
from .format import MISSING, Link, num
from .labels import IMPORT_PREFIX, Labeler, machine_text
from .machine_pages import machine_href
from .point_groups import PointGroups
from .shared import profile_of, run_href
from .tables import Page, Section, Table, describe, linked, newest_positions
from .workload_page import chart_series

CHARTS_SHOWN = 12  # the series measured on the most machines (then with the most runs)


def with_machines(points: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """points + `machine`: the profile name and the fingerprint it measured on."""
    profiles = dict(zip(runs["run_id"], (profile_of(c) for c in runs["config"])))
    out = points.copy(deep=False)  # a column added, the points' arrays never written into
    # Named once per (run, fingerprint), not once per point.
    pair = out.groupby(["run_id", "machine_fingerprint"], sort=False,
                       dropna=False).ngroup().to_numpy()
    firsts = np.unique(pair, return_index=True)[1]
    names = np.array([f"{machine_text(f)} (imported)" if str(f).startswith(IMPORT_PREFIX)
                      else f"{profiles.get(r, 'unknown profile')} · {f[:8]}"
                      for r, f in zip(out["run_id"].to_numpy()[firsts],
                                      out["machine_fingerprint"].to_numpy()[firsts])], dtype=object)
    out["machine"] = names[pair]
    return out


SERIES_DROP = ("machine_fingerprint",)  # a series of the fleet spans machines


def _series_ids(frame: pd.DataFrame, groups: PointGroups, rows: np.ndarray,
                first_seen: np.ndarray) -> pd.Series:
    """Each point of `frame` (`rows` of the grouped points) by its series, numbered in the
    order of its key (one grouping of the points for the table and the charts, not one sort
    and one copy per series)."""
    return pd.Series(groups.in_key_order(first_seen, rows, drop=SERIES_DROP), index=frame.index)


def _last_positions(ids: pd.Series) -> np.ndarray:
    """Series id → the position of its last point in the frame."""
    positions = np.flatnonzero(~ids.duplicated(keep="last").to_numpy())
    last = np.empty(len(positions), dtype=np.int64)
    last[ids.to_numpy()[positions]] = positions
    return last


@dataclasses.dataclass(frozen=True)
class _Coded:
    """The fleet frame's machines and runs as integer codes (pd.factorize; a missing value is
    a code of its own): its groupings are integer passes, not hashes of two million strings (a
    10,000-run history's fleet page took 4.1-4.6 CPU-s, then 3.6-3.8)."""
    machine_codes: np.ndarray
    machine_names: np.ndarray
    run_codes: np.ndarray
    run_ids: np.ndarray

    @classmethod
    def of(cls, frame: pd.DataFrame) -> "_Coded":
        machines, machine_names = pd.factorize(frame["machine"].to_numpy(), use_na_sentinel=False)
        runs, run_ids = pd.factorize(frame["run_id"].to_numpy(), use_na_sentinel=False)
        return cls(machines, np.asarray(machine_names, dtype=object), runs,
                   np.asarray(run_ids, dtype=object))


def _packed(first: np.ndarray, second: np.ndarray, width: int) -> np.ndarray:
    """Pairs of codes as one: first * width + second (`second` < width)."""
    return first.astype(np.int64) * width + second


def _side_by_side(frame: pd.DataFrame, machines: list[str], ids: pd.Series,
                  labeler: Labeler, coded: _Coded) -> Table:
    """One row per series, those measured on the most machines first (what a fleet view is
    for), labelled by what differs between the rows (the section says what they share)."""
    series_ids, width = ids.to_numpy(), len(coded.machine_names)
    last = _last_positions(ids)
    pairs = _packed(series_ids, coded.machine_codes, width)  # (series, machine)
    on_machines = np.bincount(np.unique(pairs) // width, minlength=len(last))
    keyed = frame[["started_at", "run_id"]].assign(series_id=series_ids,
                                                   machine=coded.machine_codes)
    positions = newest_positions(keyed, ["series_id", "machine"])
    newest: dict[int, dict[str, dict[str, Any]]] = {}
    # Rows as records made in one call each, not a Series per point (hundreds of series).
    for series, p in zip(series_ids[positions], records(frame.iloc[positions])):
        newest.setdefault(series, {})[p["machine"]] = p
    lasts = records(frame.iloc[last].drop(columns=["machine_fingerprint"]))
    n_runs = len(coded.run_ids)
    runs = np.bincount(np.unique(_packed(pairs, coded.run_codes, n_runs)) // n_runs,
                       minlength=len(last) * width)
    code_of = {name: code for code, name in enumerate(coded.machine_names)}
    rows = []
    for series in sorted(range(len(last)), key=lambda s: -on_machines[s]):
        by_machine, point = newest[series], lasts[series]
        cells = [linked(by_machine[m]["ops_median"], by_machine[m], "../") if m in by_machine
                 else None for m in machines]
        counts = " / ".join(str(int(runs[series * width + code_of[m]])) for m in machines)
        rows.append([point["workload"], labeler.label(point), *cells, counts])
    return Table(("Workload", "Series", *machines, "Runs per machine"), rows,
                 (False, False, *[True] * len(machines), True))


def _labeler(frame: pd.DataFrame, first_seen: np.ndarray) -> Labeler:
    """Labels of the series (not of machines: a row spans them); `first_seen`: each point's
    series, numbered as first seen."""
    firsts = np.unique(first_seen, return_index=True)[1]  # the first point of each, in order
    return Labeler.of(records(frame.iloc[firsts].drop(columns=["machine_fingerprint"])))


def _charts(frame: pd.DataFrame, ids: pd.Series) -> list[Section]:
    """One chart per series, one line (with its min–max band) per machine."""
    by_series = frame.groupby(ids)
    positions = by_series.indices  # series id → its points' positions, oldest first
    on_machines, runs = by_series["machine"].nunique(), by_series["run_id"].nunique()
    last = _last_positions(ids)
    first_seen = np.unique(ids.to_numpy(), return_index=True)[1]
    described = [describe(point) for point in records(frame.iloc[last])]
    shown = sorted(np.argsort(first_seen, kind="stable"),  # ties: the series seen first
                   key=lambda s: (-on_machines[s], -runs[s], described[s]))
    sections = []
    table = charts.ChartRuns("fleet")  # one table of runs for every chart of the page
    for index, series_id in enumerate(shown[:CHARTS_SHOWN]):
        series = frame.iloc[positions[series_id]]
        title = f"{series.iloc[-1]['workload']}: {describe(series.iloc[-1])}"
        sections.append(Section(title, chart=charts.trend_chart(machine_lines(series),
                                                                f"fleet-{index}", runs=table)))
    if sections:  # the table goes with the last chart, once every chart has added its runs
        sections[-1] = dataclasses.replace(sections[-1], chart=sections[-1].chart + table.script())
    return sections


def machine_lines(series: pd.DataFrame) -> list[dict[str, Any]]:
    """The trend lines of one series (rows of `with_machines`), one per machine."""
    lines = chart_series(series.assign(series_key=series["machine"]),
                         Labeler.of(records(series.drop_duplicates("machine"))))
    for line in lines:
        line["label"] = line["key"]  # the machine, not the series: every line is one machine
    return lines


def _machines_table(frame: pd.DataFrame, runs: pd.DataFrame, coded: _Coded) -> Table:
    keyed = frame[["started_at", "run_id"]].assign(machine=coded.machine_codes)
    newest = frame.iloc[newest_positions(keyed, ["machine"])]
    newest = dict(zip(newest["machine"], records(newest)))
    sha = dict(zip(runs["run_id"], runs["binary_sha256"]))
    # Each machine's runs as first seen, as groupby(...).unique() gives them.
    pairs = _packed(coded.machine_codes, coded.run_codes, len(coded.run_ids))
    firsts = np.sort(np.unique(pairs, return_index=True)[1])
    runs_of: dict[str, list[str]] = {}
    for machine, run in zip(coded.machine_codes[firsts], coded.run_codes[firsts]):
        runs_of.setdefault(coded.machine_names[machine], []).append(coded.run_ids[run])
    rows = []
    for machine, run_ids in sorted(runs_of.items()):
        shas = pd.Series([sha.get(r) for r in run_ids], dtype=object).dropna().unique()
        rows.append([Link(machine, machine_href(newest[machine]["machine_fingerprint"], "../")),
                     num(len(run_ids)),
                     Link(newest[machine]["run_id"], run_href(newest[machine]["run_id"], "../")),
                     ", ".join(sorted(s[:12] for s in shas)) or MISSING])
    return Table(("Machine (profile · fingerprint)", "Runs", "Newest run", "Engine binaries (sha256)"),
                 rows, (False, True, False, False))


def fleet_page(points: pd.DataFrame, runs: pd.DataFrame, groups: PointGroups | None = None
               ) -> Page:
    """`points` and `runs` as read by reports.data.queries; links are from fleet/. `groups`: the
    points' identity, factorized (point_groups)."""
    intro = Markup("The same series measured on each machine profile, side by side: each column "
                   "and each chart line is one machine (profile · hardware fingerprint), never "
                   "several. Numbers are medians of the newest run on that machine and link to the "
                   "invocation behind them; each machine's own history and verdicts are on its "
                   "workload and run pages.")
    if points.empty:
        return Page("Fleet", intro, [])
    measured = np.flatnonzero(points["ops_median"].notna().to_numpy())
    # Not a copy of every point when every point is measured (a long history: 150 ms).
    frame = with_machines(points if len(measured) == len(points) else points.iloc[measured],
                          runs)
    machines = sorted(frame["machine"].unique())
    groups = groups or PointGroups(points)
    first_seen = groups.ids(measured, drop=SERIES_DROP)
    labeler, ids = _labeler(frame, first_seen), _series_ids(frame, groups, measured, first_seen)
    coded = _Coded.of(frame)
    sections = [Section("Machines", tables=[_machines_table(frame, runs, coded)]),
                Section("Same series on each machine",
                        text=Markup("Median ops/s of the newest run per machine, series measured "
                                    "on the most machines first; a dash: not measured there. "
                                    "Every row: {}.").format(labeler.shared or MISSING),
                        tables=[_side_by_side(frame, machines, ids, labeler, coded)])]
    return Page("Fleet", intro, sections + _charts(frame, ids), wide=True)
