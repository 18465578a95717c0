"""Helpers for end-to-end tests: run the real `tidemark` command into a temporary results folder."""
from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import duckdb

TIDEMARK = str(Path(sys.executable).parent / "tidemark")


def default_stop_signals() -> None:
    """preexec_fn of a child a test stops with SIGINT or SIGHUP: both at their defaults even when
    the tests run in the background or under nohup. A shell starts background jobs with SIGINT
    ignored (nohup: SIGHUP), and Python leaves an ignored SIGINT ignored instead of raising
    KeyboardInterrupt, so the child would wait on as if never told."""
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def run_argv(tmp: Path, *args: str) -> list[str]:
    """The `tidemark ARGS` command line, a run's DB, logs and data under tmp."""
    argv = [TIDEMARK, *args]
    if args and args[0] == "run":
        argv += [f"db={tmp / 'tidemark.duckdb'}", f"results_dir={tmp}", f"data_dir={tmp / 'data'}"]
    return argv


def tidemark(tmp: Path, *args: str, check: bool = True, timeout: float = 1800,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`tidemark run ARGS` with the DB, logs and data under tmp; the build cache is the real one."""
    argv = run_argv(tmp, *args)
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def query(tmp: Path, sql: str, params: list | None = None) -> list[tuple]:
    con = duckdb.connect(str(tmp / "tidemark.duckdb"), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def add_stored_run(db: Path, run: dict, invocations: list, status: str) -> None:
    """A run written straight through the store (a hostile-name run of the site tests), on the
    machine and build of the DB's first real run; `run` gives the fields that differ."""
    from datetime import datetime, timezone

    from orchestrator.store import Store

    con = duckdb.connect(str(db), read_only=True)
    fingerprint, build_id = con.execute("SELECT machine_fingerprint, build_id FROM runs LIMIT 1").fetchone()
    con.close()
    store = Store(db)
    try:
        store.start_run({
            "started_at": datetime(2999, 12, 31, tzinfo=timezone.utc), "status": "running",
            "engine": "leveldb", "engine_version": "1.23", "build_variant": "release",
            "build_id": build_id, "build_cached": True, "machine_fingerprint": fingerprint,
            "suite": "", "cache_state": "warm", "tidemark_sha": "test",
            "planned_invocations": len(invocations), **run})
        for invocation in invocations:
            store.add_invocation(invocation)
        store.finish_run(run["run_id"], status, run.get("machine_state") or {})
    finally:
        store.close()


OTHER_MACHINE = "f" * 16


def add_other_machine(tmp: Path, base_id: str) -> str:
    """The base run's repetitions again, written through the store as measured on another
    machine (this test has one host): only the machine fingerprint differs."""
    import json

    from orchestrator.analysis.identity import series_key
    from orchestrator.record import Invocation, Metric
    from orchestrator.store import Store

    db = tmp / "tidemark.duckdb"
    (facts, config), = query(tmp, "SELECT m.facts::VARCHAR, r.config::VARCHAR FROM runs r JOIN "
                             "machines m ON m.fingerprint = r.machine_fingerprint WHERE run_id = ?",
                             [base_id])
    rows = query(tmp, "SELECT i.seq, m.value, s.params::VARCHAR, s.cache_state FROM invocations i "
                 "JOIN metrics m USING (invocation_id) JOIN series s USING (series_key) WHERE "
                 "i.run_id = ? AND i.phase = 'measured' AND m.name = 'ops_per_sec'", [base_id])
    other = OTHER_MACHINE
    store = Store(db)
    try:
        store.record_machine({**json.loads(facts), "fingerprint": other, "hostname": "other-host"})
        store.start_run({"run_id": "other-machine", "started_at": "2099-01-01T00:00:00Z",
                         "status": "ok", "engine": "leveldb", "engine_version": "1.23",
                         "build_variant": "release", "machine_fingerprint": other,
                         "config": json.loads(config), "overrides": [], "notes": []})
        for seq, value, params, cache in rows:
            identity = {"engine": "leveldb", "workload": "readrandom", "benchmark": "readrandom",
                        "params": json.loads(params), "threads": 1, "cache_state": cache,
                        "build_variant": "release", "machine_fingerprint": other}
            store.record_series(series_key(identity), identity)
            store.add_invocation(Invocation(
                "other-machine", seq, "readrandom", "readrandom", "measured", seq, 1,
                json.loads(params), cache, series_key(identity), "ok", "", 0, 1.0, 1.0, 0.0, 1,
                None, None, (), "", (Metric("ops_per_sec", value, "ops/s", "higher"),)))
    finally:
        store.close()
    return "other-machine"
