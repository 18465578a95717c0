"""What the analysts' tools add to `tidemark site` on the synthetic history (a benchmark, not a
test): each step alone, in wall and CPU seconds (CPU includes DuckDB's threads), then one
`tidemark site` with its phases. Run it when nothing else runs; figures go to
benchmarks/site_tools_cost.json and the README.

    make site-tools-bench    (= .venv/bin/python benchmarks/site_tools_cost.py [--db build/synthetic.duckdb])

Steps: the Parquet and CSV export and the precomputed comparisons run in a child while the
pages are written; the CSV of every table is written while the slots fill the built pages
(the "fill" phase), in two processes.
"""
from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.site_speed import counts, cpu_model, phases, timed  # noqa: E402
from orchestrator.gate import GateConf  # noqa: E402
from reports.data import queries  # noqa: E402
from reports.build.compare_site import write_comparisons  # noqa: E402
from reports.build.downloads import export_history  # noqa: E402
from reports.data.read_cache import run_fingerprints  # noqa: E402
from reports.build.run_site import DETAILED_RUN_PAGES  # noqa: E402
from reports.data.site_cache import KeptFiles, SiteCache  # noqa: E402
from reports.build.tools_site import KIND  # noqa: E402

RESULT = REPO / "benchmarks" / "site_tools_cost.json"


def cpu_seconds() -> float:
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                          resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measured(step: Callable[[], Any]) -> dict[str, float]:
    cpu, wall = cpu_seconds(), time.perf_counter()
    step()
    return {"wall_s": round(time.perf_counter() - wall, 1), "cpu_s": round(cpu_seconds() - cpu, 1)}


def steps(db: Path, scratch: Path) -> dict[str, dict[str, float]]:
    """Each step as a first build does it: an empty cache, so every file is written."""
    shutil.rmtree(scratch, ignore_errors=True)
    cache = SiteCache(scratch / "cache")
    con = queries.open_results(db)
    try:
        runs, points = queries.read_runs(con), queries.read_points(con)
        fingerprints = run_fingerprints(con, cache)
    finally:
        con.close()
    newest = list(runs["run_id"].head(DETAILED_RUN_PAGES))
    files = KeptFiles(cache, KIND)
    return {
        "export Parquet + CSV": measured(lambda: export_history(
            db, files, scratch / "csv", newest, fingerprints, datetime.now(timezone.utc))),
        "precomputed comparisons": measured(lambda: write_comparisons(
            db, scratch, runs, points, GateConf(), None, runs["run_id"].iloc[0])),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=REPO / "build" / "synthetic.duckdb")
    parser.add_argument("--out", type=Path, default=REPO / "build" / "synthetic-tools-site")
    args = parser.parse_args()
    if not args.db.exists():  # the same synthetic history as `make site-bench`
        subprocess.run([sys.executable, str(REPO / "benchmarks" / "synthetic_history.py"),
                        str(args.db)], check=True)
    figures: dict[str, Any] = {**counts(args.db), "steps": steps(args.db, args.out / "scratch")}
    site_build = timed([str(Path(sys.executable).parent / "tidemark"), "site", "--db",
                        str(args.db), "--out", str(args.out)])
    site = args.out / "site"
    figures.update({
        "site_seconds": site_build["seconds"], "site_cpu_seconds": site_build["cpu_seconds"],
        "site_phases": phases(str(site_build["output"])),
        "site_mb": round(sum(f.stat().st_size for f in site.rglob("*") if f.is_file()) / 2**20),
        "csv_files": sum(1 for _ in site.rglob("*.csv")),
        "compare_pairs": len(json.loads((site / "compare" / "index.json").read_text())["pairs"]),
        "machine": cpu_model(), "date": time.strftime("%Y-%m-%d")})
    RESULT.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
