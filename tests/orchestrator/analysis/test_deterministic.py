"""The deterministic verdict rule (instruction counts) on known numbers, and where it is used."""
import math

import pytest

from orchestrator.analysis.compare import SeriesSamples, build_report
from orchestrator.analysis.decide import CANNOT_TELL, REGRESSION, decide
from orchestrator.analysis.deterministic import (compare_deterministic, is_deterministic,
                                                 relative_spread)
from orchestrator.analysis.identity import SeriesIdentity
from orchestrator.analysis.noise import History
from orchestrator.analysis.stats import (FASTER, HIGHER, LOWER, NO_CHANGE, NOT_ENOUGH, SLOWER,
                                         Thresholds)

T = Thresholds(deterministic_min_effect=0.005)


@pytest.mark.parametrize("base,cand,better,verdict,threshold", [
    # +1 % with a spread of 0.02 %: slower (instructions: lower is better).
    ([10000, 10001, 10002], [10100, 10101, 10102], LOWER, SLOWER, 0.005),
    # -1 %: faster.
    ([10000, 10001, 10002], [9900, 9901, 9899], LOWER, FASTER, 0.005),
    # +0.3 %: below the 0.5 % minimum effect, however exact.
    ([10000, 10000, 10000], [10030, 10030, 10030], LOWER, NO_CHANGE, 0.005),
    # +1 % but the repetitions spread 2 %: the change does not exceed the spread.
    ([9900, 10000, 10100], [10100, 10100, 10100], LOWER, NO_CHANGE, 0.02),
    # +3 % over a 2 % spread, but one candidate repetition lies inside the base's range.
    ([9900, 10000, 10100], [10050, 10300, 10300], LOWER, NO_CHANGE, 0.0243),
    # Identical: no change.
    ([5000, 5000], [5000, 5000], LOWER, NO_CHANGE, 0.005),
    # A higher-is-better deterministic metric flips the words.
    ([100, 100], [110, 110], HIGHER, FASTER, 0.005),
])
def test_rule_on_known_numbers(base, cand, better, verdict, threshold):
    c = compare_deterministic(base, cand, better, T)
    assert c.verdict == verdict
    assert c.threshold == pytest.approx(threshold, rel=1e-2)
    assert math.isnan(c.p_value)  # no significance test
    assert c.ci_low == pytest.approx(min(cand) / max(base))
    assert c.ci_high == pytest.approx(max(cand) / min(base))


def test_one_repetition_shows_no_spread_so_it_is_not_enough():
    assert compare_deterministic([100], [200, 200], LOWER, T).verdict == NOT_ENOUGH
    assert compare_deterministic([], [200, 200], LOWER, T).verdict == NOT_ENOUGH


def test_spread_is_the_relative_range():
    assert relative_spread([99, 100, 101]) == pytest.approx(0.02)
    assert relative_spread([7, 7]) == 0


def test_only_instruction_counts_are_deterministic():
    assert is_deterministic("instructions_per_op") and is_deterministic("instructions")
    assert not is_deterministic("ops_per_sec") and not is_deterministic("p99_us")


def _samples(key, values):
    identity = {"engine": "leveldb", "workload": "readrandom", "benchmark": "readrandom",
                "params": {}, "threads": 1, "cache_state": "warm", "build_variant": "release",
                "machine_fingerprint": "m"}
    better = {m: ("lower" if is_deterministic(m) else "higher") for m in values}
    return SeriesSamples(SeriesIdentity(key, identity, {}), values, better)


def test_build_report_picks_the_rule_by_metric_and_the_gate_fails_on_instructions():
    # Wall clock: 3 against 3 can never be significant; instructions: +2 %, exact.
    base = _samples("k", {"ops_per_sec": [100.0, 101.0, 99.0], "instructions_per_op": [5000.0] * 3})
    cand = _samples("k", {"ops_per_sec": [50.0, 51.0, 49.0], "instructions_per_op": [5100.0] * 3})
    report = build_report({"run_id": "a"}, {"run_id": "b", "status": "ok"}, [base], [cand],
                          ["ops_per_sec", "instructions_per_op"], T, History({}, ()))
    verdicts = {r.metric: r.comparison.verdict for r in report.rows}
    assert verdicts == {"ops_per_sec": NOT_ENOUGH, "instructions_per_op": SLOWER}
    assert report.geomean == pytest.approx(0.5, rel=0.02)  # the wall-clock rows only
    decision = decide(report)
    assert decision.code == REGRESSION
    assert any("instructions_per_op" in r and "+2.0%" in r for r in decision.reasons)


def test_gate_names_the_callgrind_repetitions_when_too_few():
    base = _samples("k", {"instructions_per_op": [5000.0]})
    cand = _samples("k", {"instructions_per_op": [5000.0]})
    report = build_report({"run_id": "a"}, {"run_id": "b", "status": "ok"}, [base], [cand],
                          ["instructions_per_op"], T, History({}, ()))
    decision = decide(report)
    assert decision.code == CANNOT_TELL
    assert any("callgrind_repetitions" in r for r in decision.reasons)


def test_a_planted_cost_is_a_named_difference():
    from orchestrator.analysis.identity import planted_text

    assert planted_text(None, None) == planted_text(0.0, 0) == "off"  # runs from before it existed
    assert planted_text("2000.0", "0") == "planted_ns=2000"
    assert planted_text(0, "500") == "planted_spins=500"
