"""Fleet sweeps on a real local Slurm cluster (scripts/slurm-local.sh: munge, slurmctld and two
slurmd on this host, nodes fleet-a and fleet-b serving the profiles of the same names), with
the real LevelDB: every job runs on a node of its profile, jobs on one node never overlap,
every job is in the history exactly once, and a submitter killed mid-sweep loses nothing."""
from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import duckdb
import pytest

from tests.conftest import REPO
from tests.e2e.fixtures import query, run_argv, tidemark

pytestmark = [pytest.mark.engine, pytest.mark.slurm]
SCRIPT = REPO / "scripts" / "slurm-local.sh"
# 2 profiles × 3 points; a tiny data set and one repetition keep a job to a few seconds.
SWEEP = ("run", "-m", "hydra/launcher=fleet", "hydra.launcher.poll_s=0.5",
         "machine=fleet-a,fleet-b", "engine=leveldb", "workload=readrandom", "repetitions=1",
         "counters=false", "workload.params.num=1000,1500,2000")
JOBS = 6


def _free_ports(count: int) -> int:
    """A first port of `count` consecutive free ports (slurmctld and the two slurmd)."""
    for _ in range(50):
        first = random.randrange(20000, 40000)
        try:
            for port in range(first, first + count):
                with socket.socket() as probe:
                    probe.bind(("127.0.0.1", port))
        except OSError:
            continue
        return first
    raise RuntimeError("no free ports for the local Slurm cluster")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A local cluster of its own (own folder and ports), stopped at the end."""
    folder = tmp_path_factory.mktemp("slurm")
    args = ["--dir", str(folder), "--port", str(_free_ports(3))]
    started = subprocess.run(["bash", str(SCRIPT), "start", *args], capture_output=True,
                             text=True, timeout=900)
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        env = {**os.environ, "SLURM_CONF": str(folder / "slurm.conf")}
        features = dict(line.split() for line in subprocess.run(
            ["sinfo", "-h", "-N", "-o", "%N %f"], env=env, capture_output=True, text=True,
            check=True).stdout.splitlines())
        yield env, features
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", *args], timeout=60)


def _runs(tmp: Path) -> list[tuple]:
    return query(tmp, """
        SELECT json_extract(sweep, '$.job')::INTEGER, json_extract_string(config, '$.machine.name'),
               json_extract_string(machine_state, '$.scheduler.node'), started_at, finished_at,
               status, run_id
        FROM runs ORDER BY started_at""")


def _check_history(tmp: Path, features: dict[str, str]) -> list[tuple]:
    runs = _runs(tmp)
    assert sorted(job for job, *_ in runs) == list(range(JOBS))  # each job exactly once
    assert all(status == "ok" for *_, status, _ in runs)
    for _, profile, node, *_ in runs:
        assert profile in features[node].split(","), (profile, node)
    for node in features:
        spans = sorted((start, end) for _, _, n, start, end, *_ in runs if n == node)
        assert all(end <= next_start for (_, end), (next_start, _) in zip(spans, spans[1:])), spans
    assert query(tmp, "SELECT count(*) FROM bundles")[0][0] == JOBS
    return runs


def test_sweep_runs_each_job_on_a_node_of_its_profile_once_without_overlap(cluster, tmp_path):
    env, features = cluster
    proc = tidemark(tmp_path, *SWEEP, env=env, timeout=600)
    assert proc.stdout.count("exclusive, time limit") == JOBS
    runs = _check_history(tmp_path, features)
    assert {node for _, _, node, *_ in runs} == {"fleet-a", "fleet-b"}
    # The site: the fleet page puts the two profiles side by side, each machine page lists
    # its runs with the node each ran on.
    tidemark(tmp_path, "site", "--db", str(tmp_path / "tidemark.duckdb"), "--out",
             str(tmp_path / "build"), env=env, timeout=600)
    site = tmp_path / "build" / "site"
    fleet = (site / "fleet" / "index.html").read_text()
    table = next(t for t in fleet.split("<table>")[1:] if "<th>Workload</th>\n<th>Series</th>" in t)
    header, body = table.split("</thead>", 1)
    assert '">fleet-a · ' in header and '">fleet-b · ' in header
    rows = [row.split("</tr>")[0] for row in body.split("<tr>")[1:]]
    rows = [row for row in rows if row.startswith("\n<td>readrandom</td>")]
    assert len(rows) == 3 and all(row.count('href="../runs/') == 2 for row in rows)
    listed = "".join(p.read_text() for p in (site / "machines").glob("*.html"))
    for _, profile, node, *_, run_id in runs:
        assert f'.html">{run_id}</a>' in listed and re.search(
            f"<td[^>]*>{re.escape(profile)}</td>\n<td[^>]*>{re.escape(node)} \\(job ", listed)
    _damaged_copies_are_refused_and_the_others_merged(tmp_path, env)


def _damaged_copies_are_refused_and_the_others_merged(tmp_path: Path, env: dict[str, str]
                                                      ) -> None:
    """The sweep's bundles as they arrive elsewhere, one cut short in transit and one missing
    a file: ingest names each in one line, merges the other four, exits 4; a second ingest of
    the repaired folder adds exactly the two (none doubled)."""
    copy = tmp_path / "arrived"
    shutil.copytree(tmp_path / "fleet" / "bundles", copy)
    manifests = sorted(copy.rglob("manifest.json"))
    assert len(manifests) == JOBS
    cut, lacking = manifests[0].parent, manifests[1].parent
    database = cut / "run.duckdb"
    original = database.read_bytes()
    database.write_bytes(original[:len(original) // 2])
    (lacking / "build.json").rename(tmp_path / "build.json")
    history = tmp_path / "elsewhere.duckdb"
    proc = tidemark(tmp_path, "ingest", str(copy), "--db", str(history), env=env, check=False)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 4, said
    assert f"{JOBS - 2} run(s) added" in said and "2 refused" in said, said
    assert f"bundle {cut}: file run.duckdb has {len(original) // 2} bytes" in said, said
    assert f"bundle {lacking}: file build.json listed in manifest.json is missing" in said, said
    database.write_bytes(original)
    (tmp_path / "build.json").rename(lacking / "build.json")
    again = tidemark(tmp_path, "ingest", str(copy), "--db", str(history), env=env)
    assert "2 run(s) added" in again.stdout, again.stdout
    merged = duckdb.connect(str(history), read_only=True)
    try:
        ids = [r for (r,) in merged.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
        invocations = merged.execute("SELECT count(*) FROM invocations").fetchone()[0]
    finally:
        merged.close()
    assert ids == sorted(r for *_, r in _runs(tmp_path))  # every run once
    assert invocations == query(tmp_path, "SELECT count(*) FROM invocations")[0][0]


def test_a_sweep_of_an_engine_from_yaml_alone(cluster, tmp_path):
    """zstd (conf/engine/zstd.yaml, a make build and command workloads): one job per profile,
    each a bundle ingested with its commands' timings and regex-read metrics."""
    env, _ = cluster
    tidemark(tmp_path, "run", "-m", "hydra/launcher=fleet", "hydra.launcher.poll_s=0.5",
             "machine=fleet-a,fleet-b", "engine=zstd", "workload=zstd_bench", "repetitions=1",
             "counters=false", env=env, timeout=600)
    rows = query(tmp_path, """SELECT r.machine_state->>'$.scheduler.node', r.engine,
                                     count(*) FILTER (m.name = 'ratio'),
                                     count(*) FILTER (m.name = 'wall_s')
                              FROM runs r JOIN invocations i USING (run_id)
                              JOIN metrics m USING (invocation_id)
                              WHERE i.phase = 'measured' AND i.status = 'ok' GROUP BY ALL""")
    assert sorted(rows) == [("fleet-a", "zstd", 1, 1), ("fleet-b", "zstd", 1, 1)]


def _wait_for_slurm_jobs(env: dict[str, str], timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        active = subprocess.run(["squeue", "-h", "-o", "%i"], env=env, capture_output=True,
                                text=True, check=True).stdout.split()
        if not active:
            return
        time.sleep(1)
    raise AssertionError(f"Slurm jobs still active after {timeout_s} s: {active}")


def test_submitter_killed_mid_sweep_loses_nothing_after_ingest(cluster, tmp_path):
    env, features = cluster
    submitter = subprocess.Popen(run_argv(tmp_path, *SWEEP), env=env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL)
    seen = []
    for line in submitter.stdout:  # kill it as soon as it has merged its first bundle
        seen.append(line)
        if line.startswith("ingested "):
            break
    submitter.send_signal(signal.SIGKILL)
    submitter.wait(timeout=30)
    assert any(line.startswith("ingested ") for line in seen), "".join(seen)
    merged_before = len(_runs(tmp_path))
    assert 1 <= merged_before < JOBS
    _wait_for_slurm_jobs(env)
    recovered = tidemark(tmp_path, "ingest", str(tmp_path / "fleet" / "bundles"), "--db",
                         str(tmp_path / "tidemark.duckdb"), env=env)
    assert f"{JOBS - merged_before} run(s) added" in recovered.stdout, recovered.stdout
    _check_history(tmp_path, features)


def _one_error_line(proc) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stdout + proc.stderr
    return lines[0]


def test_a_profile_no_node_serves_is_refused_before_anything_is_submitted(cluster, tmp_path):
    env, _ = cluster
    proc = tidemark(tmp_path, "run", "-m", "hydra/launcher=fleet", "machine=fleet-a,ci-2core",
                    "engine=leveldb", "workload=readrandom", env=env, check=False)
    assert "no Slurm node has feature 'ci-2core'" in _one_error_line(proc)
    assert "submitted job" not in proc.stdout and not (tmp_path / "tidemark.duckdb").exists()


def test_a_shared_dir_that_is_not_a_folder_is_refused_before_anything_is_submitted(cluster,
                                                                                  tmp_path):
    env, _ = cluster
    (tmp_path / "a-file").write_text("")
    proc = tidemark(tmp_path, "run", "-m", "hydra/launcher=fleet", "machine=fleet-a",
                    f"hydra.launcher.shared_dir={tmp_path / 'a-file'}", "engine=leveldb",
                    "workload=readrandom", env=env, check=False)
    line = _one_error_line(proc)
    assert line.startswith(f"tidemark: error: hydra.launcher.shared_dir={tmp_path / 'a-file'}: ")
    assert "Not a directory" in line and "submitted job" not in proc.stdout


def test_a_job_that_fails_on_its_node_is_named_with_its_own_error(cluster, tmp_path):
    env, _ = cluster
    proc = tidemark(tmp_path, "run", "-m", "hydra/launcher=fleet", "machine=fleet-b",
                    "engine=leveldb", "engine.source.kind=local",
                    "engine.source.path=/nonexistent-engine", "workload=readrandom", env=env,
                    check=False)
    line = _one_error_line(proc)
    assert "1 of 1 fleet jobs ended without a bundle; first job 0 (machine=fleet-b" in line
    assert "engine.source.path='/nonexistent-engine' is not a folder" in line and "_log.err)" in line
    # The job's bundle folder never started a run: removed, nothing for ingest to trip on.
    assert not any((tmp_path / "fleet" / "bundles").rglob("run.duckdb"))


def test_a_controller_lost_mid_sweep_says_how_to_recover_and_ingest_does(cluster, tmp_path):
    """slurmctld stops while the submitter waits (a crash, a restart for a config change): the
    submitter ends in one line naming the folder to ingest once the job has ended, and once the
    controller is back and the job ran, that ingest merges it."""
    env, _ = cluster
    folder = Path(env["SLURM_CONF"]).parent
    submitter = subprocess.Popen(
        run_argv(tmp_path, "run", "-m", "hydra/launcher=fleet", "hydra.launcher.poll_s=0.5",
                 "machine=fleet-a", "engine=leveldb", "workload=readrandom", "repetitions=1",
                 "counters=false", "workload.params.num=1000"),
        env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL)
    for line in submitter.stdout:
        if line.startswith("submitted job 0 "):
            break
    os.kill(int((folder / "slurmctld.pid").read_text()), signal.SIGTERM)
    _, err = submitter.communicate(timeout=120)
    bundles = tmp_path / "fleet" / "bundles"
    lines = err.strip().splitlines()
    assert submitter.returncode == 2 and len(lines) == 1, err
    assert "is slurmctld reachable" in lines[0] and f"tidemark ingest {bundles}" in lines[0]
    port = next(line.split("=")[1] for line in (folder / "slurm.conf").read_text().splitlines()
                if line.startswith("SlurmctldPort="))
    subprocess.run(["bash", str(SCRIPT), "start", "--dir", str(folder), "--port", port],
                   check=True, capture_output=True, timeout=300)
    _wait_for_slurm_jobs(env)
    recovered = tidemark(tmp_path, "ingest", str(bundles), "--db", str(tmp_path / "tidemark.duckdb"))
    assert "1 run(s) added" in recovered.stdout, recovered.stdout


# Faults on the fleet (issue 31): a node lost mid-sweep, a job requeued by Slurm, a node whose
# clock is hours off. Each compares the history before and after: no invocation lost, none
# measured twice.
LONG_POINT = ["engine=leveldb", "workload=readrandom", "counters=false", "repetitions=6",
              "hydra.launcher.poll_s=0.5"]


def _bundle_query(db: Path, sql: str) -> list[tuple] | None:
    """Rows of a bundle's database while its job writes it (None while the writer holds it)."""
    import duckdb

    try:
        con = duckdb.connect(str(db), read_only=True)
    except duckdb.Error:
        return None
    try:
        return con.execute(sql).fetchall()
    except duckdb.Error:
        return None
    finally:
        con.close()


def _wait_for_measured(job_folder: Path, measured: int, submitter: subprocess.Popen) -> Path:
    """The bundle database of a job once it has committed `measured` measured invocations."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and submitter.poll() is None:
        for db in job_folder.glob("*/run.duckdb"):
            rows = _bundle_query(db, "SELECT count(*) FROM invocations WHERE phase = 'measured'")
            if rows and rows[0][0] >= measured:
                return db
        time.sleep(0.05)
    raise AssertionError(f"no bundle in {job_folder} reached {measured} measured invocations")


def _invocations(tmp: Path) -> set[tuple]:
    return set(query(tmp, "SELECT invocation_id, run_id, seq, status FROM invocations"))


def _each_point_measured_once(tmp: Path) -> None:
    """No measured repetition twice: a resumed run ran only what had no ok record (its
    setup and warm-up run again before the repetitions left, as any resume's do)."""
    doubled = query(tmp, "SELECT run_id, params, repetition, count(*) FROM invocations "
                         "WHERE status = 'ok' AND phase = 'measured' GROUP BY ALL "
                         "HAVING count(*) > 1")
    assert not doubled, doubled


def _descendants(roots: set[int]) -> set[int]:
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, grew = set(roots), True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in found} - found
        found |= more
        grew = bool(more)
    return found


def _kill_node(folder: Path, node: str) -> None:
    """The node dies: its slurmd (by the cluster's pid file), then its slurmstepd (those writing
    this cluster's log of that node, so no other cluster's) and every process under them."""
    os.kill(int((folder / f"slurmd-{node}.pid").read_text()), signal.SIGKILL)
    log = str(folder / f"slurmd-{node}.log")
    stepds = set()
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        try:
            if not (fd_dir.parent / "cmdline").read_bytes().startswith(b"slurmstepd"):
                continue
            if any(os.readlink(fd) == log for fd in fd_dir.iterdir()):
                stepds.add(int(fd_dir.parent.name))
        except OSError:
            continue
    assert stepds, f"no slurmstepd of {node} in {folder}"
    for pid in _descendants(stepds):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _set_slurmd_timeout(env: dict[str, str], seconds: int) -> None:
    conf = Path(env["SLURM_CONF"])
    text = re.sub(r"(?m)^SlurmdTimeout=\d+$", f"SlurmdTimeout={seconds}", conf.read_text())
    conf.write_text(text)
    subprocess.run(["scontrol", "reconfigure"], env=env, check=True, capture_output=True)


def _restart_cluster(folder: Path) -> None:
    """Start what is not running (a killed slurmd) with the script's own slurm.conf again."""
    port = next(line.split("=")[1] for line in (folder / "slurm.conf").read_text().splitlines()
                if line.startswith("SlurmctldPort="))
    subprocess.run(["bash", str(SCRIPT), "start", "--dir", str(folder), "--port", port],
                   check=True, capture_output=True, timeout=300)
    subprocess.run(["scontrol", "reconfigure"], check=True, capture_output=True,
                   env={**os.environ, "SLURM_CONF": str(folder / "slurm.conf")})


def test_a_node_lost_mid_sweep_is_named_and_resume_finishes_without_measuring_twice(cluster,
                                                                                   tmp_path):
    """fleet-a's slurmd and its job die while job 1 measures: the sweep names job 1, lost with
    its node, and ingests fleet-a's job before it and fleet-b's; once the node is back,
    --resume submits only job 1, which continues its own bundle."""
    env, features = cluster
    folder = Path(env["SLURM_CONF"]).parent
    _set_slurmd_timeout(env, 10)  # Slurm calls the node down in ~25 s, not ~3 min
    try:
        submitter = subprocess.Popen(
            run_argv(tmp_path, "run", "-m", "hydra/launcher=fleet", "machine=fleet-a,fleet-b",
                     "workload.params.num=1000,200000", *LONG_POINT),
            env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL)
        bundles = tmp_path / "fleet" / "bundles"
        half = _wait_for_measured(_until(lambda: list(bundles.glob("*/job-1")))[0], 1,
                                  submitter)
        _kill_node(folder, "fleet-a")
        out, err = submitter.communicate(timeout=300)
    finally:
        _restart_cluster(folder)
    kept = {row[0] for row in _bundle_query(half, "SELECT invocation_id FROM invocations")}
    lines = err.strip().splitlines()
    assert submitter.returncode == 2 and len(lines) == 1, out + err
    lost = r"job 1 \(machine=fleet-a workload\.params\.num=200000 [^)]*\)"
    assert re.search(f"1 of 4 fleet jobs lost with their nodes \\({lost}: its node went down "
                     f"while it ran \\(fleet-a down", lines[0]), lines[0]
    assert re.search(f"{lost} lost: its node went down while it ran \\(fleet-a down", out), out
    before = _invocations(tmp_path)
    assert sorted(job for job, *_ in _runs(tmp_path)) == [0, 2, 3]  # the others, ingested
    resume_from = re.search(r"'tidemark run --resume (\S+) ", lines[0]).group(1)
    resumed = tidemark(tmp_path, "run", "--resume", resume_from, env=env, timeout=600)
    assert resumed.stdout.count("submitted job ") == 1 and "submitted job 1 " in resumed.stdout
    after = _invocations(tmp_path)
    assert before <= after  # nothing measured before is lost or changed
    assert kept <= {row[0] for row in after}  # what the lost job measured is continued
    _each_point_measured_once(tmp_path)
    runs = _runs(tmp_path)
    assert sorted(job for job, *_ in runs) == [0, 1, 2, 3] and {s for *_, s, _ in runs} == {"ok"}
    (resumes,), = query(tmp_path, "SELECT json_array_length(resumes) FROM runs WHERE "
                                  "json_extract(sweep, '$.job')::INTEGER = 1")
    assert resumes == 1 and query(tmp_path, "SELECT count(*) FROM bundles")[0][0] == 4


def _until(find, timeout_s: float = 300):
    """find()'s first true answer (no timing is asserted: the bound only ends a hung test)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = find()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"{find} found nothing in {timeout_s} s")


def test_a_job_requeued_by_slurm_continues_its_bundle_into_one_run(cluster, tmp_path):
    """scontrol requeue mid-run: the first attempt ends interrupted and sealed, Slurm runs the
    script again under the same job id, and that attempt resumes the same run in the same
    bundle: one run of the point, every repetition once."""
    env, _ = cluster
    submitter = subprocess.Popen(
        run_argv(tmp_path, "run", "-m", "hydra/launcher=fleet", "machine=fleet-a",
                 "workload.params.num=200000", *LONG_POINT),
        env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL)
    for line in submitter.stdout:
        if line.startswith("submitted job 0 "):
            slurm_job = re.search(r"as Slurm job (\d+)", line).group(1)
            break
    bundles = tmp_path / "fleet" / "bundles"
    db = _wait_for_measured(_until(lambda: list(bundles.glob("*/job-0")))[0], 1, submitter)
    subprocess.run(["scontrol", "requeue", slurm_job], env=env, check=True, capture_output=True)
    # Slurm holds a requeued job back for two minutes (BeginTime); the test does not wait.
    _until(lambda: "PENDING" in subprocess.run(
        ["squeue", "-h", "-j", slurm_job, "-o", "%T"], env=env, capture_output=True,
        text=True).stdout.split())
    subprocess.run(["scontrol", "update", f"JobId={slurm_job}", "StartTime=now"], env=env,
                   check=True, capture_output=True)
    out, err = submitter.communicate(timeout=300)
    assert submitter.returncode == 0, out + err
    kept = {row[0] for row in _bundle_query(db, "SELECT invocation_id FROM invocations")}
    (run_id, status, resumes), = query(tmp_path, "SELECT run_id, status, resumes FROM runs")
    assert status == "ok" and len(json.loads(resumes)) == 1
    assert json.loads(resumes)[0]["previous_status"] == "interrupted"
    assert kept <= {row[0] for row in _invocations(tmp_path)}
    _each_point_measured_once(tmp_path)
    assert query(tmp_path, "SELECT count(*) FROM invocations WHERE phase = 'measured' AND "
                           "status = 'ok'")[0][0] == 6
    assert [p.name for p in db.parent.parent.iterdir()] == [run_id]  # one bundle, no second
    assert query(tmp_path, "SELECT count(*) FROM bundles")[0][0] == 1


FAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"


def test_a_node_whose_clock_is_hours_behind_is_measured_said_and_corrected(cluster, tmp_path):
    """fleet-b's jobs see a clock 5 h behind (libfaketime through the cluster's TaskProlog,
    this host's clock untouched). A run on fleet-a, then one on fleet-b: by the node's clock
    the second would be 5 h older and not `latest`; the ingest measures the skew, says it,
    stores it and orders the runs as they ran."""
    env, _ = cluster
    skewed = Path(env["SLURM_CONF"]).parent / "env-fleet-b"
    point = ["engine=leveldb", "workload=readrandom", "counters=false", "repetitions=1",
             "workload.params.num=1000", "hydra.launcher.poll_s=0.5"]
    started = time.time()
    tidemark(tmp_path, "run", "-m", "hydra/launcher=fleet", "machine=fleet-a", *point, env=env)
    skewed.write_text(f"LD_PRELOAD={FAKETIME}\nFAKETIME=-5h\n")
    try:
        second = tidemark(tmp_path, "run", "-m", "hydra/launcher=fleet", "machine=fleet-b",
                          *point, env=env)
    finally:
        skewed.unlink()
    ended = time.time()
    runs = query(tmp_path, "SELECT machine_state->>'$.scheduler.node', epoch(started_at), "
                           "epoch(finished_at), clock_skew_s, run_id FROM runs ORDER BY started_at")
    assert [node for node, *_ in runs] == ["fleet-a", "fleet-b"]  # in the order they ran
    (_, a_start, a_end, a_skew, _), (_, b_start, b_end, b_skew, b_run) = runs
    assert a_skew is None and abs(b_skew + 5 * 3600) < 120
    assert started <= a_start <= a_end <= b_start <= b_end <= ended  # by this host's clock
    assert b_start + b_skew < started  # the node's own time: 5 h before the sweep began
    said = [line for line in second.stdout.splitlines() if line.startswith("clock: ")]
    assert len(said) == 1 and said[0].startswith(f"clock: {b_run}'s node clock was 5.0 h behind")
    (invocation_start,), = query(tmp_path, "SELECT min(epoch(started_at)) FROM invocations "
                                           "WHERE run_id = ?", [b_run])
    assert b_start <= invocation_start <= b_end  # its invocations moved with it
