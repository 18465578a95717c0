"""Schema v4 on a real DuckDB file: series split only by compiler or CMake flags merge into one
series (their key hashes only what must match), invocations and aggregates follow."""
import json

import duckdb

from orchestrator.analysis.identity import series_key
from orchestrator.store import Store
from orchestrator.store.schema import LATEST_VERSION, MIGRATIONS

IDENTITY = {"engine": "rocksdb", "workload": "readrandom", "benchmark": "readrandom",
            "params": {"num": 5000}, "threads": 1, "cache_state": "warm",
            "build_variant": "release", "machine_fingerprint": "fp"}


def database_at(path, last: int) -> duckdb.DuckDBPyConnection:
    """A file migrated up to schema version `last`, open for the test to add old rows."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE schema_version (version INTEGER, applied_at TIMESTAMPTZ)")
    for version, statements in MIGRATIONS[:last]:
        for step in statements:
            step(con) if callable(step) else con.execute(step)
        con.execute("INSERT INTO schema_version VALUES (?, now())", [version])
    return con


def v3_database(path):
    con = database_at(path, 3)
    for old_key, flags in (("old-a", ["-DX=1"]), ("old-b", ["-DX=2"])):
        con.execute("INSERT INTO series VALUES (?, 'rocksdb', 'readrandom', 'readrandom', ?, 1, "
                    "'warm', 'release', 'g++ 12', ?, 'fp')",
                    [old_key, json.dumps({"num": 5000}), json.dumps(flags)])
        con.execute("INSERT INTO invocations (invocation_id, run_id, seq, series_key) VALUES "
                    "(?, ?, 1, ?)", [f"run-{old_key}-0001", f"run-{old_key}", old_key])
        con.execute("INSERT INTO aggregates (run_id, series_key) VALUES (?, ?)",
                    [f"run-{old_key}", old_key])
    con.execute("INSERT INTO runs (run_id) VALUES ('run-old-a')")
    con.close()


def test_v4_rekeys_series_and_adds_the_runner(tmp_path):
    db = tmp_path / "old.duckdb"
    v3_database(db)
    Store(db).close()  # opening migrates
    con = duckdb.connect(str(db), read_only=True)
    new = series_key(IDENTITY)
    assert con.execute("SELECT series_key FROM series").fetchall() == [(new,)]
    assert con.execute("SELECT DISTINCT series_key FROM invocations").fetchall() == [(new,)]
    assert con.execute("SELECT DISTINCT series_key FROM aggregates").fetchall() == [(new,)]
    assert con.execute("SELECT runner FROM runs").fetchall() == [("host",)]
    assert con.execute("SELECT max(version) FROM schema_version").fetchone()[0] == LATEST_VERSION
    con.close()


def test_v5_records_the_ab_design_and_old_jobs_stay_interleaved(tmp_path):
    """An ab job stored before v5 ran today's interleaved order: it keeps it as its design (and
    is analysed as pairs); a job written after v5 records its own design and stopping state."""
    db = tmp_path / "v4.duckdb"
    con = database_at(db, 4)
    con.execute("INSERT INTO ab_pairs VALUES ('ab-old', 'r-a', 'r-b', 1, true, '[]', '[]', "
                "'[{\"point\": 1, \"rep\": 1, \"order\": \"ba\"}]', now())")
    con.close()
    store = Store(db)  # opening migrates
    store.record_ab({"ab_id": "ab-new", "run_a": "n-a", "run_b": "n-b", "seed": 2,
                     "same_build": False, "overrides_a": [], "overrides_b": [], "schedule": [],
                     "design": "duet", "adaptive": {"max_rounds": 20, "rounds_used": {}}})
    store.update_ab("ab-new", [{"point": 1, "rep": 1, "order": "ab"}],
                    {"max_rounds": 20, "rounds_used": {"1": 1}})
    store.close()
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT ab_id, design, adaptive->>'$.max_rounds', "
                       "adaptive->'$.rounds_used'->>'1', json_array_length(schedule) "
                       "FROM ab_pairs ORDER BY ab_id").fetchall()
    assert rows == [("ab-new", "duet", "20", "1", 1), ("ab-old", "interleaved", None, None, 1)]
    assert con.execute("SELECT max(version) FROM schema_version").fetchone()[0] == LATEST_VERSION
    con.close()


def test_v6_gives_old_runs_no_sweep_and_no_resumes(tmp_path):
    """Runs stored before v6 were not jobs of a recorded sweep and were never resumed."""
    db = tmp_path / "v5.duckdb"
    con = database_at(db, 5)
    con.execute("INSERT INTO runs (run_id, status) VALUES ('old', 'interrupted')")
    con.close()
    Store(db).close()  # opening migrates
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT run_id, sweep, resumes FROM runs").fetchall() == [("old", None, None)]
    con.close()
