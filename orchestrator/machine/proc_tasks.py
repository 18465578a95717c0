"""Tasks as /proc shows them: parent, start time, cpuset, kernel threads, the descendants of a
process (reads), and restoring a task's affinity. The shield decides whom to move from these.

The stat line is parsed after the last ')' since a command name may hold spaces and parentheses.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
PF_KTHREAD = 0x00200000  # include/linux/sched.h: the task is a kernel thread


@dataclass(frozen=True)
class TaskStat:
    pid: int
    ppid: int
    starttime: int  # clock ticks since boot: with the pid, names one task even after pid reuse
    kernel_thread: bool


def parse_stat(text: str) -> TaskStat | None:
    """/proc/<pid>/stat → its parent, start time and kernel-thread flag (pure)."""
    head, _, tail = text.rpartition(")")
    fields = tail.split()
    if not head or len(fields) < 20:
        return None
    pid = int(head.split(" (", 1)[0])
    # tail fields: [0]=state [1]=ppid ... [6]=flags ... [19]=starttime (stat fields 3.., 1-based 22)
    return TaskStat(pid=pid, ppid=int(fields[1]), starttime=int(fields[19]),
                    kernel_thread=bool(int(fields[6]) & PF_KTHREAD))


def read_stat(pid: int, proc: Path = PROC) -> TaskStat | None:
    try:
        return parse_stat((proc / str(pid) / "stat").read_text())
    except (OSError, ValueError):
        return None


def all_tasks(proc: Path = PROC) -> list[TaskStat]:
    """Every process (thread-group leader) alive now."""
    tasks = []
    for entry in proc.iterdir():
        if entry.name.isdigit():
            stat = read_stat(int(entry.name), proc)
            if stat:
                tasks.append(stat)
    return tasks


def descendants(root_pid: int, tasks: list[TaskStat]) -> list[TaskStat]:
    """The tasks below root_pid in the process tree (pure), parents before children."""
    children: dict[int, list[TaskStat]] = {}
    for task in tasks:
        children.setdefault(task.ppid, []).append(task)
    found, frontier = [], [root_pid]
    while frontier:
        for child in children.get(frontier.pop(), []):
            found.append(child)
            frontier.append(child.pid)
    return found


def is_alive(pid: int, starttime: int, proc: Path = PROC) -> bool:
    """True while the task that had this pid and start time exists (not a reused pid)."""
    stat = read_stat(pid, proc)
    return stat is not None and stat.starttime == starttime


def cpuset_of(pid: int, proc: Path = PROC) -> str | None:
    """The task's v1 cpuset path ('/' = the root), or None when it has exited."""
    try:
        return (proc / str(pid) / "cpuset").read_text().strip()
    except OSError:
        return None


def set_affinity(pid: int, cpus: tuple[int, ...]) -> bool:
    """Restore a task's own affinity; False when it exited or the CPUs are no longer allowed."""
    try:
        os.sched_setaffinity(pid, cpus)
        return True
    except OSError:
        return False
