"""`tidemark export RUN --format bmf|csv|parquet`: a stored run in another tool's format (thin
wiring over orchestrator/history/export.py for BMF and orchestrator/store/run_table.py for the
run's invocation table; the DB is read, never written)."""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import duckdb
from rich.console import Console

from ..errors import ConfigError
from ..store.run_table import TABLE_FORMATS

EXPORT_FORMATS = ("bmf", *TABLE_FORMATS)


def export_command(argv: list[str], console: Console) -> None:
    from ..history.export import bmf_document
    from ..store import connect
    from ..store.reads import load_samples, measured_metric_names, resolve_run

    parser = argparse.ArgumentParser(prog="tidemark export", description=(
        "Write one run in another tool's format: bmf is Bencher Metric Format "
        "(`bencher run --file FILE --adapter json`): per series and metric, the median of the "
        "ok repetitions with their min and max as bounds; csv and parquet are the run's "
        "invocations, one row each with every metric a column (the table the site publishes "
        "beside each run page)."))
    parser.add_argument("run", help="run id or selector (latest, latest~1, label=X, ...)")
    parser.add_argument("--format", required=True, choices=EXPORT_FORMATS)
    parser.add_argument("--out", type=Path, help="the file to write (default: standard output)")
    parser.add_argument("--db", type=Path, default=Path("results/tidemark.duckdb"))
    args = parser.parse_args(argv)
    if args.format == "parquet" and args.out is None:
        raise ConfigError("--format parquet writes a binary file; pass --out FILE.parquet")
    con = connect(args.db, read_only=True)
    try:
        run_id = resolve_run(con, args.run)
        if args.format in TABLE_FORMATS:
            return _table(con, run_id, args, console)
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


def _table(con: duckdb.DuckDBPyConnection, run_id: str, args: argparse.Namespace, console: Console) -> None:
    """The run's invocation table to --out, or (CSV) to standard output."""
    from ..store.run_table import write_run_table

    if args.out is not None:
        rows = write_run_table(con, run_id, args.out, args.format)
        console.print(f"run {run_id}: {rows} invocations written to {args.out} ({args.format})",
                      markup=False)
        return
    with tempfile.TemporaryDirectory() as folder:  # COPY writes files, not Python streams
        path = Path(folder) / "run.csv"
        write_run_table(con, run_id, path, args.format)
        sys.stdout.write(path.read_text(encoding="utf-8"))
