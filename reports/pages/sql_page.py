"""The SQL page: DuckDB-WASM in the reader's browser over the Parquet files published with the
site (reports/build/downloads.py). Its example queries (pure) and the DuckDB-WASM files it needs,
copied from the pinned npm package (package.json, installed by `make setup`) into the built
site, so the page loads nothing from elsewhere.

DuckDB-WASM's main module imports Apache Arrow by its package name; the page maps that name
(an import map) to assets/arrow-shim.mjs, which hands over the Arrow build the page loads first.
"""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
NODE_MODULES = REPO_ROOT / "node_modules"
PACKAGE = NODE_MODULES / "@duckdb" / "duckdb-wasm"
ASSETS = "assets/duckdb"
# (file in node_modules, name in the site's assets/duckdb/): the main module, the worker and the
# WebAssembly build with exception handling (every current browser has it), and Arrow.
BUNDLE = (("@duckdb/duckdb-wasm/dist/duckdb-browser.mjs", "duckdb-browser.mjs"),
          ("@duckdb/duckdb-wasm/dist/duckdb-browser-eh.worker.js", "duckdb-browser-eh.worker.js"),
          ("@duckdb/duckdb-wasm/dist/duckdb-eh.wasm", "duckdb-eh.wasm"),
          ("apache-arrow/Arrow.esnext.min.js", "arrow.min.js"))


@dataclass(frozen=True)
class Example:
    title: str
    sql: str


# The most measured series: what a reader wants a trend of first.
_TOP_SERIES = """(SELECT series_key FROM invocations WHERE phase = 'measured' AND status = 'ok'
                   GROUP BY series_key ORDER BY count(DISTINCT run_id) DESC, series_key LIMIT 1)"""

EXAMPLES = (
    Example("Median ops/s of every series across all runs", """\
SELECT s.workload || ' ×' || s.threads || ' ' || s.cache_state || ' ' || s.build_variant AS series,
       count(DISTINCT i.run_id) AS runs,
       median(m.value) AS median_ops_per_sec,
       min(m.value) AS min_ops_per_sec,
       max(m.value) AS max_ops_per_sec,
       any_value(s.params) AS params
FROM invocations i
JOIN metrics m USING (invocation_id)
JOIN series s USING (series_key)
WHERE i.phase = 'measured' AND i.status = 'ok' AND m.name = 'ops_per_sec'
GROUP BY s.series_key, series
ORDER BY median_ops_per_sec DESC"""),
    Example("Trend of the most measured series: median ops/s per run", f"""\
SELECT r.started_at, median(m.value) AS median_ops_per_sec, r.engine_version, i.run_id
FROM invocations i
JOIN metrics m USING (invocation_id)
JOIN runs r USING (run_id)
WHERE i.series_key = {_TOP_SERIES}
  AND i.phase = 'measured' AND i.status = 'ok' AND m.name = 'ops_per_sec'
GROUP BY r.started_at, r.engine_version, i.run_id
ORDER BY r.started_at"""),
    Example("Failed invocations of the newest run that had any", """\
SELECT i.run_id, i.seq, i.workload, i.phase, i.repetition, i.status, i.exit_code, i.error
FROM invocations i
WHERE i.status <> 'ok'
  AND i.run_id = (SELECT run_id FROM invocations JOIN runs USING (run_id)
                  WHERE status <> 'ok' ORDER BY started_at DESC LIMIT 1)
ORDER BY i.seq"""),
    Example("Invocations and failures per run", """\
SELECT r.run_id, r.started_at, r.engine || ' ' || r.engine_version AS engine, r.status,
       count(*) AS invocations,
       count(*) FILTER (WHERE i.status <> 'ok') AS failed
FROM runs r LEFT JOIN invocations i USING (run_id)
GROUP BY ALL
ORDER BY r.started_at DESC"""),
    Example("p99 latency (µs) by threads, per workload", """\
SELECT i.threads, i.workload, median(m.value) AS median_p99_us, count(*) AS repetitions
FROM invocations i JOIN metrics m USING (invocation_id)
WHERE i.phase = 'measured' AND i.status = 'ok' AND m.name = 'p99_us'
GROUP BY ALL
ORDER BY i.workload, i.threads"""),
)


def package_version() -> str | None:
    """The installed DuckDB-WASM version (the one package-lock.json pins), None if absent."""
    manifest = PACKAGE / "package.json"
    if not manifest.is_file():
        return None
    return str(json.loads(manifest.read_text(encoding="utf-8"))["version"])


def missing_files() -> list[str]:
    return [source for source, _ in BUNDLE if not (NODE_MODULES / source).is_file()]


def copy_bundle(site: Path) -> bool:
    """The DuckDB-WASM files into the built site; False when `make setup` has not installed
    them (the page then says so instead of failing in the browser)."""
    if missing_files():
        return False
    dest = site / ASSETS
    dest.mkdir(parents=True, exist_ok=True)
    for source, name in BUNDLE:
        shutil.copyfile(NODE_MODULES / source, dest / name)
    return True
