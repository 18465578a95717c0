"""The executive summary (pure): the summarized run against its previous comparable run and
against the configured baseline, regressions and improvements first, as the core decided."""
from __future__ import annotations

from typing import Any

import pandas as pd
from markupsafe import Markup

from orchestrator.analysis.compare import Report, Row
from orchestrator.analysis.stats import FASTER, SLOWER

from .comparisons import Comparison, SiteVerdicts, sorted_rows
from .format import MISSING, Link, date, escape_text, is_missing, num, signed_pct
from .pages import delta_pct, run_href
from .tables import Page, Section, Table, describe, linked, point_href

MARKS = {SLOWER: "⚠ regression (slower)", FASTER: "▲ improvement (faster)"}
# How the tables name a row's metric; instruction counts come from callgrind repetitions.
METRIC_NAMES = {"ops_per_sec": "ops/s", "instructions_per_op": "instructions/op (callgrind)",
                "instructions": "instructions (callgrind)"}


class PointLookup:
    """(run, series) → its row of `points`, for the links and labels of a comparison row."""

    def __init__(self, points: pd.DataFrame):
        self._rows = {(p["run_id"], p["series_key"]): p for _, p in points.iterrows()}

    def get(self, run_id: str, series_key: str) -> Any:
        return self._rows.get((run_id, series_key))


def pct_text(value: float) -> str:
    return MISSING if value != value else f"{value * 100:.1f}%"


def change_text(row: Row) -> str:
    c = row.comparison
    return signed_pct(c.change_pct) if c.ratio == c.ratio else MISSING


def _run_linked(value: float, run_id: str) -> Link | None:
    return None if is_missing(value) else Link(num(value), run_href(run_id, ""))


def row_cells(row: Row, report: Report, lookup: PointLookup) -> tuple[Any, Any, list[Any]]:
    """(new point, old point, [workload, series, metric, old value, new value, Δ]) of one row."""
    n = lookup.get(report.cand["run_id"], row.series_key)
    o = lookup.get(report.base["run_id"], row.series_key)
    c = row.comparison
    href = point_href(n, "") if n is not None else run_href(report.cand["run_id"], "")
    label = describe(n) if n is not None else row.label
    workload = n["workload"] if n is not None else row.label
    # A callgrind series has no timed point to link to: its medians link to their runs.
    old_value = linked(c.base_median, o, "") if o is not None else \
        _run_linked(c.base_median, report.base["run_id"])
    new_value = linked(c.cand_median, n, "") if n is not None else \
        _run_linked(c.cand_median, report.cand["run_id"])
    return n, o, [workload, label, METRIC_NAMES.get(row.metric, row.metric), old_value, new_value,
                  Link(change_text(row), href)]


def _summary_table(report: Report, lookup: PointLookup, older: str) -> Table:
    body = []
    for row in sorted_rows(report):
        n, o, cells = row_cells(row, report, lookup)
        c = row.comparison
        href = cells[-1].href
        ci = MISSING if c.ci_low != c.ci_low else f"{c.ci_low:.3f}–{c.ci_high:.3f}"
        p99 = delta_pct(n["p99_median"], o["p99_median"]) \
            if n is not None and o is not None and row.metric == "ops_per_sec" else None
        body.append([*cells, Link(ci, href),
                     Link(MISSING if c.p_value != c.p_value else f"{c.p_value:.3f}", href),
                     Link(pct_text(c.threshold), href), Link(signed_pct(p99), href),
                     MARKS.get(c.verdict, c.verdict)])
    return Table(("Workload", "Series", "Metric", older, "Latest", "Δ",
                  "95% CI of ratio", "p (U test)", "Threshold", "Δ p99", "Verdict"), body,
                 (False, False, False, True, True, True, True, True, True, True, False))


def counts_text(report: Report) -> str:
    slower = sum(1 for r in report.rows if r.comparison.verdict == SLOWER)
    faster = sum(1 for r in report.rows if r.comparison.verdict == FASTER)
    ratio = report.geomean
    return (f"**{slower} regression{'s' if slower != 1 else ''}**, **{faster} improvement"
            f"{'s' if faster != 1 else ''}** over {len(report.rows)} series in common, geometric "
            f"mean of throughput ratios {MISSING if ratio != ratio else f'{ratio:.3f}'}")


def _run_text(run: pd.Series) -> Markup:
    return Markup("[{}]({}) ({}, {} {} {})").format(
        escape_text(run["run_id"]), run_href(run["run_id"], ""), date(run["started_at"]),
        *(escape_text(run[key]) for key in ("engine", "engine_version", "build_variant")))


def named_notes(report: Report) -> list[str]:
    """What differs between the two runs but is compared anyway (engine version, flags, ...)."""
    return [f"differs, compared anyway: {n}" for n in report.named]


def _comparison_section(title: str, against: Markup, comparison: Comparison, runs: pd.DataFrame,
                        lookup: PointLookup, older: str) -> tuple[Section, str]:
    if comparison.report is None:
        return Section(title, text=against + Markup(": ") + escape_text(comparison.problem)), \
            "nothing to compare"
    report = comparison.report
    base = runs[runs["run_id"] == comparison.base].iloc[0]
    text = against + Markup(" ") + _run_text(base) + Markup(": ") + Markup(counts_text(report)) + \
        Markup(".")
    return Section(title, text=text, tables=[_summary_table(report, lookup, older)],
                   warnings=named_notes(report)), counts_text(report)


def summary_page(runs: pd.DataFrame, verdicts: SiteVerdicts, lookup: PointLookup) -> Page:
    """The summarized run against its previous comparable run and the configured baseline."""
    new_id = verdicts.candidate
    latest = runs[runs["run_id"] == new_id].iloc[0]
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
    previous, previous_line = _comparison_section(
        "Since the previous comparable run", Markup("The previous comparable run (the earlier "
                                                    "run that measured most of its series) is"),
        verdicts.previous, runs, lookup, "Previous")
    if not latest["verified"]:
        previous.warnings.insert(0, f"the compared run is UNVERIFIED: "
                                    f"{'; '.join(str(n) for n in latest['notes'] or [])}")
    title = "Against the configured baseline"
    baseline = verdicts.baseline
    if verdicts.against_baseline is None:
        why = baseline.problem or Markup("The summarized run is the configured baseline "
                                         "(<code>{}</code>) itself.").format(baseline.selector)
        base_section, base_line = Section(title, text=escape_text(why)), "no comparison"
    else:
        base_section, base_line = _comparison_section(
            title, Markup("The configured baseline <code>{}</code> is").format(baseline.selector),
            verdicts.against_baseline, runs, lookup, "Baseline")
    intro = header + Markup("<br>Since the previous comparable run: ") + Markup(previous_line) + \
        Markup(" · against the configured baseline: ") + Markup(base_line) + Markup(
        ".<br>A change is called when a Mann–Whitney U test on the repetitions and a bootstrap "
        "95 % CI of the ratio of medians agree and it exceeds max(minimum effect, k × the "
        "series' noise between runs; the two runs of one `tidemark ab` job are judged on their "
        "per-round pairs instead (Wilcoxon signed-rank); an instruction count per op (callgrind "
        "repetitions) when it exceeds max(deterministic minimum effect, the spread between its "
        "repetitions) with every repetition beyond the other side's; see the "
        "[methodology](methodology.md).")
    return Page("Executive summary", intro, [previous, base_section])
