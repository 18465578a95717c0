"""Schema v4 on a real DuckDB file: series split only by compiler or CMake flags merge into one
series (their key hashes only what must match), invocations and aggregates follow."""
import json

import duckdb

from orchestrator.analysis.identity import series_key
from orchestrator.store import Store
from orchestrator.store.schema import MIGRATIONS

IDENTITY = {"engine": "rocksdb", "workload": "readrandom", "benchmark": "readrandom",
            "params": {"num": 5000}, "threads": 1, "cache_state": "warm",
            "build_variant": "release", "machine_fingerprint": "fp"}


def v3_database(path):
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE schema_version (version INTEGER, applied_at TIMESTAMPTZ)")
    for version, statements in MIGRATIONS[:3]:
        for sql in statements:
            con.execute(sql)
        con.execute("INSERT INTO schema_version VALUES (?, now())", [version])
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
    assert con.execute("SELECT max(version) FROM schema_version").fetchone()[0] == 4
    con.close()
