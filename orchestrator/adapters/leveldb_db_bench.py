"""LevelDB db_bench output (pure).

`readrandom : 2.437 micros/op; (126302 of 200000 found)`: no ops/sec field. With several
threads micros/op is summed thread time / total ops (each thread is timed on its own and the
stats are merged), so aggregate ops/s = threads × 10⁶ / micros_per_op and per-thread ops/s =
10⁶ / micros_per_op; MB/s, where printed, is wall based. Histograms have buckets and no
percentile line: percentiles are interpolated from the buckets.
"""
from __future__ import annotations

from ..record import HIGHER, Metric
from .db_bench_text import benchmark_row, common_metrics, db_bench_report, find_result_line, parse_latency
from .results import ParseRequest, ResultRow, ToolReport


def parse_leveldb_row(stdout: str, benchmark: str, threads: int, report_csv: str = "") -> ResultRow:
    del report_csv  # LevelDB writes no interval report
    micros, rest, section = find_result_line(stdout, benchmark)
    metrics, notes = common_metrics(micros, rest)
    per_thread = 1e6 / micros if micros > 0 else 0.0
    metrics += [
        Metric("ops_per_sec", per_thread * threads, "ops/s", HIGHER),
        Metric("per_thread_ops_per_sec", per_thread, "ops/s", HIGHER),
    ]
    latency, histograms = parse_latency(section)
    return benchmark_row(benchmark, threads, metrics + latency, histograms, notes)


class LevelDbBenchAdapter:
    """LevelDB db_bench stdout (a run's step or an imported log)."""

    fmt = "db_bench_leveldb"
    importable = True

    def parse(self, text: str, request: ParseRequest) -> ToolReport:
        return db_bench_report(self.fmt, text, request, parse_leveldb_row)
