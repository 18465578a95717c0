"""Run one engine process (side effects): pinned, timed out, resource usage and output kept."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path

from .cgroup import read_proc_cgroup
from .record import ProcessResult

POLL_S = 0.01


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """'0-2,5' → (0, 1, 2, 5), the kernel's list format (pure)."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        cpus.extend(range(int(lo), int(hi or lo) + 1))
    return tuple(cpus)


def read_cpus_allowed(pid: int) -> tuple[int, ...]:
    """The affinity the kernel actually applied, read back from /proc/<pid>/status."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Cpus_allowed_list:"):
                return parse_cpu_list(line.split(":", 1)[1])
    except OSError:
        pass  # the process already exited: the affinity is then unknown, recorded as ()
    return ()


def run_process(argv: list[str], stdout_path: Path, stderr_path: Path, timeout_s: float,
                env: dict[str, str] | None = None, cpus: tuple[int, ...] = (),
                cgroup_procs: tuple[Path, ...] = ()) -> ProcessResult:
    """Run argv to completion or timeout; output goes to files so nothing is lost on a crash.

    The child pins itself and joins the cgroup before exec, so no engine instruction runs
    outside the declared conditions.
    """
    def pin() -> None:
        for procs in cgroup_procs:
            procs.write_text(str(os.getpid()))
        if cpus:
            os.sched_setaffinity(0, cpus)

    started_at = utc_now()
    start = time.monotonic()
    with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                env={**os.environ, **(env or {})}, preexec_fn=pin,
                                start_new_session=True)
        allowed = read_cpus_allowed(proc.pid)
        cgroups = tuple(read_proc_cgroup(proc.pid))
        timed_out = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - start > timeout_s:
                timed_out = True
                os.killpg(proc.pid, signal.SIGKILL)  # the whole group: db_bench has no children, but a wrapper may
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(POLL_S)
    wall = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4; keep Popen consistent
    return ProcessResult(
        argv=tuple(argv), exit_code=None if timed_out else proc.returncode, timed_out=timed_out,
        wall_s=wall, user_s=usage.ru_utime, sys_s=usage.ru_stime, max_rss_kb=usage.ru_maxrss,
        stdout=stdout_path.read_text(errors="replace"), stderr=stderr_path.read_text(errors="replace"),
        started_at=started_at, ended_at=utc_now(), cpus_allowed=allowed, cgroups=cgroups,
        involuntary_switches=usage.ru_nivcsw)
