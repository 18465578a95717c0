"""The verdicts' history kept between builds (side effects: out/cache).

The analysis core measures each series' noise from every run's median of it
(`store.reads.load_history`): a scan of every metric row of the history, the main process's
largest read on a long one. A run's medians depend on its own invocations and metrics only, so
the rows of runs whose fingerprint (read_cache.py) is unchanged come from the file the last
build wrote, the other runs' are read with the core's own query (`reads.history_rows_sql`), and
the History is put together in the core's order (`reads.history_of`): the verdicts cannot tell
a kept row from a fresh one.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import duckdb

from orchestrator.analysis.noise import History
from orchestrator.store import reads

from .downloads import sql_text
from .site_cache import SiteCache, digest

KIND = "history"


def read_history(con: duckdb.DuckDBPyConnection, series_keys: Sequence[str],
                 metrics: Sequence[str], *, cache: SiteCache,
                 fingerprints: dict[str, str]) -> History:
    """`reads.load_history(con, series_keys, metrics)` with the rows of unchanged runs from
    the cache: the file holds the rows of the series and metrics asked for when it was
    written, so it serves the same question only."""
    stored = cache.entries(KIND).get(KIND)
    facts = stored[1] if stored else {}
    path = cache.file(KIND, facts["files"][0]) if facts.get("files") else None
    question = digest(sorted(series_keys), sorted(metrics))
    usable = path is not None and path.is_file() and facts.get("question") == question
    known = facts.get("runs", {}) if usable else {}
    kept = sorted(run for run, key in fingerprints.items() if known.get(run) == key)
    changed = sorted(set(fingerprints) - set(kept))
    try:
        _history_table(con, path, kept, changed, series_keys, metrics)
    except duckdb.Error:  # a damaged file of the last build: read every run's rows again
        kept, changed = [], sorted(fingerprints)
        _history_table(con, None, kept, changed, series_keys, metrics)
    lists = con.execute(reads.history_lists_sql(
        "SELECT * FROM tm_history WHERE series_key IN (SELECT unnest(?))"),
        [list(series_keys)]).fetchall()
    if usable and not changed:  # every row came from the kept file: it stays
        name = facts["files"][0]
    else:
        name = f"{digest(sorted(fingerprints.items()), question)}.parquet"
        target = cache.file(KIND, name)
        target.parent.mkdir(parents=True, exist_ok=True)
        con.execute(f"COPY tm_history TO {sql_text(str(target))} (FORMAT parquet)")
    cache.store(KIND, KIND, KIND, {"runs": dict(fingerprints), "question": question,
                                   "files": [name]})
    return reads.history_of(lists, reads.aa_pairs(con))


def _history_table(con: duckdb.DuckDBPyConnection, path: Path | None, kept: list[str],
                   changed: list[str], series_keys: Sequence[str],
                   metrics: Sequence[str]) -> None:
    """Temporary table tm_history: the kept runs' rows from `path`, the changed runs' read."""
    parts, params = [], []
    if kept:
        parts.append("SELECT * FROM read_parquet(?) WHERE run_id IN (SELECT unnest(?::VARCHAR[]))")
        params += [str(path), kept]
    if changed or not kept:
        parts.append(reads.history_rows_sql("AND i.run_id IN (SELECT unnest(?::VARCHAR[]))"))
        params += [list(series_keys), list(metrics), changed]
    con.execute(f"CREATE OR REPLACE TEMP TABLE tm_history AS {' UNION ALL '.join(parts)}",
                params)
