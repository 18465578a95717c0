"""The history published as Parquet (side effects, read-only on the DB): every table of the
results DB, written by DuckDB's COPY from the checked snapshot the site is built from.

Layout under the built site's data/ folder:
    <table>.parquet                       a table whose rows belong to no invocation (runs,
                                          series, ...): one file
    <table>/<table>-<block>.parquet       the invocations, and a table with a row per
                                          invocation and something (metrics, histograms,
                                          timeseries): one file per block of BLOCK_RUNS runs,
                                          in the order the runs started
    <table>/<table>-other.parquet         its rows of no run (an invocation without its run)

A table's files together hold every row of it, each once; manifest.json lists them. The blocks
exist so that a build after one run is added writes again only the newest block of the
metrics table (6 M rows on a long history: 1.5 CPU-s for all of it) and of the invocations
(600,000 rows: 0.3 CPU-s) and reuses the others
(site_cache.KeptFiles): a block's file is kept under a key of its content, the fingerprints of
its runs (data/read_cache.py: every row of their invocations and metrics) for the metrics table, a
hash of every row of the block for the others. Removing or inserting an older run shifts the
blocks after it, which are then written again: slower, never stale.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb

from orchestrator.store.reads import has_table
from orchestrator.store.run_table import sql_text
from orchestrator.store.schema import LATEST_VERSION

from ..data.queries import RUN_ORDER
from ..data.site_cache import KeptFiles, digest
from ..pages.format import slug

BLOCK_RUNS = 100  # runs per file of a per-invocation table: the newest block is written again
# The metrics table (60 M rows on a 10,000-run history, 43 % of its site) is written in blocks
# as Parquet v2: its doubles split byte by byte (BYTE_STREAM_SPLIT) compress 8 % better at
# zstd's default level in the CPU time v1 took at level 1 (600,000 rows: 4.50 MB in 0.23 CPU-s
# → 4.13 MB in 0.21). The other tables keep v1 at the default level (their JSON text is 30 %
# larger at level 1). The site's DuckDB-WASM (0.9.1) reads both.
_PARQUET_COMPRESSION = {"metrics": "COMPRESSION zstd, PARQUET_VERSION V2"}
_DEFAULT_COMPRESSION = "COMPRESSION zstd"
# Tables whose rows of a run the run's fingerprint hashes (read_cache._RUN_ROWS, _RUN_METRICS):
# their blocks are keyed on the fingerprints, not on a hash of their rows (0.6 CPU-s for
# metrics).
_FINGERPRINTED = {"metrics", "invocations"}
# A row's run: through its invocation, when the run is in `runs`.
_OF_RUNS = """SELECT i.invocation_id FROM invocations i JOIN runs r USING (run_id)"""


@dataclass(frozen=True)
class Part:
    """One published file of a table: its path under data/, the kept file, its rows."""
    name: str
    path: Path
    rows: int


def _schema_version(con: duckdb.DuckDBPyConnection) -> int | None:
    if not has_table(con, "schema_version"):
        return None
    return con.execute("SELECT max(version) FROM schema_version").fetchone()[0]


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[dict[str, str]]:
    return [{"name": name, "type": kind} for name, kind in con.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? "
        "ORDER BY ordinal_position", [table]).fetchall()]


def _copy(con: duckdb.DuckDBPyConnection, table: str, query: str, path: Path,
          params: list[Any] | None = None) -> int:
    """COPY `query` to `path` as Parquet; returns the rows written."""
    compression = _PARQUET_COMPRESSION.get(table, _DEFAULT_COMPRESSION)
    return con.execute(f"COPY ({query}) TO {sql_text(str(path))} "
                       f"(FORMAT parquet, {compression})", params or []).fetchone()[0]


def copy_block(con: duckdb.DuckDBPyConnection, table: str, runs: list[str], path: Path) -> int:
    """The rows of a table published in blocks (see the module doc) whose invocation is of one
    of `runs`, as Parquet at `path`; returns the rows written (benchmarks/site_floor.py times
    this very COPY)."""
    return _copy(con, table, f"""SELECT * FROM "{table}" t WHERE t.invocation_id IN
        (SELECT invocation_id FROM invocations WHERE run_id IN
         (SELECT unnest(?::VARCHAR[])))""", path, [runs])


def _rows_of(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    """A kept file's rows, from its footer."""
    return con.execute("SELECT count(*) FROM read_parquet(?)", [str(path)]).fetchone()[0]


def run_blocks(con: duckdb.DuckDBPyConnection) -> list[list[str]]:
    """The runs in the order they started, BLOCK_RUNS to a block (a new run joins the last)."""
    runs = [run for (run,) in con.execute(
        f"SELECT run_id FROM runs ORDER BY {RUN_ORDER}").fetchall()]
    return [runs[i:i + BLOCK_RUNS] for i in range(0, len(runs), BLOCK_RUNS)]


def _whole_table(con: duckdb.DuckDBPyConnection, files: KeptFiles, table: str,
                 columns: list[dict[str, str]]) -> Part:
    """<table>.parquet."""
    return _part_by_content(con, files, table, columns, f'SELECT * FROM "{table}"',
                            f"parquet {table}", f"{table}.parquet")


def _part_by_content(con: duckdb.DuckDBPyConnection, files: KeptFiles, table: str,
                     columns: list[dict[str, str]], query: str, name: str,
                     published: str) -> Part:
    """`query`'s rows of `table` as the file `published`, written again only when a hash of
    every row changed (a tenth of the cost of writing them)."""
    rows, content = con.execute(
        f"SELECT count(*), coalesce(sum(hash(t)), 0) FROM ({query}) t").fetchone()
    key = digest(columns, _PARQUET_COMPRESSION.get(table, _DEFAULT_COMPRESSION), rows, content)
    path = files.reused(name, key)
    if path is None:
        path = files.new(name, key, ".parquet")
        _copy(con, table, query, path)
    return Part(published, path, rows)


def _block_contents(con: duckdb.DuckDBPyConnection, table: str,
                    blocks: list[list[str]]) -> dict[int, tuple[int, int]]:
    """block → (rows, hash of every row) of `table`'s rows in it; blocks without rows absent."""
    con.execute("CREATE OR REPLACE TEMP TABLE tm_run_blocks AS SELECT unnest(?::VARCHAR[]) AS "
                "run_id, unnest(?::INTEGER[]) AS block",
                [[run for runs in blocks for run in runs],
                 [index for index, runs in enumerate(blocks) for _ in runs]])
    return {block: (int(n), int(h)) for block, n, h in con.execute(
        f"""SELECT b.block, count(*), sum(hash(t)) FROM "{table}" t
            JOIN invocations i USING (invocation_id) JOIN tm_run_blocks b USING (run_id)
            GROUP BY b.block""").fetchall()}


def _block_key(table: str, columns: list[dict[str, str]], runs: list[str],
               fingerprints: dict[str, str], contents: dict[int, tuple[int, int]] | None,
               index: int) -> str | None:
    """A block's content key; None when it has no rows (then it has no file)."""
    compression = _PARQUET_COMPRESSION.get(table, _DEFAULT_COMPRESSION)
    if contents is None:
        return digest(columns, compression, [(run, fingerprints[run]) for run in runs])
    if index not in contents:
        return None
    return digest(columns, compression, runs, contents[index])


def _blocked_table(con: duckdb.DuckDBPyConnection, files: KeptFiles, table: str,
                   columns: list[dict[str, str]], blocks: list[list[str]],
                   fingerprints: dict[str, str]) -> list[Part]:
    """A table's files in blocks: one per block of runs with rows, and one of the rows of no
    run; an empty table is one file, <table>.parquet, as the others are."""
    total = con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
    if total == 0:
        return [_whole_table(con, files, table, columns)]
    contents = None if table in _FINGERPRINTED else _block_contents(con, table, blocks)
    parts = []
    for index, runs in enumerate(blocks):
        key = _block_key(table, columns, runs, fingerprints, contents, index)
        if key is None:
            continue
        name = f"parquet {table} {index}"
        path = files.reused(name, key)
        if path is not None:
            rows = _rows_of(con, path)
        else:
            path = files.new(name, key, ".parquet")
            rows = copy_block(con, table, runs, path)
        if rows:  # a block of runs without rows of this table (fingerprinted) has no file
            parts.append(Part(f"{table}/{table}-{index:04d}.parquet", path, rows))
    if sum(part.rows for part in parts) != total:
        parts.append(_rows_of_no_run(con, files, table, columns))
    return parts


def _rows_of_no_run(con: duckdb.DuckDBPyConnection, files: KeptFiles, table: str,
                    columns: list[dict[str, str]]) -> Part:
    """<table>-other.parquet: the rows whose invocation or run is not in the DB (no writer
    leaves any; an import or a hand edit might)."""
    query = f"""SELECT * FROM "{table}" t
                WHERE NOT EXISTS (SELECT 1 FROM ({_OF_RUNS}) o
                                  WHERE o.invocation_id = t.invocation_id)"""
    return _part_by_content(con, files, table, columns, query, f"parquet {table} other",
                            f"{table}/{table}-other.parquet")


def _in_blocks(table: str, columns: list[dict[str, str]]) -> bool:
    """A table published in blocks of runs: the invocations, or one with a row per invocation
    and something."""
    names = {column["name"] for column in columns}
    return table == "invocations" or ("invocation_id" in names and "run_id" not in names)


def export_parquet(con: duckdb.DuckDBPyConnection, files: KeptFiles, generated: datetime,
                   fingerprints: dict[str, str]) -> tuple[dict[str, Any], dict[str, Path]]:
    """Every table's files (see the module doc), each written again only when its content
    changed; returns the manifest and the files (path under data/ → file). `fingerprints`:
    run → a hash of all the DB holds about it (read_cache.run_fingerprints)."""
    tables = [t for (t,) in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE NOT temporary ORDER BY table_name").fetchall()]
    blocks = run_blocks(con)
    entries, written = [], {}
    for table in tables:
        columns = _columns(con, table)
        parts = (_blocked_table(con, files, table, columns, blocks, fingerprints)
                 if _in_blocks(table, columns) else [_whole_table(con, files, table, columns)])
        listed = [{"file": part.name, "rows": part.rows, "bytes": part.path.stat().st_size}
                  for part in parts]
        written.update({part.name: part.path for part in parts})
        entries.append({"name": table, "rows": sum(part.rows for part in parts),
                        "bytes": sum(entry["bytes"] for entry in listed), "files": listed,
                        "columns": columns})
    manifest = {"schema_version": _schema_version(con), "tidemark_schema_version": LATEST_VERSION,
                "generated_at": generated.isoformat(timespec="seconds"),
                "block_runs": BLOCK_RUNS,
                "tables": entries,
                # Where each run's page is (the SQL page links result rows to it).
                "run_pages": {run_id: f"runs/{slug(run_id)}.html" for (run_id,) in
                              con.execute("SELECT run_id FROM runs").fetchall()}}
    return manifest, written
