"""Shielded CPUs on this machine's real cgroup v1 cpusets, against load the TEST starts itself
(`shield: own`): applied and read back from the cpuset files and /proc/<pid>/status, undone
(tasks, affinities and IRQ masks as they were), and a killed owner's leftover removed by
`tidemark machine reset`. No process the project did not start is moved or signalled."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator.machine import irq, shield
from orchestrator.machine.cgroup import v1_cpuset_root
from orchestrator.machine.execute import read_cpus_allowed, run_process
from tests.e2e.fixtures import TIDEMARK

ROOT = v1_cpuset_root()
needs_cpusets = pytest.mark.skipif(
    ROOT is None or os.geteuid() != 0 or len(os.sched_getaffinity(0)) < 2 or
    not os.access(ROOT / "cgroup.procs", os.W_OK),
    reason="needs root, a writable cgroup v1 cpuset hierarchy and 2 CPUs")
# The machine holds one shield at a time, and every Tidemark command removes a dead one's.
pytestmark = [needs_cpusets, pytest.mark.machine_wide]
BENCH, REST = (1,), (0,)
BUSY = [sys.executable, "-c", "while 1: pass"]


def cpuset_of(pid: int) -> str:
    return Path(f"/proc/{pid}/cpuset").read_text().strip()


def shields_present() -> list[str]:
    return sorted(p.name for p in ROOT.glob(shield.PREFIX + "*"))


def stop(proc: subprocess.Popen) -> None:
    proc.kill()
    proc.wait()


def test_own_shield_moves_the_tests_load_off_the_benchmark_cpu_and_undoes_it(tmp_path):
    load = subprocess.Popen(BUSY)  # the test's own load, a child of this (orchestrating) process
    try:
        masks_before = irq.read_masks()
        mine_before = os.sched_getaffinity(0)
        load_cpus_before, load_cpuset_before = read_cpus_allowed(load.pid), cpuset_of(load.pid)
        applied = shield.apply_shield("own", BENCH, REST, state_dir=tmp_path / "state")
        try:
            assert applied.cpusets is not None, applied.report
            report, where = applied.report, applied.cpusets
            # Read back from the cpuset files and /proc/<pid>/status.
            assert (where.bench_dir / "cpuset.cpus").read_text().strip() == "1"
            assert (where.rest_dir / "cpuset.cpus").read_text().strip() == "0"
            assert cpuset_of(load.pid) == f"/{where.directory.name}/rest"
            assert read_cpus_allowed(load.pid) == REST
            assert os.sched_getaffinity(0) == {0}  # the orchestrator on orchestrator_cpus
            assert report["applied"] and report["tasks_moved"] >= 2  # this process and its load
            assert report["rest_tasks_on_bench_cpus"] == 0
            assert set(report["irqs_moved"]).isdisjoint(report["irqs_not_moved"])
            for n in report["irqs_moved"]:
                assert not irq.parse_mask((Path("/proc/irq") / n / "smp_affinity").read_text()) & 0b10
            # A stand-in engine joins the bench cpuset as the real one does (execute.run_process),
            # and while it runs the load stays off its CPU.
            engine = run_process(
                [sys.executable, "-c", "import time; time.sleep(0.3); print(open('/proc/self/cpuset').read())"],
                tmp_path / "out", tmp_path / "err", 30, cpus=BENCH,
                cgroup_procs=(where.bench_dir / "cgroup.procs",))
            assert engine.cpus_allowed == BENCH
            assert (tmp_path / "out").read_text().strip() == f"/{where.directory.name}/bench"
            conditions = shield.shield_conditions(where, engine.cgroups)
            assert conditions["engine_in_bench_cpuset"] and conditions["rest_tasks_on_bench_cpus"] == 0
            assert read_cpus_allowed(load.pid) == REST
        finally:
            problems = shield.undo_shield(applied)
        assert problems == []
        assert not (ROOT / where.directory.name).exists()
        assert not list((tmp_path / "state").glob("*.json"))
        assert cpuset_of(load.pid) == load_cpuset_before
        assert read_cpus_allowed(load.pid) == load_cpus_before
        assert os.sched_getaffinity(0) == mine_before
        assert irq.read_masks() == masks_before
    finally:
        stop(load)


def test_shield_refuses_what_cannot_shield():
    with pytest.raises(Exception, match="machine.shield='all'"):
        shield.check_shield_conf("all", BENCH, (0, 1))
    with pytest.raises(Exception, match="needs benchmark CPUs"):
        shield.check_shield_conf("own", (), (0, 1))
    with pytest.raises(Exception, match="leaves no CPU"):
        shield.check_shield_conf("own", (0, 1), (0, 1))


KILLED_OWNER = """
import subprocess, sys, time
from orchestrator.machine import shield
load = subprocess.Popen([sys.executable, "-c", "while 1: pass"])
applied = shield.apply_shield("own", (1,), (0,))
print(load.pid, applied.report.get("cpuset"), applied.report.get("reason", ""), flush=True)
time.sleep(600)
"""


def start_killed_owner() -> tuple[int, str, list[str]]:
    """A Tidemark-like owner that shields its own load, then is SIGKILLed (no finally runs)."""
    owner = subprocess.Popen([sys.executable, "-c", KILLED_OWNER], stdout=subprocess.PIPE, text=True)
    pid, cpuset, *reason = owner.stdout.readline().split(" ", 2)
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait()
    if not cpuset.startswith("/" + shield.PREFIX):  # e.g. another live shield holds the machine
        os.kill(int(pid), signal.SIGKILL)  # the load is ours: never leave it spinning
        raise AssertionError(f"no shield applied: {reason}")
    return int(pid), cpuset, shields_present()


def test_killed_runs_leftover_shield_is_removed_by_machine_reset():
    masks_before = irq.read_masks()
    load_pid, cpuset, present = start_killed_owner()
    try:
        assert cpuset[1:] in present
        assert cpuset_of(load_pid) == cpuset + "/rest" and read_cpus_allowed(load_pid) == REST
        proc = subprocess.run([TIDEMARK, "machine", "reset", "machine=ci-2core"],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert f"removed leftover shield {cpuset}" in proc.stdout
        assert cpuset[1:] not in shields_present()
        assert cpuset_of(load_pid) == "/" and read_cpus_allowed(load_pid) == (0, 1)
        assert irq.read_masks() == masks_before
    finally:
        os.kill(load_pid, signal.SIGKILL)
        time.sleep(0.05)
