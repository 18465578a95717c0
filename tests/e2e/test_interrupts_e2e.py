"""`tidemark run` stopped mid-sweep by SIGINT, SIGTERM, SIGHUP or SIGKILL, with real processes:
no engine left running, the run marked, every finished invocation kept, and the gate refusing
the broken run."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from tests.e2e.fixtures import TIDEMARK, default_stop_signals, query, tidemark

pytestmark = pytest.mark.engine

TINY = ["engine=leveldb", "counters=false", "workload=readrandom", "workload.params.num=5000"]
BIG = ["engine=leveldb", "counters=false", "workload=readrandom", "workload.params.num=200000"]
LONG = [*BIG, "repetitions=30"]


def _engines_under(path: Path) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if "db_bench" in cmdline and str(path) in cmdline:
            found.append(proc)
    return found


def _start_and_wait_for_measurements(tmp: Path, measured: int) -> subprocess.Popen:
    db = tmp / "tidemark.duckdb"
    argv = [TIDEMARK, "run", *LONG, f"db={db}", f"results_dir={tmp}", f"data_dir={tmp / 'data'}"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=default_stop_signals)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            rows = query(tmp, "SELECT count(*) FROM invocations i JOIN runs r USING (run_id) "
                         "WHERE r.status = 'running' AND i.phase = 'measured'")
        except Exception:  # noqa: BLE001 - the DB is being created or committed to
            rows = [(0,)]
        if rows[0][0] >= measured and _engines_under(tmp):
            return proc
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("the run ended or stalled before it could be interrupted: "
                         + proc.communicate()[1][-2000:])


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_marks_the_run_interrupted_and_kills_the_engine(tmp_path, sig):
    proc = _start_and_wait_for_measurements(tmp_path, 2)
    os.kill(proc.pid, sig)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    lines = err.strip().splitlines()
    assert "interrupted" in lines[-1] and "Traceback" not in err, err[-2000:]
    assert not _engines_under(tmp_path)
    (status, kept), = query(tmp_path, "SELECT r.status, count(i.invocation_id) FILTER "
                            "(WHERE i.phase = 'measured' AND i.status = 'ok') FROM runs r "
                            "LEFT JOIN invocations i USING (run_id) GROUP BY r.status")
    assert status == "interrupted" and kept >= 2
    assert not any((tmp_path / "data").glob("*/*"))  # the data set went with the engine
    gate = tidemark(tmp_path, "gate", "--db", str(tmp_path / "tidemark.duckdb"), check=False)
    assert gate.returncode == 2  # nothing to gate against, or a broken candidate: never a pass


def test_kill_9_leaves_no_engine_and_the_next_command_marks_the_run_killed(tmp_path):
    tidemark(tmp_path, "run", *BIG, "repetitions=4")  # a finished run of the series to gate against
    proc = _start_and_wait_for_measurements(tmp_path, 2)
    stored = query(tmp_path, "SELECT count(*) FROM invocations")[0][0]
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    deadline = time.monotonic() + 10
    while _engines_under(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _engines_under(tmp_path)
    killed = query(tmp_path, "SELECT run_id FROM runs WHERE status = 'running'")[0][0]
    gate = tidemark(tmp_path, "gate", "--db", str(tmp_path / "tidemark.duckdb"),
                    "--baseline", "latest~1", "--candidate", killed, check=False)
    assert gate.returncode == 2 and "not ok" in gate.stdout, gate.stdout
    tidemark(tmp_path, "run", *TINY)  # the next writer marks it
    assert query(tmp_path, "SELECT status FROM runs WHERE run_id = ?", [killed]) == [("killed",)]
    assert query(tmp_path, "SELECT count(*) FROM invocations WHERE run_id = ?", [killed])[0][0] \
        == stored - query(tmp_path, "SELECT count(*) FROM invocations WHERE run_id <> ? AND "
                          "run_id IN (SELECT run_id FROM runs WHERE status = 'ok' ORDER BY "
                          "started_at LIMIT 1)", [killed])[0][0]
    assert not (tmp_path / "data" / killed).exists()


def test_a_run_with_failed_invocations_exits_non_zero(tmp_path):
    # A timeout no process can meet: every measured invocation is a failed record.
    proc = tidemark(tmp_path, "run", *TINY, "timeout_s=0.001", check=False)
    assert proc.returncode == 5, proc.stderr[-2000:]
    assert "failed" in proc.stderr.strip().splitlines()[-1]
    assert query(tmp_path, "SELECT status FROM runs") == [("failed",)]
