"""The one result shape every output adapter returns (frozen records, pure).

Every adapter (db_bench text, Google Benchmark JSON, hyperfine JSON, json_map, perf CSV,
callgrind) turns a process's output or a result file into a ToolReport; the step runners and
`tidemark import` turn its rows into invocation records. A repetition is a row measured once;
an aggregate (mean, median, stddev, cv, a custom statistic, Big-O, RMS) is computed by the tool
from repetitions and is never counted as one.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from ..record import Histogram, Metric, TimeSeries
from .numbers import text_int

ROW_OK = "ok"
ROW_FAILED = "failed"  # the tool reported an error for this row
ROW_SKIPPED = "skipped"  # the tool skipped this row on purpose



@dataclass(frozen=True)
class ParseRequest:
    """What the caller knows about an output besides its text; each adapter reads what it needs."""

    source: str = "output"  # the file name, for error messages
    benchmark: str = ""  # db_bench: the step's benchmark; "" reads every result line (import)
    threads: int = 1  # db_bench: the process's thread count (its output does not say)
    report_csv: str = ""  # RocksDB's --report_file (interval throughput)
    json_map: Any = None  # json_map: the parsed --map config (a json_map.JsonMap)
    regex_map: Any = None  # regex: a command workload's pattern (a regex_map.RegexMap)
    operations: float | None = None  # callgrind: operations of the process, for Ir/op
    asv: Any = None  # asv_json: its folder's benchmarks.json and machine.json (asv_json.AsvFolder)


# A name segment such as "threads:4" in "BM_Get/1024/threads:4/real_time".
_THREADS_SEGMENT = re.compile(r"/threads:(\d+)(?=/|$)")


@dataclass(frozen=True)
class ResultRow:
    """One repetition of one benchmark as the tool reported it."""

    name: str  # benchmark name without the thread-count segment
    repetition: int  # 1-based
    threads: int
    status: str  # ok | failed | skipped
    error: str = ""
    metrics: tuple[Metric, ...] = ()
    params: tuple[tuple[str, Any], ...] = ()  # sorted (name, value) pairs
    notes: tuple[str, ...] = ()
    histograms: tuple[Histogram, ...] = ()  # latency buckets as the tool printed them
    series: tuple[TimeSeries, ...] = ()  # e.g. RocksDB's interval throughput

    @property
    def params_dict(self) -> dict[str, Any]:
        return dict(self.params)

    def metric(self, name: str) -> float | None:
        return next((m.value for m in self.metrics if m.name == name), None)


@dataclass(frozen=True)
class AggregateRow:
    """A statistic the tool computed over repetitions (mean, cv, BigO, ...)."""

    name: str  # the benchmark the statistic describes
    aggregate: str  # mean | median | stddev | cv | BigO | RMS | min | max | a custom name
    threads: int
    metrics: tuple[Metric, ...]
    params: tuple[tuple[str, Any], ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolReport:
    """Everything one result file holds."""

    tool: str  # the adapter's format name: gbench_json, db_bench_rocksdb, perf_csv, ...
    rows: tuple[ResultRow, ...]
    aggregates: tuple[AggregateRow, ...] = ()
    context: dict[str, Any] = field(default_factory=dict)  # host, cpus, build type, ...


def strip_threads(name: str) -> tuple[str, int | None]:
    """'BM_Get/threads:4/real_time' → ('BM_Get/real_time', 4); no segment → (name, None)."""
    match = _THREADS_SEGMENT.search(name)
    if not match:
        return name, None
    threads = text_int(match.group(1), "the threads: segment", f"benchmark {name[:80]!r}")
    return name[:match.start()] + name[match.end():], threads


def finite_metrics(candidates: list[Metric]) -> tuple[list[Metric], list[str]]:
    """Metrics with a finite value, and a note naming each NaN/Infinity that was left out."""
    kept, notes = [], []
    for metric in candidates:
        if math.isfinite(metric.value):
            kept.append(metric)
        else:
            notes.append(f"{metric.name} is {metric.value} (not stored as a metric)")
    return kept, notes


@dataclass(frozen=True)
class StoredAggregate:
    """An AggregateRow placed in a run and a series: what the store writes."""

    run_id: str
    series_key: str
    workload: str
    row: AggregateRow
