"""Pure pieces of the gbench workload type: planning, command line, link line, harness capture."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import read_data
from orchestrator.errors import BuildError
from orchestrator.runners.gbench_command import gbench_command
from orchestrator.build.harness_build import link_libraries_from_ninja
from orchestrator.adapters.gbench_json import parse_gbench_json
from orchestrator.plan.kinds import KIND_GBENCH
from orchestrator.plan.runplan import make_plan
from orchestrator.plan.templates import render
from orchestrator.adapters.results import ROW_FAILED

NINJA = """build db_bench: CXX_EXECUTABLE_LINKER__db_bench_Release CMakeFiles/db_bench.dir/tools/db_bench.cc.o | librocksdb.a
  FLAGS = -O3 -DNDEBUG
  LINK_LIBRARIES = librocksdb.a  /usr/lib/x86_64-linux-gnu/libgflags.so.2.2.2  /usr/lib/x86_64-linux-gnu/libsnappy.so.1.1.9  -lpthread
  OBJECT_DIR = CMakeFiles/db_bench.dir
"""


def test_micro_suite_plans_one_harness_process_per_point(compose_conf):
    plan = make_plan(compose_conf(["suite=micro", "repetitions=4"]))
    assert [(s.workload, s.threads) for s in plan.steps] == [
        ("micro_put", 1), ("micro_put", 2), ("micro_get", 1), ("micro_get", 2),
        ("micro_writebatch", 1), ("micro_scan", 1), ("micro_scan", 2)]
    assert {(s.kind, s.repetitions, s.phase, s.fresh_db) for s in plan.steps} == {
        (KIND_GBENCH, 4, "measured", True)}


def test_db_bench_steps_keep_their_defaults(compose_conf):
    plan = make_plan(compose_conf(["suite=tiny"]))
    assert {(s.kind, s.repetitions) for s in plan.steps} == {("db_bench", 1)}


def test_gbench_command_line(compose_conf):
    plan = make_plan(compose_conf(["workload=micro_get", "threads=2", "repetitions=3"]))
    step = plan.steps[0]
    values = {"data_dir": "/d/db", "threads": step.threads,
              **{f"param:{k}": v for k, v in step.params}}
    args = [render(t, values) for t in plan.workloads["micro_get"].args]
    argv = gbench_command(Path("/h/rocksdb_harness"), step, Path("/l/x.gbench.json"), args)
    assert argv == ["/h/rocksdb_harness", "--benchmark_filter=^(Get|MultiGet)/",
                    "--benchmark_repetitions=3", "--benchmark_out_format=json",
                    "--benchmark_out=/l/x.gbench.json", "--tm_db=/d/db", "--tm_threads=2",
                    "--tm_keys=10000", "--tm_cache_size=8388608", "--tm_compression=snappy",
                    "--benchmark_min_time=0.2"]


def test_link_libraries_come_from_db_bench_link_line():
    assert link_libraries_from_ninja(NINJA) == ["/usr/lib/x86_64-linux-gnu/libgflags.so.2.2.2",
                                                "/usr/lib/x86_64-linux-gnu/libsnappy.so.1.1.9",
                                                "-lpthread"]
    with pytest.raises(BuildError, match="no LINK_LIBRARIES for target 'db_bench'"):
        link_libraries_from_ninja("build other: x\n  LINK_LIBRARIES = a\n")


def test_real_harness_capture_threads_repetitions_error_and_big_o():
    # Captured from engine/harness against RocksDB 7.8.3 release: --tm_threads=2, 2 repetitions.
    report = parse_gbench_json(read_data("gbench/harness_rocksdb7.8.3_t2_reps2.json"))
    get_hit = [r for r in report.rows if r.name == "Get/hit/real_time"]
    assert [(r.threads, r.repetition) for r in get_hit] == [(2, 1), (2, 2)]
    per_thread = {m.name: m.value for m in get_hit[0].metrics}
    assert per_thread["per_thread_ops_per_sec"] == pytest.approx(per_thread["ops_per_sec"] / 2)
    errors = [r for r in report.rows if r.status == ROW_FAILED]
    assert len(errors) == 2 and errors[0].error.startswith("OpenForReadOnly: IO error")
    assert [a.name for a in report.aggregates if a.aggregate == "BigO"] == ["Scan/real_time"]
    assert report.context["rocksdb_version"] == "7.8.3"
