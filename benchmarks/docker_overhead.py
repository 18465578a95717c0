"""What the container runner costs against the host runner, measured side by side.

For each workload (readrandom and fillrandom by default) one `tidemark ab --a runner=host --b
runner=docker` job runs both runners interleaved in rounds (seeded random order), so machine
drift hits both alike; both sides without perf stat (`counters=false`: the container runner has
no counters, and the host's perf wrapper would otherwise be part of the difference). From the
stored invocations it prints, per workload, the median ops/s of each side, the median of the
per-round ratios docker/host and the verdict of the analysis core (`tidemark compare` of the
job's runs), plus what a container costs around the engine: the median of container wall time
(create, start, wait, remove) minus the engine's own wall time. Writes
benchmarks/docker_overhead.json. A benchmark, not a test: run it when nothing else runs.

    .venv/bin/python benchmarks/docker_overhead.py [--rounds 20] [--engine leveldb] [overrides]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

TIDEMARK = str(Path(sys.executable).parent / "tidemark")
OUT = Path(__file__).with_name("docker_overhead.json")

_ROUNDS = """
    SELECT r.runner, i.repetition, m.value, i.wall_s,
           TRY_CAST(json_extract(i.conditions, '$.container.container_wall_s') AS DOUBLE)
    FROM invocations i JOIN runs r USING (run_id) JOIN metrics m USING (invocation_id)
    WHERE i.phase = 'measured' AND i.status = 'ok' AND m.name = 'ops_per_sec'
      AND i.workload = ? ORDER BY i.repetition"""


_NEWEST_JOB = """
    SELECT p.run_a, p.run_b FROM ab_pairs p
    WHERE p.run_a IN (SELECT run_id FROM invocations WHERE workload = ?)
    ORDER BY p.created_at DESC LIMIT 1"""


def run_job(db: Path, tmp: Path, workload: str, rounds: int, extra: list[str]) -> str:
    """One interleaved ab job of host against docker; tidemark ab's own summary lines."""
    argv = [TIDEMARK, "ab", "--a", "runner=host", "--b", "runner=docker", "--",
            f"workload={workload}", f"repetitions={rounds}", "counters=false",
            f"db={db}", f"results_dir={tmp}", f"data_dir={tmp / 'data'}", *extra]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode not in (0, 1):  # 1: the job called a change, which is an answer here
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    return proc.stdout


def compare_cells(db: Path, workload: str) -> dict:
    """The analysis core's verdict on the workload's newest ab job, as `tidemark compare
    --format json` gives it (the job's two runs are analysed as the job measured them)."""
    con = duckdb.connect(str(db), read_only=True)
    run_a, run_b = con.execute(_NEWEST_JOB, [workload]).fetchone()
    con.close()
    proc = subprocess.run([TIDEMARK, "compare", run_a, run_b, "--db", str(db), "--format",
                           "json"], capture_output=True, text=True, check=True)
    row = next(r for r in json.loads(proc.stdout)["rows"] if r["metric"] == "ops_per_sec")
    c = row["comparison"]
    ci = "–" if c["ci_low"] is None else f"{(c['ci_low'] - 1) * 100:+.1f}% … {(c['ci_high'] - 1) * 100:+.1f}%"
    return {"change": f"{c['change_pct']:+.1f}%", "ci95": ci, "p": c["p_value"], "test": c["test"],
            "threshold": f"{c['threshold'] * 100:.1f}%", "verdict": c["verdict"]}


def summarise(db: Path, workload: str) -> dict:
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute(_ROUNDS, [workload]).fetchall()
    con.close()
    ops = {"host": {}, "docker": {}}
    start_costs = []
    for runner, repetition, value, wall, container_wall in rows:
        ops[runner][repetition] = value
        if container_wall is not None:
            start_costs.append(container_wall - wall)
    paired = sorted(set(ops["host"]) & set(ops["docker"]))
    ratios = [ops["docker"][r] / ops["host"][r] for r in paired]
    return {"workload": workload, "rounds": len(paired),
            "host_median_ops": statistics.median(ops["host"].values()),
            "docker_median_ops": statistics.median(ops["docker"].values()),
            "median_ratio_docker_over_host": statistics.median(ratios),
            "container_cost_median_s": statistics.median(start_costs) if start_costs else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--engine", default="leveldb")
    parser.add_argument("--workloads", default="readrandom,fillrandom")
    parser.add_argument("overrides", nargs="*", help="more Hydra overrides for both sides")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="tidemark-docker-overhead-") as tmp_dir:
        tmp = Path(tmp_dir)
        db = tmp / "overhead.duckdb"
        for workload in args.workloads.split(","):
            run_job(db, tmp, workload, args.rounds, [f"engine={args.engine}", *args.overrides])
            row = summarise(db, workload)
            row["compare"] = compare_cells(db, workload)
            results.append(row)
    load = Path("/proc/loadavg").read_text().split()[0]
    report = {"measured": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "engine": args.engine, "overrides": args.overrides, "load1_after": float(load),
              "results": results}
    OUT.write_text(json.dumps(report, indent=2) + "\n")
    print("| workload | rounds | host median ops/s | docker median ops/s | docker/host (median "
          "of rounds) | verdict | container cost per invocation |")
    print("| --- | ---: | ---: | ---: | ---: | --- | ---: |")
    for r in results:
        cost = r["container_cost_median_s"]
        print(f"| {r['workload']} | {r['rounds']} | {r['host_median_ops']:,.0f} | "
              f"{r['docker_median_ops']:,.0f} | {r['median_ratio_docker_over_host']:.3f} | "
              f"{r['compare'].get('verdict', '?')} ({r['compare'].get('ci95', '')}) | "
              f"{'–' if cost is None else f'{cost:.2f} s'} |")
    print(f"written to {OUT} (load average {load} at the end)")


if __name__ == "__main__":
    main()
