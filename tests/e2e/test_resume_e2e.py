"""`tidemark run --resume` with real processes: a run killed with SIGKILL mid-way, and a sweep
killed in its second job, are finished into the same runs with no repetition measured twice;
the site says the run was resumed."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.fixtures import TIDEMARK, query, tidemark

pytestmark = pytest.mark.engine

BASE = ["engine=leveldb", "counters=false", "workload=readrandom"]


def _paths(tmp: Path) -> list[str]:
    return [f"db={tmp / 'tidemark.duckdb'}", f"results_dir={tmp}", f"data_dir={tmp / 'data'}"]


def _measured(tmp: Path, where: str = "") -> int:
    try:
        return query(tmp, "SELECT count(*) FROM invocations i JOIN runs r USING (run_id) WHERE "
                     f"i.phase = 'measured' AND i.status = 'ok' {where}")[0][0]
    except Exception:  # noqa: BLE001 - the DB is being created or committed to
        return 0


def _kill_when(proc: subprocess.Popen, ready) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if ready():
            os.killpg(proc.pid, signal.SIGKILL)  # Tidemark and its engine, as a CI runner's kill
            proc.communicate(timeout=60)
            return
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("the run ended before it could be killed: " + proc.communicate()[1][-2000:])


def _repetitions(tmp: Path, run_id: str) -> list[int]:
    return [r for (r,) in query(tmp, "SELECT repetition FROM invocations WHERE run_id = ? AND "
                                "phase = 'measured' AND status = 'ok' ORDER BY repetition", [run_id])]


def test_a_killed_run_resumes_into_the_same_run_and_measures_nothing_twice(tmp_path):
    argv = [TIDEMARK, "run", *BASE, "workload.params.num=200000", "repetitions=8", *_paths(tmp_path)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    _kill_when(proc, lambda: _measured(tmp_path) >= 3)
    (run_id, kept), = query(tmp_path, "SELECT r.run_id, count(i.invocation_id) FILTER (WHERE "
                            "i.phase = 'measured' AND i.status = 'ok') FROM runs r LEFT JOIN "
                            "invocations i USING (run_id) GROUP BY r.run_id")
    assert 3 <= kept < 8
    resumed = tidemark(tmp_path, "run", "--resume", run_id)
    assert "Resumed at" in resumed.stdout and f"{kept} measured invocations were kept" in resumed.stdout
    assert query(tmp_path, "SELECT run_id, status FROM runs") == [(run_id, "ok")]
    assert _repetitions(tmp_path, run_id) == list(range(1, 9))  # each exactly once
    again = tidemark(tmp_path, "run", "--resume", run_id, check=False)
    assert again.returncode == 2 and "nothing to resume" in again.stderr.strip().splitlines()[-1]
    tidemark(tmp_path, "site", "--db", str(tmp_path / "tidemark.duckdb"), "--out", str(tmp_path / "site"))
    page = next((tmp_path / "site" / "docs").rglob(f"*{run_id}*.md")).read_text()
    assert "ok (resumed)" in page and "Resumed at" in page


def test_a_killed_sweep_resumes_every_job_that_did_not_finish(tmp_path):
    argv = [TIDEMARK, "run", "-m", *BASE, "workload.params.num=100000,120000,140000",
            "repetitions=6", *_paths(tmp_path)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    # Killed in the second job, after two of its repetitions.
    _kill_when(proc, lambda: _measured(tmp_path, "AND r.status = 'running' AND "
                                       "json_extract(r.sweep, '$.job')::INT = 1") >= 2)
    before = dict(query(tmp_path, "SELECT json_extract(sweep, '$.job')::INT, run_id FROM runs"))
    assert sorted(before) == [0, 1]
    first_job = query(tmp_path, "SELECT count(*) FROM invocations WHERE run_id = ?", [before[0]])
    resumed = tidemark(tmp_path, "run", "--resume", before[1])
    assert f"run {before[0]} is complete; skipped" in resumed.stdout
    runs = query(tmp_path, "SELECT json_extract(sweep, '$.job')::INT, run_id, status, "
                 "json_extract_string(sweep, '$.id') FROM runs ORDER BY 1")
    assert [(job, status) for job, _, status, _ in runs] == [(0, "ok"), (1, "ok"), (2, "ok")]
    assert len({sweep for *_, sweep in runs}) == 1
    assert runs[1][1] == before[1]  # the second job finished into its own run
    for _, run_id, _, _ in runs:
        assert _repetitions(tmp_path, run_id) == list(range(1, 7))
    assert query(tmp_path, "SELECT count(*) FROM invocations WHERE run_id = ?", [before[0]]) == first_job
