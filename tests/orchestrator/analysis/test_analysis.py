"""The analysis core on known data (pure): identity, pairing, noise, partner runs, the decision."""
import math
import random

import pytest

from orchestrator.analysis.compare import SeriesSamples, build_report
from orchestrator.analysis.decide import CANNOT_TELL, PASS, REGRESSION, decide
from orchestrator.analysis.identity import SeriesIdentity, series_key
from orchestrator.analysis.noise import History, series_noise
from orchestrator.analysis.pairing import pair_series
from orchestrator.analysis.partner import (RunCoverage, gate_partner, previous_comparable,
                                           summarized_run)
from orchestrator.analysis.stats import NO_CHANGE, SLOWER, Thresholds, robust_cv
from orchestrator.errors import NotComparableError

IDENTITY = {"engine": "rocksdb", "workload": "readrandom", "benchmark": "readrandom",
            "params": {"num": 1000}, "threads": 1, "cache_state": "warm",
            "build_variant": "release", "machine_fingerprint": "fp-one"}
NAMED = {"engine_version": "7.8.3", "compiler_version": "g++ 12", "cmake_flags": ["-DPORTABLE=ON"],
         "runner": "host", "tidemark_sha": "abc"}


def side(named=None, **changes) -> SeriesIdentity:
    identity = {**IDENTITY, **changes}
    return SeriesIdentity(series_key(identity), identity, {**NAMED, **(named or {})})


def test_series_key_ignores_named_keys_and_follows_series_keys():
    assert side().series_key == side({"cmake_flags": ["-DX"], "engine_version": "9.10.0"}).series_key
    assert side().series_key != side(threads=2).series_key
    assert side().series_key != side(machine_fingerprint="fp-two").series_key


@pytest.mark.parametrize("cand,allow,pairs,named,differences", [
    # same series, other flags or version: paired, the difference named
    (side({"cmake_flags": ["-DPORTABLE=x86-64"]}), False, 1, ["cmake_flags: -DPORTABLE=ON vs -DPORTABLE=x86-64"], []),
    (side({"engine_version": "9.10.0"}), False, 1, ["engine_version: 7.8.3 vs 9.10.0"], []),
    (side(), False, 1, [], []),
    # another machine: only when allowed, and named
    (side(machine_fingerprint="fp-two"), True, 1, [], ["machine_fingerprint: fp-one vs fp-two"]),
    # other params: loose pairing only when allowed, param by param
    (side(params={"num": 2000}, threads=2), True, 1, [], ["params.num: 1000 vs 2000", "threads: 1 vs 2"]),
])
def test_pairing_names_what_differs(cand, allow, pairs, named, differences):
    pairing = pair_series([side()], [cand], allow)
    assert len(pairing.pairs) == pairs
    assert pairing.named() == named
    assert sorted(pairing.differences()) == sorted(differences)


@pytest.mark.parametrize("cand,match", [
    (side(machine_fingerprint="fp-two"), "machine_fingerprint: fp-one vs fp-two"),
    (side(threads=2), "threads: 1 vs 2"),
    (side(workload="fillrandom", benchmark="fillrandom"), "share no workload"),
])
def test_nothing_in_common_is_refused_naming_the_difference(cand, match):
    with pytest.raises(NotComparableError, match=match):
        pair_series([side()], [cand], False)


def test_unpaired_series_are_listed_not_mixed():
    pairing = pair_series([side(), side(cache_state="cold")], [side(), side(threads=2)])
    assert len(pairing.pairs) == 1
    assert [s.identity["cache_state"] for s in pairing.only_base] == ["cold"]
    assert [s.identity["threads"] for s in pairing.only_cand] == [2]


def test_noise_leaves_out_the_candidate_and_counts_aa_pairs():
    medians = {"r1": 100.0, "r2": 104.0, "r3": 97.0, "r4": 101.0, "new": 50.0}
    history = History({("s", "ops"): tuple(medians.items())}, (("r1", "r2"), ("r4", "new")))
    noise = series_noise(history, "s", "ops", ("new",))
    assert noise.runs == 4 and noise.aa_changes == pytest.approx((0.04,))
    assert noise.value == pytest.approx(max(robust_cv([100.0, 104.0, 97.0, 101.0]), 0.04))
    assert math.isnan(series_noise(History(), "s", "ops").value)
    two = History({("s", "ops"): (("r1", 100.0), ("r2", 90.0))})
    assert math.isnan(series_noise(two, "s", "ops").spread)  # under 3 runs: not measured


def _samples(values, failed=0, **changes):
    return SeriesSamples(side(**changes), {"ops_per_sec": values}, {"ops_per_sec": "higher"}, failed)


BASE = [100.0, 101, 99, 100, 102]


@pytest.mark.parametrize("cand,status,base_extra,code,verdict", [
    ([90.0, 91, 89, 90, 92], "ok", [], REGRESSION, SLOWER),
    (BASE, "ok", [], PASS, NO_CHANGE),
    ([90.0, 91], "ok", [], CANNOT_TELL, None),  # too few repetitions
    (BASE, "partial", [], CANNOT_TELL, NO_CHANGE),  # the candidate did not end ok
    (BASE, "ok", [_samples(BASE, cache_state="cold")], CANNOT_TELL, NO_CHANGE),  # series missing
])
def test_decision(cand, status, base_extra, code, verdict):
    report = build_report({"run_id": "A"}, {"run_id": "B", "status": status},
                          [_samples(BASE), *base_extra], [_samples(cand)], ("ops_per_sec",),
                          Thresholds(unmeasured_noise=0.0), History())
    decision = decide(report)
    assert decision.code == code
    if verdict:
        assert report.rows[0].comparison.verdict == verdict
    if code == REGRESSION:
        assert decision.reasons[0].startswith("readrandom ops_per_sec: -10.0%")
        assert report.geomean == pytest.approx(0.9)


def test_failed_invocations_in_the_candidate_cannot_pass():
    report = build_report({"run_id": "A"}, {"run_id": "B", "status": "ok"}, [_samples(BASE)],
                          [_samples(BASE, failed=2)], ("ops_per_sec",), Thresholds(), History())
    decision = decide(report)
    assert decision.code == CANNOT_TELL and "2 failed" in decision.reasons[0]


def _coverage(*runs):
    return [RunCoverage(run_id, day, frozenset(series)) for run_id, day, series in runs]


NIGHTLY = set("abcdefghijklmnop")
RUNS = _coverage(("nightly", 5, NIGHTLY), ("sweep", 4, {"a", "x", "y"}), ("bench2", 3, set("abcde")),
                 ("bench1", 2, set("abcde")), ("micro", 1, {"m"}))


def test_previous_comparable_covers_the_most_series_not_the_newest_overlap():
    assert previous_comparable(RUNS, "nightly") == "bench2"  # 5 of 16, not the sweep's 1
    assert previous_comparable(RUNS, "bench2") == "bench1"
    assert previous_comparable(RUNS, "micro") is None


def _most_shared_by_brute_force(runs, run_id):
    """The rule of previous_comparable, every earlier run's overlap counted."""
    me = next(r for r in runs if r.run_id == run_id)
    scored = [(len(r.series & me.series), (r.started_at, r.run_id), r.run_id) for r in runs
              if (r.started_at, r.run_id) < (me.started_at, me.run_id) and r.series & me.series]
    return max(scored)[2] if scored else None


@pytest.mark.parametrize("seed", range(40))
def test_previous_comparable_skips_only_runs_that_cannot_win(seed):
    rng = random.Random(seed)
    runs = [RunCoverage(f"r{i:02d}", rng.randint(0, 6),
                        frozenset(rng.sample("abcdefgh", rng.randint(0, 8))))
            for i in range(rng.randint(1, 30))]
    for run in runs:
        expected = _most_shared_by_brute_force(runs, run.run_id)
        assert previous_comparable(runs, run.run_id) == expected


def test_summarized_run_skips_a_newest_run_of_a_new_kind():
    runs = _coverage(("micro2", 3, {"m2"}), ("r2", 2, {"s"}), ("r1", 1, {"s"}))
    assert summarized_run(runs) == ("r2", "r1")
    assert summarized_run(runs[2:]) == ("r1", None)


def test_gate_partner_prefers_the_configured_baseline_unless_it_is_the_candidate():
    assert gate_partner(RUNS, "nightly", "bench1").run_id == "bench1"
    fallback = gate_partner(RUNS, "nightly", None, "no run matches label=baseline")
    assert (fallback.run_id, fallback.configured) == ("bench2", False)
    assert "no run matches label=baseline" in fallback.why and "bench2" in fallback.why
    itself = gate_partner(RUNS, "bench2", "bench2")
    assert itself.run_id == "bench1" and "configured baseline itself" in itself.why
