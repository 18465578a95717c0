"""Is the process that started a run still running it? (side effects: reads /proc)

A run records its orchestrator's host, pid and the pid's start time (clock ticks since boot,
so a pid reused by another process later is not mistaken for it). A run still `running` whose
process is gone on this host was killed (kill -9, a crash of the machine's session): the next
command that writes the DB marks it so, and the gate never takes it for a finished run.
"""
from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any


def _start_ticks(pid: int) -> int | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[19])  # field 22 of stat; fields[0] is field 3


def this_process() -> dict[str, Any]:
    """What identifies the running orchestrator process."""
    return {"host": socket.gethostname(), "pid": os.getpid(), "start_ticks": _start_ticks(os.getpid())}


def is_gone(process: dict[str, Any] | None) -> bool:
    """True when `process` ran on this host and no longer exists; unknown otherwise (False)."""
    if not process or process.get("host") != socket.gethostname() or not process.get("pid"):
        return False
    ticks = _start_ticks(int(process["pid"]))
    return ticks is None or (process.get("start_ticks") is not None and ticks != process["start_ticks"])
