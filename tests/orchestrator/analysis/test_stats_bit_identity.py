"""The U test and the bootstrap CI answer exactly as the library calls they replace (pure).

analysis.mann_whitney skips scipy's per-call wrapper and analysis.stats draws the bootstrap's
resample positions once per pair of sample sizes; a verdict must not move by one bit, so both
are compared with the plain calls on samples like the history's (few repetitions, ties,
integers, zeros, infinities, NaN) with `==` on the floats, never approx."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from orchestrator.analysis.mann_whitney import two_sided_p
from orchestrator.analysis.stats import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, bootstrap_ratio_ci


def _plain_bootstrap(base, cand, seed=BOOTSTRAP_SEED, resamples=BOOTSTRAP_RESAMPLES, level=0.95):
    """bootstrap_ratio_ci as it was written first: rng.choice and np.median per resample."""
    rng = np.random.default_rng(seed)
    b, c = np.asarray(base, dtype=float), np.asarray(cand, dtype=float)
    b_med = np.median(rng.choice(b, size=(resamples, b.size), replace=True), axis=1)
    c_med = np.median(rng.choice(c, size=(resamples, c.size), replace=True), axis=1)
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(c_med / b_med, [tail, 100.0 - tail])
    return float(low), float(high)


def _samples(seed: int, count: int):
    """Pairs of samples of 1-30 repetitions: continuous, rounded (ties), shifted, scaled."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n1, n2 = rng.integers(1, 12, size=2) if rng.random() < 0.7 else rng.integers(1, 31, 2)
        scale = 10.0 ** rng.integers(-3, 7)
        base = rng.normal(1.0, 0.05, n1) * scale
        cand = rng.normal(1.0 + rng.choice([0, 0.02, 0.2]), 0.05, n2) * scale
        if rng.random() < 0.3:  # a coarse timer: ties within and across the samples
            base, cand = np.round(base / scale, 2) * scale, np.round(cand / scale, 2) * scale
        yield tuple(base.tolist()), tuple(cand.tolist())


EDGES = [
    ((1.0,), (2.0,)), ((1.0, 1.0), (1.0, 2.0)), ((3.0, 3.0, 3.0), (3.0, 3.0, 4.0)),
    ((1, 2, 3, 4, 5), (6, 7, 8, 9, 10)), ((10, 12, 11, 13, 9), (14, 12.5, 15, 16, 11.5)),
    ((0.0, 1.0, 2.0), (1.0, 2.0, 3.0)), ((-0.0, 0.0, 1.0), (0.0, 1.0, -0.0)),
    ((1.0, float("inf"), 2.0), (1.0, 2.0, 3.0)), ((1.0, float("nan"), 2.0), (1.0, 2.0, 3.0)),
    ((-1.0, -2.0, -3.0), (-1.5, -2.5)), (tuple(range(1, 10)), tuple(range(5, 15))),
    ((1e300, 2e300), (1e-300, 3e300)),
]


def _same(a: float, b: float) -> bool:
    return a == b and np.signbit(a) == np.signbit(b) or (np.isnan(a) and np.isnan(b))


@pytest.mark.parametrize("base,cand", [*EDGES, *_samples(1, 400)])
def test_u_test_p_is_scipys_bit_for_bit(base, cand):
    expected = float(mannwhitneyu(cand, base, alternative="two-sided").pvalue)
    assert _same(two_sided_p(cand, base), expected)


@pytest.mark.parametrize("base,cand", [*EDGES, *_samples(2, 300)])
def test_bootstrap_ci_is_the_plain_bootstraps_bit_for_bit(base, cand):
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = _plain_bootstrap(base, cand)
        found = bootstrap_ratio_ci(base, cand)
    assert _same(found[0], expected[0]) and _same(found[1], expected[1])


def test_bootstrap_ci_with_another_seed_level_and_resamples():
    base, cand = (100.0, 102, 98, 101), (95.0, 96, 94, 97, 93)
    for seed, resamples, level in [(1, 1000, 0.9), (7, 4000, 0.99), (BOOTSTRAP_SEED, 10, 0.5)]:
        assert (bootstrap_ratio_ci(base, cand, seed, resamples, level)
                == _plain_bootstrap(base, cand, seed, resamples, level))


# The last ones: just inside and just past the size where the counts stop being exact.
SIZES = [(n1, n2) for n1 in range(1, 9) for n2 in range(1, 21)] + [
    (8, 46), (3, 243), (1, 1551), (8, 47), (47, 8), (3, 244)]


@pytest.mark.parametrize("n1,n2", SIZES)
def test_exact_u_distribution_is_scipys_bit_for_bit(n1, n2):
    from scipy.stats._mannwhitneyu import _MWU
    from orchestrator.analysis.mann_whitney import _exact_sf
    every = range(n1 * n2 + 1)
    tails = every if n1 * n2 <= 400 else [*every[:50], *every[-200:]]
    for u in tails:
        expected = _MWU(n1, n2).sf(np.int64(u))
        found = _exact_sf(n1, n2, u)
        assert found == expected and type(found) is type(expected), (n1, n2, u)


def test_untied_small_samples_are_tested_without_importing_scipy():
    script = ("import sys\n"
              "from orchestrator.analysis.stats import summarize_samples\n"
              "summarize_samples((10.0, 11.0, 12.5), (9.0, 9.5, 13.0, 8.0))\n"
              "print(sorted(m for m in sys.modules if m.startswith('scipy')))\n")
    found = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           check=True, cwd=Path(__file__).resolve().parents[3])
    assert found.stdout.strip() == "[]"
