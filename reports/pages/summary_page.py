"""The executive summary (pure): the summarized run against its previous comparable run and
against the configured baseline, regressions and improvements first, as the core decided."""
from __future__ import annotations

from typing import Any

import pandas as pd
from markupsafe import Markup

from orchestrator.analysis.compare import Report, Row
from orchestrator.analysis.stats import FASTER, SLOWER

from ..data.comparisons import Comparison, SiteVerdicts, sorted_rows
from ..data.frames import records
from .caveats import caveat_warnings, note_lines
from .format import MISSING, Link, date, escape_text, is_missing, num, signed_pct
from .labels import WITH_WORKLOAD, Labeler
from .shared import delta_pct, run_href
from .tables import Page, Section, Table, linked, point_href
from .verdict_words import (METRIC_NAMES, change_text, mark, sentence, verdict_counts,
                            verdict_css)

class PointLookup:
    """(run, series) → its row of `points`, for the links and labels of a comparison row."""

    def __init__(self, points: pd.DataFrame):
        # Records made in one call: a page reads a few fields of each, many times.
        self._rows = {(p["run_id"], p["series_key"]): p for p in records(points)}

    def get(self, run_id: str, series_key: str) -> Any:
        return self._rows.get((run_id, series_key))


def pct_text(value: float) -> str:
    return MISSING if value != value else f"{value * 100:.1f}%"


def _run_linked(value: float, run_id: str) -> Link | None:
    return None if is_missing(value) else Link(num(value), run_href(run_id, ""))


def report_labeler(report: Report, lookup: PointLookup) -> Labeler:
    """Row labels of one comparison: what differs between its series (labels.Labeler)."""
    points = [lookup.get(report.cand["run_id"], row.series_key) for row in report.rows]
    return Labeler.of([p for p in points if p is not None], drop=(), always=WITH_WORKLOAD)


def row_cells(row: Row, report: Report, lookup: PointLookup,
              labeler: Labeler) -> tuple[Any, Any, list[Any]]:
    """(new point, old point, [series, old value, new value, Δ]) of one row; Δ is coloured by
    the row's verdict."""
    n = lookup.get(report.cand["run_id"], row.series_key)
    o = lookup.get(report.base["run_id"], row.series_key)
    c = row.comparison
    href = point_href(n, "") if n is not None else run_href(report.cand["run_id"], "")
    label = labeler.label(n) if n is not None else row.label
    if row.metric != "ops_per_sec":
        label += f" · {METRIC_NAMES.get(row.metric, row.metric)}"
    # A callgrind series has no timed point to link to: its medians link to their runs.
    old_value = linked(c.base_median, o, "") if o is not None else \
        _run_linked(c.base_median, report.base["run_id"])
    new_value = linked(c.cand_median, n, "") if n is not None else \
        _run_linked(c.cand_median, report.cand["run_id"])
    return n, o, [label, old_value, new_value, Link(change_text(row), href,
                                                     verdict_css(c.verdict))]


def ci_text(row: Row) -> str:
    """The bootstrap CI of the change and the test's p, e.g. '−3.1 … +0.4 % (p 0.21)'."""
    c = row.comparison
    ci = MISSING if c.ci_low != c.ci_low else \
        f"{(c.ci_low - 1) * 100:+.1f} … {(c.ci_high - 1) * 100:+.1f} %"
    return ci + ("" if c.p_value != c.p_value else f" (p {c.p_value:.3f})")


def _summary_table(report: Report, lookup: PointLookup, older: str) -> Table:
    labeler = report_labeler(report, lookup)
    body = []
    for row in sorted_rows(report):
        n, o, cells = row_cells(row, report, lookup, labeler)
        c = row.comparison
        href = cells[-1].href
        p99 = delta_pct(n["p99_median"], o["p99_median"]) \
            if n is not None and o is not None and row.metric == "ops_per_sec" else None
        body.append([*cells, Link(ci_text(row), href), Link(signed_pct(p99), href),
                     Link(f"{mark(c.verdict)} · ±{c.threshold * 100:.1f} %", href,
                          verdict_css(c.verdict))])
    return Table(("Series", older, "Latest", "Δ", "95 % CI of Δ (p, U test)", "Δ p99",
                  "Verdict · threshold"), body, (False, True, True, True, True, True, False))


def counts_text(report: Report) -> str:
    ratio = report.geomean
    return (f"{verdict_counts(report, '**')}, over {len(report.rows)} series in common; geometric "
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
    cand = runs[runs["run_id"] == comparison.cand].iloc[0]
    text = against + Markup(" ") + _run_text(base) + Markup(": ") + Markup(counts_text(report)) + \
        Markup(".") + called_sentences(report, lookup)
    both = runs[runs["run_id"].isin([comparison.base, comparison.cand])]
    notes = [f"run {run['run_id']}: {line}" for run in (base, cand) for line in note_lines(run)]
    return Section(title, text=text, tables=[_summary_table(report, lookup, older)],
                   warnings=caveat_warnings(both) + named_notes(report),
                   notes=notes), counts_text(report)


def called_sentences(report: Report, lookup: PointLookup) -> Markup:
    """Each called change as the comparator says it ('run B is 4.1 % faster than run A …'),
    regressions first, as a list under the counts."""
    labeler = report_labeler(report, lookup)
    cand, base = report.cand["run_id"], report.base["run_id"]
    items = []
    for row in sorted_rows(report):
        if row.comparison.verdict not in (SLOWER, FASTER):
            continue
        point = lookup.get(cand, row.series_key)
        name = labeler.label(point) if point is not None else row.label
        items.append(Markup('<li class="{}">{}: {}</li>').format(
            verdict_css(row.comparison.verdict), escape_text(name),
            escape_text(sentence(row, f"run {cand}", f"run {base}"))))
    return Markup("\n\n<ul>{}</ul>").format(Markup("").join(items)) if items else Markup("")


def _baseline_text(verdicts: SiteVerdicts) -> Markup:
    """Why there is no comparison with the configured baseline, in a reader's words."""
    baseline = verdicts.baseline
    if baseline.run_id is None and baseline.selector:
        return Markup("No run is the configured baseline yet: <code>{}</code> names no run (a "
                      "run becomes it with <code>tidemark label RUN baseline</code>).").format(
            baseline.selector)
    if baseline.run_id is None:
        return Markup("No baseline is configured.")
    return Markup("The summarized run is the configured baseline (<code>{}</code>) "
                  "itself.").format(baseline.selector)


INTRO = Markup(
    "A change is called only when it is larger than the series' threshold (the larger of the "
    "minimum effect, twice the series' run-to-run noise and the 90 % quantile of how far its "
    "whole runs moved) and a Mann–Whitney U test on the "
    "repetitions and a bootstrap 95 % confidence interval agree; the two runs of one A/B job "
    "are judged round by round, instruction counts by their own rule. Δ is coloured by that "
    "verdict, not by its sign. See the [methodology](methodology.md).")


def summary_page(runs: pd.DataFrame, verdicts: SiteVerdicts, lookup: PointLookup) -> Page:
    """The summarized run against its previous comparable run and the configured baseline."""
    new_id = verdicts.candidate
    latest = runs[runs["run_id"] == new_id].iloc[0]
    header = Markup("Summarized run [{}]({}) · {} · {} {} {} on {}.").format(
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
    if not latest["verified"] and latest.get("source") != "import":
        previous.warnings.insert(0, f"the compared run is UNVERIFIED: "
                                    f"{'; '.join(str(n) for n in latest['notes'] or [])}")
    title = "Against the configured baseline"
    if verdicts.against_baseline is None:
        base_section, base_line = Section(title, text=_baseline_text(verdicts)), "no comparison"
    else:
        base_section, base_line = _comparison_section(
            title, Markup("The configured baseline <code>{}</code> is").format(
                verdicts.baseline.selector), verdicts.against_baseline, runs, lookup, "Baseline")
    intro = header + Markup("<br>Since the previous comparable run: ") + Markup(previous_line) + \
        Markup(" · against the configured baseline: ") + Markup(base_line) + Markup(".\n\n") + \
        INTRO
    return Page("Executive summary", intro, [previous, base_section], wide=True)
