"""Exclusive file locks between Tidemark processes (side effects: flock on a lock file).

Two runs that need the same uncached build would otherwise compile into one folder at once and
destroy each other's work. The lock is the kernel's (flock), so a process that dies, even by
kill -9, releases it; the file holds the holder's pid only to say who is waited for.
"""
from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator


@contextmanager
def held(path: Path, what: str, say: Callable[[str], None]) -> Iterator[None]:
    """Hold the lock at `path` for the block; when another process holds it, say once that
    this one waits for `what`, then wait."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            pid = handle.read().strip()  # empty in the instant before the holder writes it
            say(f"waiting for {what} (held by {f'pid {pid}' if pid else 'another process'})")
            fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
