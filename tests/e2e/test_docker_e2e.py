"""runner=docker on the real LevelDB in real containers (dockerd started by make setup): the
limits read back inside and recorded with the image, an OOM kill and a timeout as failed
records with their reasons, no container left behind (Ctrl-C/SIGTERM and kill -9 included),
one line when no daemon answers, the image cached by build key, and `tidemark ab` across
runners naming the difference. Tiny data: each run takes a few seconds."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from orchestrator.build.container_image import EXEC_SOURCE, ensure_image, image_tag, recipe_content
from orchestrator.machine.docker_client import LABEL, connect_docker
from tests.e2e.fixtures import TIDEMARK, query, tidemark

pytestmark = pytest.mark.engine

SMALL = ("engine=leveldb", "runner=docker", "workload.params.num=2000")


def containers_of(run_id: str) -> list:
    client = connect_docker()
    try:
        return client.containers.list(all=True, filters={"label": f"{LABEL}={run_id}"})
    finally:
        client.close()


def only_run(tmp: Path) -> str:
    (run_id,), = query(tmp, "SELECT run_id FROM runs")
    return run_id


def test_limits_read_back_recorded_with_the_image_and_nothing_left(tmp_path):
    proc = tidemark(tmp_path, "run", *SMALL, "workload=readrandom", "repetitions=2",
                    "machine=ci-2core", "runner.memory_mb=256", "callgrind=true",
                    "callgrind_ops=500", "callgrind_repetitions=1")
    run_id = only_run(tmp_path)
    (runner, state), = query(tmp_path, "SELECT runner, machine_state FROM runs")
    image = json.loads(state)["container"]["images"]["db_bench"]
    assert runner == "docker" and image["base"] == "scratch"
    rows = query(tmp_path, "SELECT phase, status, conditions FROM invocations ORDER BY seq")
    assert [r[0] for r in rows] == ["setup", "warmup", "measured", "measured", "callgrind"]
    for phase, status, conditions in rows:
        cond = json.loads(conditions)
        got = cond["container"]
        assert status == "ok", (phase, cond)
        assert cond["runner"] == "docker" and cond["cpus_allowed"] == [1]  # ci-2core: CPU 1
        assert got["cpus_allowed_list"] == "1" and got["cpuset_cpus"] == "1"
        assert got["memory_limit_bytes"] == 256 << 20 == got["memory_limit_requested"]
        assert got["image_id"] == image["id"] and got["page_cache"].startswith("host")
    assert json.loads(rows[2][2])["residency_pct"] >= 95  # warm, measured on the host's files
    (ir,), = query(tmp_path, "SELECT m.value FROM metrics m JOIN invocations i USING "
                   "(invocation_id) WHERE i.phase = 'callgrind' AND m.name = 'instructions'")
    assert ir > 1e6  # valgrind ran inside the image
    (provenance,), = query(tmp_path, "SELECT provenance FROM builds")
    assert json.loads(provenance)["images"]["db_bench"]["id"] == image["id"]
    assert containers_of(run_id) == []
    # The same build key again: the image is found, not rebuilt.
    again = tidemark(tmp_path, "run", *SMALL, "workload=fillseq", "repetitions=1")
    assert f"image {image['tag']}: cached, not rebuilt" in again.stdout
    assert f"image {image['tag']}: " in proc.stdout
    # The site names the runner and image on the run page, the limits on each invocation.
    tidemark(tmp_path, "site", "--db", str(tmp_path / "tidemark.duckdb"), "--out",
             str(tmp_path / "build"))
    page = (tmp_path / "build" / "docs" / "runs" / f"{run_id}.md").read_text()
    assert f"| Runner | docker: image {image['tag']} ({image['id'][7:19]}, FROM scratch); " \
           f"memory limit 256 MiB |" in page
    html = (tmp_path / "build" / "site" / "runs" / f"{run_id}.html").read_text()
    assert "CPUs 1 and memory limit 256 MiB read back inside" in html


def test_an_image_is_built_once_per_build_key(tmp_path):
    (binary,), = query_build_binary(tmp_path)
    key = f"test{os.getpid()}"  # a key of its own: its image cannot exist yet
    tag = image_tag("leveldb", "db_bench", key, recipe_content(Path(binary), "scratch"))
    client = connect_docker()
    try:
        first, second = (ensure_image(client, "leveldb", "db_bench", key, Path(binary), "scratch",
                                      tmp_path, print) for _ in range(2))
        assert first.built_s is not None and second.built_s is None  # found by its tag
        assert (first.tag, first.image_id) == (second.tag, second.image_id) == (tag, first.image_id)
    finally:
        if client.images.list(name=tag):
            client.images.remove(tag, force=True)
        client.close()


def query_build_binary(tmp_path: Path) -> list[tuple]:
    """The cached LevelDB build's binary (built, or taken from the cache, by a tiny host run)."""
    tidemark(tmp_path, "run", "engine=leveldb", "workload=fillseq", "repetitions=1",
             "workload.params.num=1000")
    return query(tmp_path, "SELECT json_extract_string(provenance, '$.binary_path') FROM builds")


def test_an_oom_kill_is_a_failed_record_with_the_reason_and_the_log_tail(tmp_path):
    proc = tidemark(tmp_path, "run", *SMALL, "workload=fillrandom", "repetitions=1",
                    "runner.memory_mb=32", "workload.params.num=3000",
                    "workload.params.value_size=100000",
                    "+workload.params.extra.write_buffer_size=1000000000", check=False)
    assert proc.returncode == 5, proc.stderr  # every invocation failed
    (status, error, conditions), = query(tmp_path, "SELECT status, error, conditions FROM invocations")
    got = json.loads(conditions)["container"]
    assert status == "failed" and "memory limit of 32 MiB (OOM)" in error
    assert got["oom_killed"] is True and got["log_tail"]
    assert containers_of(only_run(tmp_path)) == []


def test_a_hang_past_the_timeout_is_a_timeout_record(tmp_path):
    proc = tidemark(tmp_path, "run", *SMALL, "workload=fillrandom", "repetitions=1",
                    "timeout_s=1", "workload.params.num=50000000", check=False)
    assert proc.returncode == 5, proc.stderr
    (status, error, wall), = query(tmp_path, "SELECT status, error, wall_s FROM invocations")
    assert status == "timeout" and error.startswith("killed after 1 s (timeout_s=1)")
    assert wall < 10
    assert containers_of(only_run(tmp_path)) == []


def _start_long_run(tmp_path: Path) -> tuple[subprocess.Popen, str]:
    """A docker run that would write for a minute, once its container is up: (process, run id)."""
    argv = [TIDEMARK, "run", *SMALL, "workload=fillrandom", "repetitions=1", "timeout_s=120",
            "workload.params.num=50000000", f"db={tmp_path / 'tidemark.duckdb'}",
            f"results_dir={tmp_path}", f"data_dir={tmp_path / 'data'}"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        logs = list((tmp_path / "logs").glob("*/0001-*.stdout"))  # the helper started the engine
        if logs:
            run_id = logs[0].parent.name
            if containers_of(run_id):
                return proc, run_id
        time.sleep(0.2)
    proc.kill()
    raise AssertionError(f"no container started: {proc.communicate()}")


def test_sigterm_removes_the_running_container(tmp_path):
    proc, run_id = _start_long_run(tmp_path)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "stopped by SIGTERM" in stderr
    assert containers_of(run_id) == []
    assert query(tmp_path, "SELECT status FROM runs") == [("interrupted",)]


# What removes the container of a run killed outright: `tidemark machine reset`, or the next
# run, also a host run (which would otherwise measure while the container still runs).
CLEANERS = {"machine reset": ["machine", "reset"],
            "next host run": ["run", "engine=leveldb", "workload=fillseq", "repetitions=1",
                              "workload.params.num=1000"]}


@pytest.mark.machine_wide  # any other test's run would remove the container first
@pytest.mark.parametrize("cleaner", sorted(CLEANERS))
def test_kill_9_leaves_a_labelled_container_that_the_next_command_removes(tmp_path, cleaner):
    proc, run_id = _start_long_run(tmp_path)
    os.killpg(proc.pid, signal.SIGKILL)  # Tidemark cannot clean up: the container runs on
    proc.communicate(timeout=60)
    assert containers_of(run_id), "the container should have outlived its run"
    after = tidemark(tmp_path / "after", *CLEANERS[cleaner], timeout=600)
    assert f"removed leftover container" in after.stdout and f"run {run_id}" in after.stdout
    assert containers_of(run_id) == []


def test_no_daemon_is_one_line_and_the_host_runner_is_unaffected(tmp_path):
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path / 'no-daemon.sock'}"}
    argv = [TIDEMARK, "run", *SMALL, "workload=fillseq", f"results_dir={tmp_path}",
            f"db={tmp_path / 'tidemark.duckdb'}"]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"tidemark: error: runner=docker: no Docker daemon answers at unix://{tmp_path}/"
        f"no-daemon.sock (No such file or directory); start one with 'make setup' "
        f"(scripts/setup-system.sh starts dockerd), or use runner=host"]
    assert "Traceback" not in proc.stdout + proc.stderr
    assert not (tmp_path / "tidemark.duckdb").exists()  # refused before anything was stored
    host = subprocess.run([*argv[:2], "engine=leveldb", "workload=fillseq", "repetitions=1",
                           "workload.params.num=1000", *argv[-2:]], capture_output=True,
                          text=True, env=env, timeout=600, stdin=subprocess.DEVNULL)
    assert host.returncode == 0, host.stderr


def test_ab_across_runners_names_the_runner(tmp_path):
    # The folders have a ':' in their path, which docker's volume syntax splits on: both
    # sides measure all the same (the container's bind mounts are given field by field).
    where = tmp_path / "with:colon"
    proc = tidemark(where, "ab", "--a", "runner=host", "--b", "runner=docker", "--",
                    "engine=leveldb", "workload=readrandom", "repetitions=2",
                    "workload.params.num=2000", f"db={where / 'tidemark.duckdb'}",
                    f"results_dir={where}", f"data_dir={where / 'data'}")
    assert "differs (named, compared anyway): runner: host vs docker" in proc.stdout
    assert sorted(query(where, "SELECT runner FROM runs")) == [("docker",), ("host",)]
    assert query(where, "SELECT DISTINCT status FROM invocations") == [("ok",)]


def test_the_exec_helper_kills_at_timeout_s_not_the_next_whole_second(tmp_path):
    """The container's PID 1 enforces timeout_s as the host runner does: timeout_s=0.3 stops a
    0.6 s process (it used to round the limit up to a whole second and let it finish)."""
    helper = tmp_path / "tidemark-exec"
    subprocess.run(["cc", "-O2", "-o", str(helper), str(EXEC_SOURCE)], check=True)
    report = tmp_path / "report.json"
    subprocess.run([str(helper), str(report), str(tmp_path / "out"), str(tmp_path / "err"),
                    "0.3", "--", "sleep", "0.6"], timeout=30)
    got = json.loads(report.read_text())
    assert got["timed_out"] is True and got["exit_code"] == -signal.SIGKILL, got


@pytest.fixture
def own_daemon():
    """A Docker daemon of this test's own (its own root, sockets, no network), so stopping it
    disturbs no one else's containers; DOCKER_HOST for it, and its process."""
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="tm-dockerd-", dir="/tmp"))  # socket paths stay short
    sock = f"unix://{root}/docker.sock"
    daemon = subprocess.Popen(
        ["dockerd", "--data-root", str(root / "data"), "--exec-root", str(root / "exec"),
         "-H", sock, "--pidfile", str(root / "docker.pid"), "--bridge", "none",
         "--iptables=false", "--ip-masq=false"],
        stdout=(root / "log").open("w"), stderr=subprocess.STDOUT, start_new_session=True)
    env = {**os.environ, "DOCKER_HOST": sock}
    try:
        deadline = time.monotonic() + 60
        while subprocess.run(["docker", "version"], env=env, capture_output=True).returncode:
            assert daemon.poll() is None and time.monotonic() < deadline, (root / "log").read_text()
            time.sleep(0.2)
        yield env, daemon
    finally:
        if daemon.poll() is None:
            daemon.terminate()
            daemon.wait(timeout=60)
        subprocess.run(["umount", "-R", str(root)], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def test_the_daemon_stopped_mid_run_ends_the_run_in_one_line_keeping_what_was_measured(
        tmp_path, own_daemon):
    env, daemon = own_daemon
    argv = [TIDEMARK, "run", *SMALL, "workload=fillrandom", "repetitions=3", "timeout_s=120",
            "workload.params.num=500000", f"db={tmp_path / 'tidemark.duckdb'}",
            f"results_dir={tmp_path}", f"data_dir={tmp_path / 'data'}"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, start_new_session=True, env=env)
    deadline = time.monotonic() + 300
    while not list((tmp_path / "logs").glob("*/0002-*.stdout")):  # the 2nd container runs
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.1)
    daemon.terminate()  # dockerd stops: its containers are stopped with it
    daemon.wait(timeout=60)
    _, stderr = proc.communicate(timeout=120)
    lines = stderr.strip().splitlines()
    assert proc.returncode == 130 and len(lines) == 1, stderr
    assert f"the Docker daemon at {env['DOCKER_HOST']} stopped answering" in lines[0]
    assert "make setup" in lines[0] and "marked interrupted" in lines[0]
    assert query(tmp_path, "SELECT status FROM runs") == [("interrupted",)]
    assert query(tmp_path, "SELECT seq, status FROM invocations") == [(1, "ok")]
