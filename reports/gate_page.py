"""The regression gate as a page (pure): what `tidemark gate` decides for the summarized pair."""
from __future__ import annotations

import shlex
from typing import Any

import pandas as pd
from markupsafe import Markup

from orchestrator import stats

from .comparisons import Baseline, Evidence, comparison_rows, gate_pair
from .format import MISSING, Link, escape_text, signed_pct
from .pages import run_href
from .tables import Page, Section, Table, describe, linked, point_href


def _gate_row(r: dict[str, Any]) -> list[Any]:
    n, o, result = r["new"], r["old"], r["result"]
    href = point_href(n, "")
    failed = result.verdict == stats.SLOWER
    p = MISSING if result.p_value != result.p_value else f"{result.p_value:.3f}"
    return [n["workload"], describe(n), linked(o["ops_median"], o, ""),
            linked(n["ops_median"], n, ""), Link(signed_pct(r["change"]), href), Link(p, href),
            Link(f"{result.threshold * 100:.1f}%", href),
            "✗ FAIL (regression)" if failed else f"✓ pass ({result.verdict})"]


def _verdict(rows: list[dict[str, Any]]) -> str:
    """What `tidemark gate` would decide (orchestrator.gate.decide): a gate that cannot tell
    does not pass."""
    failures = sum(1 for r in rows if r["result"].verdict == stats.SLOWER)
    if failures:
        return f"FAIL: {failures} regression(s)"
    short = sum(1 for r in rows if r["result"].verdict == stats.NOT_ENOUGH)
    if not rows or short:
        return (f"CANNOT TELL: {short} series without enough repetitions" if short
                else "CANNOT TELL: no series in common")
    return "PASS"


def _chosen(baseline: Baseline, configured: bool) -> tuple[Markup, Markup]:
    """Which baseline the page gates against, and (when not the configured one) why not."""
    if configured:
        return Markup("the configured baseline <code>{}</code>").format(
            escape_text(baseline.selector)), Markup("")
    why = baseline.problem or "The summarized run is the configured baseline itself."
    return Markup("its previous comparable run"), Markup(
        " Not the configured baseline: {}").format(escape_text(why))


def gate_page(runs: pd.DataFrame, evidence: Evidence, baseline: Baseline) -> Page:
    """Pass/fail of ops/s per series of the summarized run against the configured baseline
    (else its previous comparable run), decided as `tidemark gate` decides it (same
    thresholds, same noise rule), with the command that gates CI on it."""
    new_id, old_id, configured = gate_pair(runs, evidence.points, baseline)
    if old_id is None:
        why = "The summarized run is the configured baseline itself." \
            if baseline.run_id == new_id else baseline.problem
        return Page("Gate", Markup("Nothing to gate: no earlier comparable run. Configured "
                                   "baseline: {}").format(escape_text(why)), [])
    rows = comparison_rows(evidence, new_id, old_id)
    verdict = _verdict(rows)
    command = shlex.join(["tidemark", "gate", "--baseline",
                          baseline.selector if configured else old_id, "--candidate", new_id])
    chosen, why_not = _chosen(baseline, configured)
    intro = Markup(
        "Candidate [{}]({}) against baseline [{}]({}), {}: **{}** over {} series in common.{} A "
        "series fails when its ops/s is slower by more than its threshold, max(minimum effect, "
        "k × noise), with the U test and the bootstrap CI agreeing. In CI: <code>{}</code> exits "
        "0 on pass, 1 on a regression, 2 when it cannot tell (not comparable, too few "
        "repetitions); it also checks the other metrics and targets the gate config names.").format(
        escape_text(new_id), run_href(new_id, ""), escape_text(old_id), run_href(old_id, ""),
        chosen, verdict, len(rows), why_not, escape_text(command))
    table = Table(("Workload", "Series", "Baseline ops/s", "Candidate ops/s", "Δ ops/s",
                   "p (U test)", "Threshold", "Gate"), [_gate_row(r) for r in rows],
                  (False, False, True, True, True, True, True, False))
    warnings = [] if verdict == "PASS" else [f"gate: {verdict}"]
    return Page("Gate", intro, [Section("Series", warnings=warnings, tables=[table])])
