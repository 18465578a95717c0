"""Statistics for telling a real change from noise (pure: numbers in, numbers out).

A comparison of two samples of one metric (repetitions of baseline and candidate) reports the
median of each side, the ratio of medians (candidate / baseline), a bootstrap 95% confidence
interval of that ratio (percentile method, fixed seed so a report is reproducible) and a
two-sided Mann–Whitney U p-value (scipy; rank based, so one outlier repetition cannot make a
change significant). A change is called only when all three agree: p < alpha, the CI excludes 1,
and the size passes the effective threshold = max(configured minimum effect, k × measured noise,
and, between two separate runs, the tail of how far whole runs moved: analysis.noise).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .mann_whitney import two_sided_p

HIGHER = "higher"
LOWER = "lower"
FASTER = "faster"
SLOWER = "slower"
NO_CHANGE = "no significant change"
NOT_ENOUGH = "not enough repetitions"
UNDECIDED = "cannot tell"  # an adaptive A/B whose round or time budget ran out (analysis.sequential)
U_TEST = "U test"  # Comparison.test of an unpaired comparison
BOOTSTRAP_SEED = 20240501
BOOTSTRAP_RESAMPLES = 4000
DEFAULT_TAIL_QUANTILE = 0.9  # Thresholds.tail_quantile (analysis.noise)


@dataclass(frozen=True)
class Thresholds:
    """When a difference counts: significance level, minimum effect, noise multiplier."""

    alpha: float = 0.05
    min_effect: float = 0.01  # relative change below which nothing is called, e.g. 0.01 = 1%
    noise_k: float = 2.0  # effective threshold = max(min_effect, noise_k × series noise)
    # The noise assumed for a series whose between-run noise is not measured yet (analysis.noise):
    # the U test on one run's repetitions cannot see a shift of a whole run, so without history
    # a tiny min_effect turns machine drift into false alarms.
    unmeasured_noise: float = 0.0
    # Deterministic metrics (instruction counts) are judged by analysis.deterministic instead:
    # a change must exceed this and the spread between their repetitions.
    deterministic_min_effect: float = 0.005
    # Which quantile of the series' run-to-run changes a change between two separate runs must
    # also exceed (analysis.noise: the tail of whole-run shifts); 0 leaves the tail out.
    tail_quantile: float = DEFAULT_TAIL_QUANTILE


@dataclass(frozen=True)
class Comparison:
    """Baseline vs candidate for one metric of one benchmark."""

    base_n: int
    cand_n: int
    base_median: float
    cand_median: float
    ratio: float  # candidate median / baseline median
    ci_low: float
    ci_high: float
    p_value: float
    threshold: float  # the effective relative threshold used
    verdict: str
    test: str = U_TEST  # which test decided: U test, Wilcoxon signed-rank (paired), sequential …
    notes: tuple[str, ...] = ()  # e.g. rounds dropped from a paired comparison, and why

    @property
    def change_pct(self) -> float:
        return (self.ratio - 1.0) * 100.0


def median(values: Sequence[float]) -> float:
    return float(np.median(np.asarray(values, dtype=float)))


def bootstrap_ratio_ci(base: Sequence[float], cand: Sequence[float], seed: int = BOOTSTRAP_SEED,
                       resamples: int = BOOTSTRAP_RESAMPLES,
                       level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap CI of median(cand) / median(base), each side resampled on its own."""
    b = np.asarray(base, dtype=float)
    c = np.asarray(cand, dtype=float)
    if _plain(b) and _plain(c):
        draws = (b.size, c.size, seed, resamples)
        ratios = _resampled_medians(c, draws, 1) / _resampled_medians(b, draws, 0)
    else:  # what the counts below reproduce, for samples they do not cover
        rng = np.random.default_rng(seed)
        b_med = np.median(rng.choice(b, size=(resamples, b.size), replace=True), axis=1)
        c_med = np.median(rng.choice(c, size=(resamples, c.size), replace=True), axis=1)
        ratios = c_med / b_med
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(ratios, [tail, 100.0 - tail])
    return float(low), float(high)


def _plain(values: np.ndarray) -> bool:
    """No NaN (np.median's own rule) and no zero (which of 0.0 and -0.0 np.median picks is its
    partition's business): the samples whose resampled medians _resampled_medians computes."""
    return bool(values.size) and not np.isnan(values).any() and bool(np.all(values != 0))


@functools.lru_cache(maxsize=64)
def _resample_counts(n_base: int, n_cand: int, seed: int,
                     resamples: int) -> tuple[np.ndarray, np.ndarray]:
    """How often each position of each side is drawn in each resample: the draws depend on
    the sizes and the seed only, never on the values (rng.choice picks positions)."""
    rng = np.random.default_rng(seed)
    return (_position_counts(rng.choice(np.arange(n_base), size=(resamples, n_base))),
            _position_counts(rng.choice(np.arange(n_cand), size=(resamples, n_cand))))


def _position_counts(positions: np.ndarray) -> np.ndarray:
    rows, size = positions.shape
    flat = (positions + np.arange(rows)[:, None] * size).ravel()
    counts = np.bincount(flat, minlength=rows * size).reshape(rows, size)
    counts.flags.writeable = False  # shared by every call of these sizes
    return counts


def _resampled_medians(values: np.ndarray, draws: tuple[int, int, int, int],
                       side: int) -> np.ndarray:
    """np.median of each resample of `values` (side 0: the base, 1: the candidate, of the
    bootstrap that `draws` = (base size, candidate size, seed, resamples) makes), bit for bit."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    lower, upper = _median_places(draws, side, tuple(order.tolist()))
    if lower is upper:
        return ordered[upper]
    return (ordered[lower] + ordered[upper]) / 2


@functools.lru_cache(maxsize=512)
def _median_places(draws: tuple[int, int, int, int], side: int,
                   order: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Where in the sorted sample each resample's median lies (the two middle places of an
    even size, np.median's mean of them; one place, twice, of an odd one). The k-th smallest of
    a resample is at the first sorted place where the drawn counts, summed in sorted order,
    exceed k: a function of the draws and of the sample's order only, so the site's thousand
    comparisons of three repetitions each need twelve of these (six orders, two sides)."""
    counts = _resample_counts(*draws)[side]
    below = np.cumsum(counts[:, order], axis=1)
    half = len(order) // 2
    places = np.uint16 if len(order) < 2 ** 16 else np.intp  # 512 of these kept: keep them small
    upper = (below <= half).sum(axis=1).astype(places)
    lower = upper if len(order) % 2 else (below <= half - 1).sum(axis=1).astype(places)
    upper.flags.writeable = lower.flags.writeable = False
    return lower, upper


def mann_whitney_p(base: Sequence[float], cand: Sequence[float]) -> float:
    """Two-sided Mann–Whitney U p-value (exact for small samples without ties)."""
    if len(set(base) | set(cand)) == 1:
        return 1.0  # all values equal: no evidence of any difference
    return two_sided_p(cand, base)


def smallest_p(n1: int, n2: int) -> float:
    """The smallest two-sided exact U p-value samples of these sizes can reach."""
    return 2.0 / math.comb(n1 + n2, n1) if n1 and n2 else 1.0


def verdict(ratio: float, ci: tuple[float, float], p_value: float, better: str,
            threshold: float, alpha: float, enough: bool) -> str:
    """faster / slower / no significant change / not enough repetitions (direction aware)."""
    if not enough:
        return NOT_ENOUGH
    significant = p_value < alpha and not (ci[0] <= 1.0 <= ci[1]) and abs(ratio - 1.0) >= threshold
    if not significant:
        return NO_CHANGE
    improved = ratio > 1.0 if better == HIGHER else ratio < 1.0
    return FASTER if improved else SLOWER


@dataclass(frozen=True)
class SampleSummary:
    """What a comparison measures of two samples alone; the noise and thresholds only judge it."""

    base_median: float
    cand_median: float
    ratio: float  # cand_median / base_median
    ci_low: float
    ci_high: float
    p_value: float


# (base, candidate) → their SampleSummary, as summarize_samples answers (a cache may stand in).
Summarizer = Callable[[Sequence[float], Sequence[float]], SampleSummary]


def summarize_samples(base: Sequence[float], cand: Sequence[float]) -> SampleSummary:
    """Medians, ratio, bootstrap CI and U test p-value of two non-empty samples."""
    b_med, c_med = median(base), median(cand)
    ratio = c_med / b_med if b_med else float("nan")
    ci = bootstrap_ratio_ci(base, cand) if b_med else (float("nan"), float("nan"))
    return SampleSummary(b_med, c_med, ratio, ci[0], ci[1], mann_whitney_p(base, cand))


def compare_samples(base: Sequence[float], cand: Sequence[float], better: str,
                    thresholds: Thresholds = Thresholds(), noise: float = 0.0,
                    summarize: Summarizer = summarize_samples,
                    tail: float = math.nan) -> Comparison:
    """The full comparison of two samples; too few repetitions gives NOT_ENOUGH, never a guess.
    `tail`: the series' tail of run-to-run changes when the samples are two separate runs."""
    n1, n2 = len(base), len(cand)
    threshold = effective_threshold(thresholds, noise, tail)
    if n1 == 0 or n2 == 0:
        nan = float("nan")
        return Comparison(n1, n2, nan, nan, nan, nan, nan, nan, threshold, NOT_ENOUGH)
    s = summarize(base, cand)
    enough = smallest_p(n1, n2) < thresholds.alpha
    return Comparison(n1, n2, s.base_median, s.cand_median, s.ratio, s.ci_low, s.ci_high,
                      s.p_value, threshold, verdict(s.ratio, (s.ci_low, s.ci_high), s.p_value,
                                                    better, threshold, thresholds.alpha, enough))


def performance_ratio(ratio: float, better: str) -> float:
    """>1 means the candidate is better, whichever way the metric points."""
    return ratio if better == HIGHER else 1.0 / ratio


def geometric_mean(values: Sequence[float]) -> float:
    finite = [v for v in values if v > 0 and math.isfinite(v)]
    if not finite:
        return float("nan")
    return float(math.exp(sum(math.log(v) for v in finite) / len(finite)))


def robust_cv(values: Sequence[float]) -> float:
    """Relative spread: 1.4826 × MAD / median (≈ σ/μ for normal data, robust to outliers)."""
    arr = np.asarray(values, dtype=float)
    if arr.size < 2:
        return float("nan")
    med = float(np.median(arr))
    if med == 0:
        return float("nan")
    return float(1.4826 * np.median(np.abs(arr - med)) / abs(med))


def effective_threshold(thresholds: Thresholds, noise: float, tail: float = math.nan) -> float:
    """max(min_effect, noise_k × noise, tail): the one rule of every verdict.

    An unmeasured (NaN) noise counts as unmeasured_noise. `tail` (analysis.noise.Noise.tail, a
    quantile of the series' run-to-run changes) is given only for two separate runs: the rounds
    of a paired A/B job cancel the whole-run shifts it measures; NaN (none measured) adds nothing.
    It enters as it is, not × noise_k: it is already the size of a change that whole runs of one
    build reached."""
    if not math.isfinite(noise):
        noise = thresholds.unmeasured_noise
    threshold = max(thresholds.min_effect, thresholds.noise_k * noise)
    return max(threshold, tail) if math.isfinite(tail) else threshold
