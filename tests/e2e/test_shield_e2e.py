"""The shield and the interference measurement through the real `tidemark run` on LevelDB (tiny
data), with load the test starts itself. Nothing here is a timing verdict: the assertions are
about where tasks were allowed to run, what was recorded, and that a CPU hog sharing the
engine's CPU for the whole invocation shows up as other-task time (> 0)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator.machine import shield
from orchestrator.machine.execute import read_cpus_allowed
from tests.e2e.fixtures import TIDEMARK, query, tidemark
from tests.orchestrator.machine.test_shield import cpuset_of, needs_cpusets, shields_present, start_killed_owner

pytestmark = [pytest.mark.engine, needs_cpusets, pytest.mark.machine_wide]
TINY = ("engine=leveldb", "workload=readrandom", "machine=ci-2core", "repetitions=2")


def run_args(tmp: Path, *args: str) -> list[str]:
    return [TIDEMARK, "run", *args, f"db={tmp / 'tidemark.duckdb'}", f"results_dir={tmp}",
            f"data_dir={tmp / 'data'}"]


def measured_conditions(tmp: Path) -> list[dict]:
    rows = query(tmp, "SELECT conditions FROM invocations WHERE phase = 'measured' ORDER BY seq")
    return [json.loads(r[0]) for r in rows]


def test_shield_own_moves_the_tests_load_off_the_engines_cpu_during_the_run(tmp_path):
    # The shell starts the load, then becomes `tidemark run` (exec): the load is Tidemark's child.
    # The load must not hold the run's output pipes, or reading them never ends.
    script = (f'{sys.executable} -c "while 1: pass" </dev/null >/dev/null 2>&1 & '
              f'echo $! > {tmp_path}/load.pid; exec "$@"')
    run = subprocess.Popen(["sh", "-c", script, "sh",
                            *run_args(tmp_path, *TINY, "workload.params.num=100000",
                                      "machine.shield=own")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid_file = tmp_path / "load.pid"
    while not pid_file.exists() or not pid_file.read_text().strip():
        time.sleep(0.01)
    load = int(pid_file.read_text())
    seen = set()
    try:
        while run.poll() is None:  # watch the load while the run lasts
            where = cpuset_of(load)
            if "tidemark-shield-" in where:
                seen.add((where, read_cpus_allowed(load)))
            time.sleep(0.02)
        out, err = run.communicate()
        assert run.returncode == 0, out[-2000:] + err[-2000:]
        assert seen and all(w.endswith("/rest") and cpus == (0,) for w, cpus in seen), seen
        # Undone: back in the root cpuset on both CPUs, no shield left behind.
        assert cpuset_of(load) == "/" and read_cpus_allowed(load) == (0, 1)
        assert not [s for s in shields_present() if s.startswith(f"{shield.PREFIX}{run.pid}-")]
    finally:
        os.kill(load, signal.SIGKILL)
    assert "shield own: CPUs 1 for the engine" in out
    state = json.loads(query(tmp_path, "SELECT machine_state FROM runs")[0][0])
    assert state["shield"]["applied"] and state["shield"]["tasks_moved"] >= 2  # Tidemark + load
    assert state["shield"]["bench_cpus"] == "1" and state["shield"]["rest_cpus"] == "0"
    assert set(state["check"]) >= {"CPU governor", "Isolated CPUs", "Other load"}
    for cond in measured_conditions(tmp_path):
        assert cond["cpus_allowed"] == [1]  # the engine's /proc/<pid>/status
        assert cond["shield"] == {"mode": "own", "engine_in_bench_cpuset": True, "bench_cpus": "1",
                                  "rest_cpus": "0", "rest_tasks_on_bench_cpus": 0}
        assert any(line.endswith("/bench") for line in cond["cgroups"])


def test_next_run_removes_a_killed_runs_leftover_shield(tmp_path):
    load_pid, cpuset, present = start_killed_owner()
    try:
        assert cpuset[1:] in present
        tidemark(tmp_path, "run", *TINY, "workload.params.num=2000", "repetitions=1",
                 "machine.shield=own")
        state = json.loads(query(tmp_path, "SELECT machine_state FROM runs")[0][0])
        assert cpuset in state["shield"]["leftovers_removed"]
        assert cpuset[1:] not in shields_present()
        assert cpuset_of(load_pid) == "/"
    finally:
        os.kill(load_pid, signal.SIGKILL)


def test_shield_not_applied_is_said_once_and_recorded(tmp_path):
    # Another live holder of the machine's shield lock: this run cannot shield.
    import fcntl
    shield.STATE_DIR.mkdir(parents=True, exist_ok=True)
    with open(shield.STATE_DIR / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        proc = tidemark(tmp_path, "run", *TINY, "workload.params.num=2000", "machine.shield=own")
    assert proc.stdout.count("NOT applied") == 1
    notes, state = query(tmp_path, "SELECT notes, machine_state FROM runs")[0]
    assert any("shield own not applied: another Tidemark run" in n for n in json.loads(notes))
    assert json.loads(state)["shield"]["applied"] is False
    assert all(c["shield"] == {"mode": "own", "applied": False} for c in measured_conditions(tmp_path))


def test_interference_recorded_on_a_real_leveldb_invocation(tmp_path):
    tidemark(tmp_path, "run", *TINY, "workload.params.num=5000")
    rows = query(tmp_path, "SELECT wall_s, user_s + sys_s, conditions FROM invocations ORDER BY seq")
    assert rows
    for wall_s, cpu_s, conditions in rows:
        got = json.loads(conditions)["interference"]
        assert got["cpus"] == [1]
        for key in ("busy_cpu_s", "engine_cpu_s", "other_cpu_s", "other_pct", "steal_s",
                    "steal_pct", "involuntary_switches", "load1_before", "load1_after"):
            assert got[key] >= 0, key
        assert got["engine_cpu_s"] == pytest.approx(cpu_s, abs=1e-3)  # wait4's rusage
        assert got["engine_cpu_s"] <= wall_s * len(got["cpus"]) + 0.01  # pinned to one CPU
        assert got["interval_s"] >= wall_s - 0.01  # the samples bracket the process


def test_a_hog_the_test_pins_onto_the_benchmark_cpu_shows_up_as_other_task_time(tmp_path):
    """The hog shares CPU 1 with the engine for every whole invocation, so other-task time is
    > 0 on each; with a bound of 0 % the rerun policy must then reject every first attempt and
    keep (flagged) the second, and the run, its verdict inputs and the site must not count the
    rejected attempts as failures."""
    hog = subprocess.Popen([sys.executable, "-c", "while 1: pass"],
                           preexec_fn=lambda: os.sched_setaffinity(0, {1}))
    try:
        tidemark(tmp_path, "run", *TINY, "workload.params.num=100000",
                 "machine.interference_max_pct=0", "machine.interference_policy=rerun",
                 "machine.interference_reruns=1")
    finally:
        hog.kill()
        hog.wait()
    rows = query(tmp_path, "SELECT status, conditions FROM invocations WHERE phase = 'measured' ORDER BY seq")
    got = [(status, json.loads(c)["interference"]) for status, c in rows]
    for _, measured in got:
        assert measured["other_cpu_s"] > 0 and measured["other_pct"] > 0, measured
    assert [(s, m["attempt"], m["kept"]) for s, m in got] == \
        [("condition_not_met", 1, False), ("ok", 2, True)] * 2
    assert all(m["flagged"] for s, m in got if s == "ok")
    assert query(tmp_path, "SELECT status FROM runs")[0][0] == "ok"
    from orchestrator.store import connect
    from orchestrator.store.reads import load_samples, resolve_run
    con = connect(tmp_path / "tidemark.duckdb", read_only=True)
    try:
        (samples,) = load_samples(con, resolve_run(con, "latest"), ["ops_per_sec"])
    finally:
        con.close()
    assert samples.failed == 0 and len(samples.values["ops_per_sec"]) == 2
    subprocess.run([TIDEMARK, "site", "--db", str(tmp_path / "tidemark.duckdb"),
                    "--out", str(tmp_path / "build")], check=True, capture_output=True, timeout=600)
    site = tmp_path / "build" / "site"
    run_page = "".join(p.read_text() for p in (site / "runs").rglob("*.html"))
    assert "Interference %" in run_page and "attempt 1, rejected" in run_page
    workload_page = "".join(p.read_text() for p in (site / "workloads").rglob("readrandom*.html"))
    assert "Interference %" in workload_page and "⚠ 2 flagged" in workload_page
