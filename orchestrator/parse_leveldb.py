"""LevelDB db_bench output (pure).

`readrandom : 2.437 micros/op; (126302 of 200000 found)`: no ops/sec field. With several
threads micros/op is summed thread time / total ops (each thread is timed on its own and the
stats are merged), so aggregate ops/s = threads × 10⁶ / micros_per_op and per-thread ops/s =
10⁶ / micros_per_op; MB/s, where printed, is wall based. Histograms have buckets and no
percentile line: percentiles are interpolated from the buckets.
"""
from __future__ import annotations

from .parse_dbbench import common_metrics, find_result_line, parse_latency
from .record import HIGHER, Metric, ParsedOutput


def parse_leveldb(stdout: str, benchmark: str, threads: int, report_csv: str = "") -> ParsedOutput:
    del report_csv  # LevelDB writes no interval report
    micros, rest, section = find_result_line(stdout, benchmark)
    metrics, notes = common_metrics(micros, rest)
    per_thread = 1e6 / micros if micros > 0 else 0.0
    metrics += [
        Metric("ops_per_sec", per_thread * threads, "ops/s", HIGHER),
        Metric("per_thread_ops_per_sec", per_thread, "ops/s", HIGHER),
    ]
    latency, histograms = parse_latency(section)
    return ParsedOutput(benchmark=benchmark, metrics=tuple(metrics + latency),
                        histograms=tuple(histograms), notes=tuple(notes))
