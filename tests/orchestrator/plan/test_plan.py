"""Planning on the real Hydra configs (composed as `tidemark run` composes them)."""
from pathlib import Path

import pytest
import yaml

from orchestrator.analysis.identity import series_key
from orchestrator.errors import ConfigError
from orchestrator.plan.runplan import PHASE_MEASURED, PHASE_SETUP, PHASE_WARMUP, make_plan, series_identity

CONF = Path(__file__).resolve().parents[3] / "conf"


def _engine_for(group: str, option: str) -> list[str]:
    """What else an option needs to plan: an engine without db_bench its own suite, a workload
    or suite of one engine that engine."""
    data = yaml.safe_load((CONF / group / f"{option}.yaml").read_text())
    if group == "engine" and not data.get("db_bench"):
        return [f"suite={data['name']}_smoke"]
    if group == "workload" and data.get("engines"):
        return [f"engine={data['engines'][0]}"]
    if group == "suite" and option.endswith("_smoke") and option != "smoke":
        return [f"engine={option.removesuffix('_smoke')}"]
    return []


@pytest.mark.parametrize("group", ["machine", "engine", "build", "workload", "cache", "suite",
                                   "runner"])
def test_every_group_option_composes_and_plans(compose_conf, group):
    for option in sorted(p.stem for p in (CONF / group).glob("*.yaml")):
        overrides = [f"{group}={option}", *_engine_for(group, option)]
        conf = compose_conf(overrides)
        plan = make_plan(conf)
        assert plan.measured_count >= 1, option


def test_default_profile_is_the_smoke_suite_on_rocksdb(compose_conf):
    plan = make_plan(compose_conf())
    assert (plan.engine, plan.engine_version, plan.build_variant, plan.suite) == \
        ("rocksdb", "7.8.3", "release", "smoke")
    assert {s.workload for s in plan.steps} == {"fillseq", "fillrandom", "readrandom", "readseq",
                                                 "seekrandom"}
    assert plan.measured_count == 5 * 6  # 6 repetitions: the fewest a paired ab verdict needs


def test_read_workload_sets_up_once_then_warms_then_measures(compose_conf):
    plan = make_plan(compose_conf(["workload=readrandom", "repetitions=3", "threads=2",
                                   "warmups=1", "cache=warm"]))
    phases = [(s.phase, s.benchmark, s.threads, s.fresh_db) for s in plan.steps]
    assert phases == [
        (PHASE_SETUP, "fillseq", 1, True),
        (PHASE_WARMUP, "readseq", 1, False),  # the cache-warming pass
        (PHASE_WARMUP, "readrandom", 2, False),
        (PHASE_MEASURED, "readrandom", 2, False),
        (PHASE_MEASURED, "readrandom", 2, False),
        (PHASE_MEASURED, "readrandom", 2, False),
    ]
    assert [s.seq for s in plan.steps] == [1, 2, 3, 4, 5, 6]
    assert len({s.db_key for s in plan.steps}) == 1


def test_writer_gets_a_fresh_db_each_repetition_and_no_warm_pass(compose_conf):
    plan = make_plan(compose_conf(["workload=fillrandom", "repetitions=2", "cache=warm"]))
    assert [(s.phase, s.fresh_db) for s in plan.steps] == [(PHASE_MEASURED, True)] * 2


def test_suite_item_threads_and_param_overrides(compose_conf):
    conf = compose_conf(["suite=tiny"])
    conf.suite.items[1].threads = [1, 2]
    plan = make_plan(conf)
    measured = [s for s in plan.steps if s.is_measured and s.workload == "readrandom"]
    assert sorted({s.threads for s in measured}) == [1, 2]
    assert all(s.params_dict["num"] == 5000 for s in plan.steps)
    assert len({s.point for s in measured}) == 2


def test_unknown_param_in_suite_item_names_it(compose_conf):
    conf = compose_conf(["suite=tiny"])
    conf.suite.items[0].params = {"nmu": 5}
    with pytest.raises(ConfigError, match="unknown workload param 'nmu'"):
        make_plan(conf)


def test_workload_not_on_engine_is_refused(compose_conf):
    with pytest.raises(ConfigError, match="'readwhilewriting' does not run on engine 'leveldb'"):
        make_plan(compose_conf(["workload=readwhilewriting", "engine=leveldb"]))


def test_series_key_ignores_engine_version_but_not_threads(compose_conf):
    step = make_plan(compose_conf(["workload=readrandom"])).steps[-1]
    base = series_identity("rocksdb", step, "release", "fp")
    other_threads = series_identity("rocksdb", step.__class__(**{**step.__dict__, "threads": 4}),
                                    "release", "fp")
    assert "engine_version" not in base and "cmake_flags" not in base
    assert series_key(base) == series_key(dict(base))
    assert series_key(base) != series_key(other_threads)
    assert series_key(base) != series_key({**base, "machine_fingerprint": "other"})


def test_suite_items_may_name_cache_states_the_suite_loads(compose_conf):
    conf = compose_conf(["suite=scaling"])
    plan = make_plan(conf)
    measured = [s for s in plan.steps if s.is_measured and s.workload == "readrandom"]
    assert sorted({(s.cache_state, s.threads) for s in measured}) == \
        [("cold", 1), ("warm", 1), ("warm", 2), ("warm", 4)]
    assert set(plan.caches) == {"cold", "warm"}
    assert plan.caches["cold"].evict_page_cache and plan.caches["cold"].max_residency_pct == 5
    conf.suite.items[0].caches = ["tepid"]
    with pytest.raises(ConfigError, match="cache state 'tepid'"):
        make_plan(conf)
