"""Time `tidemark site` on a synthetic history (a benchmark, not a test).

Builds the history with synthetic_history.py when the DB is missing, runs `tidemark site` on it,
then `mkdocs build` alone on the generated config (to say how much of the time is MkDocs), and
writes the figures to benchmarks/site_speed.json, which the methodology page shows.

    .venv/bin/python benchmarks/site_speed.py [--db build/synthetic.duckdb] [--out build/synthetic-site]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import duckdb

REPO = Path(__file__).resolve().parents[1]
RESULT = REPO / "benchmarks" / "site_speed.json"


def timed(argv: list[str]) -> float:
    began = time.perf_counter()
    subprocess.run(argv, check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    return time.perf_counter() - began


def counts(db: Path) -> dict[str, int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {name: con.execute(sql).fetchone()[0] for name, sql in (
            ("runs", "SELECT count(*) FROM runs"),
            ("series", "SELECT count(DISTINCT series_key) FROM invocations"),
            ("invocations", "SELECT count(*) FROM invocations"),
            ("metrics", "SELECT count(*) FROM metrics"))}
    finally:
        con.close()


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=REPO / "build" / "synthetic.duckdb")
    parser.add_argument("--out", type=Path, default=REPO / "build" / "synthetic-site")
    args = parser.parse_args()
    bin_dir = Path(sys.executable).parent
    if not args.db.exists():
        subprocess.run([sys.executable, str(REPO / "benchmarks" / "synthetic_history.py"),
                        str(args.db)], check=True)
    seconds = timed([str(bin_dir / "tidemark"), "site", "--db", str(args.db), "--out", str(args.out)])
    mkdocs = timed([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(args.out / "mkdocs.yml")])
    figures = {**counts(args.db), "seconds": round(seconds, 1), "mkdocs_seconds": round(mkdocs, 1),
               "machine": f"{cpu_model()}, {os.cpu_count()} logical CPUs (shared)",
               "date": date.today().isoformat()}
    RESULT.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
