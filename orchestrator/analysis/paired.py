"""Paired A/B comparisons (pure): each round of a `tidemark ab` job is one pair of invocations.

Designs (`tidemark ab --design`, stored in ab_pairs.design):

- ``interleaved``: each round runs A and B back to back in a seeded random order;
- ``duet``: each round runs A and B at the same time, each pinned to its own CPU (swapped every
  round), so interference hits both at once (Bulej et al., 2020);
- ``unpaired``: the same interleaved order, analysed as two independent samples (stats.py).

A paired design is analysed on the per-round ratios r_i = b_i / a_i (candidate over baseline).
Whatever moves a whole round — a neighbour's compile, a thermal state, a slow drift over the
job — multiplies both sides of that round and cancels in r_i, where an unpaired test sees it as
spread (or, when it correlates with the order of the sides, as an effect).

- The estimate is the median paired ratio, median(r_i).
- The test is the Wilcoxon signed-rank test on d_i = log r_i (scipy, two-sided): under "no
  change" with A and B exchangeable within a round (the random order, the CPU swap), d_i is
  symmetric around 0, which is exactly its null hypothesis. Its smallest two-sided exact p is
  2 / 2^n, so n ≥ 6 rounds are needed at alpha = 0.05 (`min_pairs`).
- The CI is a percentile bootstrap of median(r_i), resampling whole rounds (fixed seed).
- The verdict is stats.verdict with the same thresholds as every other comparison: p < alpha,
  the CI excludes 1, and |median ratio − 1| ≥ max(min_effect, noise_k × noise).

Pairing is by round (the repetition number of both invocations). A round where either side has
no ok value (a failed, skipped or condition-not-met invocation) is dropped whole and named: a
lone value has no partner to cancel its round's drift with.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .stats import (BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, NOT_ENOUGH, Comparison, Thresholds,
                    effective_threshold, median, verdict)

INTERLEAVED, DUET, UNPAIRED = "interleaved", "duet", "unpaired"
DESIGNS = (INTERLEAVED, DUET, UNPAIRED)
PAIRED_DESIGNS = (INTERLEAVED, DUET)
WILCOXON = "Wilcoxon signed-rank (paired)"


@dataclass(frozen=True)
class Design:
    """How an A/B job was measured, hence how it is analysed. max_rounds > 0: adaptive
    (analysis.sequential decides when to stop, within that many rounds)."""

    name: str = UNPAIRED
    max_rounds: int = 0

    @property
    def paired(self) -> bool:
        return self.name in PAIRED_DESIGNS

    @property
    def adaptive(self) -> bool:
        return self.paired and self.max_rounds > 0


@dataclass(frozen=True)
class Pairs:
    """The rounds both sides measured, in round order, and the rounds dropped (named)."""

    rounds: tuple[int, ...]
    base: tuple[float, ...]
    cand: tuple[float, ...]
    dropped: tuple[str, ...] = ()

    @property
    def ratios(self) -> tuple[float, ...]:
        return tuple(c / b if b else math.nan for b, c in zip(self.base, self.cand))

    def first(self, n: int) -> "Pairs":
        return Pairs(self.rounds[:n], self.base[:n], self.cand[:n], self.dropped)


def pair_rounds(base: Sequence[float], base_rounds: Sequence[int], cand: Sequence[float],
                cand_rounds: Sequence[int]) -> Pairs:
    """Pair the values of two sides by round; a round missing on either side is dropped."""
    by_base, by_cand = dict(zip(base_rounds, base)), dict(zip(cand_rounds, cand))
    kept, dropped = [], []
    for round_no in sorted(set(by_base) | set(by_cand)):
        if round_no in by_base and round_no in by_cand:
            kept.append(round_no)
        else:
            missing = "baseline" if round_no not in by_base else "candidate"
            dropped.append(f"round {round_no} dropped: no ok value of the {missing}")
    return Pairs(tuple(kept), tuple(by_base[r] for r in kept), tuple(by_cand[r] for r in kept),
                 tuple(dropped))


def min_pairs(alpha: float) -> int:
    """The fewest rounds whose exact signed-rank test can reach p < alpha (2 / 2^n < alpha)."""
    n = 1
    while 2.0 / 2 ** n >= alpha:
        n += 1
    return n


def wilcoxon_p(ratios: Sequence[float]) -> float:
    """Two-sided Wilcoxon signed-rank p of log(ratios) against 0; 1.0 when every ratio is 1."""
    from scipy.stats import wilcoxon  # on first use: scipy.stats is slow to import (0.45 s)

    d = np.log(np.asarray(ratios, dtype=float))
    if not np.any(d != 0):
        return 1.0
    return float(wilcoxon(d, alternative="two-sided").pvalue)


def bootstrap_median_ratio_ci(ratios: Sequence[float], seed: int = BOOTSTRAP_SEED,
                              resamples: int = BOOTSTRAP_RESAMPLES,
                              level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap CI of median(ratios), resampling whole rounds."""
    rng = np.random.default_rng(seed)
    r = np.asarray(ratios, dtype=float)
    medians = np.median(rng.choice(r, size=(resamples, r.size), replace=True), axis=1)
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(medians, [tail, 100.0 - tail])
    return float(low), float(high)


def compare_paired(pairs: Pairs, better: str, thresholds: Thresholds = Thresholds(),
                   noise: float = 0.0) -> Comparison:
    """The paired comparison of one metric; fewer than min_pairs rounds gives NOT_ENOUGH."""
    n = len(pairs.rounds)
    threshold = effective_threshold(thresholds, noise)
    ratios = pairs.ratios
    if n == 0 or not all(math.isfinite(r) and r > 0 for r in ratios):
        nan = math.nan
        return Comparison(n, n, nan, nan, nan, nan, nan, nan, threshold, NOT_ENOUGH, WILCOXON,
                          pairs.dropped)
    ratio = median(ratios)
    ci = bootstrap_median_ratio_ci(ratios)
    p = wilcoxon_p(ratios)
    enough = n >= min_pairs(thresholds.alpha)
    return Comparison(n, n, median(pairs.base), median(pairs.cand), ratio, ci[0], ci[1], p,
                      threshold, verdict(ratio, ci, p, better, threshold, thresholds.alpha, enough),
                      WILCOXON, pairs.dropped)
