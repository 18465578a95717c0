"""Time `tidemark site` on a synthetic history (a benchmark, not a test).

Builds the history with synthetic_history.py when the DB is missing, runs `tidemark site` on it,
then `mkdocs build` alone on the generated pages (to say how much of the time is MkDocs), and
writes the figures to benchmarks/site_speed.json, which the methodology page shows.

    .venv/bin/python benchmarks/site_speed.py [--db build/synthetic.duckdb] [--out build/synthetic-site]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import duckdb

REPO = Path(__file__).resolve().parents[1]
RESULT = REPO / "benchmarks" / "site_speed.json"


def timed(argv: list[str]) -> tuple[float, str]:
    """(wall seconds, stdout) of one command."""
    began = time.perf_counter()
    proc = subprocess.run(argv, check=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          text=True)
    return time.perf_counter() - began, proc.stdout


def phases(output: str) -> dict[str, float]:
    """The per-phase seconds `tidemark site` prints: 'site: … (read 3.8 s, pages 14.5 s, …)'."""
    inside = output.rsplit("(", 1)[-1].rstrip().rstrip(")")
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"([a-z][a-z ,]*?) (\d+\.\d) s", inside)}


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
    seconds, output = timed([str(bin_dir / "tidemark"), "site", "--db", str(args.db),
                             "--out", str(args.out)])
    # MkDocs alone, into its own folder: rebuilding out/site would undo the filled slots.
    alone = args.out / "mkdocs-alone"
    mkdocs, _ = timed([sys.executable, "-m", "mkdocs", "build", "-q", "-f",
                       str(args.out / "mkdocs.yml"), "-d", str(alone.resolve())])
    shutil.rmtree(alone, ignore_errors=True)
    figures = {**counts(args.db), "seconds": round(seconds, 1), "phases": phases(output),
               "mkdocs_seconds": round(mkdocs, 1),
               "machine": f"{cpu_model()}, {os.cpu_count()} logical CPUs (shared)",
               "date": date.today().isoformat()}
    RESULT.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
