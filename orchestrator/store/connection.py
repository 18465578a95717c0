"""Opening the results database (side effects): short-lived connections, waiting on the lock,
damage detected and never written into, snapshots, checks and backups.

DuckDB lets one process hold a file for writing and locks every other process out while it is
open, readers included. So nothing holds the file for long: the writer opens it for each commit
(one invocation) and closes it, readers retry briefly on the lock, and `tidemark site` reads a
snapshot copied under a read lock. A checksum or I/O error means the file is damaged: every
command stops with one line naming the file and how to recover, and a run checks the whole
file before it writes anything.
"""
from __future__ import annotations

import shutil
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Collection

import duckdb

from ..errors import DiskFull, StoreError

READ_WAIT_S = 30.0  # a writer holds the lock for one commit: milliseconds
WRITE_WAIT_S = 600.0  # a reader (a site build, an analyst's session) may take a while
BACKUPS_KEPT = 3
# The files this process opened, newest last: a damage error raised later, while a query reads
# a bad block, is reported by the CLI naming the file (DuckDB's message does not).
OPENED: list[Path] = []
# The files this process said it waits for: a writer opens the file once per commit, and two
# writers taking turns (two ingests of one history) would otherwise say it at every commit.
WAITED: set[Path] = set()


def _is_lock(exc: Exception) -> bool:
    return "lock" in str(exc).lower()


def is_damage(exc: Exception) -> bool:
    text = str(exc).lower()
    return "corrupt" in text or "checksum" in text


def damage_error(path: Path, exc: Exception) -> StoreError:
    first = str(exc).splitlines()[0]
    return StoreError(f"results database {path} is damaged ({first}); nothing was written to it. "
                      f"Restore the newest backup with 'tidemark db restore --db {path}' (see "
                      f"'tidemark db backups'), or move the file aside and re-run")


def _lock_holder(message: str) -> str:
    marker = "PID "
    if marker in message:
        return "pid " + message.split(marker, 1)[1].split()[0].rstrip(").")
    return "see 'lsof'"


def _open(path: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    try:
        return duckdb.connect(str(path), read_only=read_only)
    except duckdb.IOException:
        raise
    except duckdb.Error as exc:
        if is_damage(exc):
            raise damage_error(path, exc) from None
        raise StoreError(f"results database {path} is not a readable DuckDB file "
                         f"({str(exc).splitlines()[0]}); move it aside and re-run") from None


def connect(path: Path, read_only: bool = False, wait_s: float | None = None,
            say: Callable[[str], None] | None = None) -> duckdb.DuckDBPyConnection:
    """Open the DB, waiting up to `wait_s` for another process's lock (said once), and turning
    DuckDB's lock, damage and path errors into one actionable line."""
    if read_only and not path.exists():
        raise StoreError(f"no results database at {path}; run 'tidemark run' first or pass --db")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create the folder of results database {path}: {exc.strerror}; "
                         f"pass db=PATH (or --db) in a writable folder") from None
    wait_s = (READ_WAIT_S if read_only else WRITE_WAIT_S) if wait_s is None else wait_s
    deadline, delay = time.monotonic() + wait_s, 0.02
    while True:
        try:
            con = _open(path, read_only)
            OPENED.append(path)
            return con
        except duckdb.IOException as exc:
            text = str(exc)
            if is_damage(exc):
                raise damage_error(path, exc) from None
            DiskFull.raise_if(exc, path)  # a new database, or its WAL replayed, on a full disk
            if not _is_lock(exc):
                raise StoreError(f"cannot open results database {path}: {text.splitlines()[0]}; "
                                 f"check the path and its permissions") from None
            if time.monotonic() >= deadline:
                raise StoreError(f"results database {path} is locked by another process "
                                 f"({_lock_holder(text)}) for over {wait_s:g} s; wait for it to "
                                 f"finish or use another db=PATH (--db)") from None
            if path not in WAITED:
                (say or _say)(f"waiting for results database {path}, locked by "
                                 f"{_lock_holder(text)}")
                WAITED.add(path)
            time.sleep(delay)
            delay = min(delay * 2, 0.5)


def _say(message: str) -> None:
    # Progress, not an error: stdout, so the one error line stays alone on stderr.
    print(message, flush=True)


def check_database(con: duckdb.DuckDBPyConnection, path: Path,
                   read_elsewhere: Collection[str] = ()) -> int:
    """Read every column of every table, so each block's checksum is verified; returns the
    number of tables read, or raises the damage error. `read_elsewhere`: tables the caller
    reads in full anyway (its own reads raise on a damaged block of theirs)."""
    try:
        tables = [t for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()
                  if t not in read_elsewhere]
        for table in tables:
            con.execute(f'SELECT count(*), max(COLUMNS(*)) FROM "{table}"').fetchone()
    except duckdb.Error as exc:
        if is_damage(exc):
            raise damage_error(path, exc) from None
        raise
    return len(tables)


def snapshot(path: Path, dest: Path) -> Path:
    """A consistent copy of the DB (taken under a read lock, so no commit is half in it)."""
    con = connect(path, read_only=True)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
        wal = path.with_name(path.name + ".wal")
        if wal.exists():
            shutil.copyfile(wal, dest.with_name(dest.name + ".wal"))
    finally:
        con.close()
    return dest


def backup_dir(path: Path) -> Path:
    return path.with_name(path.name + ".backups")


def list_backups(path: Path) -> list[Path]:
    """Backups of the DB, newest first."""
    folder = backup_dir(path)
    return sorted(folder.glob("*.duckdb"), reverse=True) if folder.is_dir() else []


def backup(path: Path, keep: int = BACKUPS_KEPT) -> Path | None:
    """Copy a checked DB aside (newest `keep` kept); None when there is no DB yet."""
    if not path.exists():
        return None
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    dest = backup_dir(path) / f"{stamp}.duckdb"
    try:
        snapshot(path, dest)
    except OSError as exc:
        dest.unlink(missing_ok=True)  # a cut copy is no backup
        dest.with_name(dest.name + ".wal").unlink(missing_ok=True)
        DiskFull.raise_if(exc, dest)
        raise
    for old in list_backups(path)[keep:]:
        old.unlink(missing_ok=True)
        old.with_name(old.name + ".wal").unlink(missing_ok=True)
    return dest


def restore(path: Path, source: Path) -> None:
    """Put a backup (checked first) in place of the DB; the replaced file is kept aside."""
    con = connect(source, read_only=True)
    try:
        check_database(con, source)
    finally:
        con.close()
    if path.exists():
        shutil.move(str(path), str(path.with_name(path.name + ".replaced")))
    path.with_name(path.name + ".wal").unlink(missing_ok=True)
    shutil.copyfile(source, path)
