"""The home page as a dashboard (pure): the newest run in one line, its verdicts (regressions,
then improvements) as sentences, a small trend of each headline series, its numbers, and how to
reproduce it. Verdicts are the analysis core's (reports/data/comparisons.py); this only words them.
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from ..data.comparisons import SiteVerdicts, sorted_rows
from ..data.frames import records
from .caveats import note_lines
from .format import Link, built_href, date, latency, num
from .labels import WITH_WORKLOAD, Labeler, natural_key
from .shared import (machine_line, reproduce_commands, run_href, status_text, workload_href,
                     workload_links)
from .tables import Table, linked, point_href
from .verdict_words import change_text, sentence, verdict_counts, verdict_css
from .workload_page import chart_series

HEADLINE_SERIES = 9  # small trends on the home page (a 3 × 3 grid)
RESULT_ROWS = 20  # rows of the newest run's table on the home page


def run_line(run: pd.Series) -> str:
    """The newest run in one line: when, which engine build, on what machine, how it went."""
    return (f"{date(run['started_at'])} · {run['engine']} {run['engine_version']} "
            f"{run['build_variant']} · {machine_line(run)} · {status_text(run)}: "
            f"{run['n_ok']} of {run['n_invocations']} invocations ok")


def verdict_section(verdicts: SiteVerdicts, runs: pd.DataFrame, points: pd.DataFrame) -> dict:
    """The summarized run's called changes against its previous comparable run, as sentences."""
    comparison = verdicts.previous
    cand = verdicts.candidate
    section: dict[str, Any] = {"run": Link(cand, run_href(cand, "")), "lines": [],
                               "newest_differs": cand != runs.iloc[0]["run_id"]}
    if comparison.report is None:
        section["problem"] = comparison.problem
        return section
    report, base = comparison.report, comparison.base
    mine = points[points["run_id"] == cand]
    by_key = {p["series_key"]: p for p in records(mine)}
    labeler = Labeler.of(records(mine), drop=(), always=WITH_WORKLOAD)
    for row in sorted_rows(report):
        css = verdict_css(row.comparison.verdict)
        if css not in ("tm-slower", "tm-faster"):
            continue
        point = by_key.get(row.series_key)
        name = labeler.label(point) if point is not None else row.label
        href = point_href(point, "") if point is not None else run_href(cand, "")
        section["lines"].append(Link(f"{name}: {sentence(row, 'the newest run', 'the one before')}",
                                     href, css))
    base_run = runs[runs["run_id"] == base].iloc[0]
    section.update(problem="", base=Link(base, run_href(base, "")),
                   base_date=date(base_run["started_at"]),
                   counts=verdict_counts(report), n=len(report.rows))
    return section


def headline_series(points: pd.DataFrame, verdicts: SiteVerdicts) -> list[str]:
    """The series the dashboard draws: the summarized run's, changed ones first, then those
    with the longest history (measured, not imported), newest first."""
    order = [row.series_key for row in sorted_rows(verdicts.previous.report)] \
        if verdicts.previous.report is not None else []
    summarized = set(points.loc[points["run_id"] == verdicts.candidate, "series_key"])
    keys = [k for k in dict.fromkeys(order) if k in summarized]
    keys += sorted(summarized - set(keys))
    measured = points.loc[points["build_variant"] != "imported",
                          ["series_key", "run_id", "started_at"]]
    history = measured.groupby("series_key").agg(runs=("run_id", "size"),
                                                  newest=("started_at", "max"))
    ranked = history.sort_values(["runs", "newest"], ascending=False).index
    keys += [k for k in ranked if k not in set(keys)]
    return keys[:HEADLINE_SERIES]


def _built(link: Link | None) -> Link | None:
    """The cards are HTML put into the built page: their links point at .html pages."""
    return None if link is None else Link(link.text, built_href(link.href), link.css)


def spark_cards(points: pd.DataFrame, verdicts: SiteVerdicts) -> list[dict[str, Any]]:
    """One small trend per headline series: its label, newest value and Δ (coloured by the
    core's verdict) and the chart's data (`charts.spark_chart`)."""
    keys = headline_series(points, verdicts)
    mine = points[points["series_key"].isin(keys)]
    if mine.empty:
        return []
    labeler = Labeler.of(records(mine.drop_duplicates("series_key", keep="last")))
    rows = {r.series_key: r for r in verdicts.previous.report.rows
            if r.metric == "ops_per_sec"} if verdicts.previous.report is not None else {}
    charts = {s["key"]: s for s in chart_series(mine, labeler, base="")}
    cards = []
    for key in keys:
        if key not in charts:
            continue
        newest = mine[mine["series_key"] == key].iloc[-1]
        row = rows.get(key)
        cards.append({
            "title": _built(Link(f"{newest['workload']} · {labeler.label(newest)}",
                                 workload_href(newest["workload"], ""))),
            "value": _built(linked(newest["ops_median"], newest, "", suffix=" ops/s")),
            "change": _built(Link(change_text(row), point_href(newest, ""),
                                  verdict_css(row.comparison.verdict))) if row else None,
            "series": charts[key]})
    return cards


def results_table(run_points: pd.DataFrame) -> Table:
    """The newest run's numbers, one row per series (the first RESULT_ROWS); the rest of its
    columns, and of its rows, are on its page."""
    shown = sorted(records(run_points), key=natural_key)[:RESULT_ROWS]
    labeler = Labeler.of(shown)
    rows = [[Link(p["workload"], workload_href(p["workload"], "")), labeler.label(p),
             linked(p["ops_median"], p, ""), Link(latency(p["p50_median"]), point_href(p, "")),
             Link(latency(p["p99_median"]), point_href(p, "")),
             Link(f"{p['n_ok']}/{p['n']}", point_href(p, ""))] for p in shown]
    return Table(("Workload", "Series", "ops/s", "p50 µs", "p99 µs", "ok/n"), rows,
                 (False, False, True, True, True, True))


def home_page(runs: pd.DataFrame, points: pd.DataFrame, verdicts: SiteVerdicts) -> dict[str, Any]:
    """The dashboard's context (its small trends are charts put into the page as a slot)."""
    newest = runs.iloc[0]
    mine = points[points["run_id"] == newest["run_id"]]
    others = runs[(~runs["verified"].astype(bool)) & (runs["source"] != "import")]
    return {
        "run": Link(newest["run_id"], run_href(newest["run_id"], "")),
        "line": run_line(newest), "caveat": newest.get("caveat") or "",
        "notes": note_lines(newest), "verified": bool(newest["verified"]) or
        newest["source"] == "import", "unverified_notes": "; ".join(newest["notes"] or []),
        "verdicts": verdict_section(verdicts, runs, points),
        "cards": spark_cards(points, verdicts),
        "results": results_table(mine) if len(mine) else None, "n_results": len(mine),
        "reproduce": reproduce_commands(newest),
        "workloads": workload_links(points, ""), "n_runs": len(runs),
        "n_imported": int((runs["source"] == "import").sum()),
        "unverified": [Link(r["run_id"], run_href(r["run_id"], ""))
                       for _, r in others.head(10).iterrows()],
        "n_series": num(points["series_key"].nunique()) if len(points) else "0",
    }
