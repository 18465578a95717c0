"""The results database under faults, with real processes: readers during a run, a damaged
file refused and never written, backups restored, a run removed, unusable paths named."""
from __future__ import annotations

import hashlib
import os
import subprocess
import time
from pathlib import Path

import duckdb
import pytest

from tests.e2e.fixtures import TIDEMARK, query, tidemark

pytestmark = pytest.mark.engine

TINY = ["engine=leveldb", "counters=false", "workload=readrandom", "workload.params.num=5000"]
HYPERFINE = Path(__file__).parents[1] / "data" / "hyperfine"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# A command that holds its run open: its first repetition returns at once, the others wait
# for the test's release file, so the readers' work never races the run's end.
HELD_WORKLOAD = """defaults: [workload_schema, _self_]
name: held
kind: command
command: ["/bin/sh", "-c", "if [ -e '{{data_dir}}/started' ]; then while [ ! -e '{release}' ];
  do sleep 0.05; done; else touch '{{data_dir}}/started'; fi"]
metrics: [wall_s]
"""


def test_readers_work_while_a_run_writes(tmp_path):
    tidemark(tmp_path, "run", *TINY)  # a first run, so there is something to read
    db, release, conf = tmp_path / "tidemark.duckdb", tmp_path / "release", tmp_path / "conf"
    (conf / "workload").mkdir(parents=True)
    (conf / "workload" / "held.yaml").write_text(HELD_WORKLOAD.format(release=release))
    argv = [TIDEMARK, "run", f"hydra.searchpath=[file://{conf}]", "engine=leveldb",
            "counters=false", "workload=held", "repetitions=3", f"db={db}",
            f"results_dir={tmp_path}", f"data_dir={tmp_path / 'data'}"]
    writer = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline, n = time.monotonic() + 300, 0
        while time.monotonic() < deadline:  # until the second run has stored an invocation
            try:  # an analyst's session, retried while the writer commits
                con = duckdb.connect(str(db), read_only=True)
            except duckdb.IOException:
                continue
            try:
                (n,) = con.execute("SELECT count(*) FROM runs r JOIN invocations i USING "
                                   "(run_id) WHERE r.status = 'running'").fetchone()
            finally:
                con.close()
            if n or writer.poll() is not None:
                break
            time.sleep(0.2)
        assert writer.poll() is None, "the run ended before the readers could try"
        assert n, "the run stored no invocation in 300 s"
        site = tidemark(tmp_path, "site", "--db", str(db), "--out", str(tmp_path / "build"))
        assert "site:" in site.stdout
        compare = tidemark(tmp_path, "compare", "latest~1", "latest", "--db", str(db),
                           check=False)
        assert "locked" not in compare.stderr, compare.stderr
        label = tidemark(tmp_path, "label", "latest~1", "first", "--db", str(db))
        assert "label 'first'" in label.stdout
        assert writer.poll() is None  # all of it happened during the run: it waits for us
    finally:
        release.touch()
        out, err = writer.communicate(timeout=600)
    assert writer.returncode == 0, out[-2000:] + err[-2000:]
    statuses = query(tmp_path, "SELECT status, count(*) FROM runs GROUP BY status")
    assert statuses == [("ok", 2)]
    (measured,) = query(tmp_path, "SELECT count(*) FROM invocations i JOIN runs r USING (run_id) "
                        "WHERE r.label IS DISTINCT FROM 'first' AND i.phase = 'measured'")[0]
    assert measured == 3


def _damage(db: Path) -> None:
    size = db.stat().st_size
    with db.open("r+b") as handle:
        handle.seek(size // 2)
        handle.write(os.urandom(256 * 1024))


def test_a_damaged_database_is_refused_never_written_and_restored(tmp_path):
    tidemark(tmp_path, "run", *TINY)
    db = tmp_path / "tidemark.duckdb"
    backups = sorted((tmp_path / "tidemark.duckdb.backups").glob("*.duckdb"))
    assert backups == []  # the first run had no DB to copy yet
    tidemark(tmp_path, "run", *TINY)
    assert len(list((tmp_path / "tidemark.duckdb.backups").glob("*.duckdb"))) == 1
    _damage(db)
    before = _sha(db)
    for argv in (["run", *TINY], ["db", "check", "--db", str(db)],
                 ["compare", "latest~1", "latest", "--db", str(db)],
                 ["site", "--db", str(db), "--out", str(tmp_path / "build")]):
        proc = tidemark(tmp_path, *argv, check=False)
        assert proc.returncode == 2, (argv, proc.stdout[-500:], proc.stderr[-2000:])
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "is damaged" in lines[0] and str(db) in lines[0], proc.stderr
        assert "tidemark db restore" in lines[0]
    assert _sha(db) == before  # nothing wrote into the damaged file
    restored = tidemark(tmp_path, "db", "restore", "--db", str(db))
    assert "restored from" in restored.stdout
    assert "ok" in tidemark(tmp_path, "db", "check", "--db", str(db)).stdout
    assert query(tmp_path, "SELECT count(*) FROM runs") == [(1,)]  # the good state before run 2
    assert (tmp_path / "tidemark.duckdb.replaced").exists()


def test_a_run_is_removed_with_everything_measured_in_it(tmp_path):
    db = tmp_path / "tidemark.duckdb"
    tidemark(tmp_path, "run", *TINY)
    sample = next(HYPERFINE.glob("*.json"))
    tidemark(tmp_path, "import", str(sample), "--format", "hyperfine_json", "--db", str(db))
    (run_id,) = query(tmp_path, "SELECT run_id FROM runs WHERE source = 'import'")[0]
    removed = tidemark(tmp_path, "db", "remove", run_id, "--db", str(db))
    assert f"removed run {run_id}" in removed.stdout
    assert query(tmp_path, "SELECT count(*) FROM runs") == [(1,)]
    for table in ("invocations", "aggregates"):
        assert query(tmp_path, f"SELECT count(*) FROM {table} WHERE run_id = ?", [run_id]) == [(0,)]
    orphans = query(tmp_path, "SELECT count(*) FROM metrics WHERE invocation_id NOT IN "
                    "(SELECT invocation_id FROM invocations)")
    assert orphans == [(0,)]


@pytest.mark.parametrize("where", ["file_parent", "read_only"])
def test_an_unusable_database_path_is_one_line(tmp_path, where):
    if where == "file_parent":
        (tmp_path / "plain").write_text("x")
        db = tmp_path / "plain" / "tidemark.duckdb"
    else:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o555)
        db = folder / "tidemark.duckdb"
        if os.geteuid() == 0:  # root writes anyway: make the folder immutable another way
            folder.chmod(0o755)
            (folder / "tidemark.duckdb").mkdir()  # a directory where the file should be
    proc = subprocess.run([TIDEMARK, "run", *TINY, f"db={db}", f"results_dir={tmp_path}",
                           f"data_dir={tmp_path / 'data'}"], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(db) in lines[0], proc.stderr
