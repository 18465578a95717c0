"""The History the verdicts read names each run's build (a real DuckDB file): the noise's
run-to-run changes are of runs of one build (analysis.noise)."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from orchestrator.analysis.noise import series_noise
from orchestrator.store import Store, reads

# run, build (None: an import, which names none), ops/s median; oldest first.
RUNS = [("r1", "b-7.8.3", 100.0), ("r2", "b-7.8.3", 110.0), ("r3", "b-9.10.0", 150.0),
        ("r4", None, 151.0), ("r5", "b-9.10.0", 148.0)]


def _history_db(path: Path) -> Path:
    Store(path).close()  # the schema, migrated
    con = duckdb.connect(str(path))
    for day, (run, build, ops) in enumerate(RUNS, start=1):
        con.execute("INSERT INTO runs (run_id, started_at, status, build_id) VALUES "
                    "(?, ?, 'ok', ?)", [run, f"2026-01-0{day}T00:00:00Z", build])
        con.execute("INSERT INTO invocations (invocation_id, run_id, seq, phase, series_key, "
                    "status) VALUES (?, ?, 1, 'measured', 'k', 'ok')", [f"{run}-1", run])
        con.execute("INSERT INTO metrics (invocation_id, name, value, unit, better) VALUES "
                    "(?, 'ops_per_sec', ?, 'ops/s', 'higher')", [f"{run}-1", ops])
    con.close()
    return path


def test_the_history_names_each_runs_build(tmp_path: Path) -> None:
    con = duckdb.connect(str(_history_db(tmp_path / "t.duckdb")), read_only=True)
    try:
        history = reads.load_history(con, ["k"], ["ops_per_sec"])
        with reads.remembering_history(con):  # a remembered subset names them too
            reads.load_history(con, ["k"], ["ops_per_sec", "p50_us"])
            assert reads.load_history(con, ["k"], ["ops_per_sec"]) == history
    finally:
        con.close()
    assert history.builds == {run: build for run, build, _ in RUNS if build}
    # The candidate r5 left out: r1 → r2 is of one build, r2 → r3 an upgrade (+36 %: not
    # noise), r3 → r4 of no known build (an import): the tail is r1 → r2's 10 %.
    noise = series_noise(history, "k", "ops_per_sec", ("r5",))
    assert (noise.changes, noise.same_build) == (1, True)
    assert noise.tail == pytest.approx(0.10)
