"""Run notes on a real DuckDB file: schema v8 (run_notes), `tidemark note`, `note=` at run
time, and a note removed with its run."""
from __future__ import annotations

import subprocess
from pathlib import Path

import duckdb
import pytest

from orchestrator.errors import StoreError
from orchestrator.store import Store
from orchestrator.store.schema import MIGRATIONS
from tests.e2e.fixtures import TIDEMARK
from tests.orchestrator.store.test_store_migration import database_at


def _run(store: Store, run_id: str, **extra) -> None:
    store.start_run({"run_id": run_id, "started_at": "2026-01-01T00:00:00Z", "status": "ok",
                     "engine": "leveldb", "engine_version": "1.23", "build_variant": "release",
                     "machine_fingerprint": "fp", "config": {}, "overrides": [], "notes": [],
                     **extra})


def test_v8_adds_run_notes_and_a_note_goes_with_its_run(tmp_path: Path) -> None:
    db = tmp_path / "v7.duckdb"
    con = database_at(db, len(MIGRATIONS) - 1)
    con.execute("INSERT INTO runs (run_id, started_at) VALUES ('old', '2025-01-01')")
    con.close()
    store = Store(db)  # opening migrates
    assert store.add_note("old", "measured before the allocator change") == 1
    _run(store, "new", note="note= at run time")
    assert store.add_note("new", "and one more") == 2
    with pytest.raises(StoreError, match="no run 'absent'"):
        store.add_note("absent", "text")
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT run_id, text, origin FROM run_notes ORDER BY created_at").fetchall()
    con.close()
    assert rows == [("old", "measured before the allocator change", "note"),
                    ("new", "note= at run time", "run"), ("new", "and one more", "note")]
    store.remove_run("new")
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT run_id FROM run_notes").fetchall() == [("old",)]
    con.close()


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([TIDEMARK, "note", *args], capture_output=True, text=True, timeout=120)


def test_tidemark_note_adds_a_note_to_the_selected_run(tmp_path: Path) -> None:
    db = tmp_path / "tidemark.duckdb"
    store = Store(db)
    _run(store, "r1")
    store.close()
    added = _cli("latest", "  new compaction settings  ", "--db", str(db))
    assert added.returncode == 0 and "run r1: note added (1 note)" in added.stdout
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT text, origin FROM run_notes").fetchall() == [
        ("new compaction settings", "note")]
    con.close()
    empty = _cli("r1", "   ", "--db", str(db))
    assert empty.returncode == 2 and empty.stderr.count("\n") == 1
    assert "the note is empty" in empty.stderr
    missing = _cli("label=nope", "text", "--db", str(db))
    assert missing.returncode != 0 and missing.stderr.count("\n") == 1
    assert "matches 0 run(s)" in missing.stderr


def test_note_is_a_config_key_of_tidemark_run(compose_conf) -> None:
    assert compose_conf(["note=why this run differs", "suite=tiny"]).note == "why this run differs"
    assert compose_conf(["suite=tiny"]).note == ""
    # A workload config may carry notes and gap notes (shown on the site beside its numbers).
    readrandom = compose_conf(["workload=readrandom"]).workload
    assert readrandom.notes and "p99_us" in readrandom.gap_notes
