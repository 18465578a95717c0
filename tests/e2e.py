"""Helpers for end-to-end tests: run the real `tidemark` command into a temporary results folder."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb

TIDEMARK = str(Path(sys.executable).parent / "tidemark")


def tidemark(tmp: Path, *args: str, check: bool = True, timeout: float = 1800) -> subprocess.CompletedProcess:
    """`tidemark run ARGS` with the DB, logs and data under tmp; the build cache is the real one."""
    argv = [TIDEMARK, *args]
    if args and args[0] == "run":
        argv += [f"db={tmp / 'tidemark.duckdb'}", f"results_dir={tmp}", f"data_dir={tmp / 'data'}"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def query(tmp: Path, sql: str, params: list | None = None) -> list[tuple]:
    con = duckdb.connect(str(tmp / "tidemark.duckdb"), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()
