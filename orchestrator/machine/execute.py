"""Run one engine process (side effects): pinned, timed out, resource usage and output kept."""
from __future__ import annotations

import ctypes
import errno
import os
import signal
import subprocess
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..record import ProcessResult
from ..signals import signals_held
from .cgroup import read_proc_cgroup

POLL_S = 0.01
# Free space below which an engine's output is taken as cut: a step writes a few KB of it.
OUTPUT_ROOM_BYTES = 64 << 10
_LIBC = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1
# The engines being waited on (each its own process group), for kill_running_engines.
_RUNNING: set[int] = set()
_RUNNING_LOCK = threading.Lock()


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
        # If Tidemark is killed outright (kill -9), the engine dies with it instead of running
        # on beside the next measurement. (A wrapper's own children are not covered.)
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        for procs in cgroup_procs:
            procs.write_text(str(os.getpid()))
        if cpus:
            os.sched_setaffinity(0, cpus)

    started_at = utc_now()
    start = time.monotonic()
    with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
        proc: subprocess.Popen[bytes] | None = None
        try:
            with signals_held():  # a stop waits until `proc` is set, so the except can kill it
                proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                        env={**os.environ, **(env or {})}, preexec_fn=pin,
                                        start_new_session=True)
                with _RUNNING_LOCK:
                    _RUNNING.add(proc.pid)
            allowed = read_cpus_allowed(proc.pid)
            cgroups = tuple(read_proc_cgroup(proc.pid))
            status, usage, timed_out = _wait(proc.pid, start, timeout_s)
        except BaseException:
            # Ctrl-C, SIGTERM or a crash of Tidemark: the engine (its whole process group) must
            # not run on, competing with the next measurement, writing into a sealed bundle's
            # logs, or outliving its data directory.
            if proc is not None:
                _kill_group(proc.pid, reap=True)
            raise
        finally:
            if proc is not None:
                with _RUNNING_LOCK:
                    _RUNNING.discard(proc.pid)
    wall = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4; keep Popen consistent
    check_output_room(stdout_path)
    return ProcessResult(
        argv=tuple(argv), exit_code=None if timed_out else proc.returncode, timed_out=timed_out,
        wall_s=wall, user_s=usage.ru_utime, sys_s=usage.ru_stime, max_rss_kb=usage.ru_maxrss,
        stdout=stdout_path.read_text(errors="replace"), stderr=stderr_path.read_text(errors="replace"),
        started_at=started_at, ended_at=utc_now(), cpus_allowed=allowed, cgroups=cgroups,
        involuntary_switches=usage.ru_nivcsw)


def kill_running_engines() -> None:
    """SIGKILL every engine `run_process` is waiting on; each waiting thread then reaps its
    own. A stop is raised in the main thread only: the engines a group runs at once, waited on
    by worker threads (runners/loop.py), would run on to their end."""
    with _RUNNING_LOCK:
        for pid in _RUNNING:
            _kill_group(pid)


def check_output_room(path: Path) -> None:
    """Raise ENOSPC (naming `path`) when the disk the output went to is full: an engine does
    not check its writes (db_bench's printf), so its output would be cut without a word and
    read as a parse error, one per step left, instead of stopping the run."""
    disk = os.statvfs(path.parent)
    free = disk.f_bfree if os.geteuid() == 0 else disk.f_bavail  # root writes the reserve too
    if free * disk.f_frsize < OUTPUT_ROOM_BYTES:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))


def _wait(pid: int, start: float, timeout_s: float) -> tuple[int, Any, bool]:
    """(wait status, rusage, timed out) of the child, killed with its group after timeout_s."""
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return status, usage, False
        if time.monotonic() - start > timeout_s:
            _kill_group(pid)  # the whole group: db_bench has no children, but a wrapper may
            _, status, usage = os.wait4(pid, 0)
            return status, usage, True
        time.sleep(POLL_S)


def _kill_group(pid: int, reap: bool = False) -> None:
    """SIGKILL the child's process group; with `reap`, wait until the child is gone."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if reap:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
