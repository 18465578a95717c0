"""The checks every ToolReport passes before anything is stored (pure).

The registry applies `validate_report` to the report of every adapter, so a value no tool can
mean is a parse error naming the row, the field and the value, whichever format it came from:

- every metric is a finite number; time, rate, size and count metrics (by unit or name) are
  ≥ 0; a throughput or micros/op of a repetition is > 0 (a `0.000 micros/op` line is no
  measurement); a percentage is within 0..100;
- latency percentiles (`p50_us` … `p99_99_us`, per histogram prefix) are in order and within
  the block's `min_us`..`max_us`, and so is its average; values are compared with a tolerance
  of 0.01 µs because engines print percentiles rounded to two decimals;
- histogram buckets are finite, 0 ≤ lo ≤ hi, in ascending order without overlap, with counts
  0..2**63-1; time series points are finite with t ascending and values ≥ 0;
- threads and repetition fit DuckDB's INTEGER (1..2**31-1);
- params are scalars (text, number, bool, null), every text is valid UTF-8 (a JSON `\\ud800`
  escape is not), and the tool's context holds no such text either.
"""
from __future__ import annotations

import math
import re
from typing import Any, Iterable

from ..errors import EngineOutputError
from ..record import Histogram, Metric, TimeSeries
from .results import ROW_OK, AggregateRow, ResultRow, ToolReport

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
TOLERANCE_US = 0.01

# Units of quantities that cannot be negative; perf counters are counts or times whatever unit
# perf printed.
NON_NEGATIVE_UNITS = {"ops/s", "us", "ns", "ms", "msec", "s", "MB/s", "B/s", "B", "items/s",
                      "ops", "count", "Ir", "Ir/op", "iterations", "repetitions", "allocs", "%"}
NON_NEGATIVE_NAMES = {"real_time", "cpu_time", "items_per_second", "bytes_per_second",
                      "ops_per_sec", "mb_per_sec", "per_thread_ops_per_sec", "wall_s", "user_s",
                      "system_s", "max_rss_bytes", "iterations", "repetitions", "instructions"}
NON_NEGATIVE_PREFIXES = ("perf_",)
# A repetition's throughput (or time per operation) of zero is no measurement.
POSITIVE_NAMES = {"ops_per_sec", "per_thread_ops_per_sec", "micros_per_op", "items_per_second"}
PERCENTILE = re.compile(r"^(?P<prefix>.*?)p(?P<p>\d+(?:_\d+)?)_us$")


def _fail(where: str, field: str, value: Any, expected: str) -> EngineOutputError:
    """One printable line: names from a file may hold newlines or lone surrogates."""
    shown = repr(value)
    field = field if field.isprintable() else repr(field)
    return EngineOutputError(f"{where}: {field} is {shown[:60]}; expected {expected}")


def _check_text(text: Any, where: str, field: str) -> None:
    if not isinstance(text, str):
        raise _fail(where, field, text, "text")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise _fail(where, field, text, "valid UTF-8 text (a lone surrogate such as a JSON "
                                        "\\ud800 escape cannot be stored)") from None


def _check_int(value: Any, where: str, field: str, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _fail(where, field, value, f"an integer in {low}..{high}")


def check_metric(metric: Metric, where: str, repetition: bool) -> None:
    """One metric's rules; adapters that know the line or record call it with that place."""
    _check_text(metric.name, where, "a metric name")
    _check_text(metric.unit, where, f"the unit of {metric.name}")
    value = metric.value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _fail(where, metric.name, value, "a finite number")
    if metric.unit == "%" and value > 100:
        raise _fail(where, metric.name, value, "a percentage within 0..100")
    if repetition and metric.name in POSITIVE_NAMES and metric.unit != "ratio" and value <= 0:
        raise _fail(where, metric.name, value, "a number > 0 (a zero throughput or time per "
                                               "operation is no measurement)")
    if value < 0 and (metric.unit in NON_NEGATIVE_UNITS or metric.name in NON_NEGATIVE_NAMES
                      or metric.name.startswith(NON_NEGATIVE_PREFIXES)):
        raise _fail(where, metric.name, value, "a number ≥ 0")


def _check_latency_order(metrics: Iterable[Metric], where: str) -> None:
    """Percentiles ascending and within min..max, average within min..max, per prefix."""
    values = {m.name: m.value for m in metrics}
    groups: dict[str, list[tuple[float, str]]] = {}
    for name in values:
        match = PERCENTILE.match(name)
        if match:
            rank = float(match.group("p").replace("_", "."))
            groups.setdefault(match.group("prefix"), []).append((rank, name))
    prefixes = set(groups) | {n[:-len("max_us")] for n in values if n.endswith("max_us")}
    for prefix in prefixes:
        ordered = [name for _, name in sorted(groups.get(prefix, []))]
        low, high = f"{prefix}min_us", f"{prefix}max_us"
        chain = ([low] if low in values else []) + ordered + ([high] if high in values else [])
        for before, after in zip(chain, chain[1:]):
            if values[before] > values[after] + TOLERANCE_US:
                raise EngineOutputError(f"{where}: {before} is {values[before]} > {after} "
                                        f"{values[after]}; expected {before} ≤ {after}")
        average = values.get(f"{prefix}avg_us")
        if average is not None and low in values and high in values \
                and not values[low] - TOLERANCE_US <= average <= values[high] + TOLERANCE_US:
            raise _fail(where, f"{prefix}avg_us", average,
                        f"a value within {low} {values[low]} and {high} {values[high]}")


def _check_histogram(histogram: Histogram, where: str) -> None:
    _check_text(histogram.name, where, "a histogram name")
    field = f"histogram {histogram.name!r}"
    previous_hi = 0.0
    for index, bucket in enumerate(histogram.buckets):
        lo, hi, count = bucket
        bounds_ok = all(isinstance(v, (int, float)) and math.isfinite(v) for v in (lo, hi))
        if not bounds_ok or not previous_hi <= lo <= hi:
            raise _fail(where, f"{field} bucket {index + 1}", (lo, hi),
                        f"finite bounds with {previous_hi:g} ≤ lo ≤ hi (buckets ascending, "
                        f"not overlapping)")
        _check_int(count, where, f"{field} bucket {index + 1} count", 0, INT64_MAX)
        previous_hi = hi


def _check_series(series: TimeSeries, where: str) -> None:
    _check_text(series.name, where, "a time series name")
    previous_t = -math.inf
    for index, (t, value) in enumerate(series.points):
        finite = all(isinstance(v, (int, float)) and math.isfinite(v) for v in (t, value))
        if not finite or t < previous_t or t < 0 or value < 0:
            raise _fail(where, f"time series {series.name!r} point {index + 1}", (t, value),
                        "finite (t, value) ≥ 0 with t ascending")
        previous_t = t


def _check_params(params: tuple[tuple[str, Any], ...], where: str) -> None:
    for key, value in params:
        _check_text(key, where, "a parameter name")
        if isinstance(value, str):
            _check_text(value, where, f"parameter {key!r}")
        elif isinstance(value, float) and not math.isfinite(value):
            raise _fail(where, f"parameter {key!r}", value, "a finite number")
        elif isinstance(value, int) and not isinstance(value, bool) \
                and not -INT64_MAX - 1 <= value <= INT64_MAX:
            raise _fail(where, f"parameter {key!r}", value, "an integer within 64 bits")
        elif value is not None and not isinstance(value, (str, int, float, bool)):
            raise _fail(where, f"parameter {key!r}", value, "text, a number, true/false or null")


def _check_row(row: ResultRow, where: str) -> None:
    _check_text(row.name, where, "the benchmark name")
    if not row.name:
        raise _fail(where, "the benchmark name", row.name, "a non-empty name")
    _check_int(row.repetition, where, "repetition", 1, INT32_MAX)
    _check_int(row.threads, where, "threads", 1, INT32_MAX)
    _check_text(row.error, where, "the error message")
    for note in row.notes:
        _check_text(note, where, "a note")
    _check_params(row.params, where)
    for metric in row.metrics:
        check_metric(metric, where, repetition=row.status == ROW_OK)
    _check_latency_order(row.metrics, where)
    for histogram in row.histograms:
        _check_histogram(histogram, where)
    for series in row.series:
        _check_series(series, where)


def _check_aggregate(agg: AggregateRow, where: str) -> None:
    _check_text(agg.name, where, "the benchmark name")
    _check_text(agg.aggregate, where, "the aggregate name")
    _check_int(agg.threads, where, "threads", 1, INT32_MAX)
    for note in agg.notes:
        _check_text(note, where, "a note")
    _check_params(agg.params, where)
    for metric in agg.metrics:
        check_metric(metric, where, repetition=False)


def _check_context(context: dict[str, Any], where: str) -> None:
    """Every text in the tool's context (kept as JSON) is valid UTF-8; a CPU count fits."""
    stack: list[Any] = [context]
    while stack:  # iterative: a deeply nested context must not exhaust the recursion limit
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                _check_text(key, where, "a context key")
                stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str):
            _check_text(node, where, "a context value")
    if "num_cpus" in context:
        _check_int(context["num_cpus"], where, "context num_cpus", 1, INT32_MAX)


def validate_report(report: ToolReport, source: str) -> ToolReport:
    """The report itself when every check holds; EngineOutputError naming the first that fails."""
    for row in report.rows:
        where = f"{source}: {str(row.name)[:60]!r} repetition {row.repetition}"
        _check_row(row, where)
    for agg in report.aggregates:
        _check_aggregate(agg, f"{source}: {str(agg.name)[:60]!r} {str(agg.aggregate)[:20]!r}")
    _check_context(report.context, f"{source}: context")
    return report
