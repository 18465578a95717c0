"""Pure parts of compare / ab / gate / targets / engine versions (real configs where there are any)."""
import pytest

from orchestrator.ab import rounds_record, schedule
from orchestrator.compare import build_report
from orchestrator.comparability import (NotComparableError, SeriesSide, check_comparable,
                                        pair_series)
from orchestrator.engine_versions import resolve_engine_version
from orchestrator.errors import ConfigError
from orchestrator.gate import CANNOT_TELL, PASS, REGRESSION, decide
from orchestrator.plan import PHASE_MEASURED, make_plan
from orchestrator.samples import SideSeries
from orchestrator.stats import NO_CHANGE, SLOWER, Thresholds
from orchestrator.targets import MEETS, NO_DATA, OVER, evaluate, parse_target, workload_declarations

IDENTITY = {"engine": "rocksdb", "workload": "readrandom", "benchmark": "readrandom",
            "params": {"num": 1000}, "threads": 1, "cache_state": "warm",
            "build_variant": "release", "compiler_version": "g++ 12",
            "cmake_flags": ["-DPORTABLE=ON"], "machine_fingerprint": "fp-one"}


def side(key="k1", version="7.8.3", **changes):
    return SeriesSide(key, {**IDENTITY, **changes}, version)


def test_identical_series_pair_without_differences():
    pairing = pair_series([side()], [side("k2")])
    assert check_comparable(pairing, allow_different=False) == []


def test_different_fingerprints_are_refused_naming_both():
    pairing = pair_series([side()], [side("k2", machine_fingerprint="fp-two")])
    with pytest.raises(NotComparableError, match="machine_fingerprint: fp-one vs fp-two"):
        check_comparable(pairing, allow_different=False)
    assert check_comparable(pairing, allow_different=True) == ["machine_fingerprint: fp-one vs fp-two"]


def test_different_workloads_never_pair():
    pairing = pair_series([side(workload="fillrandom", benchmark="fillrandom")], [side("k2")])
    assert pairing.pairs == ()
    with pytest.raises(NotComparableError, match="share no workload"):
        check_comparable(pairing, allow_different=True)


def test_params_differences_are_named_param_by_param():
    pairing = pair_series([side()], [side("k2", params={"num": 2000}, threads=2)])
    assert check_comparable(pairing, True) == ["threads: 1 vs 2", "params.num: 1000 vs 2000"]


def test_cmake_flags_of_two_engine_versions_are_a_note_not_a_difference():
    pairing = pair_series([side()], [side("k2", "9.10.0", cmake_flags=["-DPORTABLE=x86-64"])])
    assert check_comparable(pairing, False) == []
    assert "follow each version's recipe" in pairing.pairs[0].notes[0]
    same_version = pair_series([side()], [side("k2", cmake_flags=["-DPORTABLE=x86-64"])])
    with pytest.raises(NotComparableError, match="cmake_flags"):
        check_comparable(same_version, False)


def test_build_report_calls_a_slowdown_and_the_geomean():
    base = SideSeries(side(), {"ops_per_sec": [100.0, 101, 99, 100, 102]}, {"ops_per_sec": "higher"}, "A")
    cand = SideSeries(side("k2"), {"ops_per_sec": [90.0, 91, 89, 90, 92]}, {"ops_per_sec": "higher"}, "B")
    report = build_report({"run_id": "A"}, {"run_id": "B"}, [base], [cand], ("ops_per_sec",),
                          Thresholds(), lambda key, metric: 0.0)
    assert [r.comparison.verdict for r in report.rows] == [SLOWER]
    assert report.geomean == pytest.approx(0.9)
    code, reasons = decide(report, [])
    assert code == REGRESSION and reasons[0].startswith("readrandom ops_per_sec: -10.0%")
    quiet = build_report({"run_id": "A"}, {"run_id": "B"}, [base], [base], ("ops_per_sec",),
                         Thresholds(), lambda key, metric: 0.0)
    assert quiet.rows[0].comparison.verdict == NO_CHANGE
    assert decide(quiet, [])[0] == PASS
    short = SideSeries(side("k3"), {"ops_per_sec": [90.0, 91]}, {"ops_per_sec": "higher"}, "C")
    few = build_report({"run_id": "A"}, {"run_id": "C"}, [base], [short], ("ops_per_sec",),
                       Thresholds(), lambda key, metric: 0.0)
    assert decide(few, [])[0] == CANNOT_TELL


@pytest.mark.parametrize("text,metric,op,value", [
    ("p99_us < 50", "p99_us", "<", 50.0), ("ops_per_sec>=200000", "ops_per_sec", ">=", 200000.0)])
def test_parse_target(text, metric, op, value):
    target = parse_target(text)
    assert (target.metric, target.op, target.value) == (metric, op, value)


def test_bad_target_fails_in_one_line():
    with pytest.raises(ConfigError, match="METRIC OP VALUE"):
        parse_target("p99 is small")


def test_targets_and_bars_against_observed_and_baseline():
    declared = workload_declarations({"workload": {"name": "readrandom",
                                                   "targets": ["p99_us < 50", "ops_per_sec > 1e6"],
                                                   "bars": {"p99_us": 1.5}}})
    observed = {("readrandom", "p99_us"): 40.0, ("readrandom", "ops_per_sec"): 2e5}
    results = evaluate(declared, observed, {("readrandom", "p99_us"): 20.0},
                       {"p99_us": "lower", "ops_per_sec": "higher"})
    assert [r.status for r in results] == [MEETS, OVER, OVER]  # 40 > 1.5 × 20
    assert evaluate(declared, {}, {}, {})[0].status == NO_DATA


def test_engine_version_picks_the_recipe(compose_conf):
    old = resolve_engine_version(compose_conf(["engine.version=7.8.3"]).engine)
    assert old.source.package_version == "7.8.3-2"
    assert "-DFORCE_SSE42=ON" in old.cmake_flags
    new = resolve_engine_version(compose_conf(["engine.version=9.10.0"]).engine)
    assert new.source.package_version == "9.10.0-1"
    assert "-DPORTABLE=x86-64 -msse4.2 -mpclmul" in new.cmake_flags
    with pytest.raises(ConfigError, match="known versions: 7.8.3, 9.10.0, 9.11.2"):
        resolve_engine_version(compose_conf(["engine.version=9.9.9"]).engine)


def test_ab_schedule_interleaves_every_round_in_a_seeded_order(compose_conf):
    plan = make_plan(compose_conf(["engine=leveldb", "workload=readrandom", "repetitions=6"]))
    order = schedule(plan, plan, seed=7)
    # Both sides' setup and cache-warming passes first, then the measured rounds.
    assert [(s, step.phase) for s, step in order[:4]] == [("a", "setup"), ("a", "warmup"),
                                                          ("b", "setup"), ("b", "warmup")]
    rounds = rounds_record(order)
    assert len(rounds) == 6 and all(sorted(r["order"]) == ["a", "b"] for r in rounds)
    assert {r["order"] for r in rounds} == {"ab", "ba"}
    assert rounds_record(schedule(plan, plan, seed=7)) == rounds


def test_ab_refuses_sides_with_different_steps(compose_conf):
    a = make_plan(compose_conf(["engine=leveldb", "workload=readrandom", "repetitions=6"]))
    b = make_plan(compose_conf(["engine=leveldb", "workload=readrandom", "repetitions=5"]))
    with pytest.raises(ConfigError, match="plan different steps"):
        schedule(a, b, seed=1)
