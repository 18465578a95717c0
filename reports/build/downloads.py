"""The history published with the site (side effects, read-only on the DB): every table as
Parquet with a manifest naming the schema version (history_parquet.py), every series' raw
repetitions and every run's invocations as CSV. Written by DuckDB's COPY from the checked
snapshot the site is built from, so the files agree with the pages; only orchestrator/store
writes the results DB.

Layout under the built site:
    data/<table>.parquet, data/<table>/*.parquet  the whole history (history_parquet.py)
    data/manifest.json                            its files, tables and columns
    data/series/<series>.csv                      one row per repetition × metric of a series
    runs/<run>.invocations.csv                    beside the run page: its invocation table

A build into the same out folder as the last one writes again only the files whose content
changed (site_cache.KeptFiles): a Parquet file while its content is the same, a run's CSV
while its fingerprint (data/read_cache.py) is, a series' CSV while each run it holds is unchanged;
the others are hard-linked from out/cache into the site.
"""
from __future__ import annotations

import pickle
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Iterator

import duckdb
import pandas as pd

from orchestrator.store import connect
from orchestrator.store.run_table import invocations_wide, metric_columns, run_table_select

from ..data.site_cache import KeptFiles, digest, unpickled
from ..pages.format import slug
from .history_parquet import export_parquet, sql_text

DATA = "data"
SERIES = "series"
INVOCATIONS_SUFFIX = ".invocations.csv"
# The per-run CSV is a run's invocation table (orchestrator/store/run_table.py: its columns,
# the metric columns' names and the wide table `tm_wide` every CSV file is read from).


def _records(text: bytes) -> Iterator[bytes]:
    """The records of DuckDB's CSV text, each without its newline: a newline inside a quoted
    field (an error message's) belongs to its record, and a field's quotes come in pairs."""
    pending: list[bytes] = []
    quotes = 0
    for line in text.split(b"\n")[:-1]:  # the text ends with a newline
        pending.append(line)
        quotes += line.count(b'"')
        if quotes % 2 == 0:
            yield b"\n".join(pending)
            pending, quotes = [], 0


def _csv_parts(con: duckdb.DuckDBPyConnection, query: str, folder: Path
               ) -> tuple[bytes, dict[bytes, list[bytes]]]:
    """COPY `query` (its first column `part`, a slug, which it is ordered by first) as CSV:
    (the header without that column, part → its rows without it, in the query's order)."""
    whole = folder / ".parts.csv"
    folder.mkdir(parents=True, exist_ok=True)
    con.execute(f"COPY ({query}) TO {sql_text(str(whole))} (FORMAT csv, HEADER)")
    records = _records(whole.read_bytes())
    whole.unlink()
    header = next(records).split(b",", 1)[1]
    rows: dict[bytes, list[bytes]] = {}
    for record in records:
        part, row = record.split(b",", 1)  # a slug never needs quoting
        rows.setdefault(part, []).append(row)
    return header, rows


def _partitioned(con: duckdb.DuckDBPyConnection, query: str, folder: Path,
                 names: Iterable[tuple[str, Path]]) -> None:
    """COPY `query` (its first column `part`, a slug, which it is ordered by first) as one CSV
    per part without that column: (part, path) pairs; a part without rows gets the header.
    One ordered COPY split here, because DuckDB's PARTITION_BY writes a part's rows in an order
    of its own (not the query's, and not the same from one build to the next)."""
    header, rows = _csv_parts(con, query, folder)
    for part, path in names:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\n".join([header, *rows.get(part.encode(), ()), b""]))


def _register_slugs(con: duckdb.DuckDBPyConnection, name: str, column: str,
                    values: Iterable[str]) -> dict[str, str]:
    """A table `name`(column, part): value → its slug, the file name the site gives it (never
    quoted in a CSV line, which `_partitioned` relies on)."""
    slugs = {value: slug(value) for value in values}
    con.register(name, pd.DataFrame({column: list(slugs), "part": list(slugs.values())},
                                    dtype="object"))
    return slugs


def _invocation_csv(con: duckdb.DuckDBPyConnection, staging: Path, run_ids: list[str],
                    metrics: str) -> dict[str, Path]:
    """staging/<run>.invocations.csv for each run: every invocation with every metric it has
    (`metrics`: tm_wide's metric columns), in the order of its run page's table; a run without
    invocations gets the header (its page links the file). Returns run → file."""
    slugs = _register_slugs(con, "tm_invocation_parts", "run_id", run_ids)
    query = f"""SELECT p.part, {run_table_select(metrics)}
                FROM tm_wide w JOIN tm_invocation_parts p USING (run_id)
                ORDER BY p.part, w.seq"""
    files = {run: staging / f"{part}{INVOCATIONS_SUFFIX}" for run, part in slugs.items()}
    _partitioned(con, query, staging, [(slugs[run], path) for run, path in files.items()])
    return files


def _series_rows(con: duckdb.DuckDBPyConnection, staging: Path, keys: list[str],
                 runs: list[str], metrics: str) -> dict[str, dict[str, Any]]:
    """Each run's rows of the series CSV files (tm_wide holds its invocations): every measured
    (and callgrind) repetition, one row each with every metric, linked to its row on its run
    page; a failure is a row without metrics. Returns run → {"header": the CSV header, "parts":
    series slug → its rows}, kept per run: a series' file is its runs' rows in run order."""
    _register_slugs(con, "tm_series_parts", "series_key", keys)
    pages = _register_slugs(con, "tm_run_pages", "run_id", runs)
    query = f"""
        SELECT p.part || '/' || s.part AS part, w.run_id, r.started_at AS run_started_at,
               r.engine_version, r.label, w.seq, w.phase, w.repetition, w.status{metrics},
               'runs/' || p.part || '.html#inv-' || lpad(w.seq::VARCHAR, 4, '0') AS run_page
        FROM tm_wide w JOIN tm_series_parts s USING (series_key) JOIN runs r USING (run_id)
        JOIN tm_run_pages p USING (run_id)
        WHERE w.phase IN ('measured', 'callgrind')
        ORDER BY p.part, s.part, w.seq"""
    header, rows = _csv_parts(con, query, staging)
    found: dict[str, dict[str, Any]] = {run: {"header": header, "parts": {}} for run in runs}
    by_page = {page: run for run, page in pages.items()}
    for part, lines in rows.items():
        page, series = part.decode().split("/")
        found[by_page[page]]["parts"][series] = b"\n".join(lines)
    return found


def _series_csv(staging: Path, keys: list[str], runs: list[str],
                rows: dict[str, dict[str, Any]]) -> dict[str, Path]:
    """staging/<series>.csv for each series: its rows of each run of `runs` (`rows`, as
    _series_rows gives them), in that order. Returns series key → file."""
    header = rows[runs[0]]["header"]  # the same for every run: it names the columns
    files = {}
    for key in keys:
        part = slug(key)
        files[key] = staging / f"{part}.csv"
        files[key].write_bytes(b"\n".join(
            [header, *(rows[run]["parts"][part] for run in runs if part in rows[run]["parts"]),
             b""]))
    return files


def _series_runs(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """series key → the runs of tm_runs with a measured (or callgrind) invocation of it."""
    found: dict[str, list[str]] = {}
    for key, run in con.execute("""SELECT DISTINCT series_key, run_id FROM invocations
                                   JOIN tm_runs USING (run_id)
                                   WHERE phase IN ('measured', 'callgrind')
                                   ORDER BY series_key, run_id""").fetchall():
        found.setdefault(key, []).append(run)
    return found


def _kept(files: KeptFiles, kind: str, keys: dict[str, str]
          ) -> tuple[dict[str, Path], list[str]]:
    """(name → its kept file, the names whose file must be written again)."""
    found = {name: files.reused(f"{kind} {name}", key) for name, key in keys.items()}
    return ({n: path for n, path in found.items() if path is not None},
            sorted(n for n, path in found.items() if path is None))


def _series_files(con: duckdb.DuckDBPyConnection, files: KeptFiles, staging: Path,
                  run_keys: dict[str, str], kept: dict[str, Path],
                  series_runs: dict[str, list[str]], new_series: list[str], metrics: str
                  ) -> dict[str, Path]:
    """The series CSV files of `new_series` (series key → file), put together from each run's
    rows: `kept` from the last build (run → file) while the run's key is (`run_keys`: its
    fingerprint and the metric columns), read from tm_wide for the other runs."""
    rows = {run: unpickled(path) for run, path in kept.items()}
    made = [run for run in run_keys if run not in kept]
    if made:
        for run, found in _series_rows(con, staging, sorted(series_runs), made, metrics).items():
            files.new(f"series rows {run}", run_keys[run], ".pkl").write_bytes(
                pickle.dumps(found, protocol=5))
            rows[run] = found
    in_order = [run for (run,) in con.execute(
        "SELECT run_id FROM runs JOIN tm_runs USING (run_id) ORDER BY started_at, run_id")
        .fetchall()]
    return _series_csv(staging, new_series, in_order, rows)


def export_csv(con: duckdb.DuckDBPyConnection, files: KeptFiles, staging: Path,
               csv_runs: list[str], fingerprints: dict[str, str]
               ) -> tuple[dict[str, Path], dict[str, Path]]:
    """The CSV files of `csv_runs` (the newest runs: their pages show every invocation in
    detail): (run → its invocations' file, series key → its file). A file is written again
    only when a run it holds changed (`fingerprints`), or the metric columns did; a series'
    file is put together from each run's rows, kept per run, so only changed runs are read."""
    columns = metric_columns(con, csv_runs)
    con.execute("CREATE OR REPLACE TEMP TABLE tm_runs AS SELECT unnest(?::VARCHAR[]) AS run_id",
                [csv_runs])
    series_runs = _series_runs(con)
    run_keys = {run: digest(fingerprints[run], columns) for run in csv_runs}
    series_keys = {key: digest([(run, fingerprints[run]) for run in runs], columns)
                   for key, runs in series_runs.items()}
    run_files, new_runs = _kept(files, "invocations", run_keys)
    series_files, new_series = _kept(files, "series", series_keys)
    # Each run's rows are kept even when no series file is written, for the next build.
    kept_rows, rows_runs = _kept(files, "series rows", run_keys)
    rows_runs = rows_runs if new_series else []
    if not new_runs and not new_series:
        return run_files, series_files
    metrics = invocations_wide(con, columns, sorted(set(new_runs) | set(rows_runs)))
    staging.mkdir(parents=True, exist_ok=True)
    made_runs = _invocation_csv(con, staging, new_runs, metrics) if new_runs else {}
    for run, path in made_runs.items():
        run_files[run] = path.replace(files.new(f"invocations {run}", run_keys[run], ".csv"))
    made_series = _series_files(con, files, staging, run_keys, kept_rows, series_runs,
                                new_series, metrics) if new_series else {}
    for key, path in made_series.items():
        series_files[key] = path.replace(files.new(f"series {key}", series_keys[key], ".csv"))
    return run_files, series_files


def export_history(db: Path, files: KeptFiles, staging: Path, csv_runs: list[str],
                   fingerprints: dict[str, str], generated: datetime
                   ) -> tuple[dict[str, Any], dict[str, Path]]:
    """Everything above: (the Parquet manifest with what the CSV files cover, for the
    Downloads page; path in the built site → file). `staging`: a scratch folder."""
    con = connect(db, read_only=True)
    # One thread: the same bytes for a quarter less CPU (the metrics table's COPY: 1.3 instead
    # of 1.75 CPU-s), and this child runs while the parent and the statistics child have the
    # other cores' worth of work anyway.
    con.execute("SET threads = 1")
    try:
        manifest, parquet = export_parquet(con, files, generated, fingerprints)
        run_files, series_files = export_csv(con, files, staging, csv_runs, fingerprints)
    finally:
        con.close()
    manifest["run_files"] = sorted(run_files)
    manifest["series_files"] = {key: f"{slug(key)}.csv" for key in series_files}
    return manifest, {
        **{f"{DATA}/{name}": path for name, path in parquet.items()},
        **{f"runs/{slug(run)}{INVOCATIONS_SUFFIX}": path for run, path in run_files.items()},
        **{f"{DATA}/{SERIES}/{slug(key)}.csv": path for key, path in series_files.items()}}
