"""`tidemark export RUN --format bmf`: a stored run in another tool's format (thin wiring over
orchestrator/history/export.py; the DB is read, never written)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console

EXPORT_FORMATS = ("bmf",)


def export_command(argv: list[str], console: Console) -> None:
    from ..history.export import bmf_document
    from ..store import connect
    from ..store.reads import load_samples, measured_metric_names, resolve_run

    parser = argparse.ArgumentParser(prog="tidemark export", description=(
        "Write one run's series in another tool's format: bmf is Bencher Metric Format "
        "(`bencher run --file FILE --adapter json`): per series and metric, the median of the "
        "ok repetitions with their min and max as bounds."))
    parser.add_argument("run", help="run id or selector (latest, latest~1, label=X, ...)")
    parser.add_argument("--format", required=True, choices=EXPORT_FORMATS)
    parser.add_argument("--out", type=Path, help="the file to write (default: standard output)")
    parser.add_argument("--db", type=Path, default=Path("results/tidemark.duckdb"))
    args = parser.parse_args(argv)
    con = connect(args.db, read_only=True)
    try:
        run_id = resolve_run(con, args.run)
        series = load_samples(con, run_id, measured_metric_names(con, [run_id]))
    finally:
        con.close()
    text = json.dumps(bmf_document(series), indent=2) + "\n"
    if args.out is None:
        sys.stdout.write(text)
        return
    args.out.write_text(text)
    console.print(f"run {run_id}: {len(series)} series written to {args.out} ({args.format})",
                  markup=False)
