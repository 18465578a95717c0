"""suite=micro end to end: the orchestrator builds the Google Benchmark harness against the cached
RocksDB 7.8.3 release build, runs it under the run's controls and stores every row in DuckDB.

Debian bookworm's libbenchmark is 1.7.1: --benchmark_min_time takes plain seconds ("0.01"),
the "0.01s" form is 1.8+ and makes 1.7.1 exit with "unrecognized command-line flag".
"""
import json
from pathlib import Path

import pytest

from tests.e2e.fixtures import query, tidemark

pytestmark = pytest.mark.engine

MICRO = ("micro_put", "micro_get", "micro_writebatch", "micro_scan")
TINY = [f"suite.workloads.{w}.params.{k}={v}" for w in MICRO
        for k, v in (("extra.benchmark_min_time", "0.01"), ("num", "2000"))]


@pytest.fixture(scope="module")
def micro(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("micro")
    proc = tidemark(tmp, "run", "suite=micro", "repetitions=2", *TINY)
    return tmp, proc.stdout


def test_harness_is_built_by_the_orchestrator_against_the_engine_build(micro):
    tmp, stdout = micro
    assert "harness (Release)" in stdout
    binary = query(tmp, "SELECT DISTINCT conditions->>'$.binary' FROM invocations")
    assert len(binary) == 1 and Path(binary[0][0]).exists()
    build_id = query(tmp, "SELECT build_id FROM runs")[0][0]
    assert f"/harness/{build_id}-" in binary[0][0]  # keyed by the engine build it links


def test_every_row_is_an_invocation_with_per_thread_rates(micro):
    tmp, _ = micro
    assert query(tmp, "SELECT status, suite FROM runs") == [("ok", "micro")]
    rows = query(tmp, """
        SELECT workload, threads, count(DISTINCT benchmark), count(*) FROM invocations
        GROUP BY ALL ORDER BY ALL""")
    assert rows == [("micro_get", 1, 3, 6), ("micro_get", 2, 3, 6), ("micro_put", 1, 2, 4),
                    ("micro_put", 2, 2, 4), ("micro_scan", 1, 3, 6), ("micro_scan", 2, 3, 6),
                    ("micro_writebatch", 1, 6, 12)]
    assert query(tmp, "SELECT count(DISTINCT seq) = count(*) FROM invocations") == [(True,)]
    rates = query(tmp, """
        SELECT i.threads, max(m.value) FILTER (WHERE m.name = 'items_per_second'),
               max(m.value) FILTER (WHERE m.name = 'per_thread_ops_per_sec'),
               max(m.value) FILTER (WHERE m.name = 'bytes_per_second')
        FROM invocations i JOIN metrics m USING (invocation_id)
        WHERE i.benchmark = 'Get/hit/real_time' GROUP BY i.invocation_id, i.threads""")
    assert len(rates) == 4
    for threads, items, per_thread, nbytes in rates:
        assert items > 0 and nbytes > 0
        assert per_thread == pytest.approx(items / threads)
        assert nbytes / items == pytest.approx(1024, rel=0.01)  # 1 KB documents


def test_writebatch_and_put_loop_report_items(micro):
    tmp, _ = micro
    names = query(tmp, "SELECT DISTINCT benchmark FROM invocations WHERE workload = "
                       "'micro_writebatch' ORDER BY 1")
    assert [n for (n,) in names] == [f"{kind}/entries:{n}/real_time" for kind in ("PutLoop", "WriteBatch")
                                     for n in (100, 1000, 500)]


def test_aggregates_kept_apart_and_context_recorded(micro):
    tmp, _ = micro
    aggregates = dict(query(tmp, "SELECT aggregate, count(DISTINCT benchmark || threads) "
                                 "FROM aggregates GROUP BY 1"))
    assert aggregates["mean"] == aggregates["median"] == aggregates["cv"] == 22
    assert aggregates["BigO"] == 2  # Scan, at 1 and 2 threads
    context = json.loads(query(tmp, "SELECT conditions FROM invocations LIMIT 1")[0][0])
    assert context["gbench_context"]["library_build_type"] == "debug"
    assert context["gbench_context"]["rocksdb_version"] == "7.8.3"
    assert context["process"]["records"] == 4  # micro_put, 1 thread: 2 cases × 2 repetitions


def test_an_engine_error_row_is_a_failed_invocation(tmp_path):
    proc = tidemark(tmp_path, "run", "workload=micro_get", "workload.benchmark=ErrorProbe",
                    "repetitions=2", "workload.params.num=100", check=False)
    assert proc.returncode == 5, proc.stderr  # every row failed: the run is `failed`
    rows = query(tmp_path, "SELECT benchmark, status, error FROM invocations")
    assert len(rows) == 2
    assert all(r[0] == "ErrorProbe/open_missing_db" and r[1] == "failed" for r in rows)
    assert "OpenForReadOnly: IO error" in rows[0][2]
    assert query(tmp_path, "SELECT status FROM runs") == [("failed",)]
