"""`tidemark ingest`: run bundles merged into the history by its one writer (side effects).

Each bundle is checked whole (manifest, versions, every file's size and sha256) and merged in
one transaction, or refused with one line and nothing written from it; the others go on. A
bundle already merged (its manifest's sha256 is in `bundles`, here or in the history this one
was copied from) adds nothing. Logs are copied after the commit; a log folder missing after a
crash in between (or cut short: it is renamed into place only when whole) is filled in by the
next ingest of the same bundle. Two ingests into one history take turns on the file, bundle by
bundle; the merge finds a bundle the other merged meanwhile and adds nothing.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import duckdb

from ..errors import BundleError, ConfigError, DiskFull, Interrupted, UserError
from ..liveness import is_gone
from ..store import Store, open_checked
from ..store.merge import BundleRow
from ..store.schema import LATEST_VERSION
from .bundle import (DB_FILE, MANIFEST, BundleLayout, check_versions, find_bundles,
                     read_manifest, seal_bundle, verify_files)
from .clock import bundle_skew, skew_text


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
    clock_skew_s: float | None = None  # its node's clock error, corrected (history/clock.py)


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
    """Copy each run's log folder into the history's logs, where it is not there yet. Copied
    under a name of this process's and renamed when whole: a copy cut short (kill -9) is never
    taken for the logs, and of two ingests placing the same logs at once, one copy is kept."""
    for run_id in run_ids:
        source, dest = root / "logs" / run_id, history_logs / run_id
        for stale in history_logs.glob(f".{run_id}.partial-*"):  # left by a killed ingest
            if not Path(f"/proc/{stale.name.rsplit('-', 1)[1]}").exists():
                shutil.rmtree(stale, ignore_errors=True)
        if not source.is_dir() or dest.exists():
            continue
        partial = history_logs / f".{run_id}.partial-{os.getpid()}"
        try:
            shutil.copytree(source, partial)
            os.rename(partial, dest)
        except OSError as exc:
            shutil.rmtree(partial, ignore_errors=True)
            DiskFull.raise_if(exc, dest)
            if not dest.is_dir():  # else another ingest placed them first
                raise


def _logs_folder(history_logs: Path) -> None:
    try:
        history_logs.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the logs folder {history_logs} ({exc.strerror}); pass "
                          f"--logs a writable folder (default: logs/ beside --db)") from None


def ingest_bundle(store: Store, root: Path, history_logs: Path) -> Ingested:
    """Merge one sealed bundle (all or nothing); raises BundleError naming the file and why.
    A bundle merged before is checked all the same: a changed copy of it is not that bundle."""
    manifest = read_manifest(root)
    check_versions(manifest, LATEST_VERSION)
    row = BundleRow(bundle_id=manifest.bundle_id, source=str(root),
                    host=str(manifest.data.get("host", "")),
                    created_at=manifest.data.get("created_at"),
                    schema_version=manifest.schema_version, manifest=manifest.data,
                    logs_from=manifest.logs_prefix, logs_to=str(history_logs),
                    clock_skew_s=bundle_skew(root / MANIFEST, manifest.data.get("created_at"),
                                             time.time()))
    with tempfile.TemporaryDirectory(prefix="tidemark-ingest-") as tmp:
        copy = Path(tmp) / DB_FILE  # DuckDB may write into what it opens: never the bundle
        try:
            verify_files(manifest, copy)
        except OSError as exc:
            DiskFull.raise_if(exc, copy, "free space there, or set TMPDIR to a folder on another "
                                         "disk")
            raise
        _logs_folder(history_logs)  # before the rows that point into it are merged
        try:
            run_ids, added = store.merge_bundle(copy, row)
        except duckdb.Error as exc:
            raise BundleError(f"bundle {root}: {DB_FILE} cannot be read "
                              f"({str(exc).splitlines()[0]}); nothing was written from it") from None
    _place_logs(root, history_logs, run_ids)
    skew = row.clock_skew_s if added else None
    return Ingested(root, _run_outcomes(store, run_ids), added, skew)


def seal_unfinished(root: Path) -> list[str]:
    """Seal a bundle whose job was killed outright (no manifest), so what it committed can be
    merged: its runs still `running` are marked killed, the manifest is written from what its
    database holds. Refused while its writer still runs on this host; on another host the
    caller vouches that the job has ended. The run ids sealed ([] when nothing was measured)."""
    layout = BundleLayout(root)
    if not layout.db.is_file():
        return []
    store = Store(layout.db)
    try:
        with store.reading() as con:
            runs = con.execute("SELECT run_id, status, machine_state::VARCHAR FROM runs "
                               "ORDER BY run_id").fetchall()
            build = con.execute("SELECT provenance::VARCHAR FROM builds LIMIT 1").fetchone()
            facts = con.execute("SELECT facts::VARCHAR FROM machines LIMIT 1").fetchone()
        for run_id, status, state in runs:
            process = (json.loads(state) if state else {}).get("process")
            if status == "running" and process and not is_gone(process) and \
                    process.get("host") == socket.gethostname():
                raise BundleError(f"bundle {root}: run {run_id} is still being written by pid "
                                  f"{process.get('pid')}; wait for its job to end")
            store.mark_killed(run_id)
    finally:
        store.close()
    if not runs:
        return []
    seal_bundle(layout, [r for r, _, _ in runs], json.loads(build[0]) if build else {},
                json.loads(facts[0]) if facts else {}, LATEST_VERSION, "", "ingest --unfinished")
    return [r for r, _, _ in runs]


class Ingestor:
    """The one writer of a history that bundles are merged into, as they arrive."""

    def __init__(self, db: Path, history_logs: Path | None = None, checking: bool = False):
        self.db = db
        self.checking = checking  # db is a throwaway history: say "checked", not "ingested"
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

    def ingest(self, paths: list[Path], say: Callable[[str], None],
               unfinished_too: bool = False) -> IngestReport:
        """Every sealed bundle under `paths`; an unfinished one named directly is refused,
        unless `unfinished_too` (its job was killed): then it is sealed first and merged."""
        report = IngestReport()
        sealed, unfinished = find_bundles(paths)
        if unfinished_too:
            sealed += self._sealed_now(unfinished, report, say)
            unfinished = []
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
            except (ConfigError, DiskFull, Interrupted):
                raise  # not this bundle's fault: every other one would be refused alike
            except UserError as exc:
                report.refused.append(str(exc))
                self.seen.add(root)  # said once; a later ingest of the folder says it again
                continue
            self.seen.add(root)
            report.ingested.append(done)
            say(_said(done, self.checking))
        return report

    def _sealed_now(self, roots: list[Path], report: IngestReport,
                    say: Callable[[str], None]) -> list[Path]:
        sealed = []
        for root in roots:
            try:
                runs = seal_unfinished(root)
            except Interrupted:
                raise
            except UserError as exc:
                report.refused.append(str(exc))
                continue
            if runs:
                say(f"sealed unfinished {root}: run {', '.join(runs)} marked killed")
                sealed.append(root)
            else:
                say(f"skipped {root}: unfinished and nothing measured in it")
        return sealed

    def close(self) -> None:
        self.store.close()


def _said(done: Ingested, checking: bool = False) -> str:
    runs = ", ".join(f"{r.run_id} ({r.status}, {r.invocations} invocations)" for r in done.runs)
    if not done.added:
        return f"already in the history: {done.root} (run {runs}); nothing added"
    said = f"{'checked' if checking else 'ingested'} {done.root}: run {runs}"
    if done.clock_skew_s is not None:
        said += (f"\nclock: {done.root.name}'s node clock was {skew_text(done.clock_skew_s)} "
                 f"(manifest created_at vs its file time); run times corrected by "
                 f"{-done.clock_skew_s:+.0f} s, the skew stored as runs.clock_skew_s")
    return said
