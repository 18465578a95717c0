"""db_bench command lines (pure)."""
from pathlib import Path

import pytest

from orchestrator.runners.commands import engine_command
from orchestrator.errors import ConfigError
from orchestrator.plan.runplan import make_plan


def _measured(plan):
    return next(s for s in plan.steps if s.is_measured)


def test_rocksdb_read_uses_existing_db_histogram_and_report(compose_conf):
    step = _measured(make_plan(compose_conf(["workload=readrandom", "threads=2",
                                             "workload.params.num=777"])))
    argv = engine_command("rocksdb", Path("/b/db_bench"), step, Path("/d"), Path("/r.csv"))
    assert argv[0] == "/b/db_bench"
    for flag in ("--benchmarks=readrandom", "--db=/d", "--num=777", "--threads=2",
                 "--use_existing_db=1", "--histogram=1", "--report_file=/r.csv",
                 "--compression_type=snappy"):
        assert flag in argv


def test_leveldb_writer_starts_fresh_and_has_no_rocksdb_flags(compose_conf):
    step = _measured(make_plan(compose_conf(["engine=leveldb", "workload=fillrandom"])))
    argv = engine_command("leveldb", Path("db_bench"), step, Path("/d"), Path("/r.csv"))
    assert "--use_existing_db=0" in argv
    assert not any(a.startswith(("--report_file", "--compression_type", "--seed")) for a in argv)


def test_leveldb_rejects_a_compression_it_cannot_select_when_planning(compose_conf):
    with pytest.raises(ConfigError, match="compression='zstd'"):
        make_plan(compose_conf(["engine=leveldb", "workload=fillseq",
                                "workload.params.compression=zstd"]))


def test_extra_flags_pass_through_verbatim(compose_conf):
    step = _measured(make_plan(compose_conf(["workload=fillseq",
                                             "+workload.params.extra.bloom_bits=10"])))
    argv = engine_command("rocksdb", Path("db_bench"), step, Path("/d"), Path("/r.csv"))
    assert "--bloom_bits=10" in argv


def test_exit_status_wrapper_runs_the_command_and_records_its_code(tmp_path):
    import subprocess

    from orchestrator.runners.commands import exit_code_from_status, record_exit_status

    status = tmp_path / "exit"
    argv = record_exit_status(["sh", "-c", "echo hi; exit 3"], status)
    proc = subprocess.run(argv, capture_output=True, text=True)
    assert (proc.returncode, proc.stdout, status.read_text().strip()) == (3, "hi\n", "3")
    assert exit_code_from_status("3\n") == 3
    assert exit_code_from_status("139") == -11  # SIGSEGV through a shell
    assert exit_code_from_status("") is None


def test_callgrind_steps_run_without_clock_driven_bookkeeping(compose_conf):
    """Instruction counts must not move with timings: no histogram (LevelDB scans its buckets
    linearly by latency), no interval reporter thread (RocksDB wakes it every second)."""
    for engine in ("rocksdb", "leveldb"):
        plan = make_plan(compose_conf([f"engine={engine}", "workload=readrandom", "callgrind=true",
                                       "callgrind_repetitions=2", "callgrind_ops=100"]))
        steps = [s for s in plan.steps if s.phase == "callgrind"]
        assert [s.repetition for s in steps] == [1, 2]
        argv = engine_command(engine, Path("db_bench"), steps[0], Path("/d"), Path("/r.csv"))
        assert "--histogram=0" in argv and "--reads=100" in argv
        assert not any(a.startswith(("--report_file", "--report_interval_seconds")) for a in argv)
