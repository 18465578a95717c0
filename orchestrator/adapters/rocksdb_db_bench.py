"""RocksDB db_bench output (pure).

`readrandom : 4.399 micros/op 227315 ops/sec 0.880 seconds 200000 operations; 225.5 MB/s ...`
RocksDB's micros/op is summed thread time / ops; ops/sec is wall based over all threads, so it
is the aggregate throughput as printed. Histograms carry a `Percentiles:` line. The
`--report_file` CSV (`secs_elapsed,interval_qps`) is the throughput time series.
"""
from __future__ import annotations

import re

from ..errors import EngineOutputError
from ..record import HIGHER, LOWER, Metric, TimeSeries
from .db_bench_text import benchmark_row, common_metrics, db_bench_report, find_result_line, parse_latency
from .numbers import text_float
from .results import ParseRequest, ResultRow, ToolReport

OPS_FIELDS = re.compile(r"^\s*(\d+) ops/sec\s+([\d.]+) seconds\s+(\d+) operations;")


def parse_report_csv(text: str) -> TimeSeries | None:
    """The interval throughput CSV; None when db_bench wrote no interval (a short run)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return None
    if lines[0] != "secs_elapsed,interval_qps":
        raise EngineOutputError(f"report file header is {lines[0][:60]!r}, expected "
                                f"'secs_elapsed,interval_qps'")
    points = []
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split(",")
        try:
            points.append((float(fields[0]), float(fields[1])))
        except (IndexError, ValueError):
            raise EngineOutputError(f"report file line {number} is {line[:60]!r}, expected "
                                    f"'seconds,qps'") from None
    return TimeSeries("interval_qps", tuple(points)) if points else None


def parse_rocksdb_row(stdout: str, benchmark: str, threads: int, report_csv: str = "") -> ResultRow:
    micros, rest, section = find_result_line(stdout, benchmark)
    fields = OPS_FIELDS.match(rest)
    if not fields:
        raise EngineOutputError(f"RocksDB line for {benchmark!r} lacks 'N ops/sec S seconds N "
                                f"operations;': {rest.strip()[:80]!r}")
    where = f"{benchmark!r} result line"
    ops_per_sec, seconds, operations = (text_float(fields.group(k), f, where) for k, f in
                                        ((1, "ops/sec"), (2, "seconds"), (3, "operations")))
    metrics, notes = common_metrics(micros, rest)
    metrics += [
        Metric("ops_per_sec", ops_per_sec, "ops/s", HIGHER),
        Metric("per_thread_ops_per_sec", ops_per_sec / threads, "ops/s", HIGHER),
        Metric("elapsed_s", seconds, "s", LOWER),
        Metric("operations", operations, "ops", HIGHER),
    ]
    latency, histograms = parse_latency(section)
    series = parse_report_csv(report_csv)
    return benchmark_row(benchmark, threads, metrics + latency, histograms, notes,
                         (series,) if series else ())


class RocksDbBenchAdapter:
    """RocksDB db_bench stdout (a run's step or an imported log)."""

    fmt = "db_bench_rocksdb"
    importable = True

    def parse(self, text: str, request: ParseRequest) -> ToolReport:
        return db_bench_report(self.fmt, text, request, parse_rocksdb_row)
