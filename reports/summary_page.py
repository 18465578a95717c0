"""The executive summary (pure): the newest run against its previous comparable run and
against the configured baseline, regressions and improvements first."""
from __future__ import annotations

import dataclasses
from typing import Any

import pandas as pd
from markupsafe import Markup

from orchestrator import stats

from .comparisons import Baseline, Evidence, comparison_rows, geomean_ratio, summary_pair
from .format import MISSING, Link, date, escape_text, signed_pct
from .pages import run_href
from .tables import Page, Section, Table, describe, linked, point_href


def _ci_text(result: stats.Comparison) -> str:
    if result.ci_low != result.ci_low:
        return MISSING
    return f"{result.ci_low:.3f}–{result.ci_high:.3f}"


def _summary_table(rows: list[dict[str, Any]], older: str) -> Table:
    body = []
    for r in rows:
        n, o, result = r["new"], r["old"], r["result"]
        mark = {stats.SLOWER: "⚠ regression (slower)",
                stats.FASTER: "▲ improvement (faster)"}.get(result.verdict, result.verdict)
        href = point_href(n, "")
        body.append([n["workload"], describe(n), linked(o["ops_median"], o, ""),
                     linked(n["ops_median"], n, ""), Link(signed_pct(r["change"]), href),
                     Link(_ci_text(result), href),
                     Link(MISSING if result.p_value != result.p_value else f"{result.p_value:.3f}", href),
                     Link(f"{result.threshold * 100:.1f}%", href),
                     Link(signed_pct(r["p99_change"]), href), mark])
    return Table(("Workload", "Series", f"{older} ops/s", "Latest ops/s", "Δ ops/s",
                  "95% CI of ratio", "p (U test)", "Threshold", "Δ p99", "Verdict"), body,
                 (False, False, True, True, True, True, True, True, True, False))


def _counts(rows: list[dict[str, Any]]) -> str:
    slower = sum(1 for r in rows if r["result"].verdict == stats.SLOWER)
    faster = sum(1 for r in rows if r["result"].verdict == stats.FASTER)
    ratio = geomean_ratio(rows)
    return (f"**{slower} regression{'s' if slower != 1 else ''}**, **{faster} improvement"
            f"{'s' if faster != 1 else ''}** over {len(rows)} series in common, geometric mean of "
            f"throughput ratios {MISSING if ratio is None else f'{ratio:.3f}'}")


def _run_text(run: pd.Series) -> Markup:
    return Markup("[{}]({}) ({}, {} {} {})").format(
        escape_text(run["run_id"]), run_href(run["run_id"], ""), date(run["started_at"]),
        *(escape_text(run[key]) for key in ("engine", "engine_version", "build_variant")))


def _comparison(title: str, against: Markup, rows: list[dict[str, Any]], older: str) -> Section:
    if not rows:
        return Section(title, text=against + Markup(": no series in common, nothing to compare."))
    return Section(title, text=against + Markup(": ") + Markup(_counts(rows)) + Markup("."),
                   tables=[_summary_table(rows, older)])


def _baseline_section(runs: pd.DataFrame, evidence: Evidence, new_id: str,
                      baseline: Baseline) -> tuple[Section, str]:
    """The comparison with the configured baseline, and its one-line headline."""
    title = "Against the configured baseline"
    selector = Markup("<code>{}</code>").format(escape_text(baseline.selector)) \
        if baseline.selector else ""
    if baseline.run_id is None:
        return Section(title, text=escape_text(baseline.problem)), "no baseline run"
    base = runs[runs["run_id"] == baseline.run_id].iloc[0]
    if baseline.run_id == new_id:
        return Section(title, text=Markup("The summarized run is the configured baseline "
                                          "({}) itself.").format(selector)), "it is the baseline"
    rows = comparison_rows(evidence, new_id, baseline.run_id)
    against = Markup("The configured baseline {} is run {}").format(selector, _run_text(base))
    return _comparison(title, against, rows, "Baseline"), _counts(rows) if rows else "no series in common"


def summary_page(runs: pd.DataFrame, evidence: Evidence, baseline: Baseline) -> Page:
    """The newest run (or the newest that has an earlier comparable run) against its previous
    comparable run and against the configured baseline."""
    new_id, old_id = summary_pair(runs, evidence.points)
    latest = runs[runs["run_id"] == new_id].iloc[0]
    warnings = [] if latest["verified"] else \
        [f"the compared run is UNVERIFIED: {'; '.join(str(n) for n in latest['notes'] or [])}"]
    header = Markup("Latest run [{}]({}) · {} · {} {} ({}) on {}").format(
        escape_text(latest["run_id"]), run_href(latest["run_id"], ""), date(latest["started_at"]),
        *(escape_text(latest[key]) for key in ("engine", "engine_version", "build_variant",
                                                "hostname")))
    newest = runs.iloc[0]
    if newest["run_id"] != new_id:
        header = Markup("The newest run [{}]({}) ({}) has no earlier comparable run; the newest "
                        "run that has one is summarized. ").format(
            escape_text(newest["run_id"]), run_href(newest["run_id"], ""),
            date(newest["started_at"])) + header
    if old_id is None:
        previous = Section("Since the previous comparable run", warnings=warnings, text=Markup(
            "No earlier run measured any series of the latest run, so there is nothing to compare."))
        previous_line = "no earlier comparable run"
    else:
        rows = comparison_rows(evidence, new_id, old_id)
        old_run = runs[runs["run_id"] == old_id].iloc[0]
        previous = _comparison("Since the previous comparable run",
                               Markup("The previous comparable run is {}").format(_run_text(old_run)),
                               rows, "Previous")
        previous = dataclasses.replace(previous, warnings=warnings)
        previous_line = _counts(rows) if rows else "no series in common"
    base_section, base_line = _baseline_section(runs, evidence, new_id, baseline)
    intro = header + Markup("<br>Since the previous comparable run: ") + Markup(previous_line) + \
        Markup(" · against the configured baseline: ") + Markup(base_line) + Markup(
        ".<br>Verdicts come from `orchestrator.stats`: a Mann–Whitney U test on the repetitions, "
        "a bootstrap 95 % CI of the ratio of medians, and a threshold of max(minimum effect, "
        "k × the series' noise: the spread of its medians in the other runs and its A/A pairs); "
        "all three must agree.")
    return Page("Executive summary", intro, [previous, base_section])
