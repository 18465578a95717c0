"""Change points in a series' history: E-Divisive means with a permutation test (pure).

Why our own ~80 lines instead of a package: `signal-processing-algorithms` (MongoDB's E-Divisive)
pins its own numpy/scipy ranges and ships a C extension we would have to build here; `ruptures`
offers penalised segmentation (PELT, Binseg) but no significance test, so its penalty is one more
knob to tune per series. E-Divisive (Matteson & James 2014, alpha = 1) is what MongoDB uses for
exactly this job: it makes no distribution assumption, needs no penalty, and its permutation test
answers "would a split this strong appear in shuffled data?" at a chosen significance level. Our
histories are short (tens to hundreds of runs), so the O(n²) distance matrix is cheap.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

PERMUTATIONS = 199
SEED = 1234


@dataclass(frozen=True)
class ChangePoint:
    index: int  # first point of the new regime (0-based into the series)
    p_value: float
    before_median: float
    after_median: float

    @property
    def change_pct(self) -> float:
        return (self.after_median / self.before_median - 1.0) * 100.0 if self.before_median else 0.0


def _split_statistics(x: np.ndarray, min_size: int) -> np.ndarray:
    """Q(τ) for every split τ of x (E-Divisive means, alpha = 1); -inf where a side is too small.

    Vectorized over τ with a 2-D prefix sum of |xi - xj|: one O(n²) pass per call, which matters
    because the permutation test calls this hundreds of times per segment.
    """
    n = x.size
    q = np.full(n, -np.inf)
    taus = np.arange(min_size, n - min_size + 1)
    if taus.size == 0:
        return q
    dist = np.abs(x[:, None] - x[None, :])
    cum = np.zeros((n + 1, n + 1))
    cum[1:, 1:] = dist.cumsum(0).cumsum(1)
    m, k = taus.astype(float), (n - taus).astype(float)
    within_left = cum[taus, taus]
    between = cum[taus, n] - within_left
    within_right = cum[n, n] - 2.0 * cum[taus, n] + within_left
    left = np.divide(within_left, m * (m - 1), out=np.zeros_like(m), where=m > 1)
    right = np.divide(within_right, k * (k - 1), out=np.zeros_like(k), where=k > 1)
    q[taus] = m * k / n * (between * 2.0 / (m * k) - left - right)
    return q


def _best_split(x: np.ndarray, min_size: int) -> tuple[int, float]:
    q = _split_statistics(x, min_size)
    tau = int(np.argmax(q))
    return tau, float(q[tau])


def _significance(x: np.ndarray, observed: float, min_size: int,
                  rng: np.random.Generator, permutations: int) -> float:
    """Share of shuffles whose best split is at least as strong as the observed one.

    Stops early once the split can no longer reach significance at 0.05: most series have no
    step, and their test then costs a dozen shuffles instead of all of them.
    """
    hits = 0
    give_up = int(0.05 * (permutations + 1))
    for done in range(1, permutations + 1):
        if _best_split(rng.permutation(x), min_size)[1] >= observed:
            hits += 1
            if hits > give_up:
                return (hits + 1) / (done + 1)
    return (hits + 1) / (permutations + 1)


def detect_change_points(values: Sequence[float], alpha: float = 0.05, min_size: int = 3,
                         permutations: int = PERMUTATIONS, seed: int = SEED) -> list[ChangePoint]:
    """Recursive E-Divisive: split the segment with the strongest significant split until none is."""
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    bounds = [0, data.size]
    found: dict[int, float] = {}
    while True:
        best: tuple[float, int, int, int] | None = None  # (q, tau, start, end)
        for start, end in zip(bounds[:-1], bounds[1:]):
            if end - start < 2 * min_size:
                continue
            tau, q = _best_split(data[start:end], min_size)
            if np.isfinite(q) and (best is None or q > best[0]):
                best = (q, tau, start, end)
        if best is None:
            break
        q, tau, start, end = best
        p = _significance(data[start:end], q, min_size, rng, permutations)
        if p >= alpha:
            break
        found[start + tau] = p
        bounds = sorted(bounds + [start + tau])
    return _describe(data, sorted(found), found)


def _describe(data: np.ndarray, cuts: list[int], p_values: dict[int, float]) -> list[ChangePoint]:
    edges = [0, *cuts, data.size]
    points = []
    for i, cut in enumerate(cuts, start=1):
        before = data[edges[i - 1]:cut]
        after = data[cut:edges[i + 1]]
        points.append(ChangePoint(cut, p_values[cut], float(np.median(before)),
                                  float(np.median(after))))
    return points
