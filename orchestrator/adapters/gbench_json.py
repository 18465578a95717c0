"""Google Benchmark JSON (`--benchmark_out_format=json`) → ToolReport (pure).

- `run_type: iteration` rows are repetitions (`repetition_index` + 1); `run_type: aggregate`
  rows (mean, median, stddev, cv, custom statistics, BigO, RMS) are kept apart as aggregates.
- Times are normalized to nanoseconds from `time_unit` (ns, us, ms, s).
- `bytes_per_second`, `items_per_second` and user counters become metrics. `items_per_second`
  is also stored as `ops_per_sec` and `bytes_per_second` as `mb_per_sec` (MiB/s, as db_bench
  prints MB/s), the names the reports show. Google Benchmark divides rates by CPU time summed
  over threads unless the name ends in `/real_time` or `/manual_time`; only then is the rate a
  wall-clock aggregate and `per_thread_ops_per_sec` = rate / threads is added.
- User counters have no declared direction: they are stored as "higher is better".
- `error_occurred` rows are failed rows with `error_message`; `skipped` rows (Google Benchmark
  1.8+) are skipped rows with `skip_message`.
- The non-JSON tokens NaN, Infinity and -Infinity parse; such values are left out of the metrics
  and named in the row's notes.
- The `context` block (host, cpus, MHz, caches, load average, `library_build_type`) is kept
  whole: Debian's libbenchmark 1.7.1 reports `"library_build_type": "debug"`.
"""
from __future__ import annotations

import json
import math
from collections import defaultdict
from typing import Any

from ..errors import EngineOutputError
from ..record import HIGHER, LOWER, Metric
from .numbers import json_float
from .results import (ROW_FAILED, ROW_OK, ROW_SKIPPED, AggregateRow, ParseRequest, ResultRow,
                      ToolReport, finite_metrics, strip_threads)
from .validate import INT32_MAX, check_metric

TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
MIB = 1048576.0
# Benchmarks timed by wall clock; their rates are aggregates over all threads.
WALL_CLOCK_SUFFIXES = ("/real_time", "/manual_time")
# Keys with a meaning of their own; every other numeric key of a row is a user counter.
_RESERVED = {"name", "family_index", "per_family_instance_index", "run_name", "run_type",
             "repetitions", "repetition_index", "threads", "iterations", "real_time", "cpu_time",
             "time_unit", "aggregate_name", "aggregate_unit", "error_occurred", "error_message",
             "skipped", "skip_message", "label", "big_o", "cpu_coefficient", "real_coefficient",
             "rms", "bytes_per_second", "items_per_second", "allocs_per_iter", "max_bytes_used"}


def load_json(text: str, source: str) -> Any:
    """json.loads naming the line and column of a syntax error (NaN/Infinity are accepted)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise EngineOutputError(f"{source}: line {exc.lineno} column {exc.colno}: {exc.msg}; "
                                f"the file is not valid JSON (truncated?)") from None
    except (ValueError, RecursionError) as exc:  # an integer of 4,300+ digits; deep nesting
        raise EngineOutputError(f"{source}: {str(exc)[:100]}; the file is not JSON any "
                                f"benchmark tool writes") from None


def _field(entry: dict, key: str, kinds: type | tuple[type, ...], where: str) -> Any:
    value = entry.get(key)
    if value is None or isinstance(value, bool) or not isinstance(value, kinds):
        got = "missing" if key not in entry else f"{value!r}"[:60]
        raise EngineOutputError(f"{where}: field {key!r} is {got}; expected "
                                f"{getattr(kinds, '__name__', 'a number')}")
    return value


def _finite(entry: dict, key: str, scale: float, where: str) -> float:
    """A required number (times in ns): NaN or an overflow is an error, never left out."""
    value = json_float(_field(entry, key, (int, float), where))
    if value is None or not math.isfinite(value * scale):
        raise EngineOutputError(f"{where}: field {key!r} is {entry[key]!r:.60}; expected a "
                                f"finite number")
    return value * scale


def _to_ns(entry: dict, where: str) -> float:
    unit = _field(entry, "time_unit", str, where)
    if unit not in TO_NS:
        raise EngineOutputError(f"{where}: field 'time_unit' is {unit!r}; expected one of "
                                f"{', '.join(TO_NS)}")
    return TO_NS[unit]


def _rate_metrics(entry: dict, name: str, threads: int, ratio: bool) -> list[Metric]:
    """Rates and their report aliases; in a cv-like aggregate each is a unitless ratio."""
    def unit(plain: str) -> str:
        return "ratio" if ratio else plain

    metrics: list[Metric] = []
    items = json_float(entry.get("items_per_second"))
    nbytes = json_float(entry.get("bytes_per_second"))
    if items is not None:
        metrics += [Metric("items_per_second", items, unit("items/s"), HIGHER),
                    Metric("ops_per_sec", items, unit("ops/s"), HIGHER)]
        if name.endswith(WALL_CLOCK_SUFFIXES) and not ratio:
            metrics.append(Metric("per_thread_ops_per_sec", items / threads, "ops/s", HIGHER))
    if nbytes is not None:
        metrics += [Metric("bytes_per_second", nbytes, unit("B/s"), HIGHER),
                    Metric("mb_per_sec", nbytes / (1.0 if ratio else MIB), unit("MB/s"), HIGHER)]
    return metrics


def _counter_metrics(entry: dict, ratio: bool) -> list[Metric]:
    metrics = []
    for key, value in entry.items():
        number = json_float(value)
        if key not in _RESERVED and number is not None:
            metrics.append(Metric(key, number, "ratio" if ratio else "", HIGHER))
    for key in ("allocs_per_iter", "max_bytes_used"):
        number = json_float(entry.get(key))
        if number is not None:
            metrics.append(Metric(key, number, "allocs" if key[0] == "a" else "B", LOWER))
    return metrics


def _measurement(entry: dict, where: str, name: str, threads: int, ratio: bool,
                 aggregate: bool) -> tuple[list[Metric], list[str]]:
    """Time, rate and counter metrics of a row; ratio: a cv-like aggregate (unitless)."""
    scale = 1.0 if ratio else _to_ns(entry, where)
    real, cpu = _finite(entry, "real_time", scale, where), _finite(entry, "cpu_time", scale, where)
    time_unit = "ratio" if ratio else "ns"
    metrics = [Metric("real_time" if ratio else "real_time_ns", real, time_unit, LOWER),
               Metric("cpu_time" if ratio else "cpu_time_ns", cpu, time_unit, LOWER)]
    if "iterations" in entry:
        metrics.append(Metric("iterations", _finite(entry, "iterations", 1.0, where),
                              "iterations", HIGHER))
    # Rates and user counters may be NaN or infinite in a real file (a counter over zero time):
    # those are left out and named in the notes.
    optional, dropped = finite_metrics(_rate_metrics(entry, name, threads, ratio)
                                       + _counter_metrics(entry, ratio))
    notes = [] if ratio or name.endswith(WALL_CLOCK_SUFFIXES) or threads == 1 else \
        ["rates are per CPU-second summed over threads (CPU-time benchmark)"]
    for metric in metrics + optional:  # here, where the row is known; validate.py checks again
        check_metric(metric, where, repetition=not ratio and not aggregate)
    return metrics + optional, notes + dropped


def _name_and_threads(entry: dict, where: str) -> tuple[str, int]:
    raw = entry.get("run_name") or _field(entry, "name", str, where)
    if not isinstance(raw, str):
        raise EngineOutputError(f"{where}: field 'run_name' is {raw!r:.60}; expected a string")
    name, from_name = strip_threads(raw)
    threads = entry.get("threads", from_name or 1)
    if not isinstance(threads, int) or isinstance(threads, bool) or not 1 <= threads <= INT32_MAX:
        raise EngineOutputError(f"{where}: field 'threads' is {threads!r:.60}; expected an "
                                f"integer in 1..{INT32_MAX}")
    return name, threads


def _iteration_row(entry: dict, where: str, seen: dict[tuple[str, int], int]) -> ResultRow:
    name, threads = _name_and_threads(entry, where)
    seen[(name, threads)] += 1
    index = entry.get("repetition_index")
    numbered = isinstance(index, int) and not isinstance(index, bool)
    repetition = index + 1 if numbered else seen[(name, threads)]
    label = (f"label: {entry['label']}",) if entry.get("label") else ()
    if entry.get("error_occurred"):
        message = str(entry.get("error_message") or "error_occurred without a message")
        return ResultRow(name, repetition, threads, ROW_FAILED, message, notes=label)
    if entry.get("skipped"):
        message = str(entry.get("skip_message") or "skipped without a message")
        return ResultRow(name, repetition, threads, ROW_SKIPPED, message, notes=label)
    metrics, notes = _measurement(entry, where, name, threads, ratio=False, aggregate=False)
    return ResultRow(name, repetition, threads, ROW_OK, "", tuple(metrics),
                     notes=tuple(notes) + label)


def _aggregate_row(entry: dict, where: str) -> AggregateRow:
    name, threads = _name_and_threads(entry, where)
    aggregate = _field(entry, "aggregate_name", str, where)
    if aggregate == "BigO":
        scale = _to_ns(entry, where)
        metrics = [Metric(f"{key}_ns", json_float(_field(entry, key, (int, float), where)) * scale,
                          "ns", LOWER) for key in ("cpu_coefficient", "real_coefficient")]
        kept, notes = finite_metrics(metrics)
        return AggregateRow(name, aggregate, threads, tuple(kept),
                            notes=(f"big_o: {entry.get('big_o', '?')}", *notes))
    if aggregate == "RMS":
        kept, notes = finite_metrics([Metric("rms", json_float(_field(entry, "rms", (int, float),
                                                                      where)), "ratio", LOWER)])
        return AggregateRow(name, aggregate, threads, tuple(kept), notes=tuple(notes))
    ratio = entry.get("aggregate_unit") == "percentage"
    metrics, notes = _measurement(entry, where, name, threads, ratio, aggregate=True)
    # An aggregate's `iterations` is the number of repetitions it summarizes.
    metrics = [Metric("repetitions", m.value, "repetitions", HIGHER) if m.name == "iterations"
               else m for m in metrics]
    return AggregateRow(name, aggregate, threads, tuple(metrics), notes=tuple(notes))


def parse_gbench_json(text: str, source: str = "Google Benchmark JSON") -> ToolReport:
    """Raises EngineOutputError naming the line (syntax) or the row and field (content)."""
    doc = load_json(text, source)
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise EngineOutputError(f"{source}: no 'benchmarks' list at the top level; is this "
                                f"Google Benchmark --benchmark_out_format=json output?")
    context = doc.get("context", {})
    if not isinstance(context, dict):
        raise EngineOutputError(f"{source}: field 'context' is {type(context).__name__}; "
                                f"expected an object")
    rows, aggregates = [], []
    seen: dict[tuple[str, int], int] = defaultdict(int)
    for index, entry in enumerate(doc["benchmarks"]):
        where = f"{source}: benchmarks[{index}]"
        if not isinstance(entry, dict):
            raise EngineOutputError(f"{where} is {type(entry).__name__}; expected an object")
        if "name" in entry:
            where += f" ({str(entry['name'])[:80]!r})" if not isinstance(entry["name"], str) \
                or not entry["name"].isprintable() else f" ({entry['name'][:80]})"
        if entry.get("run_type") == "aggregate":
            aggregates.append(_aggregate_row(entry, where))
        else:
            rows.append(_iteration_row(entry, where, seen))
    return ToolReport("gbench_json", tuple(rows), tuple(aggregates), context)


class GbenchJsonAdapter:
    """A Google Benchmark `--benchmark_out_format=json` file (the harness, or an import)."""

    fmt = "gbench_json"
    importable = True

    def parse(self, text: str, request: ParseRequest) -> ToolReport:
        return parse_gbench_json(text, request.source)
