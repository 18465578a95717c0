"""End to end on the real LevelDB: build (cached), run, DuckDB rows, failures kept as records."""
import subprocess
import sys

import pytest

from tests.e2e.fixtures import query, tidemark

pytestmark = pytest.mark.engine
SMALL = "workload.params.num=5000"


def test_readrandom_two_threads_three_repetitions(tmp_path):
    tidemark(tmp_path, "run", "engine=leveldb", "workload=readrandom", "threads=2",
             "repetitions=3", SMALL)
    runs = query(tmp_path, "SELECT status, engine, engine_version, build_variant, planned_invocations FROM runs")
    assert runs == [("ok", "leveldb", "1.23", "release", 5)]
    measured = query(tmp_path, """
        SELECT i.repetition, i.threads, i.status,
               max(CASE WHEN m.name = 'ops_per_sec' THEN m.value END),
               max(CASE WHEN m.name = 'p50_us' THEN m.value END),
               max(CASE WHEN m.name = 'p99_us' THEN m.value END)
        FROM invocations i JOIN metrics m USING (invocation_id)
        WHERE i.phase = 'measured' GROUP BY ALL ORDER BY 1""")
    assert [row[:3] for row in measured] == [(1, 2, "ok"), (2, 2, "ok"), (3, 2, "ok")]
    for _, _, _, ops, p50, p99 in measured:
        assert ops > 0 and 0 < p50 <= p99
    provenance = query(tmp_path, "SELECT source_package, source_version, binary_sha256 FROM builds")
    assert provenance[0][:2] == ("leveldb", "1.23-4") and len(provenance[0][2]) == 64
    histogram_rows = query(tmp_path, "SELECT count(*) FROM histograms")[0][0]
    assert histogram_rows > 5


def test_multirun_threads_sweep_makes_one_run_per_value(tmp_path):
    tidemark(tmp_path, "run", "-m", "engine=leveldb", "workload=fillrandom", "threads=1,2",
             "repetitions=1", SMALL)
    rows = query(tmp_path, "SELECT DISTINCT run_id, threads FROM invocations ORDER BY threads")
    assert [t for _, t in rows] == [1, 2] and rows[0][0] != rows[1][0]


def test_unknown_workload_fails_with_one_line_listing_choices(tmp_path):
    proc = tidemark(tmp_path, "run", "workload=nope", check=False, timeout=60)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "unknown workload 'nope'" in lines[0] and "readrandom" in lines[0]
    assert "workload_schema" not in lines[0]
    assert not (tmp_path / "tidemark.duckdb").exists()


def test_engine_rejecting_a_flag_is_a_failed_record_and_the_run_goes_on(tmp_path):
    # LevelDB's db_bench exits 1 on an unknown flag: every invocation fails, each one recorded.
    proc = tidemark(tmp_path, "run", "engine=leveldb", "workload=fillseq", "repetitions=2",
                    SMALL, "+workload.params.extra.no_such_flag=1", check=False)
    assert proc.returncode == 5, proc.stderr  # every invocation failed: the run is `failed`
    assert "2 of 2 invocations failed" in proc.stderr.strip().splitlines()[-1]
    rows = query(tmp_path, "SELECT status, exit_code, error FROM invocations ORDER BY seq")
    assert len(rows) == 2
    for status, code, error in rows:
        assert (status, code) == ("failed", 1)
        assert "Invalid flag '--no_such_flag=1'" in error
    assert query(tmp_path, "SELECT status FROM runs") == [("failed",)]


def test_hung_engine_is_killed_and_recorded_as_timeout(tmp_path):
    proc = tidemark(tmp_path, "run", "engine=leveldb", "workload=fillrandom", "repetitions=1",
                    "workload.params.num=3000000", "timeout_s=0.5", check=False)
    assert proc.returncode == 5, proc.stderr
    rows = query(tmp_path, "SELECT status, exit_code, error FROM invocations")
    assert rows[0][0] == "timeout" and rows[0][1] is None
    assert "timeout_s=0.5" in rows[0][2]


def test_failed_setup_skips_its_measured_steps_with_the_reason(tmp_path):
    proc = tidemark(tmp_path, "run", "engine=leveldb", "workload=readrandom", "repetitions=2",
                    "cache=cold", SMALL, "+workload.params.extra.no_such_flag=1", check=False)
    assert proc.returncode == 5  # nothing measured: the run is `failed`
    rows = query(tmp_path, "SELECT phase, status, error FROM invocations ORDER BY seq")
    assert rows[0][:2] == ("setup", "failed")
    assert [r[1] for r in rows[1:]] == ["skipped", "skipped"]
    assert all("setup step 1 (fillseq) failed" in r[2] for r in rows[1:])


def test_locked_database_is_one_line_naming_the_file(tmp_path):
    db = tmp_path / "tidemark.duckdb"
    holder = subprocess.Popen([sys.executable, "-c",
                               f"import duckdb, time; c = duckdb.connect({str(db)!r}); "
                               f"print('ready', flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        proc = tidemark(tmp_path, "run", "engine=leveldb", "workload=fillseq", "repetitions=1",
                        SMALL, "db_lock_wait_s=1", check=False)
    finally:
        holder.kill()
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "is locked by another process" in lines[0] and str(db) in lines[0]
    assert "waiting for results database" in proc.stdout  # said once while it waited
