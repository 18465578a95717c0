"""The two-sided Mann–Whitney U p-value of scipy.stats.mannwhitneyu, without its per-call cost
(pure: numbers in, a p-value out).

scipy's `mannwhitneyu(x, y, alternative="two-sided")` (method "auto") ranks x ∪ y with average
ranks for ties, takes U1 = R1 − n1(n1+1)/2 (R1: the rank sum of x), U2 = n1·n2 − U1 and
U = max(U1, U2), and answers

    p = min(1, 2 · P(U' ≥ U))   exact null distribution when min(n1, n2) ≤ 8 and there are no ties,
    p = min(1, 2 · Φ̄(z))        else, z = (U − n1·n2/2 − 0.5) / σ with the tie-corrected σ.

Its wrapper (axis and NaN policy: signature inspection, broadcasting) costs ten times the test
on the few repetitions of a benchmark, and the site asks it a thousand times. `two_sided_p` runs
the same scipy steps on two 1-D float samples; anything else (NaNs, integers) goes to
`mannwhitneyu` itself. tests/orchestrator/analysis/test_stats_bit_identity.py pins the answers to scipy's, bit for bit.

The exact distribution is counted here, not by scipy: a benchmark's few repetitions rarely tie,
so an incremental `tidemark site` whose new run's tests all take the exact path (a sample of at
most 8 values, no ties) never imports scipy.stats (0.6–0.9 s of its 5 s goal, most of it
parsing docstrings).
"""
from __future__ import annotations

import functools
import math
from types import SimpleNamespace
from typing import Sequence

import numpy as np


@functools.cache
def _scipy() -> SimpleNamespace:
    """scipy's pieces, imported at the first test: scipy.stats is half of what `tidemark site`
    imports (0.45 s before it can fork its workers), and most commands never test."""
    from scipy import special
    from scipy.stats import mannwhitneyu, norm
    from scipy.stats._mannwhitneyu import _MWU, _get_mwu_z
    from scipy.stats._stats_py import _rankdata
    return SimpleNamespace(special=special, mannwhitneyu=mannwhitneyu, norm=norm, MWU=_MWU,
                           mwu_z=_get_mwu_z, rankdata=_rankdata)


def two_sided_p(x: Sequence[float], y: Sequence[float]) -> float:
    """`float(mannwhitneyu(x, y, alternative="two-sided").pvalue)`, bit for bit."""
    a, b = np.atleast_1d(x), np.atleast_1d(y)
    if (a.dtype != np.float64 or b.dtype != np.float64 or a.ndim != 1 or b.ndim != 1
            or not a.size or not b.size or np.isnan(a).any() or np.isnan(b).any()):
        return float(_scipy().mannwhitneyu(x, y, alternative="two-sided").pvalue)
    n1, n2 = a.size, b.size
    tied = len(set(x) | set(y)) < n1 + n2  # == as the ranking compares: 0.0 ties -0.0
    # scipy's choice (_mwu_choose_method): exact when a sample is small and nothing ties.
    if min(n1, n2) <= 8 and not tied:
        # Without ties the ranks are 1 … n1+n2 and U1 = R1 − n1(n1+1)/2 counts the pairs with
        # x above y: integers, exact in floating point either way.
        u1 = int(np.count_nonzero(a[:, None] > b[None, :]))
        p = _exact_sf(n1, n2, max(u1, n1 * n2 - u1)) * 2
    else:
        sp = _scipy()
        ranks, ties = sp.rankdata(np.concatenate((a, b)), "average", return_ties=True)
        u1 = ranks[:n1].sum(axis=-1) - n1 * (n1 + 1) / 2
        u = np.maximum(u1, n1 * n2 - u1)
        z = sp.mwu_z(u, n1, n2, ties, continuity=True)
        # norm.sf(z) is ndtr(-z) once its argument checks pass, as they do for a finite z.
        p = sp.special.ndtr(-z) * 2 if math.isfinite(z) else sp.norm.sf(z) * 2
    return float(np.clip(p, 0, 1))


@functools.lru_cache(maxsize=4096)
def _exact_sf(n1: int, n2: int, u: int) -> np.float64:
    """P(U' ≥ u) under the null, as scipy's `_MWU(n1, n2).sf(u)` computes it: the same counts
    divided by the same total, summed from the left in the same order."""
    total = math.comb(n1 + n2, n1)
    # scipy counts in float64 dot products (counts × divisor sums, ≤ u terms of each): exact,
    # and so equal to these integers, while total · (n1+n2)⁴ bounds them below 2**53.
    if total * (n1 + n2) ** 4 >= 2 ** 53:
        return _scipy().MWU(n1, n2).sf(np.int64(u))
    below = n1 * n2 - u  # the distribution is symmetric: scipy sums the smaller tail
    pmf = np.array(_u_counts(min(n1, n2), max(n1, n2))[:min(u, below) + 1],
                   dtype=np.float64) / np.float64(total)
    if u < below:
        return 1. - np.cumsum(pmf)[u] + pmf[u]
    return np.cumsum(pmf)[below]


@functools.lru_cache(maxsize=256)
def _u_counts(n1: int, n2: int) -> tuple[int, ...]:
    """How many of the C(n1+n2, n1) orderings of the two samples give U = 0 … n1·n2: the
    coefficients of the Gaussian binomial [n1+n2 choose n1]_q = Π (1 − q^(n2+i)) / (1 − q^i)."""
    counts = [1] + [0] * (n1 * n2)
    for i in range(1, n1 + 1):
        for k in range(len(counts) - 1, n2 + i - 1, -1):  # × (1 − q^(n2+i))
            counts[k] -= counts[k - n2 - i]
        for k in range(i, len(counts)):  # ÷ (1 − q^i)
            counts[k] += counts[k - i]
    return tuple(counts)
