"""The tail of run-to-run changes in the between-run threshold (pure, table-driven).

analysis.noise: a change between two separate runs must exceed max(min_effect, noise_k × noise,
tail), the tail an upper quantile of |m2 / m1 − 1| of the series' consecutive runs of one build.
Every history here is constructed, but the calibration test, which is seeded."""
import math
import pickle

import numpy as np
import pytest

from orchestrator.analysis.compare import SeriesSamples, build_report
from orchestrator.analysis.identity import SeriesIdentity, series_key
from orchestrator.analysis.noise import History, run_changes, series_noise, tail_of
from orchestrator.analysis.paired import INTERLEAVED, Design
from orchestrator.analysis.stats import (NO_CHANGE, SLOWER, Thresholds, effective_threshold,
                                         robust_cv)

T = Thresholds(min_effect=0.02, noise_k=2.0, unmeasured_noise=0.03)
IDENTITY = {"engine": "rocksdb", "workload": "readrandom", "benchmark": "readrandom",
            "params": {}, "threads": 1, "cache_state": "warm", "build_variant": "release",
            "machine_fingerprint": "fp"}
KEY = (series_key(IDENTITY), "ops_per_sec")
# Ten runs of one build that move by ~2 %, and one whole run shifted by +15 % (run 5).
QUIET = [100.0, 102.0, 100.0, 98.0, 100.0, 102.0, 100.0, 98.0, 100.0, 102.0]
SHIFTED = QUIET[:5] + [115.0] + QUIET[6:]


def history(medians, builds="b", aa_pairs=(), candidate=None):
    """Runs r00, r01, … oldest first (`candidate`: a last run "new" of the same build);
    `builds`: one build for all, or one per run (None: a run of no known build)."""
    runs = [(f"r{i:02d}", m) for i, m in enumerate(medians)]
    if candidate is not None:
        runs.append(("new", candidate))
    per_run = [builds] * len(runs) if isinstance(builds, str) else list(builds)
    return History({KEY: tuple(runs)}, tuple(aa_pairs),
                   {run: b for (run, _), b in zip(runs, per_run) if b is not None})


def threshold(h, thresholds=T, exclude=("new",)):
    noise = series_noise(h, *KEY, exclude, thresholds.tail_quantile)
    return effective_threshold(thresholds, noise.value, noise.tail), noise


def test_one_whole_run_shift_sets_the_threshold_that_the_robust_spread_ignores():
    t, noise = threshold(history(SHIFTED, candidate=101.0))
    # The spread of run medians ignores the shifted run: 1.4826 × MAD 1 / 100 = 1.5 %, so the
    # threshold without the tail is max(2 %, 2 × 1.5 %) = 3.0 %.
    assert noise.spread == pytest.approx(robust_cv(SHIFTED)) and noise.spread == pytest.approx(
        0.014826)
    assert effective_threshold(T, noise.value) == pytest.approx(0.029652)
    # 9 changes, 2 of them the shift (in +15 %, out −13 %): at q = 0.9 the largest is the tail.
    assert (noise.changes, noise.same_build) == (9, True)
    assert noise.tail == pytest.approx(0.15) and t == pytest.approx(0.15)


def test_a_comparison_of_two_runs_is_judged_against_the_tail():
    """A 10 % drop of one run is what the history's runs of one build did by themselves."""
    h = history(SHIFTED, candidate=90.0)
    base = samples([100.0, 100.4, 99.7, 100.2, 99.9])
    for cand, verdict in (([90.0, 90.3, 89.8, 90.1, 89.9], NO_CHANGE),  # −10 %: inside the tail
                          ([80.0, 80.3, 79.8, 80.1, 79.9], SLOWER)):  # −20 %: beyond it
        (row,) = build_report({"run_id": "r09"}, {"run_id": "new"}, base, samples(cand),
                              ["ops_per_sec"], T, h).rows
        assert row.noise.tail == pytest.approx(0.15) and row.comparison.threshold == row.noise.tail
        assert row.comparison.verdict == verdict
    quiet = build_report({"run_id": "r09"}, {"run_id": "new"}, base,
                         samples([90.0, 90.3, 89.8, 90.1, 89.9]), ["ops_per_sec"], T,
                         history(QUIET, candidate=90.0)).rows[0]
    assert quiet.comparison.verdict == SLOWER  # without the shift, −10 % is called


def test_the_candidate_is_left_out_of_its_own_tail():
    # The candidate is the shifted run: its own change must not widen its threshold.
    t, noise = threshold(history(QUIET, candidate=115.0))
    assert noise.changes == 9 and noise.tail == pytest.approx(0.02 / 0.98)
    assert t == pytest.approx(effective_threshold(T, noise.value))
    # A candidate inside the history: its neighbours become consecutive runs.
    h = history(SHIFTED)
    changes, same = run_changes(h, *KEY, ("r05",))
    assert same and len(changes) == 8 and max(changes) == pytest.approx(0.02 / 0.98)


@pytest.mark.parametrize("name,medians", [
    ("alternating ±1 %", [100.0, 101.0, 100.0, 99.0, 100.0, 101.0, 100.0, 99.0, 100.0, 101.0]),
    ("a slow drift", [100.0 + 0.5 * i for i in range(12)]),
    ("identical runs", [100.0] * 6),
    ("two levels", [100.0, 100.5, 99.5, 100.0, 103.0, 103.5, 102.5, 103.0]),
])
def test_a_history_without_shifts_keeps_its_threshold(name, medians):
    """No regression in sensitivity where whole runs do not move more than noise_k × noise."""
    for thresholds in (T, Thresholds(min_effect=0.0, noise_k=2.0)):
        t, noise = threshold(history(medians, candidate=medians[-1]), thresholds)
        assert noise.changes == len(medians) - 1, name
        assert t == effective_threshold(thresholds, noise.value), name


@pytest.mark.parametrize("name,medians,tail,changes", [
    ("no history", [], math.nan, 0),
    ("one run: no change", [100.0], math.nan, 0),
    ("two runs: their change is the tail", [100.0, 110.0], 0.10, 1),
    ("a NaN median: its changes skipped", [100.0, math.nan, 103.0, 100.0], 3 / 103, 1),
    ("a zero median: its change skipped", [0.0, 100.0, 104.0], 0.04, 1),
])
def test_few_runs_and_missing_medians(name, medians, tail, changes):
    t, noise = threshold(history(medians, candidate=100.0))
    assert noise.changes == changes, name
    assert noise.tail == pytest.approx(tail, nan_ok=True), name
    expected = effective_threshold(T, noise.value)  # NaN noise counts as unmeasured_noise
    assert t == pytest.approx(max(expected, tail) if changes else expected), name
    if not medians:
        assert math.isnan(noise.value) and t == pytest.approx(0.06)


@pytest.mark.parametrize("n,quantile,rank", [
    (1, 0.9, 1), (8, 0.9, 8), (9, 0.9, 9), (18, 0.9, 18),  # the largest until 19 changes
    (19, 0.9, 18), (29, 0.9, 27), (99, 0.9, 90),
    (99, 0.07, 7),  # ⌈0.07 × 100⌉ is 7, not the 8 that floating point makes of it
    (3, 0.5, 2), (5, 1.0, 5), (5, 1e-12, 1),
])
def test_tail_is_the_order_statistic_of_the_quantile(n, quantile, rank):
    changes = [i / 1000 for i in range(n, 0, -1)]  # any order: ranks 1…n are 0.001 … n/1000
    assert tail_of(changes, quantile) == pytest.approx(rank / 1000)


def test_tail_quantile_zero_leaves_the_tail_out():
    assert math.isnan(tail_of([0.1, 0.2], 0.0)) and math.isnan(tail_of([], 0.9))
    off = Thresholds(min_effect=0.02, noise_k=2.0, unmeasured_noise=0.03, tail_quantile=0.0)
    t, noise = threshold(history(SHIFTED, candidate=101.0), off)
    assert math.isnan(noise.tail) and noise.changes == 9
    assert t == pytest.approx(0.029652)


def test_changes_between_builds_are_left_out_while_runs_of_one_build_exist():
    # Runs 0–4 of build a, 5–9 of build b 20 % faster: the step is a real change, not noise.
    medians = QUIET[:5] + [m * 1.2 for m in QUIET[5:]]
    noise = series_noise(history(medians, ["a"] * 5 + ["b"] * 6, candidate=120.0), *KEY, ("new",))
    assert (noise.changes, noise.same_build) == (8, True)
    assert noise.tail == pytest.approx(0.02 / 0.98)
    # Every run a new build (a commit each): all consecutive changes, the step among them.
    fresh = series_noise(history(medians, [f"c{i}" for i in range(11)], candidate=120.0), *KEY,
                         ("new",))
    assert (fresh.changes, fresh.same_build) == (9, False)
    assert fresh.tail == pytest.approx(122.4 / 100 - 1)
    # Imported runs name no build: no two are known to be of one build.
    imported = series_noise(history(medians, [None] * 11, candidate=120.0), *KEY, ("new",))
    assert (imported.changes, imported.same_build) == (9, False)


def test_the_sides_of_an_aa_pair_are_not_two_separate_runs():
    # r02 and r03 are the sides of one A/A job: their +0.5 % stays in the noise, not the tail.
    medians = [100.0, 110.0, 100.0, 100.5, 108.0]
    h = history(medians, aa_pairs=[("r02", "r03")], candidate=100.0)
    noise = series_noise(h, *KEY, ("new",))
    assert noise.aa_changes == pytest.approx((0.005,)) and noise.changes == 3
    assert noise.tail == pytest.approx(0.10)  # 100 → 110 (10 %), 110 → 100, 100.5 → 108


def test_experiments_and_every_median_of_an_excluded_run_are_left_out():
    # r03 measured a change on purpose (an A/B job of two builds): not noise. A run twice in a
    # series (a history put together by hand) loses both medians when excluded.
    h = History({KEY: (("r00", 100.0), ("r01", 101.0), ("r02", 100.0), ("r03", 130.0),
                       ("r04", 102.0), ("r01", 150.0))}, (), {}, frozenset({"r03"}))
    noise = series_noise(h, *KEY, ("r01",))
    assert (noise.runs, noise.changes) == (3, 2)  # r00, r02, r04: 100 → 100 → 102
    assert noise.tail == pytest.approx(0.02)
    # A History sent to another process carries its medians, not the arrays made from them.
    again = pickle.loads(pickle.dumps(h))
    assert again == h and not again._arrays and series_noise(again, *KEY, ("r01",)) == noise


def test_a_paired_ab_job_is_judged_without_the_tail():
    """The rounds of an A/B job cancel a whole-run shift: no tail in its threshold."""
    rounds = list(range(1, 11))
    base = [100.0 + (i % 3) * 0.2 for i in rounds]
    cand = [v * 0.9 for v in base]  # −10 %, every round
    h = history(SHIFTED, candidate=90.0)
    (row,) = build_report({"run_id": "r09"}, {"run_id": "new"}, samples(base, rounds),
                          samples(cand, rounds), ["ops_per_sec"], T, h,
                          design=Design(INTERLEAVED)).rows
    assert row.noise.tail == pytest.approx(0.15)
    assert row.comparison.threshold == pytest.approx(effective_threshold(T, row.noise.value))
    assert row.comparison.verdict == SLOWER


@pytest.mark.parametrize("runs,shift_share,old_at_least,new_at_most", [
    (20, 0.0, 0.15, 0.13),  # normal scatter only
    (20, 0.1, 0.22, 0.14),  # and a ±15 % shift in one run of ten
])
def test_calibration_next_change_rarely_exceeds_the_threshold(runs, shift_share, old_at_least,
                                                              new_at_most):
    """Runs of one build scattering 2 %, some shifted: how often the change between the next two
    runs exceeds the threshold (a false alarm when the U test agrees, which a whole-run change
    of a few % makes it do). 2 × noise alone: 18-28 %; with the tail ≈ 10 % (noise.py)."""
    rng = np.random.default_rng(20240501)
    trials, old, new, grew = 600, 0, 0, []
    flat = Thresholds(min_effect=0.0, noise_k=2.0)
    for _ in range(trials):
        level = 1 + rng.normal(0, 0.02, runs + 2)
        shifted = rng.random(runs + 2) < shift_share
        level *= np.where(shifted, 1 + 0.15 * rng.choice([-1, 1], runs + 2), 1)
        t, noise = threshold(history(list(100 * level[:runs])), flat, ())
        before = effective_threshold(flat, noise.value)
        change = abs(level[-1] / level[-2] - 1)
        old, new = old + (change > before), new + (change > t)
        grew.append(t / before)
    assert old / trials >= old_at_least and new / trials <= new_at_most
    if not shift_share:  # the price in sensitivity where no run shifts: ~1.2 ×
        assert 1.1 <= float(np.median(grew)) <= 1.4


def samples(values, rounds=None):
    series = SeriesIdentity(KEY[0], IDENTITY, {})
    return [SeriesSamples(series, {"ops_per_sec": values}, {"ops_per_sec": "higher"}, 0,
                          {"ops_per_sec": rounds} if rounds else {})]


def _loop_changes(runs, builds, aa_pairs):
    """The run-to-run changes as the module docstring defines them, one run at a time: the
    oracle of the vector operations in analysis.noise."""
    sides = {*aa_pairs, *((b, a) for a, b in aa_pairs)}
    same, other = [], []
    before, before_run, before_build = 0.0, "", None
    for run, value in runs:
        build = builds.get(run)
        if before and (before_run, run) not in sides:
            change = abs(value / before - 1.0)
            if math.isfinite(change):
                (same if build is not None and build == before_build else other).append(change)
        before, before_run, before_build = value, run, build
    return (same, True) if same else (other, False)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # infinite medians
def test_the_vector_noise_equals_the_loop_of_its_definition_on_random_histories():
    """NaN, zero and infinite medians, a run twice, runs of no build, experiments, A/A sides in
    either order and candidates inside the history, 3,000 histories seeded."""
    rng = np.random.default_rng(7)
    odd = [0.0, -0.0, math.nan, math.inf, 100.0]
    for _ in range(3000):
        n = int(rng.integers(0, 30))
        runs = [f"r{i:02d}" for i in range(n)]
        if n > 2 and rng.random() < 0.1:
            runs[int(rng.integers(1, n))] = runs[0]
        values = [float(rng.choice(odd)) if rng.random() < 0.15 else 100 + rng.normal(0, 5)
                  for _ in runs]
        builds = {r: str(rng.choice(["b1", "b2"])) for r in runs if rng.random() < 0.8}
        aa = tuple((str(rng.choice(runs)), str(rng.choice(runs)))
                   for _ in range(int(rng.integers(0, 3)))) if runs else ()
        experiments = frozenset(r for r in runs if rng.random() < 0.1)
        exclude = tuple(str(r) for r in rng.choice(runs, size=min(n, 2), replace=False)) \
            if runs and rng.random() < 0.7 else ()
        h = History({KEY: tuple(zip(runs, values))}, aa, builds, experiments)
        kept = [(r, v) for r, v in zip(runs, values) if r not in exclude and r not in experiments]
        changes, same = _loop_changes(kept, builds, aa)
        noise = series_noise(h, *KEY, exclude)
        assert run_changes(h, *KEY, exclude) == (tuple(changes), same)
        assert (noise.runs, noise.changes, noise.same_build) == (len(kept), len(changes), same)
        assert noise.tail == tail_of(changes, 0.9) or math.isnan(noise.tail) and not changes
        spread = robust_cv([v for _, v in kept]) if len(kept) >= 3 else math.nan
        assert noise.spread == spread or math.isnan(noise.spread) and math.isnan(spread)
