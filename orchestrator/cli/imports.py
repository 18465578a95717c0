"""`tidemark import`: an existing result file added to the history as one run (thin wiring;
the adapters read it, orchestrator/history/importer.py shapes it, the store writes it all or nothing)."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console


def import_command(argv: list[str], console: Console) -> None:
    from ..adapters.registry import IMPORT_FORMATS
    from ..history.importer import ImportMeta, check_date, read_import_paths, store_import
    from ..run.jobsetup import tidemark_sha
    from ..store import Store

    parser = argparse.ArgumentParser(prog="tidemark import", description=(
        "Add an existing result file to history as one run (asv_json: also a results folder, "
        "each commit's file one run)."))
    parser.add_argument("file", type=Path)
    parser.add_argument("--format", required=True, choices=IMPORT_FORMATS)
    parser.add_argument("--map", default="", help="json_map config (YAML)")
    for option in ("machine", "engine", "engine-version", "label", "workload"):
        parser.add_argument(f"--{option}", default="")
    parser.add_argument("--date", default="", help="ISO 8601; default: the file's own date or now")
    parser.add_argument("--threads", type=int, default=1, help="db_bench logs: --threads of the run")
    parser.add_argument("--db", type=Path, default=Path("results/tidemark.duckdb"))
    args = parser.parse_args(argv)
    meta = ImportMeta(fmt=args.format, source_path=str(args.file), sha256="",
                      machine=args.machine, engine=args.engine, engine_version=args.engine_version,
                      date=check_date(args.date) if args.date else "", label=args.label,
                      workload=args.workload, tidemark_sha=tidemark_sha(), argv=tuple(argv))
    batches = read_import_paths(args.file, meta, args.map, args.threads)  # all parsed first
    store = Store(args.db)
    try:
        for batch in batches:
            _report(console, batch, *store_import(store, batch), args.db)
    finally:
        store.close()


def _report(console: Console, batch: Any, run_id: str, added: bool, db: Path) -> None:
    name = Path(batch.source_meta["file"]).name
    if not added:
        console.print(f"{name}: already imported as run {run_id}; nothing added to {db}",
                      markup=False, soft_wrap=True)
        return
    console.print(f"{name}: imported run {run_id}: {len(batch.invocations)} invocations, "
                  f"{len(batch.aggregates)} aggregates into {db}", soft_wrap=True, markup=False)
