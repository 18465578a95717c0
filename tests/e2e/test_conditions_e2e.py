"""Declared conditions on the real LevelDB: cache states verified, pinning, machine profiles."""
import json

import pytest

from tests.e2e.fixtures import query, tidemark

pytestmark = pytest.mark.engine


def test_cold_warm_hot_residency_and_cpus_recorded(tmp_path):
    tidemark(tmp_path, "run", "-m", "engine=leveldb", "workload=readrandom", "cache=cold,warm,hot",
             "repetitions=2", "workload.params.num=50000", "machine=ci-2core")
    rows = query(tmp_path, """SELECT cache_state, status, conditions FROM invocations
                              WHERE phase = 'measured' ORDER BY cache_state, seq""")
    assert [r[0] for r in rows] == ["cold", "cold", "hot", "hot", "warm", "warm"]
    for cache_state, status, conditions in rows:
        cond = json.loads(conditions)
        assert status == "ok", (cache_state, cond)
        assert cond["cpus_allowed"] == [1]  # ci-2core pins the engine to CPU 1
        if cache_state == "cold":
            assert cond["residency_pct"] <= 5 and "posix_fadvise(DONTNEED) per file" in cond["cache_procedure"]
        else:
            assert cond["residency_pct"] >= 95
    hot = [json.loads(r[2]) for r in rows if r[0] == "hot"]
    assert all(c["block_cache_bytes"] > 3 * c["data_bytes"] for c in hot)
    commands = query(tmp_path, "SELECT command FROM invocations WHERE cache_state='hot' AND phase='measured'")
    assert all("--benchmarks=readseq,readrandom" in c[0] for c in commands)


def test_pinning_to_a_missing_cpu_fails_before_running(tmp_path):
    proc = tidemark(tmp_path, "run", "engine=leveldb", "workload=fillseq", "machine.pin_cpus=[0,64]",
                    check=False, timeout=120)
    assert proc.returncode == 2
    assert "CPU 64" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "tidemark.duckdb").exists()


def test_strict_profile_on_other_hardware_refuses_naming_the_fact(tmp_path):
    proc = tidemark(tmp_path, "run", "engine=leveldb", "workload=fillseq", "machine=epyc-4344p",
                    check=False, timeout=120)
    assert proc.returncode == 2
    assert "cpu_model: expected /EPYC 4344P/" in proc.stderr
    assert not (tmp_path / "tidemark.duckdb").exists()


def test_non_strict_mismatch_marks_the_run_unverified(tmp_path):
    tidemark(tmp_path, "run", "engine=leveldb", "workload=fillseq", "repetitions=1",
             "workload.params.num=2000", "machine=m4-max")
    verified, notes = query(tmp_path, "SELECT verified, notes FROM runs")[0]
    assert verified is False
    assert any(n.startswith("unverified: cpu_model") for n in json.loads(notes))


def test_callgrind_records_instruction_counts(tmp_path):
    tidemark(tmp_path, "run", "engine=leveldb", "workload=fillseq", "repetitions=1",
             "workload.params.num=3000", "callgrind=true", "callgrind_ops=1000",
             "callgrind_repetitions=1")
    rows = query(tmp_path, """SELECT i.params, m.name, m.value FROM invocations i JOIN metrics m
                              USING (invocation_id) WHERE i.phase = 'callgrind' ORDER BY m.name""")
    assert [r[1] for r in rows] == ["instructions", "instructions_per_op"]
    assert json.loads(rows[0][0])["num"] == 1000
    assert rows[0][2] > 1e6 and rows[1][2] == pytest.approx(rows[0][2] / 1000)
