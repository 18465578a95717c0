"""The page of one workload (pure): its newest run's numbers with the core's verdicts, targets
with gap notes, phase timings and software counters, then every series' trend (table and chart).

Rows are labelled by what differs between them (labels.Labeler); a change is coloured by the
verdict the analysis core gave it (verdict_words), never by its sign.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..data.comparisons import Comparison, sorted_rows
from ..data.frames import records
from .caveats import caveat_warnings, note_lines
from .format import (MISSING, Link, anchor, date, latency, nav_title, num, signed_pct,
                     value_text)
from .labels import Labeler, natural_key
from .shared import cv_pct, delta_pct, interference_cell, run_href, run_html_href
from .tables import Table, linked, newest_positions, point_href
from .verdict_words import change_text, mark, sentence, verdict_css

TREND_VALUES = 5  # newest values of each series in the trend table; the chart has them all
TREND_COLUMNS = ["series_key", "run_id", "first_seq", "ops_median", "engine", "workload",
                 "benchmark", "threads", "cache_state", "params", "build_variant",
                 "machine_fingerprint", "caveat"]
COUNTERS = (("page_faults_median", "Page faults"), ("context_switches_median", "Context switches"),
            ("migrations_median", "CPU migrations"), ("cpu_clock_median", "CPU clock ms"))


def newest_per_series(points: pd.DataFrame) -> pd.DataFrame:
    """Each series' newest point (points are oldest first)."""
    return points.drop_duplicates("series_key", keep="last")


def _verdict_rows(comparison: Comparison | None) -> dict[str, Any]:
    """series key → the core's row for it (ops/s first: the metric the tables show)."""
    if comparison is None or comparison.report is None:
        return {}
    rows: dict[str, Any] = {}
    for row in comparison.report.rows:
        if row.metric == "ops_per_sec" or row.series_key not in rows:
            rows[row.series_key] = row
    return rows


def latest_table(latest: pd.DataFrame, labeler: Labeler, verdicts: dict[str, Any]) -> Table:
    """The newest run's points: fewer columns than its run page (spread, MB/s, the params
    shared by every row are there); Δ and verdict are the core's against its previous run."""
    with_mb = bool(latest["mb_median"].notna().any())
    with_interference = "interference_median" in latest and \
        bool(latest["interference_median"].notna().any())
    rows = []
    for p in sorted(records(latest), key=natural_key):
        href = point_href(p, "../")
        row = verdicts.get(p["series_key"])
        cv = cv_pct(p["ops_std"], p["ops_mean"])
        cells = [labeler.label(p), linked(p["ops_median"], p, "../"),
                 Link(change_text(row), href, verdict_css(row.comparison.verdict)) if row else None,
                 Link(mark(row.comparison.verdict), href, verdict_css(row.comparison.verdict))
                 if row else "no earlier run",
                 Link(latency(p["p50_median"]), href), Link(latency(p["p99_median"]), href)]
        cells += [linked(p["mb_median"], p, "../", 1)] if with_mb else []
        cells += [Link(MISSING if cv is None else f"{cv:.1f}%", href),
                  Link(f"{p['n_ok']}/{p['n']}", href)]
        cells += [Link(interference_cell(p), href)] if with_interference else []
        rows.append(cells)
    columns = ["Series", "ops/s", "Δ ops/s", "Verdict", "p50 µs", "p99 µs"] + \
        ["MB/s"] * with_mb + ["CV", "ok/n"] + ["Interference %"] * with_interference
    numeric = tuple(c not in ("Series", "Verdict") for c in columns)
    return Table(tuple(columns), rows, numeric)


def verdict_lines(latest: pd.DataFrame, comparison: Comparison | None,
                  labeler: Labeler) -> list[Link]:
    """The called changes as sentences, regressions first, each linking to its numbers."""
    if comparison is None or comparison.report is None:
        return []
    points = {p["series_key"]: p for p in records(latest)}
    base = comparison.report.base["run_id"]
    lines = []
    for row in sorted_rows(comparison.report):
        point = points.get(row.series_key)
        if point is None or verdict_css(row.comparison.verdict) not in ("tm-slower", "tm-faster"):
            continue
        text = f"{labeler.label(point)}: " + sentence(row, "this run", f"run {base}")
        lines.append(Link(text, point_href(point, "../"), verdict_css(row.comparison.verdict)))
    return lines


def target_table(results: list[Any], latest: pd.DataFrame, labeler: Labeler,
                 gap_notes: dict[str, str]) -> Table | None:
    """The newest run's targets and bars on this workload's series, with a gap note beside a
    miss (`gap_notes` in the workload config, by metric)."""
    points = {p["series_key"]: p for p in records(latest)}
    rows = []
    for t in results:
        point = points.get(t.series_key)
        if point is None:
            continue
        metric = t.target.split()[0]
        note = gap_notes.get(metric, "") if t.status != "meets" else ""
        rows.append([labeler.label(point), t.target,
                     linked(t.observed, point, "../", 2) if t.observed is not None else None,
                     ("✓ " if t.status == "meets" else "⚠ ") + t.status, note or MISSING])
    if not rows:
        return None
    return Table(("Series", "Target", "Observed (median)", "Status", "Gap note"), rows,
                 (False, False, True, False, False))


def phase_table(phases: pd.DataFrame | None, run_id: str, workload: str) -> Table | None:
    """What each phase of this workload cost in its newest run: setup, warm-ups, measured."""
    if phases is None or phases.empty:
        return None
    mine = phases[(phases["run_id"] == run_id) & (phases["workload"] == workload)]
    if mine["phase"].nunique() < 2:
        return None  # one phase is no breakdown
    rows = [[p["phase"], p["benchmarks"],
             Link(str(int(p["n"])), run_href(run_id, "../") + f"#{anchor(p['first_seq'])}"),
             num(p["wall_total"], 2), num(p["wall_median"], 3)] for p in records(mine)]
    return Table(("Phase", "Benchmarks", "Invocations", "Wall s total", "Wall s median"), rows,
                 (False, False, True, True, True))


def counters_table(latest: pd.DataFrame, labeler: Labeler) -> Table | None:
    """perf's software counters per invocation (median over the measured repetitions)."""
    present = [(column, title) for column, title in COUNTERS
               if column in latest and latest[column].notna().any()]
    if not present:
        return None
    rows = [[labeler.label(p)] + [linked(p[c], p, "../", 1 if c == "cpu_clock_median" else 0)
                                  for c, _ in present]
            for p in sorted(records(latest), key=natural_key)]
    return Table(("Series",) + tuple(title for _, title in present), rows)


def trend_rows(points: pd.DataFrame, labeler: Labeler, newest: dict[str, Any]) -> list[list[Any]]:
    """Per series: its TREND_VALUES newest medians, newest first, each with the plain change
    from the one before it; the newest is coloured by the core's verdict when it was judged."""
    rows = []
    # Only what a cell needs, and only the newest values: a long history has 1,000 runs a
    # series, so each series' tail is taken by position and made records in one call.
    needed = points.loc[points["ops_median"].notna(), [c for c in TREND_COLUMNS if c in points]]
    positions = sorted(needed.groupby("series_key", sort=False).indices.items(),
                       key=lambda item: item[1][0])  # series as first measured
    tails = [p[-(TREND_VALUES + 1):] for _, p in positions]
    rows_of = records(needed.iloc[np.concatenate(tails)]) if tails else []
    ends = np.cumsum([len(t) for t in tails]).tolist()
    for (key, mine), end, tail in zip(positions, ends, tails):
        values = rows_of[end - len(tail):end]
        cells: list[Any] = []
        for index in range(len(values) - 1, max(len(values) - 1 - TREND_VALUES, -1), -1):
            p, before = values[index], values[index - 1] if index else None
            change = delta_pct(p["ops_median"], before["ops_median"]) if before else None
            text = num(p["ops_median"]) + ("" if change is None else f" ({signed_pct(change)})")
            row = newest.get(key) if index == len(values) - 1 else None
            cells.append(Link(text, point_href(p, "../"),
                              verdict_css(row.comparison.verdict) if row else ""))
        cells += [None] * (TREND_VALUES - len(cells))
        rows.append((natural_key(values[-1]), [labeler.label(values[-1]), *cells,
                                               str(len(mine))]))
    return [row for _, row in sorted(rows, key=lambda r: r[0])]


def trend_table(points: pd.DataFrame, labeler: Labeler | None = None,
                newest: dict[str, Any] | None = None) -> Table:
    labeler = labeler or Labeler.of(records(newest_per_series(points)))
    columns = ("Series", "Newest", "Previous") + \
        tuple(f"{n}{'rd' if n == 3 else 'th'} newest" for n in range(3, TREND_VALUES + 1))
    return Table(columns + ("Runs",), trend_rows(points, labeler, newest or {}),
                 (False,) + (True,) * TREND_VALUES + (True,))


def imported_table(values: pd.DataFrame | None, workload: str, points: pd.DataFrame,
                   labeler: Labeler) -> Table | None:
    """The series of this workload that have no ops/s (an import's, a Google Benchmark
    binary's, a command's): each metric's median in its newest runs, newest first."""
    if values is None or values.empty:
        return None
    with_ops = set(points.loc[points["ops_median"].notna(), "series_key"])
    mine = values[(values["workload"] == workload) & ~values["series_key"].isin(with_ops)]
    rows = []
    for (_, metric), group in mine.groupby(["series_key", "metric"], sort=False):
        values_newest = records(group)[::-1][:TREND_VALUES]
        cells = [Link(value_text(v["median"]), run_href(v["run_id"], "../") +
                      f"#{anchor(v['first_seq'])}") for v in values_newest]
        unit = values_newest[0]["unit"]
        rows.append([labeler.label(values_newest[0]), f"{metric} ({unit})" if unit else metric,
                     *cells, *[None] * (TREND_VALUES - len(cells))])
    if not rows:
        return None
    return Table(("Series", "Metric", "Newest", "Previous") +
                 tuple(f"{n}{'rd' if n == 3 else 'th'} newest" for n in range(3, TREND_VALUES + 1)),
                 sorted(rows, key=lambda r: (r[0], r[1])), (False, False) + (True,) * TREND_VALUES)


def values_chart_series(values: pd.DataFrame | None, workload: str, points: pd.DataFrame,
                        labeler: Labeler, metrics: list[str], base: str = "../"
                        ) -> tuple[list[dict[str, Any]], str]:
    """Per series without ops/s, oldest run first: the median and min/max of the first metric
    the workload declares (`metrics:`) that its series have, for `charts.trend_chart`; and
    that metric's axis title ('' when there is none)."""
    if values is None or values.empty or not metrics:
        return [], ""
    with_ops = set(points.loc[points["ops_median"].notna(), "series_key"])
    mine = values[(values["workload"] == workload) & ~values["series_key"].isin(with_ops)]
    metric = next((m for m in metrics if (mine["metric"] == m).any()), "")
    if not metric:
        return [], ""
    mine = mine[mine["metric"] == metric]
    series_list = []
    for key, group in mine.groupby("series_key", sort=False):
        rows = records(group.sort_values("started_at"))
        series_list.append({
            "label": labeler.label(rows[-1]), "key": key, "order": natural_key(rows[-1]),
            "x": [r["started_at"].isoformat() for r in rows],
            "versions": [f"{r['engine']} {r['engine_version']}" for r in rows],
            "pages": [run_html_href(r["run_id"], base) for r in rows],
            "anchors": [anchor(r["first_seq"]) for r in rows],
            "median": [r["median"] for r in rows], "low": [r["low"] for r in rows],
            "high": [r["high"] for r in rows], "run_ids": [r["run_id"] for r in rows]})
    unit = mine["unit"].iloc[0]
    return sorted(series_list, key=lambda s: s["order"]), \
        f"{metric} ({unit}), median of repetitions" if unit else f"{metric}, median of repetitions"


def _per_point(points: pd.DataFrame, base: str) -> dict[str, np.ndarray]:
    """Per point: its run's start (ISO), engine version, page href and its invocation's anchor
    on that page, made once per run and per anchor (200,000 points have 1,000 runs, few
    anchors)."""
    runs = points.drop_duplicates("run_id")
    codes, run_ids = pd.factorize(points["run_id"])
    when = dict(zip(runs["run_id"], (ts.isoformat() for ts in runs["started_at"])))
    version = dict(zip(runs["run_id"], runs["engine"] + " " + runs["engine_version"]))
    seq_codes, seqs = pd.factorize(points["first_seq"])
    anchors = np.array([anchor(s) for s in seqs.tolist()], dtype=object)[seq_codes]
    per_run = {name: np.array([values[r] for r in run_ids], dtype=object)[codes] for name, values
               in (("x", when), ("versions", version),
                   ("pages", {r: run_html_href(r, base) for r in run_ids}))}
    return {"x": per_run["x"], "versions": per_run["versions"], "pages": per_run["pages"],
            "anchors": anchors}


def chart_series(points: pd.DataFrame, labeler: Labeler, base: str = "../") -> list[dict[str, Any]]:
    """Per series, oldest run first: median and min/max ops/s, for `charts.trend_chart`."""
    # Positions and columns, not one copied frame per series.
    measured = points["ops_median"].notna().to_numpy()
    column = {c: points[c].to_numpy() for c in ("run_id", "ops_median", "ops_min", "ops_max")}
    column.update(_per_point(points, base))
    positions = points.groupby("series_key", sort=False).indices
    series_list = []
    for key in points["series_key"].unique():  # as first measured
        mine = positions[key][measured[positions[key]]]
        if not len(mine):
            continue
        last = points.iloc[mine[-1]]
        # Arrays, not lists: the chart's JSON is made from them (a list of each was a fifth
        # of a 10,000-run build's trend charts).
        series_list.append({
            "label": labeler.label(last), "key": key, "order": natural_key(last),
            **{name: column[name][mine] for name in ("x", "versions", "pages", "anchors")},
            "median": column["ops_median"][mine], "low": column["ops_min"][mine],
            "high": column["ops_max"][mine], "run_ids": column["run_id"][mine],
        })
    return sorted(series_list, key=lambda s: s["order"])


def workload_page(workload: str, points: pd.DataFrame,
                  comparisons: dict[str, Comparison] | None = None, *,
                  runs: pd.DataFrame | None = None, targets: dict[str, list[Any]] | None = None,
                  phases: pd.DataFrame | None = None, config: dict[str, Any] | None = None,
                  imported: pd.DataFrame | None = None) -> dict[str, Any]:
    """Everything the workload's page shows. `comparisons`: run → its comparison with its
    previous comparable run (the core's); `targets`: run → its TargetResults; `phases`:
    queries.read_phases; `config`: the workload's config file (notes, gap_notes); `imported`:
    queries.read_imported_values."""
    mine = points[points["workload"] == workload]
    latest_id = mine["run_id"].iloc[newest_positions(mine, ["workload"])[0]]
    latest = mine[mine["run_id"] == latest_id]
    labeler = Labeler.of(records(newest_per_series(mine)))
    comparison = (comparisons or {}).get(latest_id)
    verdicts = _verdict_rows(comparison)
    run = runs[runs["run_id"] == latest_id].iloc[0] if runs is not None else {}
    config = config or {}
    return {
        "name": workload, "title": nav_title(workload), "shared": labeler.shared,
        "notes": [str(n) for n in config.get("notes") or []],
        "latest_run": Link(latest_id, run_href(latest_id, "../")),
        "latest_date": date(latest.iloc[0]["started_at"]),
        "run_notes": note_lines(run) if len(run) else [],
        "caveats": caveat_warnings(mine),
        "latest": latest_table(latest, labeler, verdicts)
        if latest["ops_median"].notna().any() else None,
        "partner": Link(comparison.base, run_href(comparison.base, "../"))
        if comparison is not None and comparison.report is not None else None,
        "problem": comparison.problem if comparison is not None else "no earlier run",
        "verdict_lines": verdict_lines(latest, comparison, labeler),
        "targets": target_table((targets or {}).get(latest_id, []), latest, labeler,
                                dict(config.get("gap_notes") or {})),
        "phases": phase_table(phases, latest_id, workload),
        "counters": counters_table(latest, labeler),
        "trend": trend_table(mine, labeler, verdicts) if mine["ops_median"].notna().any() else None,
        "imported": imported_table(imported, workload, mine, labeler),
        **_trend_series(mine, labeler, imported, workload, list(config.get("metrics") or [])),
    }


def _trend_series(mine: pd.DataFrame, labeler: Labeler, imported: pd.DataFrame | None,
                  workload: str, metrics: list[str]) -> dict[str, Any]:
    """The trend chart's series: ops/s where the series have it, else the workload's first
    declared metric (`series_axis`: that chart's axis title)."""
    series = chart_series(mine, labeler)
    if series:
        return {"series": series, "series_axis": ""}
    values, axis = values_chart_series(imported, workload, mine, labeler, metrics)
    return {"series": values, "series_axis": axis}
