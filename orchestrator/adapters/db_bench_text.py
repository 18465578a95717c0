"""db_bench text output, both engines (pure): the result line, its common fields, histogram
metrics, and the report of a whole log. The engine-specific fields are read in
rocksdb_db_bench.py and leveldb_db_bench.py; the histogram table in db_bench_histogram.py.
"""
from __future__ import annotations

import re
from typing import Callable

from ..errors import ConfigError, EngineOutputError
from ..record import HIGHER, LOWER, Histogram, Metric
from .db_bench_histogram import HistogramBlock, block_percentiles, parse_histograms, percentile_label
from .numbers import text_float, text_int
from .results import ROW_OK, ParseRequest, ResultRow, ToolReport
from .validate import INT32_MAX

# `readrandom   :       4.399 micros/op ...`: both engines pad the name with %-12s.
RESULT_LINE = re.compile(r"^(\w[\w\[\]\-]*)\s*:\s+([\d.]+) micros/op(.*)$")
MB_PER_SEC = re.compile(r"([\d.]+) MB/s")
FOUND = re.compile(r"\((\d+) of (\d+) found\)")


def find_result_line(stdout: str, benchmark: str) -> tuple[float, str, str]:
    """micros/op, the rest of the line, and the benchmark's section for `benchmark`.

    The section runs from its result line to the next benchmark's, so that with several
    benchmarks in one process (an in-process warm-up first) the histogram is the measured one's.
    """
    lines = stdout.splitlines()
    for index, line in enumerate(lines):
        m = RESULT_LINE.match(line.strip())
        if m and m.group(1) == benchmark:
            end = next((j for j in range(index + 1, len(lines))
                        if RESULT_LINE.match(lines[j].strip())), len(lines))
            micros = text_float(m.group(2), "micros/op", f"{benchmark!r} result line")
            return micros, m.group(3), "\n".join(lines[index + 1:end])
    raise EngineOutputError(f"no '{benchmark} : ... micros/op' line in the engine's output "
                            f"({len(stdout.splitlines())} lines of stdout); the process may have "
                            f"crashed or rejected a flag: see its log")


def histogram_metrics(blocks: list[HistogramBlock]) -> tuple[list[Metric], list[Histogram]]:
    """Latency metrics of the first (main) histogram block; every block kept as a Histogram.

    The first block is the measured operation (read, seek, write...); later blocks, such as the
    writer's in readwhilewriting, get their op as a prefix.
    """
    metrics: list[Metric] = []
    for index, block in enumerate(blocks):
        prefix = "" if index == 0 else f"{block.op}_"
        for p, value in block_percentiles(block).items():
            metrics.append(Metric(f"{prefix}{percentile_label(p)}_us", value, "us", LOWER))
        metrics.append(Metric(f"{prefix}min_us", block.minimum, "us", LOWER))
        metrics.append(Metric(f"{prefix}avg_us", block.average, "us", LOWER))
        metrics.append(Metric(f"{prefix}max_us", block.maximum, "us", LOWER))
        metrics.append(Metric(f"{prefix}stddev_us", block.stddev, "us", LOWER))
        metrics.append(Metric(f"{prefix}hist_count", float(block.count), "ops", HIGHER))
    return metrics, [Histogram(b.op, b.buckets) for b in blocks]


def common_metrics(micros_per_op: float, rest: str) -> tuple[list[Metric], list[str]]:
    metrics = [Metric("micros_per_op", micros_per_op, "us", LOWER)]
    notes = []
    mb = MB_PER_SEC.search(rest)
    if mb:
        metrics.append(Metric("mb_per_sec", text_float(mb.group(1), "MB/s", "result line"),
                              "MB/s", HIGHER))
    found = FOUND.search(rest)
    if found:
        notes.append(found.group(0))
        hits = text_int(found.group(1), "found count", "result line")
        asked = text_int(found.group(2), "lookup count", "result line")
        if asked:
            metrics.append(Metric("found_pct", 100.0 * hits / asked, "%", HIGHER))
    return metrics, notes


def parse_latency(stdout: str) -> tuple[list[Metric], list[Histogram]]:
    return histogram_metrics(parse_histograms(stdout))


RowParser = Callable[[str, str, int, str], ResultRow]  # (stdout, benchmark, threads, report_csv)


def result_names(text: str) -> list[str]:
    """Each benchmark with a result line, once, in order of appearance."""
    names = [m.group(1) for line in text.splitlines() if (m := RESULT_LINE.match(line.strip()))]
    return list(dict.fromkeys(names))


def db_bench_report(fmt: str, text: str, request: ParseRequest, parse_row: RowParser) -> ToolReport:
    """The requested benchmark's row (a run's step), or one row per result line (an import).

    RocksDB's `[AVG N runs]`-style lines do not match the result pattern and are ignored.
    """
    if isinstance(request.threads, bool) or not isinstance(request.threads, int) \
            or not 1 <= request.threads <= INT32_MAX:
        raise ConfigError(f"threads is {request.threads!r:.40}; db_bench runs 1..{INT32_MAX} "
                          f"threads (import: --threads N with N ≥ 1)")
    if request.benchmark:
        row = parse_row(text, request.benchmark, request.threads, request.report_csv)
        return ToolReport(fmt, (row,))
    names = result_names(text)
    if not names:
        raise EngineOutputError(f"{request.source}: no 'NAME : N micros/op' line; is this "
                                f"db_bench stdout ({fmt})?")
    return ToolReport(fmt, tuple(parse_row(text, name, request.threads, "") for name in names))


def benchmark_row(benchmark: str, threads: int, metrics: list[Metric], histograms: list[Histogram],
                  notes: list[str], series: tuple = ()) -> ResultRow:
    return ResultRow(benchmark, 1, threads, ROW_OK, "", tuple(metrics), notes=tuple(notes),
                     histograms=tuple(histograms), series=series)
