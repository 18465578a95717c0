"""Result-file formats `tidemark import` reads: format name → adapter (pure).

db_bench logs reuse the run parsers (parse_rocksdb / parse_leveldb): every `name : ... micros/op`
line of the log is one row (repetition 1 of that benchmark); RocksDB's `[AVG N runs]`-style
lines do not match the result pattern and are ignored.
"""
from __future__ import annotations

from typing import Callable

from .errors import ConfigError, EngineOutputError
from .parse_dbbench import RESULT_LINE
from .parse_gbench import parse_gbench_json
from .parse_hyperfine import parse_hyperfine_json
from .parse_jsonmap import JsonMap, parse_json_map
from .parse_leveldb import parse_leveldb
from .parse_rocksdb import parse_rocksdb
from .record import ParsedOutput
from .tool_results import ROW_OK, ResultRow, ToolReport

FORMATS = ("gbench_json", "hyperfine_json", "json_map", "db_bench_rocksdb", "db_bench_leveldb")
_DB_BENCH: dict[str, Callable[..., ParsedOutput]] = {
    "db_bench_rocksdb": parse_rocksdb, "db_bench_leveldb": parse_leveldb}


def parse_db_bench_log(text: str, fmt: str, threads: int, source: str) -> ToolReport:
    """Every benchmark result line of a db_bench log → one row with the run parser's metrics."""
    parser = _DB_BENCH[fmt]
    names = [m.group(1) for line in text.splitlines() if (m := RESULT_LINE.match(line.strip()))]
    if not names:
        raise EngineOutputError(f"{source}: no 'NAME : N micros/op' line; is this db_bench "
                                f"stdout ({fmt})?")
    rows = []
    for name in dict.fromkeys(names):  # each benchmark once, in order of appearance
        parsed = parser(text, name, threads)
        rows.append(ResultRow(name, 1, threads, ROW_OK, "", parsed.metrics, notes=parsed.notes))
    return ToolReport(fmt, tuple(rows), (), {})


def parse_result_file(fmt: str, text: str, source: str, json_map: JsonMap | None = None,
                      threads: int = 1) -> ToolReport:
    """Raises ConfigError for an unknown format or a missing map, EngineOutputError for bad content."""
    if fmt == "gbench_json":
        return parse_gbench_json(text, source)
    if fmt == "hyperfine_json":
        return parse_hyperfine_json(text, source)
    if fmt == "json_map":
        if json_map is None:
            raise ConfigError("--format json_map needs --map CONFIG.yaml naming the fields "
                              "(see orchestrator/parse_jsonmap.py)")
        return parse_json_map(text, json_map, source)
    if fmt in _DB_BENCH:
        return parse_db_bench_log(text, fmt, threads, source)
    raise ConfigError(f"unknown format {fmt!r}; valid formats: {', '.join(FORMATS)}")
