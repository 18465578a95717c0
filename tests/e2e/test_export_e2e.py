"""`tidemark export RUN --format csv|parquet`: a run's invocations with every metric a column,
read back and compared with the DB (an imported asv run of tests/data/asv_json: its samples,
single values, and a failed and a skipped benchmark)."""
from __future__ import annotations

import io
import math

import duckdb
import pandas as pd
import pytest

from orchestrator.store.run_table import RUN_TABLE_COLUMNS
from tests.conftest import DATA
from tests.e2e.fixtures import query, tidemark

RESULTS = DATA / "asv_json" / "results" / "vm"
# metric → its column: `wall_s` is also an invocation column (the process's time), so the
# metric's column is prefixed, as on the site's downloads
COLUMNS = {"max_rss_bytes": "max_rss_bytes", "memory_bytes": "memory_bytes",
           "track_value": "track_value", "wall_s": "metric_wall_s"}


@pytest.fixture
def db(tmp_path):
    tidemark(tmp_path, "import", str(RESULTS), "--format", "asv_json", "--db",
             str(tmp_path / "tidemark.duckdb"))
    return tmp_path


def _in_db(tmp) -> tuple[list[tuple], dict[tuple[int, str], float], str]:
    """The sampled run's invocations (seq, benchmark, status), its metrics by (seq, name),
    and its id."""
    (run_id,) = query(tmp, "SELECT r.run_id FROM runs r JOIN builds b USING (build_id) "
                           "WHERE b.commit_sha LIKE '3672976a%'")[0]
    rows = query(tmp, "SELECT seq, benchmark, status FROM invocations WHERE run_id = ? "
                      "ORDER BY seq", [run_id])
    metrics = {(seq, name): value for seq, name, value in query(tmp, """SELECT i.seq, m.name,
        m.value FROM metrics m JOIN invocations i USING (invocation_id) WHERE i.run_id = ?""",
                                                                 [run_id])}
    return rows, metrics, run_id


def _compare(frame: pd.DataFrame, rows: list[tuple], metrics: dict) -> None:
    assert list(frame.columns) == [*RUN_TABLE_COLUMNS, *COLUMNS.values()]
    assert list(zip(frame["seq"], frame["benchmark"], frame["status"])) == rows
    assert (frame["wall_s"] == 0).all()  # an imported row had no process
    for record in frame.to_dict("records"):
        for name, column in COLUMNS.items():
            value = metrics.get((record["seq"], name))
            cell = record[column]
            assert (value is None and (cell is None or math.isnan(cell))) or cell == value


def test_csv_and_parquet_hold_the_runs_invocations_and_metrics(db):
    rows, metrics, run_id = _in_db(db)
    assert len(rows) == 32 and len(metrics) == 30  # the failed and the skipped row have none
    args = ("export", run_id[:12], "--db", str(db / "tidemark.duckdb"))
    out = tidemark(db, *args, "--format", "parquet", "--out", str(db / "run.parquet"))
    assert f"{len(rows)} invocations written" in out.stdout
    with duckdb.connect() as con:
        parquet = con.execute("SELECT * FROM read_parquet(?)", [str(db / "run.parquet")]).df()
    _compare(parquet, rows, metrics)
    csv = tidemark(db, *args, "--format", "csv").stdout  # to standard output
    _compare(pd.read_csv(io.StringIO(csv), float_precision="round_trip"), rows, metrics)
    tidemark(db, *args, "--format", "csv", "--out", str(db / "run.csv"))
    assert (db / "run.csv").read_text() == csv


def test_parquet_to_standard_output_is_refused_in_one_line(db):
    proc = tidemark(db, "export", "latest", "--db", str(db / "tidemark.duckdb"), "--format",
                    "parquet", check=False)
    assert proc.returncode == 2 and "pass --out FILE.parquet" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
