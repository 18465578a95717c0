"""Engine recipes and workload kinds checked at planning time (pure): each bad input is one
line naming the value and the fix, before anything is built or stored."""
from __future__ import annotations

import pytest

from orchestrator.errors import ConfigError
from orchestrator.plan.kinds import renamed
from orchestrator.plan.runplan import make_plan
from orchestrator.plan.templates import placeholders, render, words

ZSTD = ["engine=zstd", "workload=zstd_bench"]


@pytest.mark.parametrize("overrides, message", [
    (["engine=snappy", "suite=snappy_smoke", "~engine.binaries.snappy_benchmark"],
     "engine 'snappy' lists no binaries; name what its build produces"),
    (["engine=zstd", "suite=zstd_smoke", "engine.build_system=scons"],
     "engine.build_system='scons' (zstd); use one of cmake, meson, make, commands"),
    (["engine=zstd", "suite=zstd_smoke", "engine.build_system=commands"],
     "has build_system=commands and no build_commands"),
    (["engine=zstd", "suite=zstd_smoke", "engine.source.kind=tarball"],
     "a tarball source needs source.path"),
    ([*ZSTD, 'workload.command=["{binary:zstd}","{nope}"]'],
     "workload 'zstd_bench': unknown placeholder '{nope}' in '{nope}'"),
    ([*ZSTD, 'workload.command=["{binary:lz4}"]'],
     "workload 'zstd_bench' names binary 'lz4', which engine 'zstd' does not list; its "
     "binaries: zstd"),
    ([*ZSTD, 'workload.command=["{binary:zstd}","-{param:speed}"]'],
     "{param:speed} is not a param; set it under params.extra.speed"),
    ([*ZSTD, "workload.output.regex='([0-9.]+) MB/s'"],
     "output.regex '([0-9.]+) MB/s' has no named group; name each value"),
    ([*ZSTD, "workload.output.source=out"],
     "output.source=out, and the command has no {out}"),
    (["engine=snappy", "workload=readrandom", "workload.engines=[]"],
     "workload 'readrandom' runs db_bench, and engine 'snappy' has none"),
    (["engine=zstd", "workload=snappy_flat", "workload.engines=[]"],
     "workload 'snappy_flat' names binary 'snappy_benchmark', which engine 'zstd' does not list"),
    (["workload=micro_get", "workload.series_params=[num]"],
     "series_params leaves out cache_size, which its command uses"),
    (["engine=snappy", "workload=snappy_flat", "threads=2"],
     "runs threads=2, and its templates never pass {threads} to the program"),
    (["engine=zstd", "workload=zstd_bench", "callgrind=true"],
     "callgrind=true counts db_bench's instructions, and workload 'zstd_bench' is a command"),
    ([*ZSTD, 'workload.command=["{binary:zstd}","--reads={param:reads}"]'],
     "{param:reads} has no value; set params.reads"),
    (["engine=zstd", "workload=zstd_bench", "workload.kind=shell"],
     "workload 'zstd_bench': kind='shell'; use one of db_bench, gbench, command"),
])
def test_bad_recipes_and_workloads_are_one_line_before_anything_runs(compose_conf, overrides,
                                                                      message):
    with pytest.raises(ConfigError) as err:
        make_plan(compose_conf(overrides))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_regex_metric_that_names_no_group_is_refused(compose_conf):
    from orchestrator.plan.schema import MetricSpec

    conf = compose_conf(ZSTD)
    conf.workload.output.metrics["compress_mbs"] = MetricSpec(unit="MB/s", better="higher")
    with pytest.raises(ConfigError, match="output.metrics.compress_mbs names no group of "
                                          "output.regex; its groups: compressed_bytes, ratio"):
        make_plan(conf)


def test_runner_docker_refuses_a_command_that_is_not_a_recipe_binary(compose_conf):
    from orchestrator.run.binaries import checked_plan

    conf = compose_conf(["engine=zstd", "workload=zstd_compress", "runner=docker",
                         "workload.command=[sh,-c,true]"])
    with pytest.raises(ConfigError, match="starts 'sh', and runner=docker runs only the engine "
                                          "recipe's binaries"):
        checked_plan(conf)
    checked_plan(compose_conf(["engine=zstd", "workload=zstd_compress", "runner=docker"]))


def test_placeholders_are_filled_word_by_word():
    values = {"threads": 2, "data_dir": "/d/my data", "binary:zstd": "/b/zstd", "param:level": "19"}
    argv = [render(w, values) for w in words("{binary:zstd} -{param:level} -T{threads} "
                                             "'{data_dir}/corpus.txt' {{literal}}")]
    assert argv == ["/b/zstd", "-19", "-T2", "/d/my data/corpus.txt", "{literal}"]
    assert [p.text() for p in placeholders("{out} {source}{repetition}", "t")] == \
        ["{out}", "{source}", "{repetition}"]
    with pytest.raises(ConfigError, match="has no value here"):
        render("{param:level}", {"threads": 1})
    with pytest.raises(ConfigError, match="unknown placeholder '{binary}'"):
        placeholders("{binary}", "t")  # a named placeholder needs its name


def test_series_of_other_kinds_are_named_by_the_params_they_use(compose_conf):
    plan = make_plan(compose_conf(["engine=zstd", "suite=zstd_smoke", "repetitions=1"]))
    params = {(s.workload, s.params) for s in plan.steps if s.phase == "measured"}
    assert ("zstd_compress", (("extra.level", "19"),)) in params
    assert all(dict(p).keys() == {"extra.level"} for _, p in params)
    harness = make_plan(compose_conf(["suite=micro"])).steps[0]
    assert dict(harness.params).keys() == {"num", "value_size", "key_size", "cache_size",
                                           "compression", "extra.benchmark_min_time"}


def test_setup_lines_run_once_per_point_before_its_repetitions(compose_conf):
    plan = make_plan(compose_conf(["engine=zstd", "workload=zstd_decompress", "repetitions=2",
                                   "warmups=1"]))
    assert [(s.phase, s.benchmark, s.kind) for s in plan.steps] == [
        ("setup", "setup-1", "command"), ("setup", "setup-2", "command"),
        ("warmup", "zstd_decompress", "command"), ("measured", "zstd_decompress", "command"),
        ("measured", "zstd_decompress", "command")]
    assert len({s.db_key for s in plan.steps}) == 1  # one data folder for the point


def test_rename_keeps_one_series_across_versions(compose_conf):
    wl = make_plan(compose_conf(["engine=snappy", "workload=snappy_flat"])).workloads["snappy_flat"]
    assert renamed(wl, "BM_UFlat/0/1") == "BM_UFlat/0"
    assert renamed(wl, "BM_UFlat/0/2") == "BM_UFlat/0/2"  # level 2 has no 1.1.9 counterpart
    assert renamed(wl, "BM_ZFlat/1") == "BM_ZFlat/1"
