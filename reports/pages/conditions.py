"""Cache-state and scaling pages (pure): cold/warm/hot per workload, threads sweeps.

Cache-state figures use every measured invocation that ran to the end, including those whose
residency missed the declared state (status condition_not_met): those are flagged, not hidden.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from markupsafe import Markup

from ..data.frames import records
from . import charts
from .caveats import caveat_warnings
from .format import MISSING, Link, date, escape_text, is_missing, latency, slug
from .labels import CACHE_ORDER, Labeler
from .point_groups import PointGroups
from .shared import run_href
from .tables import Page, Section, Table, describe, linked, newest_positions, point_href

def condition_cell(point: pd.Series | dict[str, Any], base: str) -> Link:
    """'yes (3/3)' or a visible '⚠ NOT MET (1/3)' linking to the invocations."""
    ran = int(point["n"]) - int(point["n_failed"])
    met = ran - int(point["n_not_met"])
    text = f"yes ({met}/{ran})" if point["n_not_met"] == 0 else f"⚠ NOT MET ({met}/{ran})"
    return Link(text, point_href(point, base))


def _cache_order(point: dict[str, Any]) -> tuple[int, bool, str]:
    """Cold, warm, hot, then others by name, a missing state last (sort_values' order)."""
    state = point["cache_state"]
    missing = is_missing(state)
    return CACHE_ORDER.get(state, 9), missing, "" if missing else str(state)


def _cache_rows(group: list[dict[str, Any]], base: str) -> list[list[Any]]:
    rows = []
    for p in sorted(group, key=_cache_order):
        rows.append([p["cache_state"], Link(date(p["started_at"]), run_href(p["run_id"], base)),
                     linked(p["ops_ran_median"], p, base),
                     Link(latency(p["p50_ran_median"]), point_href(p, base)),
                     Link(latency(p["p99_ran_median"]), point_href(p, base)),
                     linked(p["residency_median"], p, base, 1), condition_cell(p, base)])
    return rows


def _series_by_workload(latest: pd.DataFrame, series: np.ndarray
                        ) -> dict[str, list[list[dict[str, Any]]]]:
    """Per workload (sorted): the records of each series (`series`: each row's, numbered as
    first seen) in more than one cache state."""
    by_workload: dict[str, dict[int, list[dict[str, Any]]]] = {}
    for code, point in zip(series.tolist(), records(latest)):
        if not is_missing(point["workload"]):  # groupby("workload") drops a missing one
            by_workload.setdefault(point["workload"], {}).setdefault(code, []).append(point)
    return {workload: [g for g in by_workload[workload].values() if _cache_states(g) >= 2]
            for workload in sorted(by_workload)}


def _cache_states(group: list[dict[str, Any]]) -> int:
    """How many distinct cache states a series' records have (nunique: a missing one is none)."""
    return len({p["cache_state"] for p in group if not is_missing(p["cache_state"])})


def cache_state_sections(points: pd.DataFrame, base: str,
                         groups: PointGroups | None = None) -> list[Section]:
    """Per workload and data set: the newest point of each cache state of each otherwise-equal
    series, one table per series (a 100k-key and a 1M-key data set are never one row).
    `groups`: the points' identity, factorized (point_groups)."""
    if points.empty:
        return []
    numbered = groups or PointGroups(points)
    identity = points[["started_at", "run_id"]].assign(identity=numbered.ids())
    newest = newest_positions(identity, ["identity"])  # of each series and cache state
    latest = points.iloc[newest]
    sections = []
    series = numbered.ids(newest, drop=("cache_state",))
    for workload, groups in _series_by_workload(latest, series).items():
        labeler = Labeler.of([g[0] for g in groups], drop=("workload", "cache_state"),
                             always=("threads",))
        for index, group in enumerate(sorted(groups, key=lambda g: labeler.label(g[0]))):
            warnings = [f"{int(p['n_not_met'])} measured invocation(s) of run {p['run_id']} missed "
                        f"the {p['cache_state']} residency bound"
                        for p in group if p["n_not_met"] > 0]
            sections.append(Section(
                f"{workload} · {labeler.label(group[0])}",
                text=Markup("Every row: {}.").format(escape_text(labeler.shared or MISSING)),
                tables=[Table(("Cache", "Run", "ops/s", "p50 µs", "p99 µs", "Residency %",
                               "Condition met"), _cache_rows(group, base),
                              (False, False, True, True, True, True, False))],
                warnings=caveat_warnings(group) + warnings,
                anchor=slug(workload).lower() if index == 0 else ""))
    return sections


def cache_states_page(points: pd.DataFrame, groups: PointGroups | None = None) -> Page:
    intro = Markup(
        "The newest run of each cache state, for series that differ only in their cache state, "
        "one table per workload and data set. "
        "Figures are medians over the measured invocations that ran to the end; **Residency %** "
        "is the share of the data set's pages in the page cache right before the process "
        "started, and **Condition met** says how many of those invocations stayed within the "
        "state's bound (cold ≤ 5 %, warm and hot ≥ 95 %). See [methodology](methodology.md).")
    return Page("Cache states", intro, cache_state_sections(points, "", groups), wide=True,
                empty="No series was measured in more than one cache state yet.")


def efficiency_pct(agg: float, threads: int, agg_one: float | None) -> float | None:
    """Parallel efficiency = agg(n) / (n · agg(1)) · 100; None without a 1-thread point."""
    if is_missing(agg) or agg_one is None or is_missing(agg_one) or agg_one == 0 or threads < 1:
        return None
    return float(agg) / (threads * float(agg_one)) * 100.0


def scaling_rows(group: pd.DataFrame, base: str) -> list[list[Any]]:
    group = group.sort_values("threads")
    ones = group[group["threads"] == 1]["ops_median"]
    agg_one = float(ones.iloc[0]) if len(ones) and not is_missing(ones.iloc[0]) else None
    rows = []
    for _, p in group.iterrows():
        threads = int(p["threads"])
        per_thread = None if is_missing(p["ops_median"]) else p["ops_median"] / threads
        eff = efficiency_pct(p["ops_median"], threads, agg_one)
        rss = None if is_missing(p["rss_max_kb"]) else p["rss_max_kb"] / 1024
        rows.append([Link(str(threads), point_href(p, base)), linked(p["ops_median"], p, base),
                     linked(per_thread, p, base), linked(eff, p, base, 1),
                     linked(rss, p, base, 1),
                     Link(f"{int(p['n_failed'])} of {int(p['n'])}", point_href(p, base))])
    return rows


def scaling_groups(points: pd.DataFrame, groups: PointGroups | None = None
                   ) -> list[pd.DataFrame]:
    """Per otherwise-equal series: the newest run that measured two or more thread counts.
    `groups`: the points' identity, factorized (point_groups)."""
    if points.empty:
        return []
    series = pd.Series((groups or PointGroups(points)).ids(drop=("threads",)), index=points.index)
    # The points of runs that swept threads in their series, found in one pass: a long history
    # has hundreds of series and few sweeps.
    thread_counts = points.groupby([series, points["run_id"]])["threads"].transform("nunique")
    swept = (thread_counts >= 2).to_numpy()
    ids, run_ids, rows = series.to_numpy(), points["run_id"].to_numpy(), np.flatnonzero(swept)
    newest = rows[newest_positions(points[["started_at", "run_id"]].iloc[rows].assign(
        group=ids[rows]), ["group"])]
    newest_run = dict(zip(ids[newest], run_ids[newest]))  # series → the run of its newest sweep
    chosen = swept & (run_ids == pd.Series(ids).map(newest_run).to_numpy())
    # Each group is one run's points (its series' newest sweep): already in run order.
    sweeps = [mine for _, mine in points[chosen].groupby(series[chosen], sort=True)]
    return sorted(sweeps, key=lambda g: (g.iloc[0]["workload"], describe(g.iloc[0], ("threads",))))


def curve(group: pd.DataFrame) -> dict[str, Any]:
    group = group.sort_values("threads")
    first = group.iloc[0]
    return {"label": describe(first, ("threads",)) + f" · run {first['run_id']}",
            "x": [int(t) for t in group["threads"]], "y": group["ops_median"].tolist(),
            "run_ids": group["run_id"].tolist()}


def scaling_page(points: pd.DataFrame, groups: PointGroups | None = None) -> Page:
    sections = []
    by_workload: dict[str, list[pd.DataFrame]] = {}
    for group in scaling_groups(points, groups):
        by_workload.setdefault(group.iloc[0]["workload"], []).append(group)
    for index, (workload, groups) in enumerate(sorted(by_workload.items())):
        tables = [Table(("Threads", "Aggregate ops/s", "Per-thread ops/s", "Efficiency %",
                         "Peak RSS MB", "Failures"), scaling_rows(g, "")) for g in groups]
        text = Markup("<br>".join(f"Table {i + 1}: " + str(Markup.escape(describe(g.iloc[0], ("threads",))))
                                  + f" (run {Markup.escape(g.iloc[0]['run_id'])})"
                                  for i, g in enumerate(groups)))
        chart = charts.scaling_chart([curve(g) for g in groups], f"scaling-{index}")
        sections.append(Section(workload, text=text, tables=tables, chart=chart,
                                warnings=caveat_warnings(pd.concat(groups)),
                                anchor=slug(workload).lower()))
    intro = Markup(
        "Threads sweeps from the newest run that measured several thread counts of a series. "
        "Aggregate ops/s is the engine's throughput over all threads (see "
        "[methodology](methodology.md#throughput) for the formula per engine); per-thread = "
        "aggregate ÷ threads; **efficiency % = agg(n) / (n · agg(1)) · 100**; peak RSS is the "
        "largest maximum resident set size over the point's measured processes; failures count "
        "measured invocations that did not run to the end. The dotted line is linear scaling.")
    return Page("Scaling", intro, sections, empty="No run has measured a threads sweep yet.")
