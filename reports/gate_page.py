"""The regression gate as a page (pure): what `tidemark gate` decides for the summarized pair."""
from __future__ import annotations

from typing import Any

import pandas as pd
from markupsafe import Markup

from orchestrator import stats

from .format import MISSING, Link, signed_pct
from .comparisons import Baseline, comparison_rows, gate_pair
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


def gate_page(runs: pd.DataFrame, points: pd.DataFrame, samples: pd.DataFrame,
              baseline: Baseline, thresholds: stats.Thresholds) -> Page:
    """Pass/fail per series of the summarized run against the configured baseline (else its
    previous comparable run), with the command that gates CI on it."""
    new_id, old_id, configured = gate_pair(runs, points, baseline)
    if old_id is None:
        return Page("Gate", Markup("No configured baseline run and no earlier comparable run yet: "
                                   "nothing to gate. {}").format(baseline.problem), [])
    rows = comparison_rows(points, samples, new_id, old_id, thresholds)
    verdict = _verdict(rows)
    if configured:
        chosen = Markup("the configured baseline <code>{}</code>").format(baseline.selector)
        command = Markup("`tidemark gate --candidate {}` (the baseline comes from "
                         "conf/gate/default.yaml)").format(new_id)
    else:
        chosen = Markup("its previous comparable run ({})").format(
            baseline.problem or "the summarized run is the configured baseline itself")
        command = Markup("`tidemark gate --baseline {} --candidate {}`").format(old_id, new_id)
    intro = Markup(
        "Candidate [{}]({}) against baseline [{}]({}), {}: **{}** over {} series in common. A "
        "series fails when it is slower by more than its threshold, max(minimum effect, k × "
        "noise), with the U test and the bootstrap CI agreeing. In CI: {} exits 0 on pass, 1 on "
        "a regression, 2 when it cannot tell (not comparable, too few repetitions).").format(
        new_id, run_href(new_id, ""), old_id, run_href(old_id, ""), chosen, verdict, len(rows),
        command)
    table = Table(("Workload", "Series", "Baseline ops/s", "Candidate ops/s", "Δ ops/s",
                   "p (U test)", "Threshold", "Gate"), [_gate_row(r) for r in rows],
                  (False, False, True, True, True, True, True, False))
    warnings = [] if verdict == "PASS" else [f"gate: {verdict}"]
    return Page("Gate", intro, [Section("Series", warnings=warnings, tables=[table])])
