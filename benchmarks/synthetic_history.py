"""Fill a results DB with synthetic history: 1,000 runs × 200 series (a benchmark input, not a test).

Everything is written through orchestrator.store.Store (the only writer). Numbers follow a slow
drift with noise and a few steps, over three engine versions, one run a day; each run measures
every series with `--repetitions` processes.

    .venv/bin/python benchmarks/synthetic_history.py build/synthetic.duckdb [--runs 1000]
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from orchestrator.build.engine import Build  # noqa: E402
from orchestrator.analysis.identity import series_key  # noqa: E402
from orchestrator.record import HIGHER, LOWER, Invocation, Metric  # noqa: E402
from orchestrator.store import Store  # noqa: E402

WORKLOADS = ("fillseq", "fillrandom", "readrandom", "readseq", "seekrandom")
THREADS = (1, 2, 4, 8)
CACHES = ("cold", "warm")
VALUE_SIZES = (100, 400, 1000, 4000, 16000)  # 5 × 4 × 2 × 5 = 200 series
VERSIONS = ("7.8.3", "9.10.0", "9.11.2")
FINGERPRINT = "5e" * 32
START = datetime(2024, 1, 1, 2, 0, tzinfo=timezone.utc)


def series_list() -> list[dict]:
    out = []
    for workload in WORKLOADS:
        for threads in THREADS:
            for cache in CACHES:
                for value_size in VALUE_SIZES:
                    identity = {"engine": "rocksdb", "workload": workload, "benchmark": workload,
                                "params": {"num": 1000000, "value_size": value_size,
                                           "compression": "snappy"},
                                "threads": threads, "cache_state": cache,
                                "build_variant": "release", "machine_fingerprint": FINGERPRINT}
                    out.append({"identity": identity, "key": series_key(identity),
                                "base": 50000.0 * threads ** 0.8 * (1000 / value_size) ** 0.3})
    return out


def build_for(version: str) -> Build:
    return Build(build_id=f"rocksdb-{version}-release-synthetic", engine="rocksdb",
                 version=version, variant="release", source_kind="debian",
                 source_package="rocksdb", source_version=f"{version}-1", source_dir="",
                 compiler="g++", compiler_version="12.2.0", cmake_version="3.25.1",
                 cmake_flags=(), build_seconds=700.0, binary_path="/nonexistent",
                 binary_sha256="0" * 64, linked_libraries=(), created_at="2024-01-01T00:00:00Z",
                 cached=True)


def metrics(ops: float, threads: int, rng: random.Random) -> tuple[Metric, ...]:
    p50 = threads * 1e6 / ops
    return (Metric("ops_per_sec", ops, "ops/s", HIGHER),
            Metric("per_thread_ops_per_sec", ops / threads, "ops/s", HIGHER),
            Metric("micros_per_op", p50 * 1.1, "us", LOWER), Metric("p50_us", p50, "us", LOWER),
            Metric("p95_us", p50 * 2.5, "us", LOWER), Metric("p99_us", p50 * 4 * rng.uniform(0.9, 1.2), "us", LOWER),
            Metric("p99_9_us", p50 * 9, "us", LOWER), Metric("max_us", p50 * 200, "us", LOWER),
            Metric("mb_per_sec", ops * 116 / 1e6, "MB/s", HIGHER),
            Metric("page_cache_residency_pct", rng.uniform(0, 3), "%", LOWER))


def run_invocations(run_id: str, index: int, series: list[dict], reps: int,
                    rng: random.Random) -> list[Invocation]:
    level = 1.0 + 0.0002 * index + (0.05 if index > 600 else 0.0) - (0.04 if 300 < index < 320 else 0.0)
    invs, seq = [], 1
    for s in series:
        ident = s["identity"]
        for rep in range(1, reps + 1):
            ops = s["base"] * level * rng.gauss(1.0, 0.02)
            invs.append(Invocation(
                run_id=run_id, seq=seq, workload=ident["workload"], benchmark=ident["benchmark"],
                phase="measured", repetition=rep, threads=ident["threads"], params=ident["params"],
                cache_state=ident["cache_state"], series_key=s["key"], status="ok", error="",
                exit_code=0, wall_s=1.0, user_s=0.9, sys_s=0.1, max_rss_kb=120000, started_at=None,
                ended_at=None, command=("db_bench", f"--benchmarks={ident['benchmark']}"),
                log_path="", metrics=metrics(ops, ident["threads"], rng),
                conditions={"residency_pct": 1.0, "data_bytes": 120_000_000, "cpus_allowed": [1]}))
            seq += 1
    return invs


def fill(db: Path, runs: int, reps: int, seed: int) -> None:
    rng = random.Random(seed)
    series = series_list()
    store = Store(db)
    try:
        with store.holding():  # one open for the whole history, not one per run
            store.record_machine({"fingerprint": FINGERPRINT, "hostname": "synthetic",
                                  "cpu_model": "Synthetic CPU", "logical_cpus": 16, "ram_gib": 64.0,
                                  "l3_kb": 32768})
            for version in VERSIONS:
                store.record_build(build_for(version))
            for s in series:
                store.record_series(s["key"], s["identity"])
            for index in range(runs):
                record_run(store, index, VERSIONS[min(index * len(VERSIONS) // runs,
                                                      len(VERSIONS) - 1)], series, reps, rng)
    finally:
        store.close()


def record_run(store: Store, index: int, version: str, series: list[dict], reps: int,
               rng: random.Random) -> str:
    """The index-th day's run of every series, through the store; returns its id."""
    started = START + timedelta(days=index)
    run_id = started.strftime("%Y%m%dT%H%M%S") + f"-syn{index:03d}"
    store.start_run({"run_id": run_id, "started_at": started, "status": "running",
                     "engine": "rocksdb", "engine_version": version,
                     "build_variant": "release", "build_id": build_for(version).build_id,
                     "build_cached": True, "machine_fingerprint": FINGERPRINT,
                     "suite": "synthetic", "label": "synthetic", "cache_state": "warm",
                     "config": {}, "overrides": ["suite=synthetic"], "tidemark_sha": "synthetic",
                     "machine_state": {}, "planned_invocations": len(series) * reps,
                     "verified": True, "notes": []})
    store.add_invocations_bulk(run_invocations(run_id, index, series, reps, rng))
    store.finish_run(run_id, "ok", {})
    return run_id


def add_run(db: Path, reps: int = 3, seed: int = 2) -> str:
    """One more day's run at the end of an existing synthetic history (the incremental case of
    site_speed.py); returns its id."""
    store = Store(db)
    try:
        with store.reading() as con:
            runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
        return record_run(store, runs, VERSIONS[-1], series_list(), reps, random.Random(seed))
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.db.exists():
        sys.exit(f"{args.db} exists; remove it or pick another path")
    began = time.perf_counter()
    fill(args.db, args.runs, args.repetitions, args.seed)
    print(f"{args.db}: {args.runs} runs × {len(series_list())} series × {args.repetitions} "
          f"repetitions in {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
