"""Adaptive repetitions (pure): when an A/B job has measured enough rounds to decide.

`tidemark ab --adaptive` runs one round at a time (both sides, a paired design) and after each
asks `another_round`; `tidemark compare`/`gate` and the site replay the same rule on the stored
rounds, so every place gives the verdict the job stopped on.

The rule
--------
Let d_i = log(b_i / a_i) be the log paired ratio of round i, t the decision threshold (the same
max(min_effect, noise_k × noise) as every paired comparison, stats.effective_threshold), N the round
budget (--max-rounds) and alpha the significance level. Looks happen after every round
n = n0, n0 + 1, …, N: K = N − n0 + 1 planned looks. At each look the two-sided confidence
interval [lo, hi] of the centre of d (its pseudo-median, exp of which is the typical ratio) is
the exact Wilcoxon signed-rank interval at level 1 − alpha / K (Bonferroni over the K looks):

    W_(1) ≤ … ≤ W_(M)  the M = n(n+1)/2 Walsh averages (d_i + d_j) / 2, i ≤ j,
    [lo, hi] = [W_(k), W_(M+1−k)],  k = max{k ≥ 1 : P(T ≤ k − 1) ≤ alpha / (2K)},

with T the signed-rank statistic under the null (its exact distribution, counted by dynamic
programming over the 2^n sign patterns). The interval exists only when P(T ≤ 0) = 2^−n ≤
alpha / (2K), which fixes the first look: n0 = the smallest n with 2^(1−n) ≤ alpha / (N − n + 1)
(alpha 0.05: n0 = 9 for N = 20, 10 for N = 30, 11 for N = 60).

At a look, in ratio terms (e^lo, e^hi):

- e^lo ≥ 1 + t or e^hi ≤ 1 − t: the whole interval is clear of the threshold — a change
  (faster / slower by the metric's direction); stop.
- 1 − t < e^lo and e^hi < 1 + t: the whole interval is inside it — no change larger than t
  (equivalence); stop.
- otherwise another round, until the budget (N rounds, or --max-minutes) is spent: then
  "cannot tell", and only then.

Why repeated looks do not inflate false alarms: each interval misses the true centre with
probability ≤ alpha / K (exact for d symmetric about its centre, independent rounds); by the
union bound the chance that ANY of the K intervals misses it is ≤ alpha. A false alarm in an A/A
job (true centre 0: the sides are exchangeable within a round, so d is symmetric about 0) needs
an interval clear of ±t, hence missing 0: probability ≤ alpha over the whole job, whenever it
stops. Likewise a false "no change" when the true change is ≥ t needs an interval that misses
it: ≤ alpha. Stopping early for time only removes looks. The price of the split is power per
look; tests/orchestrator/analysis/test_sequential.py checks both the false-alarm rate (A/A, 2,000 simulated jobs) and
that a 5 % change at 2 % noise stops early and is called.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from .paired import Pairs, wilcoxon_p
from .stats import (FASTER, HIGHER, NO_CHANGE, NOT_ENOUGH, SLOWER, UNDECIDED, Comparison,
                    Thresholds, effective_threshold, median)

CHANGE, EQUIVALENT, CONTINUE = "change", "equivalent", "continue"
DEFAULT_MAX_ROUNDS = 30


@dataclass(frozen=True)
class LookPlan:
    """Where the looks are and how wide each interval is."""

    alpha: float
    max_rounds: int
    min_rounds: int  # the first look (n0)

    @property
    def looks(self) -> int:
        return self.max_rounds - self.min_rounds + 1

    @property
    def level(self) -> float:
        return 1.0 - self.alpha / self.looks


def plan_looks(alpha: float, max_rounds: int) -> LookPlan | None:
    """The look plan of a round budget; None when no n ≤ max_rounds allows an interval."""
    for n in range(1, max_rounds + 1):
        if 2.0 ** (1 - n) <= alpha / (max_rounds - n + 1):
            return LookPlan(alpha, max_rounds, n)
    return None


@lru_cache(maxsize=256)
def signed_rank_cdf(n: int) -> tuple[float, ...]:
    """P(T ≤ s), s = 0 … n(n+1)/2, for the signed-rank statistic of n pairs under the null."""
    counts = [1] + [0] * (n * (n + 1) // 2)
    for rank in range(1, n + 1):
        for s in range(len(counts) - 1, rank - 1, -1):
            counts[s] += counts[s - rank]
    total, running, out = 2 ** n, 0, []
    for c in counts:
        running += c
        out.append(running / total)
    return tuple(out)


@lru_cache(maxsize=1024)
def interval_rank(n: int, level: float) -> int:
    """k of the signed-rank interval: how many P(T ≤ s) are ≤ (1 − level) / 2 (0: none)."""
    return int(np.searchsorted(signed_rank_cdf(n), (1.0 - level) / 2.0, side="right"))


@lru_cache(maxsize=256)
def _pairs_upper(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(n)


def signed_rank_interval(d: Sequence[float], level: float) -> tuple[float, float] | None:
    """The exact Wilcoxon signed-rank CI of the centre of d; None when n is too small."""
    k = interval_rank(len(d), level)
    if k == 0:
        return None
    x = np.asarray(d, dtype=float)
    i, j = _pairs_upper(len(d))
    walsh = np.sort((x[i] + x[j]) / 2.0)
    return float(walsh[k - 1]), float(walsh[walsh.size - k])


def look(d: Sequence[float], threshold: float, level: float) -> tuple[str, float, float]:
    """(change | equivalent | continue, lo, hi) at one look, in log-ratio terms."""
    interval = signed_rank_interval(d, level)
    if interval is None:
        return CONTINUE, math.nan, math.nan
    lo, hi = interval
    up, down = math.log1p(threshold), math.log1p(-threshold) if threshold < 1 else -math.inf
    if lo >= up or hi <= down:
        return CHANGE, lo, hi
    if down < lo and hi < up:
        return EQUIVALENT, lo, hi
    return CONTINUE, lo, hi


@dataclass(frozen=True)
class Stop:
    """Where the rule stopped on a sequence of rounds (or that it has not)."""

    rounds: int  # the pairs it used: the deciding look, else every pair given
    state: str  # change | equivalent | continue
    lo: float  # the interval of the last look, log-ratio terms (NaN before the first look)
    hi: float


def run_rule(ratios: Sequence[float], threshold: float, plan: LookPlan) -> Stop:
    """Replay the looks over paired ratios in round order; the first decisive look stops."""
    d = [math.log(r) for r in ratios[:plan.max_rounds]]
    last = Stop(len(d), CONTINUE, math.nan, math.nan)
    for n in range(plan.min_rounds, len(d) + 1):
        state, lo, hi = look(d[:n], threshold, plan.level)
        last = Stop(n if state != CONTINUE else len(d), state, lo, hi)
        if state != CONTINUE:
            return last
    return last


def _verdict(stop: Stop, better: str) -> str:
    if stop.state == EQUIVALENT:
        return NO_CHANGE
    if stop.state == CHANGE:
        return FASTER if (stop.lo > 0) == (better == HIGHER) else SLOWER
    return UNDECIDED


def compare_sequential(pairs: Pairs, better: str, max_rounds: int,
                       thresholds: Thresholds = Thresholds(), noise: float = 0.0) -> Comparison:
    """The adaptive job's comparison of one metric: the verdict of the look it stopped at."""
    threshold = effective_threshold(thresholds, noise)
    plan = plan_looks(thresholds.alpha, max_rounds)
    ratios = pairs.ratios
    nan = math.nan
    if plan is None or not ratios or not all(math.isfinite(r) and r > 0 for r in ratios):
        why = (f"a budget of {max_rounds} rounds allows no look at alpha {thresholds.alpha:g}",) \
            if plan is None else ()
        return Comparison(len(ratios), len(ratios), nan, nan, nan, nan, nan, nan, threshold,
                          NOT_ENOUGH, "sequential Wilcoxon signed-rank (paired)",
                          pairs.dropped + why)
    stop = run_rule(ratios, threshold, plan)
    used = pairs.first(stop.rounds)
    test = (f"sequential Wilcoxon signed-rank (paired; {stop.rounds} of at most {max_rounds} "
            f"rounds)")
    note = (f"looks after rounds {plan.min_rounds}…{max_rounds}, each a {plan.level:.2%} "
            f"interval (alpha {thresholds.alpha:g} over {plan.looks} looks)")
    return Comparison(stop.rounds, stop.rounds, median(used.base), median(used.cand),
                      median(used.ratios), math.exp(stop.lo), math.exp(stop.hi),
                      wilcoxon_p(used.ratios), threshold, _verdict(stop, better), test,
                      pairs.dropped + (note,))


def undecided(comparisons: Sequence[Comparison]) -> bool:
    """Whether any comparison still waits for its interval to clear or enter the threshold."""
    return any(c.verdict == UNDECIDED for c in comparisons)


def another_round(comparisons: Sequence[Comparison], rounds_done: int, max_rounds: int) -> bool:
    """The question `tidemark ab --adaptive` asks after each round."""
    return rounds_done < max_rounds and undecided(comparisons)
