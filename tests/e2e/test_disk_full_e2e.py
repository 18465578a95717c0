"""A disk that fills during a real LevelDB run: the results folder (DuckDB and logs) on a small
tmpfs the test mounts, filled to the last byte once the run has committed a measured invocation.
The run stops with one line naming the full folder and the fix, every committed invocation
stays, the DB is not damaged, and `tidemark run --resume` finishes the run once there is space."""
from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path
from typing import Iterator

import duckdb
import pytest

from tests.e2e.fixtures import TIDEMARK, run_argv, tidemark

pytestmark = pytest.mark.engine
REPETITIONS = 6
RUN = ("run", "engine=leveldb", "workload=readrandom", f"repetitions={REPETITIONS}",
       "workload.params.num=2000")


@contextlib.contextmanager
def tmpfs(folder: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` mounted at `folder` (we are root), unmounted however the test ends."""
    folder.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["umount", "--lazy", str(folder)], check=True)


def fill(folder: Path) -> Path:
    """Write one file until the disk is full; the file, to free the space later."""
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as out:
        with contextlib.suppress(OSError):
            while True:
                out.write(b"\0" * (1 << 16))
    with filler.open("ab", buffering=0) as out, contextlib.suppress(OSError):
        while True:  # the last partial block
            out.write(b"\0")
    return filler


def invocations(db: Path) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT invocation_id, seq, phase, status, started_at FROM invocations "
                           "ORDER BY seq").fetchall()
    finally:
        con.close()


def _fill_once_measured(proc: subprocess.Popen, folder: Path, db_name: str,
                        disk: Path) -> tuple[Path, list[tuple]]:
    """Wait for the run's first committed measured invocation (in the DB `db_name` matches
    under `folder`), and fill `disk` while this reader holds the DB: the run cannot commit in
    between, so what it committed is known."""
    while proc.poll() is None:
        db = next(folder.glob(db_name), None)
        if db is None:
            continue
        try:
            con = duckdb.connect(str(db), read_only=True)
        except duckdb.Error:  # not created yet, or the writer holds it for a commit
            continue
        try:
            rows = con.execute("SELECT invocation_id, seq, phase, status, started_at FROM "
                               "invocations ORDER BY seq").fetchall()
            if any(phase == "measured" for _, _, phase, _, _ in rows):
                return fill(disk), rows
        finally:
            con.close()
    raise AssertionError(f"the run ended before it measured: {proc.communicate()}")


@pytest.mark.parametrize("fills", ["results folder", "logs only"])
def test_a_disk_that_fills_mid_run_stops_it_in_one_line_and_resume_finishes_it(tmp_path, fills):
    """The results folder (DB and logs) fills: the DB's commit fails. Or only the logs' disk
    fills (db= elsewhere): the engine's output is cut, and would read as a parse error."""
    with tmpfs(tmp_path / "results", "32m") as results:
        db = (results if fills == "results folder" else tmp_path) / "tidemark.duckdb"
        argv = [a for a in run_argv(tmp_path, *RUN) if not a.startswith(("db=", "results_dir="))]
        proc = subprocess.Popen([*argv, f"db={db}", f"results_dir={results}"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            filler, committed = _fill_once_measured(proc, db.parent, db.name, results)
            _, err = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
        lines = err.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1, err[-3000:]
        (run_id,) = {i[0].rsplit("-", 1)[0] for i in committed}
        assert lines[0].startswith(f"tidemark: error: no space left on the disk of {results}")
        assert f"free space there, then finish it with 'tidemark run --resume {run_id}" in lines[0]
        # What was committed stays, and the file is whole. The step that ended while the disk
        # filled may have been committed since (its output was whole): never a cut one.
        stored = invocations(db)
        assert stored[:len(committed)] == committed and len(stored) <= len(committed) + 1
        assert all(status == "ok" for _, _, _, status, _ in stored)
        check = tidemark(tmp_path, "db", "check", "--db", str(db))
        assert check.stdout.startswith(f"{db}: ok")
        # Resumed while the disk is still full: refused in one line, nothing written.
        full = resume(tmp_path, run_id, db, results)
        lines = full.stderr.strip().splitlines()
        assert full.returncode == 2 and len(lines) == 1, full.stderr[-3000:]
        assert f"no space left on the disk of {results}" in lines[0]
        assert invocations(db) == stored
        filler.unlink()
        resumed = resume(tmp_path, run_id, db, results)
        assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-2000:]
        con = duckdb.connect(str(db), read_only=True)
        try:
            status = con.execute("SELECT status FROM runs").fetchall()
            measured = con.execute("SELECT seq FROM invocations WHERE phase = 'measured' AND "
                                   "status = 'ok' ORDER BY seq").fetchall()
        finally:
            con.close()
        assert status == [("ok",)] and len(measured) == REPETITIONS  # none lost, none twice
        assert set(stored) <= set(invocations(db))
        assert tidemark(tmp_path, "db", "check", "--db", str(db)).returncode == 0


def test_a_bundle_whose_disk_fills_mid_run_is_merged_with_what_it_committed(tmp_path):
    """bundle_dir= on the full disk (a fleet node's local folder): the run stops in one line
    naming the bundle and how to merge what it committed; it cannot be sealed there, and
    `tidemark ingest --unfinished` merges its committed invocations once there is space."""
    with tmpfs(tmp_path / "bundles", "32m") as bundles:
        proc = subprocess.Popen(run_argv(tmp_path, *RUN, f"bundle_dir={bundles}"),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            filler, committed = _fill_once_measured(proc, bundles, "*/run.duckdb", bundles)
            _, err = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
        (root,) = [p for p in bundles.iterdir() if p.is_dir()]
        lines = err.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1, err[-3000:]
        assert lines[0].startswith(f"tidemark: error: no space left on the disk of {root} ")
        assert lines[0].endswith(f"then merge them with 'tidemark ingest --unfinished {root}'")
        assert not (root / "manifest.json").exists()
        filler.unlink()
        history = tmp_path / "history" / "tidemark.duckdb"
        merged = tidemark(tmp_path, "ingest", "--unfinished", str(root), "--db", str(history))
        assert "1 run(s) added" in merged.stdout
        merged_rows = invocations(history)
        assert merged_rows[:len(committed)] == committed and len(merged_rows) <= len(committed) + 1
        con = duckdb.connect(str(history), read_only=True)
        try:
            assert con.execute("SELECT status FROM runs").fetchall() == [("killed",)]
        finally:
            con.close()


def test_a_full_disk_under_the_store_is_one_error_and_close_does_not_raise_again(tmp_path):
    """The first invocation of a new series when the disk is full: its buffered series row
    fails with it, once; closing the store afterwards (as a run does in its `finally`) must
    not fail again on that row and hide the one line."""
    from orchestrator.analysis.identity import SERIES_KEYS
    from orchestrator.errors import DiskFull
    from orchestrator.store import Store

    with tmpfs(tmp_path / "results", "16m") as results:
        store = Store(results / "tidemark.duckdb")
        store.record_series("a-new-series", {**dict.fromkeys(SERIES_KEYS, "x"), "params": {},
                                             "threads": 1})
        filler = fill(results)
        with pytest.raises(DiskFull, match=f"no space left on the disk of {results} "):
            store.finish_run("no-such-run", "ok", {})
        store.close()
        filler.unlink()
        with store.reading() as con:
            assert con.execute("SELECT count(*) FROM series").fetchone() == (0,)


def resume(tmp: Path, run_id: str, db: Path, results: Path) -> subprocess.CompletedProcess:
    """`tidemark run --resume RUN` with the run's DB and its logs in `results`."""
    return subprocess.run([TIDEMARK, "run", "--resume", run_id, f"db={db}",
                           f"results_dir={results}", f"data_dir={tmp / 'data'}"],
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
