"""Run bundles end to end on the real LevelDB: a run written into a bundle and ingested gives
the rows a direct run gives; ingest is idempotent and deterministic across histories; a
tampered, truncated, unfinished or newer-schema bundle is refused in one line, nothing written."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from tests.conftest import REPO
from tests.e2e.fixtures import TIDEMARK, default_stop_signals, run_argv, tidemark

pytestmark = pytest.mark.engine
RUN = ("run", "engine=leveldb", "workload=readrandom", "repetitions=2", "workload.params.num=2000")
# Columns that differ between two executions of the same plan, whatever wrote them.
MEASURED = {"run_id", "invocation_id", "started_at", "finished_at", "ended_at", "wall_s",
            "user_s", "sys_s", "max_rss_kb", "value", "count", "bucket_lo", "bucket_hi", "t",
            "log_path", "machine_state", "conditions", "notes", "first_seen", "config", "created_at",
            "overrides", "command"}  # and where each wrote its data
RUN_TABLES = ("runs", "invocations", "metrics", "histograms", "timeseries", "aggregates")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A direct run into direct/ and the same plan written as a bundle under bundles/."""
    base = tmp_path_factory.mktemp("bundle")
    tidemark(base / "direct", *RUN)
    tidemark(base / "bundled", *RUN, f"bundle_dir={base / 'bundles'}")
    (bundle,) = list((base / "bundles").iterdir())
    return base, bundle


def ingest(db: Path, *paths: Path, check: bool = True):
    return tidemark(db.parent, "ingest", *map(str, paths), "--db", str(db), check=check)


def rows(db: Path, table: str, skip: set[str] = frozenset(), distinct: bool = False) -> list[tuple]:
    """A table's rows (every column but `skip`), in a stable order, as text."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        columns = [c for (c,) in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = ? ORDER BY column_index",
            [table]).fetchall() if c not in skip]
        sql = f"SELECT {'DISTINCT ' * distinct}{', '.join(f'{c}::VARCHAR' for c in columns)} FROM {table} ORDER BY ALL"
        return con.execute(sql).fetchall()
    finally:
        con.close()


def counts(db: Path) -> dict[str, int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = [t for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
    finally:
        con.close()


def test_ingested_bundle_has_the_bundles_rows_and_the_rows_of_a_direct_run(runs, tmp_path):
    base, bundle = runs
    history = tmp_path / "history.duckdb"
    out = ingest(history, bundle).stdout
    assert "1 run(s) added" in out
    source = bundle / "run.duckdb"
    for table in ("machines", "builds", "series", *RUN_TABLES):
        assert rows(history, table, {"log_path"}) == rows(source, table, {"log_path"}), table
    # Log paths follow the logs into the history's logs folder, and the files are there.
    con = duckdb.connect(str(history), read_only=True)
    paths = [p for (p,) in con.execute("SELECT log_path FROM invocations").fetchall()]
    con.close()
    assert paths and all(p.startswith(str(tmp_path / "logs")) and Path(p).is_file() for p in paths)
    direct = base / "direct" / "tidemark.duckdb"
    # The measured distributions differ in their buckets: histograms compare by name.
    for table in ("series", *RUN_TABLES):
        distinct = table == "histograms"
        assert rows(history, table, MEASURED, distinct) == rows(direct, table, MEASURED, distinct), table


def test_same_bundle_twice_adds_nothing_and_merges_the_same_into_another_history(runs, tmp_path):
    base, bundle = runs
    first = tmp_path / "a" / "tidemark.duckdb"
    ingest(first, bundle)
    before = counts(first)
    again = ingest(first, bundle.parent).stdout  # the folder this time
    assert "already in the history" in again and "0 run(s) added" in again
    assert counts(first) == before
    # Another history that holds other runs first: the bundle's rows are the same there.
    other = tmp_path / "b" / "tidemark.duckdb"
    other.parent.mkdir()
    shutil.copyfile(base / "direct" / "tidemark.duckdb", other)
    ingest(other, bundle)
    for table in RUN_TABLES:
        theirs = rows(first, table, {"log_path"})  # read once: not once per row of `other`
        known = set(theirs)
        mine = [r for r in rows(other, table, {"log_path"}) if r in known]
        assert mine == theirs, table
    # A copy of a history that merged it knows the bundle too.
    copy = tmp_path / "c" / "tidemark.duckdb"
    copy.parent.mkdir()
    shutil.copyfile(first, copy)
    assert "0 run(s) added" in ingest(copy, bundle).stdout and counts(copy) == before


def test_ab_with_bundle_dir_is_refused_rather_than_writing_elsewhere(tmp_path):
    """tidemark ab writes both sides into one history and makes no bundle: a bundle_dir given to
    it (a fleet host's habit) would be ignored, the runs landing in a local DB nobody merges."""
    proc = tidemark(tmp_path, "ab", "--", "engine=leveldb", "workload=fillseq",
                    f"bundle_dir={tmp_path / 'bundles'}", f"db={tmp_path / 'tidemark.duckdb'}",
                    check=False)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "bundle_dir=" in lines[0], proc.stderr
    assert not (tmp_path / "tidemark.duckdb").exists() and not (tmp_path / "bundles").exists()


def test_a_bundle_merged_while_this_ingest_waited_for_the_file_adds_nothing(runs, tmp_path):
    """Two merge jobs racing on one history (a retried CI step): each checks the bundle, then
    merges it once it gets the file. The merge itself finds it merged by the other and adds
    nothing, rather than refusing its run as coming from another source."""
    from orchestrator.history.bundle import read_manifest, verify_files
    from orchestrator.store import Store
    from orchestrator.store.merge import BundleRow

    _, bundle = runs
    manifest = read_manifest(bundle)
    row = BundleRow(manifest.bundle_id, str(bundle), "", None, manifest.schema_version,
                    manifest.data, manifest.logs_prefix, str(tmp_path / "logs"))
    copies = [tmp_path / f"copy{i}.duckdb" for i in range(2)]
    for copy in copies:
        verify_files(manifest, copy)
    history = tmp_path / "tidemark.duckdb"
    first, second = Store(history), Store(history)  # two writers, one file opened per call
    try:
        assert first.merge_bundle(copies[0], row) == (manifest.run_ids, True)
        assert second.merge_bundle(copies[1], row) == (manifest.run_ids, False)
    finally:
        first.close()
        second.close()
    assert counts(history)["runs"] == 1 and counts(history)["bundles"] == 1


def _damaged(bundle: Path, tmp_path: Path, damage) -> Path:
    copy = tmp_path / "damaged" / bundle.name
    shutil.copytree(bundle, copy)
    damage(copy)
    return copy


def _flip_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _newer_schema(root: Path) -> None:
    manifest = json.loads((root / "manifest.json").read_text())
    (root / "manifest.json").write_text(json.dumps({**manifest, "schema_version": 99}))


def _reseal(root: Path, extra: dict[str, Path] = {}) -> None:
    """Rewrite the manifest so it matches the bundle's files as they are now (and lists `extra`
    names for the given files): what a crafted bundle would carry."""
    import hashlib

    manifest = json.loads((root / "manifest.json").read_text())
    found = {p.relative_to(root).as_posix(): p for p in root.rglob("*")
             if p.is_file() and p.name != "manifest.json"}
    manifest["files"] = {name: {"sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                                "bytes": path.stat().st_size}
                         for name, path in {**found, **extra}.items()}
    (root / "manifest.json").write_text(json.dumps(manifest))


def _lists_a_file_outside(root: Path) -> None:
    outside = root.parent / "outside.txt"  # a file beside the bundle, listed with its true sha
    outside.write_text("not the bundle's\n")
    _reseal(root, {"../outside.txt": outside})


def _symlinked_logs(root: Path) -> None:
    """The run's log folder is a link to a folder outside the bundle (same files in it)."""
    (logs,) = (root / "logs").iterdir()
    outside = root.parent / "outside-logs"
    shutil.move(str(logs), outside)
    logs.symlink_to(outside, target_is_directory=True)


def _run_id_escaping_the_logs(root: Path) -> None:
    """The run id (in the database and the manifest) climbs out of the history's logs folder."""
    escape = "../../escaped-run"
    con = duckdb.connect(str(root / "run.duckdb"))
    for table in ("runs", "invocations", "aggregates"):
        con.execute(f"UPDATE {table} SET run_id = ?", [escape])
    con.close()
    (logs,) = (root / "logs").iterdir()
    shutil.move(str(logs), root / "logs" / escape)
    _reseal(root)
    manifest = json.loads((root / "manifest.json").read_text())
    (root / "manifest.json").write_text(json.dumps({**manifest, "run_ids": [escape]}))


DAMAGE = {
    "tampered database": (lambda b: _flip_byte(b / "run.duckdb"),
                          "file run.duckdb does not match its sha256"),
    "truncated database": (lambda b: (b / "run.duckdb").write_bytes(
        (b / "run.duckdb").read_bytes()[:4096]), "file run.duckdb has 4096 bytes"),
    "truncated manifest": (lambda b: (b / "manifest.json").write_text(
        (b / "manifest.json").read_text()[:100]), "manifest.json is not valid JSON"),
    "added file": (lambda b: (b / "run.duckdb.wal").write_bytes(b"x"),
                   "file run.duckdb.wal is not in manifest.json"),
    # A copy cut short (scp interrupted, a file left behind): the manifest still lists it.
    "missing file": (lambda b: (b / "build.json").unlink(),
                     "file build.json listed in manifest.json is missing"),
    "newer schema": (_newer_schema, "has schema v99, newer than this Tidemark's"),
    "unfinished": (lambda b: (b / "manifest.json").unlink(), "no manifest.json"),
    # A bundle comes from another host: nothing it names may reach outside its folder.
    "file outside the bundle": (_lists_a_file_outside, "names '../outside.txt', outside the bundle"),
    "symlinked log folder": (_symlinked_logs, "is a symbolic link"),
    "run id with a path": (_run_id_escaping_the_logs, "run id '../../escaped-run' is not a plain name"),
}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_a_damaged_bundle_is_refused_in_one_line_and_nothing_is_written(runs, tmp_path, case):
    base, bundle = runs
    damage, said = DAMAGE[case]
    bad = _damaged(bundle, tmp_path, damage)
    history = tmp_path / "history" / "tidemark.duckdb"
    history.parent.mkdir()
    shutil.copyfile(base / "direct" / "tidemark.duckdb", history)
    before = {t: rows(history, t) for t in ("runs", "invocations", "metrics", "bundles")}
    proc = ingest(history, bad, check=False)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"tidemark: error: bundle {bad}: ")
    assert said in lines[0] and lines[0].endswith("nothing was written from it")
    assert {t: rows(history, t) for t in before} == before
    assert not (history.parent / "logs").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["damaged", "history"]  # nothing escaped


def test_a_folder_of_good_and_bad_bundles_merges_each_good_one_and_exits_4(runs, tmp_path):
    """A CI merge job's folder with damaged bundles among good ones (one altered, one with a
    log the manifest lists deleted): every good one is merged, every bad one named, and the
    exit code says partial (4), not "nothing merged" (2)."""
    _, bundle = runs
    folder = tmp_path / "incoming"
    shutil.copytree(bundle, folder / "good")
    for name in ("bad1", "bad2"):
        shutil.copytree(bundle, folder / name)
    _flip_byte(folder / "bad1" / "build.json")
    lost = next((folder / "bad2" / "logs").rglob("*.stdout"))
    lost.unlink()
    history = tmp_path / "history" / "tidemark.duckdb"
    proc = ingest(history, folder, check=False)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "1 run(s) added" in proc.stdout and "2 refused" in proc.stdout
    said = proc.stdout + proc.stderr
    assert f"bundle {folder / 'bad1'}: file build.json does not match its sha256" in said
    assert f"bundle {folder / 'bad2'}: file {lost.relative_to(folder / 'bad2')} listed in " \
           f"manifest.json is missing" in said
    assert counts(history)["runs"] == 1
    assert ingest(history, folder / "good").returncode == 0  # the good one alone: all good


def test_a_logs_folder_that_cannot_be_made_is_refused_before_anything_is_merged(runs, tmp_path):
    _, bundle = runs
    (tmp_path / "a-file").write_text("")
    history = tmp_path / "history" / "tidemark.duckdb"
    proc = tidemark(tmp_path, "ingest", str(bundle), "--db", str(history), "--logs",
                    str(tmp_path / "a-file" / "logs"), check=False)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert f"{tmp_path / 'a-file' / 'logs'}" in lines[0] and "Not a directory" in lines[0]
    assert counts(history)["runs"] == 0  # no rows whose logs are nowhere


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_ingest_stopped_while_it_waits_ends_in_one_line(runs, tmp_path, sig):
    """Ctrl-C (or a CI cancel's SIGTERM) during an ingest: one line, exit 130, each bundle
    merged whole or not at all; here it waits for a history another process holds."""
    _, bundle = runs
    history = tmp_path / "tidemark.duckdb"
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys; con = duckdb.connect("
                               f"{str(history)!r}); print('held', flush=True); sys.stdin.read()"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        proc = subprocess.Popen(run_argv(tmp_path, "ingest", str(bundle), "--db", str(history)),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=default_stop_signals)
        assert proc.stdout.readline().startswith(f"waiting for results database {history}")
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        holder.communicate("")
    lines = err.strip().splitlines()
    assert proc.returncode == 130 and len(lines) == 1 and "interrupted" in lines[0], err
    assert "run the same ingest again" in lines[0]


def test_a_tampered_copy_of_a_merged_bundle_is_refused_not_taken_as_known(runs, tmp_path):
    """The same manifest with a changed file is not the bundle that was merged: refused, and its
    logs are never placed in the history (not even where the history lost its own)."""
    _, bundle = runs
    history = tmp_path / "history" / "tidemark.duckdb"
    ingest(history, bundle)
    shutil.rmtree(history.parent / "logs")
    bad = _damaged(bundle, tmp_path, lambda b: _flip_byte(next((b / "logs").rglob("*.stdout"))))
    proc = ingest(history, bad, check=False)
    assert proc.returncode == 2 and "does not match its sha256" in proc.stderr, proc.stdout + proc.stderr
    assert not (history.parent / "logs").exists()


def test_a_bundle_of_a_job_killed_outright_is_merged_with_unfinished(runs, tmp_path):
    """A node's job killed by SIGKILL leaves its committed invocations and no manifest: a folder
    ingest skips it and says how to take it; --unfinished merges it, the run marked killed."""
    _, bundle = runs
    killed = tmp_path / "bundles" / bundle.name
    shutil.copytree(bundle, killed)
    (killed / "manifest.json").unlink()
    con = duckdb.connect(str(killed / "run.duckdb"))
    con.execute("""UPDATE runs SET status = 'running', finished_at = NULL, machine_state =
                   json_object('process', json_object('host', 'another-node', 'pid', 1))""")
    measured = con.execute("SELECT count(*) FROM invocations").fetchone()[0]
    con.close()
    history = tmp_path / "history" / "tidemark.duckdb"
    skipped = ingest(history, killed.parent).stdout
    assert "unfinished" in skipped and "--unfinished" in skipped and "0 run(s) added" in skipped
    merged = tidemark(tmp_path, "ingest", str(killed.parent), "--unfinished", "--db", str(history))
    assert "marked killed" in merged.stdout and "1 run(s) added" in merged.stdout
    con = duckdb.connect(str(history), read_only=True)
    assert con.execute("SELECT status, finished_at IS NOT NULL FROM runs").fetchall() == [("killed", True)]
    assert con.execute("SELECT count(*) FROM invocations").fetchone()[0] == measured
    con.close()


def _measured_in_bundle(folder: Path) -> int:
    for db in folder.glob("*/run.duckdb"):
        try:
            con = duckdb.connect(str(db), read_only=True)
        except duckdb.Error:  # the writer holds it for a commit
            return 0
        try:
            return con.execute("SELECT count(*) FROM invocations WHERE phase = 'measured'").fetchone()[0]
        finally:
            con.close()
    return 0


def test_a_bundle_run_ended_by_sigterm_is_sealed_with_what_it_measured(tmp_path):
    """Slurm's time limit (or scancel) sends SIGTERM: the run ends interrupted and its bundle is
    still sealed, so the submitter merges what was measured."""
    folder = tmp_path / "bundles"
    argv = run_argv(tmp_path, "run", "engine=leveldb", "counters=false", "workload=readrandom",
                    "workload.params.num=100000", "repetitions=30", f"bundle_dir={folder}")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    deadline = time.monotonic() + 300
    while _measured_in_bundle(folder) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "interrupted" in err.strip().splitlines()[-1], err[-2000:]
    (bundle,) = list(folder.iterdir())
    assert (bundle / "manifest.json").is_file()
    history = tmp_path / "history" / "tidemark.duckdb"
    ingest(history, bundle)
    con = duckdb.connect(str(history), read_only=True)
    (status, kept), = con.execute("SELECT r.status, count(i.invocation_id) FILTER (WHERE "
                                  "i.phase = 'measured' AND i.status = 'ok') FROM runs r JOIN "
                                  "invocations i USING (run_id) GROUP BY r.status").fetchall()
    con.close()
    assert status == "interrupted" and 2 <= kept < 30


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def _history(clone: Path, *args: str) -> subprocess.CompletedProcess:
    """scripts/history.sh of a clone (a copy of the script in a repository of its own)."""
    env = {**os.environ, "TIDEMARK": TIDEMARK}
    return subprocess.run(["bash", str(clone / "scripts" / "history.sh"), *args], cwd=clone,
                          env=env, capture_output=True, text=True, timeout=300)


def test_history_branch_round_trip_keeps_bad_bundles_out_and_never_restores_stale(runs, tmp_path):
    """The CI history on a data branch of a local bare repository: save keeps a damaged bundle
    off the branch (it would fail every later restore) and still saves the good ones; restore
    always reads the branch as pushed (also in a workspace kept, or cleaned, between jobs); a
    remote that cannot be read is an error, never an empty history."""
    _, bundle = runs
    origin, seed = tmp_path / "origin.git", tmp_path / "seed"
    _git(tmp_path, "init", "-q", "--bare", str(origin))
    (seed / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "history.sh", seed / "scripts")
    _git(seed, "init", "-q")
    _git(seed, "add", ".")
    _git(seed, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "scripts")
    _git(seed, "push", "-q", str(origin), "HEAD:refs/heads/main")
    ci, analyst = tmp_path / "ci", tmp_path / "analyst"
    for clone in (ci, analyst):
        _git(tmp_path, "clone", "-q", "-b", "main", str(origin), str(clone))
    incoming = tmp_path / "incoming"
    shutil.copytree(bundle, incoming / bundle.name)
    shutil.copytree(bundle, incoming / "damaged")
    _flip_byte(incoming / "damaged" / "build.json")
    saved = _history(ci, "save", str(incoming))
    assert saved.returncode == 4 and f"not saving {incoming / 'damaged'}: " in saved.stderr, saved
    db = tmp_path / "restored.duckdb"
    assert _history(analyst, "restore", str(db)).returncode == 0
    assert counts(db)["runs"] == 1
    # Another night: a new bundle pushed from CI; the analyst's kept workspace sees it.
    later = tmp_path / "later"
    tidemark(tmp_path / "later-run", "run", "engine=leveldb", "workload=fillseq", "repetitions=1",
             "workload.params.num=1000", f"bundle_dir={later}")
    assert _history(ci, "save", str(later)).returncode == 0
    assert _history(analyst, "restore", str(db)).returncode == 0
    assert counts(db)["runs"] == 2
    _git(analyst, "clean", "-qffdx")  # what a runner's checkout step does to .history/
    fresh = tmp_path / "fresh.duckdb"
    restored = _history(analyst, "restore", str(fresh))
    assert restored.returncode == 0, restored.stderr
    assert counts(fresh)["runs"] == 2
    _git(analyst, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    lost = _history(analyst, "restore", str(tmp_path / "lost.duckdb"))
    assert lost.returncode == 1 and "cannot read branch tidemark-history" in lost.stderr
    assert not (tmp_path / "lost.duckdb").exists()


BUNDLES = 8  # a CI merge job's folder: enough bundles that two ingests take turns on it


def _clone(bundle: Path, folder: Path, n: int) -> Path:
    """The bundle as another run's (`<run id>-c<n>`: ids, log paths and log folder renamed,
    resealed): a folder of distinct bundles for the price of one measured run."""
    old = bundle.name  # a bundle's folder is named by its run id
    new = f"{old}-c{n}"
    root = folder / new
    shutil.copytree(bundle, root)
    con = duckdb.connect(str(root / "run.duckdb"))
    for table, column in con.execute("SELECT table_name, column_name FROM duckdb_columns() WHERE "
                                     "column_name IN ('run_id', 'invocation_id', 'log_path')"
                                     ).fetchall():
        con.execute(f"UPDATE {table} SET {column} = replace({column}, ?, ?)", [old, new])
    con.close()
    shutil.move(root / "logs" / old, root / "logs" / new)
    _reseal(root)
    manifest = json.loads((root / "manifest.json").read_text())
    (root / "manifest.json").write_text(json.dumps({**manifest, "run_ids": [new]}))
    # Its file time is its created_at's, as when sealed: else ingest reads a clock skew.
    shutil.copystat(bundle / "manifest.json", root / "manifest.json")
    return root


@pytest.fixture(scope="module")
def folder(runs, tmp_path_factory):
    """A folder of BUNDLES bundles, and a history that is one ingest of it into a copy of the
    direct run's history: what any way of merging them must end with."""
    base, bundle = runs
    folder = tmp_path_factory.mktemp("folder") / "incoming"
    shutil.copytree(bundle, folder / bundle.name)
    for n in range(1, BUNDLES):
        _clone(bundle, folder, n)
    reference = folder.parent / "reference" / "tidemark.duckdb"
    reference.parent.mkdir()
    shutil.copyfile(base / "direct" / "tidemark.duckdb", reference)
    assert f"{BUNDLES} run(s) added" in ingest(reference, folder).stdout
    return folder, reference


def history_rows(db: Path) -> dict[str, list[tuple]]:
    """What must be the same however the bundles were merged: every run's rows (log paths
    relative to the logs folder), and which bundles brought which runs."""
    found = {t: rows(db, t, {"log_path"}) for t in RUN_TABLES}
    con = duckdb.connect(str(db), read_only=True)
    try:
        found["bundles"] = con.execute("SELECT bundle_id, run_ids FROM bundles "
                                       "ORDER BY ALL").fetchall()
        found["log_paths"] = con.execute(
            "SELECT invocation_id, CASE WHEN starts_with(log_path, $logs) THEN "
            "substr(log_path, length($logs) + 1) ELSE log_path END FROM invocations ORDER BY ALL",
            {"logs": str(db.parent / "logs")}).fetchall()
    finally:
        con.close()
    return found


def log_files(db: Path) -> list[str]:
    logs = db.parent / "logs"
    return sorted(str(p.relative_to(logs)) for p in logs.rglob("*"))


def test_two_ingests_at_once_merge_every_run_once(runs, folder, tmp_path):
    """Two merge jobs started together on one history (a retried CI step): both wait for the
    file, saying so once; then they take turns, bundle by bundle, and every run is in the
    history exactly once, as one ingest of the folder would have it."""
    base, _ = runs
    bundles, reference = folder
    history = tmp_path / "history" / "tidemark.duckdb"
    history.parent.mkdir()
    shutil.copyfile(base / "direct" / "tidemark.duckdb", history)
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys; con = duckdb.connect("
                               f"{str(history)!r}); print('held', flush=True); sys.stdin.read()"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    procs = []
    try:
        assert holder.stdout.readline() == "held\n"
        for _ in range(2):
            argv = run_argv(tmp_path, "ingest", str(bundles), "--db", str(history))
            procs.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True))
        # Both are running and blocked on the file before either merges anything.
        firsts = [proc.stdout.readline() for proc in procs]
        assert all(line.startswith(f"waiting for results database {history}") for line in firsts)
    finally:
        holder.communicate("")
    outs = [proc.communicate(timeout=600) for proc in procs]
    said = [first + out for first, (out, _) in zip(firsts, outs)]
    assert [proc.returncode for proc in procs] == [0, 0], outs
    assert all(text.count("waiting for results database") == 1 for text in said), said
    added = [int(text.split(" run(s) added")[0].rsplit("\n", 1)[-1]) for text in said]
    known = [text.count("already in the history: ") for text in said]
    assert sum(added) == BUNDLES and sum(known) == BUNDLES, said
    assert history_rows(history) == history_rows(reference)
    assert log_files(history) == log_files(reference)


def _read_locked_elsewhere(pid: int, history: Path) -> bool:
    """Whether `pid` holds a read lock on a file other than the history: DuckDB's lock on the
    bundle copy it ATTACHes (READ_ONLY) for the merge, held until the merge ends."""
    ours = f":{history.stat().st_ino} "
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if fields[4] == str(pid) and fields[3] == "READ" and ours not in f"{fields[5]} ":
            return True
    return False


def _stopped(pid: int) -> bool:
    return all(Path(task, "stat").read_text().rsplit(")", 1)[1].split()[0] == "T"
               for task in Path(f"/proc/{pid}/task").iterdir())


def _stop_inside_a_merge(proc: subprocess.Popen, history: Path, nth: int) -> bool:
    """SIGSTOP the ingest inside the `nth` bundle's merge it is seen in (or a later one): the
    bundle's copy attached and the history's WAL not yet written (its COMMIT writes it).
    Checked again once the process has stopped, so the kill lands there; let go and caught
    at the next bundle when the stop came just after."""
    wal = history.with_name(history.name + ".wal")
    seen, inside = 0, False
    while proc.poll() is None:
        was, inside = inside, _read_locked_elsewhere(proc.pid, history)
        seen += inside and not was
        if seen < nth or not inside or wal.exists():
            continue
        proc.send_signal(signal.SIGSTOP)
        while not _stopped(proc.pid):
            pass
        if _read_locked_elsewhere(proc.pid, history) and not wal.exists():
            return True
        proc.send_signal(signal.SIGCONT)
    return False


def test_an_ingest_killed_inside_a_merge_leaves_each_bundle_whole_or_absent(runs, folder, tmp_path):
    """kill -9 while a bundle's rows are being merged: the history keeps what it had and the
    bundles merged before, not a row of that bundle (one DuckDB transaction each) and none of
    its logs; the same ingest again merges the rest, nothing doubled."""
    base, _ = runs
    bundles, reference = folder
    history = tmp_path / "history" / "tidemark.duckdb"
    history.parent.mkdir()
    shutil.copyfile(base / "direct" / "tidemark.duckdb", history)
    (tmp_path / "tmp").mkdir()  # the killed ingest's copy of the bundle stays there
    proc = subprocess.Popen(run_argv(tmp_path, "ingest", str(bundles), "--db", str(history)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(tmp_path / "tmp")})
    try:
        caught = _stop_inside_a_merge(proc, history, nth=3)
    finally:
        proc.kill()
    out, err = proc.communicate(timeout=60)
    assert caught, f"the ingest ended before it was seen inside a merge: {out}{err}"
    merged = [line.split()[1].rstrip(":") for line in out.splitlines()
              if line.startswith("ingested ")]
    expected = sorted(p.name for p in bundles.iterdir())[:len(merged)]
    assert [Path(m).name for m in merged] == expected and 2 <= len(merged) < BUNDLES
    con = duckdb.connect(str(history), read_only=True)
    try:
        runs_now = [r for (r,) in con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
        direct = [r for (r,) in con.execute("SELECT run_id FROM runs WHERE run_id NOT IN "
                                            "(SELECT unnest(?))", [expected]).fetchall()]
        invocations = con.execute("SELECT count(*) FROM invocations WHERE run_id NOT IN "
                                  "(SELECT unnest(?))", [direct]).fetchone()[0]
    finally:
        con.close()
    assert runs_now == sorted(direct + expected) and len(direct) == 1
    per_bundle = counts(bundles / expected[0] / "run.duckdb")["invocations"] if expected else 0
    assert invocations == per_bundle * len(expected)  # the bundle being merged: not a row
    assert sorted(p.name for p in (history.parent / "logs").iterdir()) == expected
    assert tidemark(tmp_path, "db", "check", "--db", str(history)).returncode == 0
    again = ingest(history, bundles).stdout
    assert f"{BUNDLES - len(expected)} run(s) added" in again
    assert f"{len(expected)} bundle(s) were in it already" in again
    assert history_rows(history) == history_rows(reference)
    assert log_files(history) == log_files(reference)


def test_an_ingest_whose_logs_disk_fills_stops_in_one_line_and_refuses_no_bundle(runs, folder,
                                                                                 tmp_path):
    """The logs folder's disk is full: the ingest stops at the first bundle's logs in one
    line naming the folder, blaming no bundle; that bundle's rows are committed, its logs not;
    once there is space the same ingest fills them in and merges the rest, nothing doubled."""
    from tests.e2e.test_disk_full_e2e import fill, tmpfs

    base, _ = runs
    bundles, reference = folder
    history = tmp_path / "history" / "tidemark.duckdb"
    history.parent.mkdir()
    shutil.copyfile(base / "direct" / "tidemark.duckdb", history)
    with tmpfs(history.parent / "logs", "4m") as logs:
        filler = fill(logs)
        proc = ingest(history, bundles, check=False)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1, proc.stdout + proc.stderr
        assert lines[0].startswith(f"tidemark: error: no space left on the disk of {logs}")
        assert "refused" not in proc.stdout and "ingested" not in proc.stdout
        first = sorted(p.name for p in bundles.iterdir())[0]
        assert counts(history)["bundles"] == 1 and [p.name for p in logs.iterdir()] == ["filler"]
        filler.unlink()
        again = ingest(history, bundles).stdout
        assert f"already in the history: {bundles / first}" in again
        assert f"{BUNDLES - 1} run(s) added" in again
        assert history_rows(history) == history_rows(reference)
        assert log_files(history) == log_files(reference)
