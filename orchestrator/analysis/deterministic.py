"""Verdicts on deterministic metrics (pure): instruction counts need no significance test.

The one place that knows which metrics are deterministic (`is_deterministic`): instruction
counts under callgrind (`instructions`, `instructions_per_op`) do not move with machine noise,
so a rank test on them would only measure how many repetitions were run. Their rule instead:

With base repetitions b_1..b_n and candidate repetitions c_1..c_m (n, m ≥ 2), medians B and C,
ratio r = C / B, and the observed spread

    s = max( (max b − min b) / B , (max c − min c) / C )

(the largest relative range between repetitions of either side), a change is called when

    |r − 1| > max(deterministic_min_effect, s)          (it exceeds the threshold and the spread)
    and every c_j differs from every b_i in the same direction, i.e. the interval
    [min c / max b, max c / min b] of all cross ratios excludes 1,

and its direction (with the metric's `better`) makes it "faster" or "slower". Otherwise "no
significant change"; fewer than 2 repetitions on a side is "not enough repetitions" (the spread
is not observed). The Comparison carries that cross-ratio interval as its CI, the effective
threshold max(deterministic_min_effect, s), and no p-value (NaN).
"""
from __future__ import annotations

from typing import Sequence

from .stats import (FASTER, HIGHER, NO_CHANGE, NOT_ENOUGH, SLOWER, Comparison, Thresholds,
                    median)

DETERMINISTIC_METRICS = frozenset({"instructions", "instructions_per_op"})
# The one shown beside the wall-clock verdicts on the site's Summary (per operation, so runs
# with other operation counts stay comparable).
SUMMARY_METRIC = "instructions_per_op"
MIN_REPETITIONS = 2  # one repetition shows no spread
# The config key that sets a run's deterministic repetitions, for messages that name the fix.
REPETITIONS_KEY = "callgrind_repetitions"


def is_deterministic(metric: str) -> bool:
    """True for metrics judged by the deterministic rule (instruction counts)."""
    return metric in DETERMINISTIC_METRICS


def relative_spread(values: Sequence[float]) -> float:
    """(max − min) / median of one side's repetitions; 0 when they are all equal."""
    mid = median(values)
    return (max(values) - min(values)) / abs(mid) if mid else float("inf")


def compare_deterministic(base: Sequence[float], cand: Sequence[float], better: str,
                          thresholds: Thresholds = Thresholds()) -> Comparison:
    """The deterministic rule of the module docstring on two sides' repetitions."""
    n1, n2 = len(base), len(cand)
    nan = float("nan")
    if n1 < MIN_REPETITIONS or n2 < MIN_REPETITIONS:
        b_med = median(base) if base else nan
        c_med = median(cand) if cand else nan
        ratio = c_med / b_med if base and cand and b_med else nan
        return Comparison(n1, n2, b_med, c_med, ratio, nan, nan, nan,
                          thresholds.deterministic_min_effect, NOT_ENOUGH)
    b_med, c_med = median(base), median(cand)
    if not b_med or min(base) <= 0:
        return Comparison(n1, n2, b_med, c_med, nan, nan, nan, nan,
                          thresholds.deterministic_min_effect, NO_CHANGE)
    ratio = c_med / b_med
    spread = max(relative_spread(base), relative_spread(cand))
    threshold = max(thresholds.deterministic_min_effect, spread)
    low, high = min(cand) / max(base), max(cand) / min(base)
    changed = abs(ratio - 1.0) > threshold and not (low <= 1.0 <= high)
    if not changed:
        word = NO_CHANGE
    else:
        improved = ratio > 1.0 if better == HIGHER else ratio < 1.0
        word = FASTER if improved else SLOWER
    return Comparison(n1, n2, b_med, c_med, ratio, low, high, nan, threshold, word)
