"""The adaptive stopping rule on known data (pure, seeded): repeated looks do not inflate false
alarms, a planted 5 % change at 2 % noise stops early and is called, and the comparison a
stored job replays says where it stopped. No timings: every sample is drawn from a fixed
seeded distribution, so each rate below is one deterministic number."""
import itertools
import math

import numpy as np
import pytest

from orchestrator.analysis.paired import Pairs
from orchestrator.analysis.sequential import (CHANGE, EQUIVALENT, another_round,
                                              compare_sequential, plan_looks, run_rule,
                                              signed_rank_cdf, signed_rank_interval)
from orchestrator.analysis.stats import (NO_CHANGE, NOT_ENOUGH, SLOWER, UNDECIDED, Comparison,
                                         Thresholds)

ALPHA, MAX_ROUNDS, SIMULATIONS = 0.05, 30, 2000
# Binomial standard error of a rate near alpha over 2,000 jobs is 0.005; the seed fixes the
# draw, so the margin only has to cover the gap between this seed's rate and the bound.
MARGIN = 0.01


def jobs(effect: float, noise: float, count: int, seed: int) -> np.ndarray:
    """Per-round ratios b/a of `count` jobs: each round drifts both sides alike (5 %), each
    invocation has its own noise, side B is `effect` × side A."""
    rng = np.random.default_rng(seed)
    drift = np.exp(rng.normal(0.0, 0.05, (count, MAX_ROUNDS)))
    a = drift * np.exp(rng.normal(0.0, noise, (count, MAX_ROUNDS)))
    b = drift * effect * np.exp(rng.normal(0.0, noise, (count, MAX_ROUNDS)))
    return b / a


@pytest.mark.parametrize("max_rounds,first_look", [(20, 9), (30, 10), (60, 11), (8, 7), (5, None)])
def test_the_first_look_is_where_an_interval_can_exist(max_rounds, first_look):
    plan = plan_looks(ALPHA, max_rounds)
    assert (plan.min_rounds if plan else None) == first_look
    if plan:  # the narrowest interval (min, max of d) is allowed at the first look, not before
        assert 2.0 ** (1 - plan.min_rounds) <= ALPHA / plan.looks < 2.0 ** (2 - plan.min_rounds)


def test_the_signed_rank_distribution_is_the_count_of_sign_patterns():
    n = 8
    sums = [sum(r for r, s in zip(range(1, n + 1), signs) if s)
            for signs in itertools.product((0, 1), repeat=n)]
    assert signed_rank_cdf(n) == tuple(sum(1 for t in sums if t <= s) / 2 ** n
                                       for s in range(n * (n + 1) // 2 + 1))
    assert signed_rank_interval([0.1] * 5, 0.95) is None  # 2/32 > 0.05: no interval yet
    assert signed_rank_interval([1, 2, 3, 4, 5, 6], 0.95) == (1.0, 6.0)  # k = 1: min and max


@pytest.mark.parametrize("threshold", [0.0, 0.02])
def test_aa_false_alarms_stay_under_alpha_over_every_look(threshold):
    plan = plan_looks(ALPHA, MAX_ROUNDS)
    stops = [run_rule(list(r), threshold, plan) for r in jobs(1.0, 0.02, SIMULATIONS, seed=7)]
    false_alarms = sum(s.state == CHANGE for s in stops) / SIMULATIONS
    assert false_alarms <= ALPHA + MARGIN, false_alarms
    if threshold:  # a 2 % band is wider than A/A noise: most jobs stop as "no change"
        assert sum(s.state == EQUIVALENT for s in stops) / SIMULATIONS > 0.3


def test_naive_looks_at_95_percent_would_inflate_false_alarms():
    """Why the split: the same jobs looked at with a plain 95 % interval after every round call
    a change far more often than alpha — what the Bonferroni split prevents."""
    plan = plan_looks(ALPHA, MAX_ROUNDS)
    naive = type(plan)(ALPHA * plan.looks, MAX_ROUNDS, plan.min_rounds)  # level 0.95 per look
    assert naive.level == pytest.approx(0.95)
    stops = [run_rule(list(r), 0.0, naive) for r in jobs(1.0, 0.02, 500, seed=7)]
    assert sum(s.state == CHANGE for s in stops) / 500 > 2 * ALPHA


def test_a_planted_5_percent_change_at_2_percent_noise_stops_early_and_is_called():
    plan = plan_looks(ALPHA, MAX_ROUNDS)
    stops = [run_rule(list(r), 0.02, plan) for r in jobs(0.95, 0.02, 500, seed=11)]
    called = [s for s in stops if s.state == CHANGE and s.hi < 0]
    assert len(called) / len(stops) >= 0.95
    assert np.median([s.rounds for s in stops]) <= 16  # early: the budget is 30


def pairs(ratios) -> Pairs:
    rounds = tuple(range(1, len(ratios) + 1))
    return Pairs(rounds, tuple(100.0 for _ in ratios), tuple(100.0 * r for r in ratios))


THRESHOLDS = Thresholds(alpha=ALPHA, min_effect=0.02, noise_k=2.0, unmeasured_noise=0.0)


def test_the_stored_rounds_replay_to_the_verdict_and_the_round_it_stopped_at():
    slower = [0.95, 0.94, 0.96, 0.95, 0.93, 0.95, 0.96, 0.94, 0.95, 0.95, 0.94, 0.96]
    result = compare_sequential(pairs(slower), "higher", MAX_ROUNDS, THRESHOLDS)
    assert result.verdict == SLOWER and result.base_n == 10  # the first look decided
    assert result.test == "sequential Wilcoxon signed-rank (paired; 10 of at most 30 rounds)"
    assert result.ci_high <= 0.98 and "over 21 looks" in result.notes[-1]
    same = [1.001, 0.999, 1.0, 1.002, 0.998, 1.001, 0.999, 1.0, 1.001, 0.999]
    assert compare_sequential(pairs(same), "higher", MAX_ROUNDS, THRESHOLDS).verdict == NO_CHANGE
    # Undecided after 12 of 30 rounds: "cannot tell" (ab asks for another round; when the
    # budget is spent this is the verdict).
    wide = [0.9, 1.1] * 6
    undecided = compare_sequential(pairs(wide), "higher", MAX_ROUNDS, THRESHOLDS)
    assert undecided.verdict == UNDECIDED and undecided.base_n == 12
    assert another_round([undecided], 12, MAX_ROUNDS) and not another_round([undecided], 30, 30)
    assert not another_round([Comparison(1, 1, 1, 1, 1, 1, 1, 1, 0.02, SLOWER)], 12, 30)
    tiny = compare_sequential(pairs(same), "higher", 5, THRESHOLDS)
    assert tiny.verdict == NOT_ENOUGH and "allows no look" in tiny.notes[-1]
    assert math.isnan(tiny.ratio)
