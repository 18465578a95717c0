"""The history published as Parquet (reports/build/history_parquet.py): the tables with a row per
invocation are split into files of BLOCK_RUNS runs; the files of each table hold exactly its
rows in the DB; a rebuild into the same out folder after the DB changed equals a build from
scratch (every file, the CSV files put together from each run's kept rows included) and writes
again only the blocks whose content changed.

The history is tests/reports/build/test_site_cache.py's (six runs written through the store, real MkDocs
builds), with a histogram and a metric of no invocation added by hand.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from orchestrator.store import Store
from reports.build import history_parquet
from reports.build.site import build_site
from tests.reports.build.test_site_cache import (add_run, differences, history,  # noqa: F401 - fixtures
                                   one_generation_time, published, run_id)


def table_files(site_dir: Path) -> dict[str, list[str]]:
    """table → its files, as the manifest lists them (paths under data/)."""
    manifest = json.loads((site_dir / "data" / "manifest.json").read_text())
    return {table["name"]: [part["file"] for part in table["files"]]
            for table in manifest["tables"]}


def assert_same_rows(db: Path, site_dir: Path) -> None:
    """Each table's files together hold its rows in the DB, each once (the same multiset)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        for table, files in table_files(site_dir).items():
            listed = ", ".join(f"'{site_dir / 'data' / name}'" for name in files)
            published_rows = f"SELECT * FROM read_parquet([{listed}])"
            for a, b in ((f'SELECT * FROM "{table}"', published_rows),
                         (published_rows, f'SELECT * FROM "{table}"')):
                assert con.execute(f"SELECT count(*) FROM ({a} EXCEPT ALL {b})").fetchone() == \
                    (0,), table
            assert con.execute(f"SELECT count(*) FROM ({published_rows})").fetchone() == \
                con.execute(f'SELECT count(*) FROM "{table}"').fetchone(), table
    finally:
        con.close()


def edit(db: Path, *statements: str) -> None:
    """Rows no writer of the store makes (an import or a hand edit might)."""
    con = duckdb.connect(str(db))
    try:
        for statement in statements:
            con.execute(statement)
    finally:
        con.close()


def rebuild_and_compare(db: Path, out: Path, fresh: Path) -> dict[str, str]:
    """A rebuild into `out` equals a build from scratch, and holds the DB's rows; returns the
    kept file of each published name."""
    build_site(db, out)
    shutil.rmtree(fresh, ignore_errors=True)
    build_site(db, fresh)
    assert differences(out / "site", fresh / "site") == []
    assert_same_rows(db, out / "site")
    return published(out)


def test_blocks_of_runs_hold_every_row_and_only_changed_blocks_are_written_again(
        history: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history_parquet, "BLOCK_RUNS", 2)
    edit(history,  # histograms of runs 0 and 3; a metric whose invocation is gone
         f"""INSERT INTO histograms SELECT invocation_id, 'latency_us', 1.0, 2.0, seq
             FROM invocations WHERE run_id IN ('{run_id(0)}', '{run_id(3)}')""",
         "INSERT INTO metrics VALUES ('gone-0001', 'ops_per_sec', 1.0, 'ops/s', 'higher')")
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    first = rebuild_and_compare(history, out, fresh)
    files = table_files(out / "site")
    assert files["metrics"] == [f"metrics/metrics-{i:04d}.parquet" for i in range(3)] + [
        "metrics/metrics-other.parquet"]
    assert files["histograms"] == ["histograms/histograms-0000.parquet",
                                   "histograms/histograms-0001.parquet"]  # blocks with rows
    assert files["invocations"] == [f"invocations/invocations-{i:04d}.parquet" for i in range(3)]
    assert files["timeseries"] == ["timeseries.parquet"]  # empty: one file

    add_run(history, 6)  # the newest run: a block of its own
    second = rebuild_and_compare(history, out, fresh)
    kept = [f"parquet {table} {i}" for table in ("metrics", "invocations") for i in range(3)] + [
        "parquet metrics other", "parquet histograms 0", "parquet histograms 1"]
    assert all(second[name] == first[name] for name in kept) and "parquet metrics 3" not in first
    assert "parquet invocations 3" in second and "parquet invocations 3" not in first
    # The series CSV files are put together from each run's rows: only the new run's are read.
    assert [name for name in second if name.startswith("series rows ")
            and second[name] != first.get(name)] == [f"series rows {run_id(6)}"]

    store = Store(history)  # a label (in run 0's fingerprint); a histogram and a metric of
    store.set_label(run_id(0), "baseline")  # run 3 changed under it (no writer does this)
    store.close()
    edit(history, f"UPDATE histograms SET count = count + 1 WHERE invocation_id LIKE "
                  f"'{run_id(3)}-%'",
         f"UPDATE metrics SET value = value * 2 WHERE invocation_id = '{run_id(3)}-0001'")
    third = rebuild_and_compare(history, out, fresh)
    # The fingerprinted tables' blocks of runs 0 and 3 (a run's fingerprint covers its label).
    assert sorted(name for name in third if name.startswith("parquet")
                  and third[name] != second[name]) == [
        "parquet histograms 1", "parquet invocations 0", "parquet invocations 1",
        "parquet metrics 0", "parquet metrics 1", "parquet runs"]

    store = Store(history)  # an older run removed: the blocks after it shift
    store.remove_run(run_id(1))
    store.close()
    fourth = rebuild_and_compare(history, out, fresh)
    assert fourth["parquet metrics 0"] != third["parquet metrics 0"]
    assert fourth["parquet metrics other"] == first["parquet metrics other"]
