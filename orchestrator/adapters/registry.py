"""The one registry of output adapters: format name → adapter (pure).

Both the step runners (a db_bench step, a harness step, perf and callgrind wrappers) and
`tidemark import` look formats up here, and every adapter returns the one result shape
(results.ToolReport), so a format parses the same way whether Tidemark ran the process or the
file came from elsewhere.

| format           | module                | output                                   |
|------------------|-----------------------|------------------------------------------|
| db_bench_rocksdb | rocksdb_db_bench.py   | RocksDB db_bench stdout (+ --report_file)|
| db_bench_leveldb | leveldb_db_bench.py   | LevelDB db_bench stdout                  |
| gbench_json      | gbench_json.py        | Google Benchmark JSON                    |
| hyperfine_json   | hyperfine_json.py     | hyperfine --export-json                  |
| bmf_json         | bmf_json.py           | Bencher Metric Format (a summary)        |
| pytest_benchmark_json | pytest_benchmark_json.py | pytest --benchmark-json / --benchmark-save |
| pyperf_json      | pyperf_json.py        | pyperf -o FILE (timeit or a Runner script)|
| asv_json         | asv_json.py           | asv results/<machine>/<commit>-<env>.json |
| json_map         | json_map.py           | JSON/JSONL through a field map (--map)   |
| regex            | regex_map.py          | a program's result line, named groups    |
| perf_csv         | perf_csv.py           | perf stat -x, counters of a process      |
| callgrind        | callgrind.py          | valgrind --tool=callgrind totals         |

The db_bench result line itself is parsed in db_bench_text.py. Every report passes the checks
of validate.py before a caller sees it, and the only exceptions that leave `parse_output` are
the project's (errors.py): a parser bug costs one failed record, never a run or an import.
"""
from __future__ import annotations

from typing import Protocol

from ..errors import ConfigError, EngineOutputError, UserError
from .asv_json import AsvJsonAdapter
from .bmf_json import BmfJsonAdapter
from .callgrind import CallgrindAdapter
from .gbench_json import GbenchJsonAdapter
from .hyperfine_json import HyperfineJsonAdapter
from .json_map import JsonMapAdapter
from .leveldb_db_bench import LevelDbBenchAdapter
from .perf_csv import PerfCsvAdapter
from .pyperf_json import PyperfJsonAdapter
from .pytest_benchmark_json import PytestBenchmarkJsonAdapter
from .regex_map import RegexMapAdapter
from .results import ParseRequest, ResultRow, ToolReport
from .rocksdb_db_bench import RocksDbBenchAdapter
from .validate import validate_report


class OutputAdapter(Protocol):
    """One output format. `parse` raises EngineOutputError when the text does not hold what
    the request asks for, and ConfigError when the request lacks what the format needs."""

    fmt: str
    importable: bool  # `tidemark import --format` accepts it

    def parse(self, text: str, request: ParseRequest) -> ToolReport: ...


ADAPTERS: dict[str, OutputAdapter] = {a.fmt: a for a in (
    RocksDbBenchAdapter(), LevelDbBenchAdapter(), GbenchJsonAdapter(), HyperfineJsonAdapter(),
    JsonMapAdapter(), PerfCsvAdapter(), CallgrindAdapter(), BmfJsonAdapter(),
    PytestBenchmarkJsonAdapter(), PyperfJsonAdapter(), RegexMapAdapter(),
    AsvJsonAdapter())}

# The formats `tidemark import --format` takes, in the order its help lists them.
IMPORT_FORMATS = ("gbench_json", "hyperfine_json", "json_map", "db_bench_rocksdb",
                  "db_bench_leveldb", "bmf_json", "pytest_benchmark_json", "pyperf_json",
                  "asv_json")
assert all(ADAPTERS[f].importable for f in IMPORT_FORMATS)

# The format of each db_bench flavour's stdout (an engine recipe's `db_bench`).
DB_BENCH_FORMATS = {"rocksdb": "db_bench_rocksdb", "leveldb": "db_bench_leveldb"}


def db_bench_format(flavour: str) -> str:
    try:
        return DB_BENCH_FORMATS[flavour]
    except KeyError:
        raise ConfigError(f"engine.db_bench={flavour!r} has no output parser; known: "
                          f"{', '.join(DB_BENCH_FORMATS)}") from None


def parse_output(fmt: str, text: str, request: ParseRequest) -> ToolReport:
    """Any registered format, validated; raises EngineOutputError for content that does not
    parse or holds a value no tool can mean (validate.py)."""
    adapter = ADAPTERS.get(fmt)
    if adapter is None:
        raise ConfigError(f"unknown format {fmt!r}; valid formats: {', '.join(ADAPTERS)}")
    try:
        report = adapter.parse(text, request)
    except UserError:
        raise
    except Exception as exc:  # noqa: BLE001 - the adapters' fuzz tests keep this unreachable
        raise EngineOutputError(f"{request.source}: the {fmt} parser failed on this input "
                                f"({type(exc).__name__}: {str(exc)[:120]!r}); a Tidemark bug, "
                                f"please report it with the file") from exc
    return validate_report(report, request.source)


def parse_db_bench_step(flavour: str, stdout: str, benchmark: str, threads: int,
                        report_csv: str = "", source: str = "db_bench stdout") -> ResultRow:
    """The measured benchmark's row of one db_bench process: what a run's step records."""
    request = ParseRequest(source=source, benchmark=benchmark, threads=threads,
                           report_csv=report_csv)
    return parse_output(db_bench_format(flavour), stdout, request).rows[0]


def parse_result_file(fmt: str, text: str, request: ParseRequest) -> ToolReport:
    """A result file for `tidemark import`: only the importable formats."""
    if fmt not in IMPORT_FORMATS:
        raise ConfigError(f"unknown format {fmt!r}; valid formats: {', '.join(IMPORT_FORMATS)}")
    return parse_output(fmt, text, request)
