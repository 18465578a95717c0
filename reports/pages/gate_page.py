"""The regression gate as a page (pure): the decision `tidemark gate` makes for the summarized
run (orchestrator.verdicts.gate_runs, called once per site build), with its reasons."""
from __future__ import annotations

import shlex

import pandas as pd
from markupsafe import Markup

from orchestrator.analysis.decide import PASS
from orchestrator.analysis.stats import NOT_ENOUGH, SLOWER, UNDECIDED

from ..data.comparisons import SiteVerdicts, sorted_rows
from .format import MISSING, Link, escape_text
from .shared import run_href
from .summary_page import PointLookup, named_notes, pct_text, report_labeler, row_cells
from .tables import Page, Section, Table
from .verdict_words import verdict_css


def _chosen(verdicts: SiteVerdicts) -> Markup:
    partner = verdicts.gate.partner if verdicts.gate else None
    if partner is not None and partner.configured:
        return Markup("the configured baseline <code>{}</code>").format(verdicts.baseline.selector)
    return Markup("its previous comparable run (not the configured baseline: {})").format(
        partner.why if partner else verdicts.gate_problem)


def _gate_cell(verdict: str) -> str:
    """A series' part in the gate's decision (analysis.decide: too few repetitions or an
    adaptive job out of budget make the gate unable to tell, never a pass)."""
    if verdict == SLOWER:
        return "✗ FAIL (regression)"
    if verdict in (NOT_ENOUGH, UNDECIDED):
        return f"? cannot tell ({verdict})"
    return f"✓ pass ({verdict})"


def gate_page(runs: pd.DataFrame, verdicts: SiteVerdicts, lookup: PointLookup) -> Page:
    """Pass/fail per series of the summarized run against the gate's partner run, decided by
    the analysis core exactly as `tidemark gate` decides it, with the command for CI."""
    result, new_id = verdicts.gate, verdicts.candidate
    if result is None:
        return Page("Gate", Markup("Nothing to gate run [{}]({}) against: {}").format(
            escape_text(new_id), run_href(new_id, ""), verdicts.gate_problem), [])
    report, decision = result.report, result.decision
    old_id = report.base["run_id"]
    partner = result.partner
    configured = partner is not None and partner.configured
    command = ["tidemark", "gate", "--baseline", verdicts.baseline.selector if configured else old_id,
               "--candidate", new_id]
    intro = Markup(
        "Candidate [{}]({}) against baseline [{}]({}), {}: **{}** over {} series in common. A "
        "series fails when its ops/s is slower by more than its threshold, max(minimum effect, "
        "k × noise, the tail of its run-to-run changes), with the U test and the bootstrap CI agreeing (an instruction count, when "
        "gated, when it exceeds max(deterministic minimum effect, its spread)); the gate cannot tell (and "
        "does not pass) with too few repetitions, series missing from the candidate, failed "
        "invocations or a candidate run that did not end ok. In CI: <code>{}</code> exits 0 on "
        "pass, 1 on a regression, 2 when it cannot tell.").format(
        escape_text(new_id), run_href(new_id, ""), escape_text(old_id), run_href(old_id, ""),
        _chosen(verdicts), decision.word.upper(), len({r.series_key for r in report.rows}),
        shlex.join(command))
    body = []
    labeler = report_labeler(report, lookup)
    for row in sorted_rows(report):
        _, _, cells = row_cells(row, report, lookup, labeler)
        c, href = row.comparison, cells[-1].href
        body.append([*cells, Link(MISSING if c.p_value != c.p_value else f"{c.p_value:.3f}", href),
                     c.test, Link(pct_text(c.threshold), href),
                     Link(_gate_cell(c.verdict), href, verdict_css(c.verdict))])
    table = Table(("Series", "Baseline", "Candidate", "Δ", "p", "Test", "Threshold", "Gate"),
                  body, (False, True, True, True, True, False, True, False))
    warnings = [] if decision.code == PASS else [f"gate: {decision.word}: {r}" for r in decision.reasons]
    return Page("Gate", intro, [Section("Series", warnings=warnings + named_notes(report),
                                        tables=[table])])
