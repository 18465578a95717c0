"""`tidemark ingest BUNDLE_OR_FOLDER...`: run bundles merged into the history (thin wiring over
orchestrator/history/ingest.py)."""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Callable

from rich.console import Console

from ..errors import BundleError, IngestPartial, Interrupted
from ..history.ingest import IngestReport, Ingestor
from ..signals import signals_interrupt


def _ingest_all(args: argparse.Namespace, say: Callable[[str], None]) -> IngestReport:
    """The bundles of `args` into --db, or (--check) into a throwaway history; Ctrl-C and
    SIGTERM end it in one line (the bundle being merged is rolled back)."""
    try:
        with signals_interrupt(), tempfile.TemporaryDirectory(prefix="tidemark-check-") as scratch:
            db = Path(scratch) / "check.duckdb" if args.check else args.db
            ingestor = Ingestor(db, Path(scratch) / "logs" if args.check else args.logs, args.check)
            try:
                return ingestor.ingest(args.paths, say, args.unfinished)
            finally:
                ingestor.close()
    except (KeyboardInterrupt, Interrupted) as exc:
        raise Interrupted(f"ingest interrupted ({exc or 'Ctrl-C'}); each bundle is merged whole or "
                          f"not at all: run the same ingest again to finish") from None


def ingest_command(argv: list[str], console: Console) -> None:
    """`tidemark ingest BUNDLE_OR_FOLDER...` (thin wiring)."""
    parser = argparse.ArgumentParser(prog="tidemark ingest", description=(
        "Merge run bundles (written with bundle_dir=FOLDER, e.g. by fleet jobs or CI matrix "
        "jobs) into the history: each bundle all or nothing, the same bundle twice adds "
        "nothing; a damaged, tampered, unfinished or newer-schema bundle is refused."))
    parser.add_argument("paths", nargs="+", type=Path, help="bundles, or folders of bundles")
    parser.add_argument("--db", type=Path, default=Path("results/tidemark.duckdb"))
    parser.add_argument("--logs", type=Path, help="where the runs' logs go (default: logs/ "
                        "beside the database)")
    parser.add_argument("--unfinished", action="store_true", help=(
        "also merge bundles without a manifest (a job killed outright, e.g. its node died): "
        "what they committed is sealed and merged, their runs marked killed; only once their "
        "jobs have ended"))
    parser.add_argument("--check", action="store_true", help=(
        "check the bundles as ingest would (merged into a throwaway history) and write nothing: "
        "e.g. before keeping them (scripts/history.sh save)"))
    args = parser.parse_args(argv)
    if args.check and args.unfinished:
        parser.error("--check writes nothing, and --unfinished seals bundles: use one")
    say = lambda text: console.print(text, markup=False, soft_wrap=True)  # noqa: E731
    report = _ingest_all(args, say)
    for root in report.unfinished:
        say(f"skipped {root}: unfinished (no manifest.json: its job is still running, or was "
            f"killed: then add --unfinished)")
    added = sum(len(done.runs) for done in report.ingested if done.added)
    known = sum(not done.added for done in report.ingested)
    say(f"checked {len(report.ingested)} bundle(s), nothing written; {len(report.refused)} "
        f"refused" if args.check else f"{added} run(s) added to {args.db}; {known} bundle(s) "
        f"were in it already; {len(report.refused)} refused")
    if report.refused:
        for line in report.refused[1:]:
            say(f"refused: {line}")
        more = f" (and {len(report.refused) - 1} more refused, listed above)" \
            if len(report.refused) > 1 else ""
        # Exit 4 when the others were merged (a CI job goes on to save and publish them).
        raise (IngestPartial if report.ingested else BundleError)(report.refused[0] + more)
