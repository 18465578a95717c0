"""One rule for perf counters, for every workload type (pure logic on real captured outputs):
counters that cannot be read cost the counters only. The invocation keeps its status and timing
metrics and records `counters_error`, for a db_bench process and a Google Benchmark harness
process alike; readable counters land in both with `counters_unavailable` beside them.
"""
from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from orchestrator.plan.kinds import KIND_GBENCH
from orchestrator.plan.runplan import RunPlan, Step
from orchestrator.record import STATUS_OK, ProcessResult
from orchestrator.runners.context import RunContext
from orchestrator.runners.db_bench import db_bench_outcome
from orchestrator.runners.gbench import gbench_outcome
from tests.conftest import DATA
from tests.orchestrator.runners.test_run_loop import BUILD

DB_BENCH = Step(2, 1, "readrandom", "readrandom", "measured", 1, 2, (("num", 50000),), "db", False,
                "warm")
HARNESS = dataclasses.replace(DB_BENCH, workload="micro_get", benchmark="Get", kind=KIND_GBENCH,
                              repetitions=2, fresh_db=True)
PERF_CSV = (DATA / "perf" / "kvm_software_only.csv").read_text()
BROKEN = {"empty file": "", "perf's own error": "Error:\nAccess to performance monitoring "
                                                "and observability operations is limited.\n",
          "missing file": None}


def outcome(tmp_path: Path, kind: str, perf_csv: str | None):
    """The records of a finished process of `kind` whose perf CSV holds `perf_csv`."""
    ctx = RunContext("r1", RunPlan("leveldb", "1.23", "release", "warm", "", 60.0, (), db_bench="leveldb"), BUILD, "fp",
                     (), {}, False, tmp_path, tmp_path, counters=True, binaries={"rocksdb_harness": "/h"})
    stem = tmp_path / "0002-measured-x"
    if perf_csv is not None:
        stem.with_suffix(".perf.csv").write_text(perf_csv)
    stdout = (DATA / "leveldb" / "readrandom_t2.stdout").read_text() if kind == "db_bench" else ""
    result = ProcessResult(("engine",), 0, False, 1.0, 0.5, 0.1, 1000, stdout, "", "t0", "t1")
    if kind == "db_bench":
        return db_bench_outcome(ctx, DB_BENCH, result, stem, {}).records
    shutil.copy(DATA / "gbench" / "harness_rocksdb7.8.3_t2_reps2.json", stem.with_suffix(".gbench.json"))
    return gbench_outcome(ctx, HARNESS, result, stem).records


TIMING = {"db_bench": "ops_per_sec", "gbench": "real_time_ns"}


@pytest.mark.parametrize("kind", ["db_bench", "gbench"])
@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_unreadable_counters_keep_status_and_timings_and_record_the_error(tmp_path, kind, broken):
    records = outcome(tmp_path, kind, BROKEN[broken])
    ok = [inv for inv, _ in records if inv.status == STATUS_OK]
    assert ok, [inv.error for inv, _ in records]
    for inv, _ in records:
        assert inv.conditions["counters_error"]
        assert not any(m.name.startswith("perf_") for m in inv.metrics)
    for inv in ok:
        assert any(m.name == TIMING[kind] and m.value > 0 for m in inv.metrics)
    if kind == "db_bench":  # the only record of the process: every row of a harness shares it
        assert len(records) == 1


@pytest.mark.parametrize("kind", ["db_bench", "gbench"])
def test_readable_counters_are_recorded_with_the_unsupported_events(tmp_path, kind):
    records = outcome(tmp_path, kind, PERF_CSV)
    for inv, _ in records:
        assert "counters_error" not in inv.conditions
        assert inv.conditions["counters_unavailable"] == ["instructions", "cycles", "cache-misses"]
    inv = records[0][0]
    if kind == "db_bench":
        assert {m.name: m.value for m in inv.metrics}["perf_page_faults"] == 103
    else:  # process-wide counters, shared by the rows
        assert inv.conditions["process"]["counters"]["perf_page_faults"] == 103
