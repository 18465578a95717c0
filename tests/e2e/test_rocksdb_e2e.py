"""The default profile's engine, RocksDB 7.8.3 release, end to end on tiny data.

The first run on a fresh machine compiles RocksDB (~12 min on 2 cores); the build cache and
ccache make every later run reuse it.
"""
import json
import subprocess

import pytest

from tests.e2e.fixtures import query, tidemark

pytestmark = pytest.mark.engine


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rocksdb")
    tidemark(tmp, "run", "suite=tiny", "repetitions=3")
    tidemark(tmp, "run", "suite=tiny", "repetitions=3")
    return tmp


def test_default_engine_is_rocksdb_783_release_with_measured_metrics(two_runs):
    runs = query(two_runs, "SELECT engine, engine_version, build_variant, suite, status FROM runs")
    assert runs == [("rocksdb", "7.8.3", "release", "tiny", "ok")] * 2
    rows = query(two_runs, """
        SELECT i.invocation_id, list(m.name) FROM invocations i JOIN metrics m USING (invocation_id)
        WHERE i.phase = 'measured' AND i.status = 'ok' GROUP BY ALL""")
    assert len(rows) == 2 * 6
    for _, names in rows:
        assert {"ops_per_sec", "p50_us", "p99_us", "p95_us"} <= set(names)


def test_second_run_reuses_the_cached_build(two_runs):
    cached = query(two_runs, "SELECT build_cached FROM runs ORDER BY started_at")
    assert cached[1] == (True,)
    assert len(query(two_runs, "SELECT build_id FROM builds")) == 1


def test_binary_is_static_with_hardware_crc_and_provenance(two_runs):
    flags, provenance = query(two_runs, "SELECT cmake_flags, provenance FROM builds")[0]
    flags = json.loads(flags)
    assert "-DROCKSDB_BUILD_SHARED=OFF" in flags and "-DFORCE_SSE42=ON" in flags
    prov = json.loads(provenance)
    assert prov["source_package"] == "rocksdb" and prov["source_version"] == "7.8.3-2"
    libs = subprocess.run(["ldd", prov["binary_path"]], capture_output=True, text=True).stdout
    assert "librocksdb" not in libs
    version = subprocess.run([prov["binary_path"], "--version"], capture_output=True, text=True)
    assert "7.8.3" in version.stdout + version.stderr


def test_sustained_run_records_interval_time_series(tmp_path):
    tidemark(tmp_path, "run", "workload=readwhilewriting", "repetitions=1", "threads=2",
             "workload.params.num=20000", "workload.params.duration=3",
             "workload.params.report_interval_seconds=1")
    points = query(tmp_path, """SELECT t.t, t.value FROM timeseries t JOIN invocations i
                                USING (invocation_id) WHERE i.phase = 'measured' ORDER BY t.t""")
    assert len(points) >= 2 and all(v > 0 for _, v in points)
