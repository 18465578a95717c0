"""Fleet sweeps on a real local Slurm cluster (scripts/slurm-local.sh: munge, slurmctld and two
slurmd on this host, nodes fleet-a and fleet-b serving the profiles of the same names), with
the real LevelDB: every job runs on a node of its profile, jobs on one node never overlap,
every job is in the history exactly once, and a submitter killed mid-sweep loses nothing."""
from __future__ import annotations

import os
import random
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

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
