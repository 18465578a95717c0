"""Change points in a series' history: E-Divisive means with a permutation test (pure).

Why our own ~80 lines instead of a package: `signal-processing-algorithms` (MongoDB's E-Divisive)
pins its own numpy/scipy ranges; `ruptures` offers penalised segmentation (PELT, Binseg) but no
significance test, so its penalty is one more knob to tune per series. E-Divisive (Matteson &
James 2014, alpha = 1) is what MongoDB uses for exactly this job: it makes no distribution
assumption, needs no penalty, and its permutation test answers "would a split this strong appear
in shuffled data?" at a chosen significance level. Our histories are short (tens to hundreds of
runs), so the O(n²) distance sums stay cheap (in C: _edivisive.c).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

try:
    from ._edivisive import shuffled_maxima, split_statistics
except ImportError as missing:  # a source tree never installed: there is no other version
    raise ImportError(f"the change points' C step (orchestrator/analysis/_edivisive.c) does not "
                      f"load ({missing}): run `make venv` (pip install -e .) to build it"
                      ) from missing

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


CHUNK = 25  # shuffles scored per call: bigger batches stop fitting in the CPU caches


class _Segment:
    """One segment of the series and what every ordering of it shares, computed once: the row
    sums of its distance matrix (they do not depend on the order) and the splits allowed."""

    def __init__(self, x: np.ndarray, min_size: int):
        # Contiguous: the C step reads the values as one buffer (a column of a 2-D array is not).
        self.x, self.n, self.min_size = np.ascontiguousarray(x), x.size, min_size
        self.row_sums = np.abs(x[:, None] - x[None, :]).sum(axis=1)
        self.taus = np.arange(min_size, self.n - min_size + 1)

    def split_statistics(self, orders: np.ndarray) -> np.ndarray:
        """Q(τ) for every split τ of each ordering x[orders[b]] (E-Divisive means, alpha = 1);
        -inf where a side is too small. Shape (len(orders), n)."""
        q = np.full(orders.shape, -np.inf)
        if self.taus.size:
            q[:, self.taus] = self._statistics_at_taus(orders)
        return q

    def _statistics_at_taus(self, orders: np.ndarray) -> np.ndarray:
        """Q at each split of `taus` for each ordering. Shape (len(orders), len(taus)).

        Q needs, per τ, the sum of |xi - xj| within the first τ points, between both sides and
        within the rest: from the row sums and, per ordering, each point's distances to the
        points before it, the one O(n²) step, which _edivisive.c does in a fixed order of
        additions (the same bits on every machine)."""
        out = np.empty((len(orders), self.taus.size))
        split_statistics(self.x[orders], self.row_sums[orders], self.n, int(self.taus[0]),
                         int(self.taus[-1]), out)
        return out

    def best_split(self) -> tuple[int, float]:
        q = self.split_statistics(np.arange(self.n)[None, :])[0]
        tau = int(np.argmax(q))
        return tau, float(q[tau])

    def significance(self, observed: float, rng: np.random.Generator,
                     permutations: int) -> float:
        """Share of shuffles whose best split is at least as strong as the observed one.

        Stops early once the split can no longer reach significance at 0.05: most series have
        no step, and their test then costs a batch or two of shuffles instead of all of them.
        The shuffles are `rng.permuted(np.tile(np.arange(n), (CHUNK, 1)), axis=1)`, batch
        after batch, drawn and scored in C (`shuffled_maxima`, the same draws), and judged in
        their order, so where it stops, and the p-value, do not depend on the batch size; the
        batch size decides how many draws the rng has made when it stops, which the next
        test's shuffles start from.
        """
        hits = 0
        give_up = int(0.05 * (permutations + 1))
        done = 0
        maxima = np.empty(CHUNK)
        taus = (int(self.taus[0]), int(self.taus[-1]))
        bits = rng.bit_generator
        while done < permutations:
            batch = min(CHUNK, permutations - done)
            with bits.lock:  # as numpy's own methods hold it while they draw
                shuffled_maxima(self.x, self.row_sums, *taus, bits.capsule, maxima[:batch])
            hits_so_far = hits + np.cumsum(maxima[:batch] >= observed)  # after each shuffle
            beyond = np.flatnonzero(hits_so_far > give_up)
            if beyond.size:  # the shuffle that made one hit too many: no significance left
                stop = int(beyond[0])
                return (int(hits_so_far[stop]) + 1) / (done + stop + 2)
            hits, done = int(hits_so_far[-1]), done + batch
        return (hits + 1) / (permutations + 1)


def detect_change_points(values: Sequence[float], alpha: float = 0.05, min_size: int = 3,
                         permutations: int = PERMUTATIONS, seed: int = SEED) -> list[ChangePoint]:
    """Recursive E-Divisive: split the segment with the strongest significant split until none is."""
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    bounds = [0, data.size]
    found: dict[int, float] = {}
    # A segment's best split does not change while other segments are split: found once.
    segments: dict[tuple[int, int], tuple[_Segment, int, float]] = {}
    while True:
        best: tuple[float, int, int, int] | None = None  # (q, tau, start, end)
        for start, end in zip(bounds[:-1], bounds[1:]):
            if end - start < 2 * min_size:
                continue
            if (start, end) not in segments:
                segment = _Segment(data[start:end], min_size)
                segments[(start, end)] = (segment, *segment.best_split())
            _, tau, q = segments[(start, end)]
            if np.isfinite(q) and (best is None or q > best[0]):
                best = (q, tau, start, end)
        if best is None:
            break
        q, tau, start, end = best
        p = segments[(start, end)][0].significance(q, rng, permutations)
        if p >= alpha:
            break
        found[start + tau] = p
        bounds = sorted(bounds + [start + tau])
        del segments[(start, end)]  # split: its two halves are segments of their own
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
