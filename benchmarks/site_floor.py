"""What a full `tidemark site` of a long history cannot go below with today's outputs (a
benchmark, not a test): the CPU seconds of the work every full build does whatever its
pages, each by the build's own functions (one DuckDB thread, in blocks), in one process:

- the points (`queries.read_points`: the metrics pivoted and each run's series aggregated);
- the older runs' invocation rows (`queries.read_invocations(detail=False)`, ROWS_BLOCK_RUNS
  runs a read, as run_site reads them) and their cells formatted into the data files' JSON
  (`run_tables.compact_rows_json`). Every run's, where the build reads all but the newest
  DETAILED_RUN_PAGES and the imported runs' (50 of 10,000: half a percent more here);
- the published history's Parquet: the metrics and invocations tables in blocks of
  history_parquet.BLOCK_RUNS runs (`history_parquet.copy_block`).

Their sum over 2 cores is the least wall-clock time of a full build before any page, chart or
MkDocs: ARCHITECTURE.md ("Speed") sets it against the 60 s goal of the site-speed issue.
Writes benchmarks/site_floor.json (or --out).

    .venv/bin/python benchmarks/site_floor.py [--db build/synthetic-10000.duckdb] [--out F]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from reports.build.history_parquet import BLOCK_RUNS, copy_block  # noqa: E402
from reports.build.run_site import ROWS_BLOCK_RUNS  # noqa: E402
from reports.data import queries  # noqa: E402
from reports.pages.run_tables import compact_rows_json  # noqa: E402

RESULT = REPO / "benchmarks" / "site_floor.json"


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(db: Path) -> dict[str, object]:
    load = os.getloadavg()[0]
    con = queries.open_results(db)
    con.execute("SET threads = 1")
    figures: dict[str, float] = {}
    began = _cpu()
    points = queries.read_points(con)
    figures["points"] = _cpu() - began
    runs = [run for (run,) in con.execute(
        f"SELECT run_id FROM runs ORDER BY {queries.RUN_ORDER}").fetchall()]
    figures["older rows: read"] = figures["older rows: cells to JSON"] = 0.0
    for start in range(0, len(runs), ROWS_BLOCK_RUNS):
        began = _cpu()
        invocations = queries.read_invocations(con, runs[start:start + ROWS_BLOCK_RUNS],
                                               detail=False)
        figures["older rows: read"] += _cpu() - began
        began = _cpu()
        compact_rows_json(invocations)
        figures["older rows: cells to JSON"] += _cpu() - began
    with tempfile.TemporaryDirectory() as scratch:
        began = _cpu()
        for start in range(0, len(runs), BLOCK_RUNS):
            for table in ("metrics", "invocations"):
                copy_block(con, table, runs[start:start + BLOCK_RUNS],
                           Path(scratch) / f"{table}.parquet")
        figures["Parquet: metrics and invocations"] = _cpu() - began
    con.close()
    total = sum(figures.values())
    return {"db": str(db.relative_to(REPO) if db.is_relative_to(REPO) else db),
            "runs": len(runs), "points": len(points), "date": date.today().isoformat(),
            "load_average_before": round(load, 2),
            "cpu_seconds": {name: round(value, 1) for name, value in figures.items()},
            "total_cpu_seconds": round(total, 1),
            "least_wall_seconds_on_2_cores": round(total / 2, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=REPO / "build" / "synthetic-10000.duckdb")
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args()
    if not args.db.is_file():
        sys.exit(f"{args.db} does not exist; make it with benchmarks/synthetic_history.py "
                 f"{args.db} --runs 10000")
    figures = measure(args.db.resolve())
    args.out.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
