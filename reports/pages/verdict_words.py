"""How the site says what the analysis core decided (pure): a verdict's mark, its colour and
the sentence a comparator prints ("run B is 12.3 % slower than run A"). Words only: every
verdict comes from orchestrator/analysis through reports/data/comparisons.py.
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Any

from orchestrator.analysis.compare import Row
from orchestrator.analysis.stats import FASTER, NO_CHANGE, NOT_ENOUGH, SLOWER

from .format import MISSING

MARKS = {SLOWER: "⚠ regression (slower)", FASTER: "▲ improvement (faster)"}
# site/assets/tidemark.css: a change is coloured by its verdict, never by its sign (+3 % of
# noise is not good news, −3 % of latency can be an improvement).
CSS = {SLOWER: "tm-slower", FASTER: "tm-faster", NO_CHANGE: "tm-same"}
OTHER_WORDS = {NO_CHANGE: "without a significant change",
               NOT_ENOUGH: "with too few repetitions to tell"}
METRIC_NAMES = {"ops_per_sec": "ops/s", "instructions_per_op": "instructions/op (callgrind)",
                "instructions": "instructions (callgrind)"}


def mark(verdict: str) -> str:
    return MARKS.get(verdict, verdict)


def verdict_css(verdict: str) -> str:
    """The colour class of a verdict (`tm-unknown`: not enough repetitions, cannot tell)."""
    return CSS.get(verdict, "tm-unknown")


def change_text(row: Row) -> str:
    c = row.comparison
    return f"{c.change_pct:+.1f}%" if math.isfinite(c.ratio) else MISSING


def sentence(row: Row, new: str, old: str) -> str:
    """The verdict of one row as a comparator says it, e.g. 'run B is 12.3 % slower than run A
    (ops/s −12.3 %, p = 0.004)'; `new` and `old` name the two sides."""
    c = row.comparison
    metric = METRIC_NAMES.get(row.metric, row.metric)
    if c.verdict in (SLOWER, FASTER) and math.isfinite(c.ratio):
        # A called change is the core's: how much, in the metric's own direction.
        size = abs(c.change_pct)
        p = f", p = {c.p_value:.3g}" if math.isfinite(c.p_value) else ""
        return (f"{new} is {size:.1f} % {c.verdict} than {old} ({metric} {c.change_pct:+.1f} %"
                f"{p})")
    if c.verdict == NO_CHANGE:
        return (f"{new} and {old} do not differ significantly ({metric} {change_text(row)}, "
                f"threshold ±{c.threshold * 100:.1f} %)")
    return f"{new} against {old}: {c.verdict}"


def verdict_counts(report: Any, bold: str = "") -> str:
    """'2 regressions, 1 improvement, 5 without a significant change' over a report's rows
    (`bold`: the Markdown around the regression and improvement counts)."""
    counts = Counter(row.comparison.verdict for row in report.rows)
    words = [(counts.pop(SLOWER, 0), "regression", "regressions"),
             (counts.pop(FASTER, 0), "improvement", "improvements")]
    text = [f"{bold}{n} {one if n == 1 else many}{bold}" for n, one, many in words]
    text += [f"{n} {OTHER_WORDS.get(verdict, verdict)}" for verdict, n in sorted(counts.items())]
    return ", ".join(text)
