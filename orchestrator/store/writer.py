"""The results database (DuckDB): the only writer; one commit per invocation.

The file is opened for each write and closed after it (store.connection explains why), so
readers are never locked out for longer than one commit.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
import functools
import json
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

import duckdb

from ..adapters.results import StoredAggregate
from ..analysis.alerts import NEW, alerts_of
from ..analysis.confirm import Confirmation
from ..analysis.identity import SERIES_KEYS
from ..build.engine import Build
from ..errors import DiskFull, StoreError
from ..liveness import is_gone
from ..record import Invocation
from .connection import backup, check_database, connect
from .merge import BundleRow, already_merged, merge_bundle, rollback
from .schema import INVOCATION_COLUMNS, LATEST_VERSION, MIGRATIONS, invocation_row, to_json


@dataclass(frozen=True)
class ImportBatch:
    """One imported run (orchestrator.history.importer builds it); Store.add_import writes all or none."""

    sha256: str
    run: dict[str, Any]
    machine_facts: dict[str, Any]
    series: tuple[tuple[str, dict[str, Any]], ...]
    invocations: tuple[Invocation, ...]
    aggregates: tuple[StoredAggregate, ...]
    source_meta: dict[str, Any]
    build: dict[str, Any] | None = None  # the commit the file measured (asv), else none


def _now() -> datetime:
    return datetime.now(timezone.utc)


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    con.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER, applied_at TIMESTAMPTZ)")
    row = con.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def migrate(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    current = schema_version(con)
    if current > LATEST_VERSION:
        raise StoreError(f"results database {path} has schema v{current}, newer than this "
                         f"Tidemark (v{LATEST_VERSION}); upgrade Tidemark")
    for version, statements in MIGRATIONS:
        if version <= current:
            continue
        con.execute("BEGIN")
        for step in statements:
            step(con) if callable(step) else con.execute(step)
        con.execute("INSERT INTO schema_version VALUES (?, ?)", [version, _now()])
        con.execute("COMMIT")
    return LATEST_VERSION


_json = to_json


def _session(method: Callable[..., Any]) -> Callable[..., Any]:
    """Run a Store method with the file open (opened here unless an outer method has it)."""
    @functools.wraps(method)
    def wrapper(self: "Store", *args: Any, **kwargs: Any) -> Any:
        try:
            with self._open():
                return method(self, *args, **kwargs)
        except (duckdb.Error, OSError) as exc:
            # A full disk fails the commit (its WAL) or the checkpoint at close; the
            # transaction is rolled back and the file stays as it was: one line, not DuckDB's.
            DiskFull.raise_if(exc, self.path)
            raise
    return wrapper


class Store:
    """Writes machines, builds, runs and invocations; each call commits before returning."""

    def __init__(self, path: Path, check: bool = False, lock_wait_s: float | None = None):
        """Migrate the DB; with `check`, first read all of it, so a damaged file is refused
        before anything is written (a run checks before it builds or measures)."""
        self.path = path
        self.lock_wait_s = lock_wait_s
        self._con: duckdb.DuckDBPyConnection | None = None
        self._pending_series: dict[str, dict[str, Any]] = {}
        self.killed_runs: list[str] = []  # runs found `running` with their process gone
        self._prepare(check)

    @_session
    def _prepare(self, check: bool) -> None:
        if check:
            check_database(self.con, self.path)
        migrate(self.con, self.path)
        self._mark_killed_runs()

    def _mark_killed_runs(self) -> None:
        """A run left `running` by a process that no longer exists on this host was killed."""
        rows = self.con.execute("SELECT run_id, json_extract(machine_state, '$.process')::VARCHAR "
                                "FROM runs WHERE status = 'running'").fetchall()
        for run_id, process in rows:
            if is_gone(json.loads(process) if process else None):
                self.con.execute("UPDATE runs SET status = 'killed', finished_at = ? WHERE "
                                 "run_id = ?", [_now(), run_id])
                self.killed_runs.append(run_id)

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        assert self._con is not None, "Store methods open the file themselves"
        return self._con

    @contextmanager
    def _open(self) -> Iterator[None]:
        if self._con is not None:
            yield
            return
        self._con = connect(self.path, wait_s=self.lock_wait_s)
        try:
            self._flush_series()
            yield
        finally:
            con, self._con = self._con, None  # closed, even when its checkpoint fails
            con.close()

    @contextmanager
    def reading(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """The file opened for reading what was written (e.g. `tidemark ab` deciding whether
        another round is needed), closed after."""
        with self._open():
            yield self.con

    @contextmanager
    def holding(self) -> Iterator[None]:
        """Keep the file open across many writes (generated or migrated history): one open
        and one checkpoint, where a run opens it per commit so readers can get in between."""
        with self._open():
            yield

    def close(self) -> None:
        """Write what is still buffered (series recorded without an invocation yet)."""
        if self._pending_series:
            with self._open():
                pass

    @_session
    def record_machine(self, facts: dict[str, Any]) -> None:
        self.con.execute(
            # Facts outside the fingerprint (hostname, data device, tool versions) may change
            # on the same hardware: the machine page shows the newest.
            "INSERT INTO machines VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (fingerprint) DO UPDATE "
            "SET hostname = excluded.hostname, facts = excluded.facts",
            [facts["fingerprint"], facts.get("hostname"), facts.get("cpu_model"),
             facts.get("logical_cpus"), facts.get("ram_gib"), _json(facts), _now()])

    @_session
    def record_build(self, build: Build) -> None:
        rev = build.revision
        self.con.execute(
            "INSERT INTO builds (build_id, engine, version, variant, source_kind, "
            "source_package, source_version, compiler, compiler_version, cmake_version, "
            "cmake_flags, build_seconds, binary_sha256, provenance, created_at, commit_sha, "
            "commit_subject, commit_author, commit_date, commit_dirty) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [build.build_id, build.engine, build.version, build.variant, build.source_kind,
             build.source_package, build.source_version, build.compiler,
             build.compiler_version, build.cmake_version, _json(list(build.cmake_flags)),
             build.build_seconds, build.binary_sha256, _json(asdict(build)), build.created_at,
             rev.get("sha") or None, rev.get("subject"), rev.get("author"),
             rev.get("date") or None, rev.get("dirty") or None])
        if build.images:  # a build first stored by a host run gains its images later
            self.con.execute("UPDATE builds SET provenance = json_merge_patch(coalesce(provenance, "
                             "'{}'), ?) WHERE build_id = ?",
                             [_json({"images": build.images}), build.build_id])

    @_session
    def start_run(self, run: dict[str, Any]) -> None:
        columns = ["run_id", "started_at", "status", "engine", "engine_version", "build_variant",
                   "build_id", "build_cached", "machine_fingerprint", "suite", "label",
                   "cache_state", "config", "overrides", "tidemark_sha", "machine_state",
                   "planned_invocations", "verified", "notes", "runner", "sweep"]
        values = [run.get(c) for c in columns]
        values[columns.index("runner")] = run.get("runner") or "host"
        for json_col in ("config", "overrides", "machine_state", "notes", "sweep"):
            values[columns.index(json_col)] = _json(run.get(json_col))
        self.con.execute(f"INSERT INTO runs ({', '.join(columns)}) VALUES "
                         f"({', '.join('?' * len(columns))})", values)
        if run.get("note"):  # note= at run time
            self.add_note(run["run_id"], run["note"], origin="run")

    @_session
    def finish_run(self, run_id: str, status: str, machine_state: dict[str, Any]) -> None:
        self.con.execute("UPDATE runs SET status = ?, finished_at = ?, machine_state = ? "
                         "WHERE run_id = ?", [status, _now(), _json(machine_state), run_id])

    @_session
    def resume_run(self, run_id: str, process: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
        """Mark a run `running` again for `tidemark run --resume` (this process owns it now, so a
        kill is recognised as before) and add the resume to its list; its machine state."""
        row = self.con.execute("SELECT machine_state, resumes FROM runs WHERE run_id = ?",
                               [run_id]).fetchone()
        if row is None:
            raise StoreError(f"no run {run_id!r} in {self.path}")
        state = {**(json.loads(row[0]) if row[0] else {}), "process": process}
        resumes = (json.loads(row[1]) if row[1] else []) + [entry]
        self.con.execute("UPDATE runs SET status = 'running', finished_at = NULL, "
                         "machine_state = ?, resumes = ? WHERE run_id = ?",
                         [_json(state), _json(resumes), run_id])
        return state

    @_session
    def set_label(self, run_id: str, label: str) -> str:
        """Label an existing run (e.g. mark it the baseline); returns its previous label."""
        row = self.con.execute("SELECT label FROM runs WHERE run_id = ?", [run_id]).fetchone()
        if row is None:
            raise StoreError(f"no run {run_id!r} in {self.path}")
        self.con.execute("UPDATE runs SET label = ? WHERE run_id = ?", [label, run_id])
        return row[0] or ""

    @_session
    def add_note(self, run_id: str, text: str, origin: str = "note") -> int:
        """A person's note about a run (shown on the site beside its numbers); returns how many
        notes the run has now."""
        if not self.con.execute("SELECT 1 FROM runs WHERE run_id = ?", [run_id]).fetchone():
            raise StoreError(f"no run {run_id!r} in {self.path}")
        self.con.execute("INSERT INTO run_notes VALUES (?, ?, ?, ?)", [run_id, _now(), text, origin])
        return int(self.con.execute("SELECT count(*) FROM run_notes WHERE run_id = ?",
                                    [run_id]).fetchone()[0])

    @_session
    def record_ab(self, ab: dict[str, Any]) -> None:
        """Link the two runs of one `tidemark ab` job (before they run: a crash keeps the link)."""
        self.con.execute(
            "INSERT INTO ab_pairs (ab_id, run_a, run_b, seed, same_build, overrides_a, "
            "overrides_b, schedule, created_at, design, adaptive) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [ab["ab_id"], ab["run_a"], ab["run_b"], ab["seed"], ab["same_build"],
             _json(ab["overrides_a"]), _json(ab["overrides_b"]), _json(ab.get("schedule", [])),
             _now(), ab.get("design", "interleaved"),
             _json(ab["adaptive"]) if ab.get("adaptive") else None])

    @_session
    def update_ab(self, ab_id: str, schedule: list[dict[str, Any]],
                  adaptive: dict[str, Any] | None) -> None:
        """The rounds an adaptive job has run so far, and its stopping state (after each round)."""
        self.con.execute("UPDATE ab_pairs SET schedule = ?, adaptive = ? WHERE ab_id = ?",
                         [_json(schedule), _json(adaptive) if adaptive else None, ab_id])

    @_session
    def record_confirmations(self, base_run: str, cand_run: str,
                             confirmations: Sequence[Confirmation]) -> None:
        """A gate's confirmations of its flagged series (analysis.confirm), all or none."""
        now = _now()
        rows = [[base_run, cand_run, c.series_key, c.metric, c.label, c.verdict,
                 _json(asdict(c.between)), _json(asdict(c.paired)) if c.paired else None,
                 c.same_build, c.ab_id or None, c.why or None, now] for c in confirmations]

        alerts = [[a.alert_id, now, base_run, cand_run, a.series_key, a.metric, a.label,
                   a.direction, a.ab_id, a.between_change, a.paired_change, a.threshold, NEW, now]
                  for a in alerts_of(cand_run, confirmations)]

        def write() -> None:
            self.con.executemany("INSERT INTO confirmations VALUES "
                                 "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            if alerts:  # a confirmed change is an alert (once per run, series and metric)
                self.con.executemany(
                    "INSERT INTO alerts (alert_id, created_at, base_run, cand_run, series_key, "
                    "metric, label, direction, ab_id, between_change, paired_change, threshold, "
                    "state, state_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT DO NOTHING", alerts)
        if rows:
            self._in_transaction(write)

    @_session
    def set_alert_state(self, alert_id: str, state: str, note: str = "",
                        fixed_by: str = "") -> None:
        """`tidemark alert STATE ID`: the state, when, and the note or fixing run/commit."""
        found = self.con.execute("SELECT 1 FROM alerts WHERE alert_id = ?", [alert_id]).fetchone()
        if not found:
            known = [a for (a,) in self.con.execute(
                "SELECT alert_id FROM alerts ORDER BY created_at DESC LIMIT 3").fetchall()]
            raise StoreError(f"no alert {alert_id!r} in {self.path}; newest: "
                             f"{', '.join(known) or 'none'} (tidemark alert list)")
        self.con.execute("UPDATE alerts SET state = ?, state_at = ?, note = coalesce(?, note), "
                         "fixed_by = coalesce(?, fixed_by) WHERE alert_id = ?",
                         [state, _now(), note or None, fixed_by or None, alert_id])

    @_session
    def save_bisect(self, bisect: dict[str, Any]) -> None:
        """A bisect's row, written whole after every judged commit (so it resumes from there)."""
        columns = ("bisect_id", "repo", "good", "bad", "overrides", "metric", "commits",
                   "steps", "status", "first_bad")
        values = [_json(bisect[c]) if c in ("overrides", "commits", "steps") else bisect[c]
                  for c in columns]
        self.con.execute(
            f"INSERT INTO bisects ({', '.join(columns)}, created_at, updated_at) VALUES "
            f"({', '.join('?' * len(columns))}, ?, ?) ON CONFLICT (bisect_id) DO UPDATE SET "
            f"steps = excluded.steps, status = excluded.status, first_bad = excluded.first_bad, "
            f"updated_at = excluded.updated_at", [*values, _now(), _now()])

    def record_series(self, series_key: str, identity: dict[str, Any]) -> None:
        """Buffered: written with the next write (an invocation of the series, in practice), so
        a run opens the file once per invocation."""
        self._pending_series[series_key] = identity
        if self._con is not None:
            self._flush_series()

    def _flush_series(self) -> None:
        # Taken before the write: when it fails (a full disk), the session's own write fails
        # with it, so no stored invocation needs these series; the run loop records a series
        # again with each invocation, and close() must not fail again on them.
        pending, self._pending_series = self._pending_series, {}
        if not pending:
            return
        self.con.executemany(
            f"INSERT INTO series ({', '.join(SERIES_KEYS)}, series_key) VALUES "
            f"({', '.join('?' * (len(SERIES_KEYS) + 1))}) ON CONFLICT DO NOTHING",
            [[_json(identity[k]) if k == "params" else identity[k] for k in SERIES_KEYS] + [key]
             for key, identity in pending.items()])

    @_session
    def add_invocation(self, inv: Invocation) -> None:
        """Invocation, metrics, histograms and time series in one transaction."""
        self._in_transaction(lambda: self._insert_invocation(inv))

    def _in_transaction(self, write: Callable[[], None]) -> None:
        self.con.execute("BEGIN")
        try:
            write()
            self.con.execute("COMMIT")
        except Exception:
            rollback(self.con)
            raise

    def _insert_invocation(self, inv: Invocation) -> None:
        iid = inv.invocation_id
        con = self.con
        con.execute(f"INSERT INTO invocations ({', '.join(INVOCATION_COLUMNS)}) VALUES "
                    f"({', '.join('?' * len(INVOCATION_COLUMNS))})", invocation_row(inv))
        if inv.metrics:
            con.executemany("INSERT INTO metrics VALUES (?, ?, ?, ?, ?)",
                            [[iid, m.name, m.value, m.unit, m.better] for m in inv.metrics])
        rows = [[iid, h.name, lo, hi, n] for h in inv.histograms for lo, hi, n in h.buckets]
        if rows:
            con.executemany("INSERT INTO histograms VALUES (?, ?, ?, ?, ?)", rows)
        points = [[iid, s.name, t, v] for s in inv.series for t, v in s.points]
        if points:
            con.executemany("INSERT INTO timeseries VALUES (?, ?, ?, ?)", points)

    @_session
    def add_aggregates(self, aggregates: Sequence[StoredAggregate]) -> None:
        """Statistics a tool computed (mean, cv, BigO, ...), one row per metric; one commit."""
        self._in_transaction(lambda: self._insert_aggregates(aggregates))

    def _insert_aggregates(self, aggregates: Sequence[StoredAggregate]) -> None:
        rows = [[a.run_id, a.series_key, a.workload, a.row.name, a.row.threads,
                 _json(dict(a.row.params)), a.row.aggregate, m.name, m.value, m.unit, m.better,
                 _json(list(a.row.notes))] for a in aggregates for m in a.row.metrics]
        if rows:
            self.con.executemany("INSERT INTO aggregates VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                                 "?, ?)", rows)

    @_session
    def find_import(self, sha256: str) -> str | None:
        """The run that imported a file with this sha256, if any."""
        row = self.con.execute("SELECT run_id FROM runs WHERE source_sha256 = ? LIMIT 1",
                               [sha256]).fetchone()
        return row[0] if row else None

    @_session
    def add_import(self, batch: ImportBatch) -> None:
        """A whole imported run in one transaction: all of it is stored, or none of it."""
        def write() -> None:
            self.record_machine(batch.machine_facts)
            if batch.build:
                self._record_import_build(batch.build)
            self.start_run(batch.run)
            self.con.execute("UPDATE runs SET source = 'import', source_sha256 = ?, "
                             "source_meta = ?, finished_at = started_at WHERE run_id = ?",
                             [batch.sha256, _json(batch.source_meta), batch.run["run_id"]])
            for key, identity in batch.series:
                self.record_series(key, identity)
            for inv in batch.invocations:
                self._insert_invocation(inv)
            self._insert_aggregates(batch.aggregates)
        self._in_transaction(write)

    def _record_import_build(self, build: dict[str, Any]) -> None:
        """An imported commit's build (importer._commit_build): one per commit, kept as first
        recorded, as a measured build is."""
        columns = ("build_id", "engine", "version", "variant", "source_kind", "provenance",
                   "created_at", "commit_sha", "commit_date")
        self.con.execute(f"INSERT INTO builds ({', '.join(columns)}) VALUES "
                         f"({', '.join('?' * len(columns))}) ON CONFLICT DO NOTHING",
                         [_json(build[c]) if c == "provenance" else build[c] for c in columns])

    @_session
    def mark_killed(self, run_id: str) -> None:
        """A run left `running` by a process known to be gone (a fleet job killed outright on
        another host: `tidemark ingest --unfinished`)."""
        self.con.execute("UPDATE runs SET status = 'killed', finished_at = ? WHERE run_id = ? "
                         "AND status = 'running'", [_now(), run_id])

    @_session
    def merge_bundle(self, copy: Path, bundle: BundleRow) -> tuple[list[str], bool]:
        """A checked bundle's runs, all in one transaction (orchestrator/store/merge.py), and
        whether they were added: a bundle merged before (here, or by another ingest while this
        one waited for the file) adds nothing. The check and the merge share one session, which
        holds the file. `copy` is a private copy of the bundle's database: an older schema is
        migrated in it."""
        before = already_merged(self.con, bundle.bundle_id)
        if before is not None:
            return before, False
        con = duckdb.connect(str(copy))
        try:
            found = schema_version(con)
            if found != bundle.schema_version:
                raise StoreError(f"bundle {bundle.source}: its database has schema v{found}, its "
                                 f"manifest says v{bundle.schema_version}; nothing was written "
                                 f"from it")
            migrate(con, copy)
        finally:
            con.close()
        return merge_bundle(self.con, copy, bundle), True

    @_session
    def add_invocations_bulk(self, invocations: Sequence[Invocation]) -> None:
        """Many finished invocations in one transaction, inserted as whole tables.

        For generated or migrated history only (benchmarks/synthetic_history.py): a run in
        progress keeps using add_invocation, whose commit per invocation loses nothing on a crash.
        """
        import pandas as pd

        rows = [invocation_row(inv) for inv in invocations]
        tables = {
            "invocations": pd.DataFrame(rows, columns=list(INVOCATION_COLUMNS)),
            "metrics": pd.DataFrame([[inv.invocation_id, m.name, m.value, m.unit, m.better]
                                     for inv in invocations for m in inv.metrics],
                                    columns=["invocation_id", "name", "value", "unit", "better"]),
            "timeseries": pd.DataFrame([[inv.invocation_id, s.name, t, v] for inv in invocations
                                        for s in inv.series for t, v in s.points],
                                       columns=["invocation_id", "name", "t", "value"]),
        }

        def write() -> None:
            for table, frame in tables.items():
                if frame.empty:
                    continue
                columns = ", ".join(frame.columns)
                self.con.register("bulk_rows", frame)
                try:
                    self.con.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM bulk_rows")
                finally:
                    self.con.unregister("bulk_rows")
        self._in_transaction(write)

    @_session
    def remove_run(self, run_id: str) -> int:
        """Delete a run and everything measured in it (e.g. an import made by mistake); returns
        the number of invocations removed."""
        if not self.con.execute("SELECT 1 FROM runs WHERE run_id = ?", [run_id]).fetchone():
            raise StoreError(f"no run {run_id!r} in {self.path}")
        count = self.con.execute("SELECT count(*) FROM invocations WHERE run_id = ?",
                                 [run_id]).fetchone()[0]

        def delete() -> None:
            ids = "SELECT invocation_id FROM invocations WHERE run_id = ?"
            for table in ("metrics", "histograms", "timeseries"):
                self.con.execute(f"DELETE FROM {table} WHERE invocation_id IN ({ids})", [run_id])
            for table in ("invocations", "aggregates", "run_notes", "runs"):
                self.con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
            self.con.execute("DELETE FROM ab_pairs WHERE run_a = ? OR run_b = ?", [run_id, run_id])
            for table in ("confirmations", "alerts"):
                self.con.execute(f"DELETE FROM {table} WHERE base_run = ? OR cand_run = ?",
                                 [run_id, run_id])
        self._in_transaction(delete)
        return int(count)


def open_checked(path: Path, lock_wait_s: float | None = None) -> Store:
    """The store, opened before anything is written: a locked file is waited for or refused,
    a damaged one is refused, and a copy of the good file is kept (tidemark db backups)."""
    existed = path.exists()
    store = Store(path, check=True, lock_wait_s=lock_wait_s)
    if existed:
        backup(path)
    return store
