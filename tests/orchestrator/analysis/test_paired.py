"""Paired A/B analysis on known data (pure, table-driven): per-round ratios cancel drift that
fools the unpaired test, a failed round is dropped and named, and the report says which test
decided. No timings: every value here is constructed."""
import math

import pytest

from orchestrator.analysis.compare import SeriesSamples, build_report
from orchestrator.analysis.decide import CANNOT_TELL, decide
from orchestrator.analysis.identity import SeriesIdentity, series_key
from orchestrator.analysis.noise import History
from orchestrator.analysis.paired import (INTERLEAVED, UNPAIRED, WILCOXON, Design, compare_paired,
                                          min_pairs, pair_rounds)
from orchestrator.analysis.stats import (FASTER, NO_CHANGE, NOT_ENOUGH, SLOWER, U_TEST, Thresholds,
                                         compare_samples)

THRESHOLDS = Thresholds(alpha=0.05, min_effect=0.02, noise_k=2.0, unmeasured_noise=0.0)
# The machine drifts 4 % per round (a neighbour's job ramping up): 100, 104, 108, … ops/s.
DRIFT = [100.0 * (1 + 0.04 * i) for i in range(10)]
WOBBLE = [1.004, 0.997, 1.002, 0.999, 1.003, 0.996, 1.001, 0.998, 1.0, 1.002]  # per-round jitter


def scaled(values, factor):
    return [v * factor * w for v, w in zip(values, WOBBLE)]


@pytest.mark.parametrize("name,base,cand,paired,unpaired", [
    # A real 3 % slowdown under a drift of ±18 %: the pairs see it in every round, the two
    # pooled samples overlap almost completely.
    ("drift hides a 3% slowdown from the U test", DRIFT, scaled(DRIFT, 0.97), SLOWER, NO_CHANGE),
    ("drift hides a 3% speed-up from the U test", DRIFT, scaled(DRIFT, 1.03), FASTER, NO_CHANGE),
    ("A/A under drift: no change either way", DRIFT, scaled(DRIFT, 1.0), NO_CHANGE, NO_CHANGE),
    # Below min_effect: significant in the pairs, still not called.
    ("a 1% change is under the 2% minimum effect", DRIFT, scaled(DRIFT, 0.99), NO_CHANGE, NO_CHANGE),
    # Five rounds: the signed-rank test cannot reach p < 0.05 (smallest p = 2/32).
    ("five rounds are not enough pairs", DRIFT[:5], scaled(DRIFT[:5], 0.9), NOT_ENOUGH, NO_CHANGE),
])
def test_paired_ratios_cancel_drift(name, base, cand, paired, unpaired):
    rounds = list(range(1, len(base) + 1))
    result = compare_paired(pair_rounds(base, rounds, cand, rounds), "higher", THRESHOLDS)
    assert result.verdict == paired, name
    assert result.test == WILCOXON and result.base_n == result.cand_n == len(base)
    assert compare_samples(base, cand, "higher", THRESHOLDS).verdict == unpaired, name
    if paired != NOT_ENOUGH:
        assert result.ci_low <= result.ratio <= result.ci_high


def test_a_failed_round_is_dropped_whole_and_named():
    rounds = list(range(1, 11))
    cand = scaled(DRIFT, 0.97)
    # Round 3 of the candidate failed (no ok value); round 7 of the baseline too.
    pairs = pair_rounds([v for r, v in zip(rounds, DRIFT) if r != 7], [r for r in rounds if r != 7],
                        [v for r, v in zip(rounds, cand) if r != 3], [r for r in rounds if r != 3])
    assert pairs.rounds == (1, 2, 4, 5, 6, 8, 9, 10)
    assert pairs.dropped == ("round 3 dropped: no ok value of the candidate",
                             "round 7 dropped: no ok value of the baseline")
    assert all(c / b == pytest.approx(0.97, abs=0.01) for b, c in zip(pairs.base, pairs.cand))
    result = compare_paired(pairs, "higher", THRESHOLDS)
    assert result.verdict == SLOWER and result.base_n == 8 and result.notes == pairs.dropped


def test_lower_is_better_metrics_point_the_other_way():
    rounds = list(range(1, 11))
    latency = compare_paired(pair_rounds(DRIFT, rounds, scaled(DRIFT, 1.05), rounds), "lower",
                             THRESHOLDS)
    assert latency.verdict == SLOWER and latency.ratio == pytest.approx(1.05, abs=0.005)


def test_min_pairs_follows_the_smallest_exact_p():
    assert min_pairs(0.05) == 6 and min_pairs(0.01) == 8 and min_pairs(0.1) == 5


def identity(value_size: int) -> SeriesIdentity:
    ident = {"engine": "leveldb", "workload": "readrandom", "benchmark": "readrandom",
             "params": {"num": 1000, "value_size": value_size}, "threads": 1,
             "cache_state": "warm", "build_variant": "release", "machine_fingerprint": "fp"}
    return SeriesIdentity(series_key(ident), ident, {"engine_version": "1.23"})


def samples(value_size, values, rounds):
    return [SeriesSamples(identity(value_size), {"ops_per_sec": values}, {"ops_per_sec": "higher"},
                          0, {"ops_per_sec": rounds})]


@pytest.mark.parametrize("design,test,verdict", [
    (Design(INTERLEAVED), WILCOXON, SLOWER), (Design("duet"), WILCOXON, SLOWER),
    (Design(UNPAIRED), U_TEST, NO_CHANGE)])
def test_the_report_analyses_the_design_and_names_the_test(design, test, verdict):
    rounds = list(range(1, 11))
    # The sides differ in a param (as an ab job's sides may): series pair when allowed.
    report = build_report({"run_id": "a"}, {"run_id": "b"}, samples(100, DRIFT, rounds),
                          samples(120, scaled(DRIFT, 0.97), rounds), ["ops_per_sec"], THRESHOLDS,
                          History(), allow_different=True, design=design)
    (row,) = report.rows
    assert (row.comparison.test, row.comparison.verdict) == (test, verdict)
    assert report.extra.get("design") == (design.name if design.paired else None)


def test_the_gate_asks_for_six_rounds_of_a_paired_design():
    rounds = [1, 2, 3, 4, 5]
    report = build_report({"run_id": "a", "status": "ok"}, {"run_id": "b", "status": "ok"},
                          samples(100, DRIFT[:5], rounds), samples(100, DRIFT[:5], rounds),
                          ["ops_per_sec"], THRESHOLDS, History(), design=Design(INTERLEAVED))
    decision = decide(report)
    assert decision.code == CANNOT_TELL
    assert "6 rounds for a paired A/B design" in decision.reasons[0]
    assert math.isnan(report.rows[0].comparison.ci_low) is False
