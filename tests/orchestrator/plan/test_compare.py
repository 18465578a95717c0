"""Pure parts of ab's schedule, targets and engine versions (real configs where there are any)."""
import pytest

from orchestrator.run.ab_schedule import rounds_record, schedule
from orchestrator.analysis.targets import (MEETS, NO_DATA, OVER, SeriesMedians, evaluate,
                                           parse_target, workload_declarations)
from orchestrator.plan.engine_versions import resolve_engine_version
from orchestrator.errors import ConfigError
from orchestrator.plan.runplan import make_plan


@pytest.mark.parametrize("text,metric,op,value", [
    ("p99_us < 50", "p99_us", "<", 50.0), ("ops_per_sec>=200000", "ops_per_sec", ">=", 200000.0)])
def test_parse_target(text, metric, op, value):
    target = parse_target(text)
    assert (target.metric, target.op, target.value) == (metric, op, value)


def test_bad_target_fails_in_one_line():
    with pytest.raises(ConfigError, match="METRIC OP VALUE"):
        parse_target("p99 is small")


def test_targets_hold_per_series_and_bars_compare_the_same_series():
    declared = workload_declarations({"workload": {"name": "readrandom",
                                                   "targets": ["p99_us < 50", "ops_per_sec > 1e6"],
                                                   "bars": {"p99_us": 1.5}}})
    better = {"p99_us": "lower", "ops_per_sec": "higher"}
    one = SeriesMedians("k1", "readrandom [cold]", "readrandom", {"p99_us": 75.0, "ops_per_sec": 2e5}, better)
    four = SeriesMedians("k4", "readrandom ×4", "readrandom", {"p99_us": 29.0, "ops_per_sec": 2e6}, better)
    baseline = {"k1": SeriesMedians("k1", "", "readrandom", {"p99_us": 60.0}, better),
                "k4": SeriesMedians("k4", "", "readrandom", {"p99_us": 10.0}, better)}
    results = evaluate(declared, [one, four], baseline)
    by = {(r.series, r.target.split(" (")[0]): r.status for r in results}
    # The cold 1-thread series breaks the p99 target although the 4-thread series meets it.
    assert by[("readrandom [cold]", "p99_us < 50")] == OVER
    assert by[("readrandom ×4", "p99_us < 50")] == MEETS
    # Each bar against the same series: 75 ≤ 1.5 × 60 holds, 29 > 1.5 × 10 does not.
    assert by[("readrandom [cold]", "p99_us <= 90")] == MEETS
    assert by[("readrandom ×4", "p99_us <= 15")] == OVER
    assert evaluate(declared, [one], {})[-1].status == NO_DATA


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
