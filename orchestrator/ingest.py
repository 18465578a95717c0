"""`tidemark ingest`: run bundles merged into the history by its one writer (side effects).

Each bundle is checked whole (manifest, versions, every file's size and sha256) and merged in
one transaction, or refused with one line and nothing written from it; the others go on. A
bundle already merged (its manifest's sha256 is in `bundles`, here or in the history this one
was copied from) adds nothing. Logs are copied after the commit; a log folder missing after a
crash in between is filled in by the next ingest of the same bundle.
"""
from __future__ import annotations

import argparse
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import duckdb
from rich.console import Console

from .bundle import DB_FILE, check_versions, find_bundles, read_manifest, verify_files
from .errors import BundleError, UserError
from .store import Store, open_checked
from .store.merge import BundleRow
from .store.schema import LATEST_VERSION


@dataclass(frozen=True)
class RunOutcome:
    """A merged run as the history has it: status and how many invocations did not end ok."""

    run_id: str
    status: str
    failed: int
    invocations: int


@dataclass(frozen=True)
class Ingested:
    root: Path
    runs: tuple[RunOutcome, ...]
    added: bool  # False: merged before, nothing added


@dataclass
class IngestReport:
    ingested: list[Ingested] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # one line each
    unfinished: list[Path] = field(default_factory=list)


def _run_outcomes(store: Store, run_ids: list[str]) -> tuple[RunOutcome, ...]:
    with store.reading() as con:
        rows = con.execute(
            "SELECT r.run_id, r.status, count(i.invocation_id) FILTER (WHERE i.status <> 'ok'), "
            "count(i.invocation_id) FROM runs r LEFT JOIN invocations i USING (run_id) WHERE "
            "r.run_id IN (SELECT unnest(?)) GROUP BY r.run_id, r.status ORDER BY r.run_id",
            [run_ids]).fetchall()
    return tuple(RunOutcome(*row) for row in rows)


def _place_logs(root: Path, history_logs: Path, run_ids: list[str]) -> None:
    """Copy each run's log folder into the history's logs, where it is not there yet."""
    for run_id in run_ids:
        source, dest = root / "logs" / run_id, history_logs / run_id
        if source.is_dir() and not dest.exists():
            shutil.copytree(source, dest)


def ingest_bundle(store: Store, root: Path, history_logs: Path) -> Ingested:
    """Merge one sealed bundle (all or nothing); raises BundleError naming the file and why."""
    manifest = read_manifest(root)
    before = store.merged_bundle_runs(manifest.bundle_id)
    if before is not None:
        _place_logs(root, history_logs, before)
        return Ingested(root, _run_outcomes(store, before), False)
    check_versions(manifest, LATEST_VERSION)
    row = BundleRow(bundle_id=manifest.bundle_id, source=str(root),
                    host=str(manifest.data.get("host", "")),
                    created_at=str(manifest.data.get("created_at") or "") or None,  # type: ignore[arg-type]
                    schema_version=manifest.schema_version, manifest=manifest.data,
                    logs_from=manifest.logs_prefix, logs_to=str(history_logs))
    with tempfile.TemporaryDirectory(prefix="tidemark-ingest-") as tmp:
        copy = Path(tmp) / DB_FILE  # DuckDB may write into what it opens: never the bundle
        verify_files(manifest, copy)
        try:
            run_ids = store.merge_bundle(copy, row)
        except duckdb.Error as exc:
            raise BundleError(f"bundle {root}: {DB_FILE} cannot be read "
                              f"({str(exc).splitlines()[0]}); nothing was written from it") from None
    _place_logs(root, history_logs, run_ids)
    return Ingested(root, _run_outcomes(store, run_ids), True)


class Ingestor:
    """The one writer of a history that bundles are merged into, as they arrive."""

    def __init__(self, db: Path, history_logs: Path | None = None):
        self.db = db
        self.history_logs = history_logs or db.parent / "logs"
        # Checked and backed up before the first bundle, as a run does before it measures.
        self.store = open_checked(db)
        self.seen: set[Path] = set()  # bundles this process merged or found merged already

    def sweep_run(self, sweep_id: str, job: int) -> RunOutcome | None:
        """The run of one job of a sweep, when the history has it."""
        with self.store.reading() as con:
            row = con.execute("SELECT run_id FROM runs WHERE json_extract_string(sweep, '$.id') "
                              "= ? AND json_extract(sweep, '$.job')::INTEGER = ?",
                              [sweep_id, job]).fetchone()
        return _run_outcomes(self.store, [row[0]])[0] if row else None

    def ingest(self, paths: list[Path], say: Callable[[str], None]) -> IngestReport:
        """Every sealed bundle under `paths`; an unfinished one named directly is refused."""
        report = IngestReport()
        sealed, unfinished = find_bundles(paths)
        for root in unfinished:
            if root in paths:
                report.refused.append(f"bundle {root}: no manifest.json: the bundle is "
                                      f"unfinished (its job is still running or was killed); "
                                      f"nothing was written from it")
            else:
                report.unfinished.append(root)
        for root in sealed:
            if root in self.seen:
                continue
            try:
                done = ingest_bundle(self.store, root, self.history_logs)
            except UserError as exc:
                report.refused.append(str(exc))
                self.seen.add(root)  # said once; a later ingest of the folder says it again
                continue
            self.seen.add(root)
            report.ingested.append(done)
            say(_said(done))
        return report

    def close(self) -> None:
        self.store.close()


def _said(done: Ingested) -> str:
    runs = ", ".join(f"{r.run_id} ({r.status}, {r.invocations} invocations)" for r in done.runs)
    return (f"ingested {done.root}: run {runs}" if done.added
            else f"already in the history: {done.root} (run {runs}); nothing added")


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
    args = parser.parse_args(argv)
    say = lambda text: console.print(text, markup=False, soft_wrap=True)  # noqa: E731
    ingestor = Ingestor(args.db, args.logs)
    try:
        report = ingestor.ingest(args.paths, say)
    finally:
        ingestor.close()
    for root in report.unfinished:
        say(f"skipped {root}: unfinished (no manifest.json: its job is still running or was "
            f"killed)")
    added = sum(len(done.runs) for done in report.ingested if done.added)
    say(f"{added} run(s) added to {args.db}; {len(report.ingested) - sum(d.added for d in report.ingested)} "
        f"bundle(s) were in it already; {len(report.refused)} refused")
    if report.refused:
        for line in report.refused[1:]:
            say(f"refused: {line}")
        more = f" (and {len(report.refused) - 1} more refused, listed above)" \
            if len(report.refused) > 1 else ""
        raise BundleError(report.refused[0] + more)
