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
from collections import defaultdict
from typing import Any

from ..errors import EngineOutputError
from ..record import HIGHER, LOWER, Metric
from .results import (ROW_FAILED, ROW_OK, ROW_SKIPPED, AggregateRow, ParseRequest, ResultRow,
                      ToolReport, finite_metrics, strip_threads)

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


def _field(entry: dict, key: str, kinds: type | tuple[type, ...], where: str) -> Any:
    value = entry.get(key)
    if value is None or isinstance(value, bool) or not isinstance(value, kinds):
        got = "missing" if key not in entry else f"{value!r}"
        raise EngineOutputError(f"{where}: field {key!r} is {got}; expected "
                                f"{getattr(kinds, '__name__', 'a number')}")
    return value


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
    items, nbytes = entry.get("items_per_second"), entry.get("bytes_per_second")
    if isinstance(items, (int, float)):
        metrics += [Metric("items_per_second", float(items), unit("items/s"), HIGHER),
                    Metric("ops_per_sec", float(items), unit("ops/s"), HIGHER)]
        if name.endswith(WALL_CLOCK_SUFFIXES) and not ratio:
            metrics.append(Metric("per_thread_ops_per_sec", items / threads, "ops/s", HIGHER))
    if isinstance(nbytes, (int, float)):
        metrics += [Metric("bytes_per_second", float(nbytes), unit("B/s"), HIGHER),
                    Metric("mb_per_sec", nbytes / (1.0 if ratio else MIB), unit("MB/s"), HIGHER)]
    return metrics


def _counter_metrics(entry: dict, ratio: bool) -> list[Metric]:
    metrics = []
    for key, value in entry.items():
        if key not in _RESERVED and isinstance(value, (int, float)) and not isinstance(value, bool):
            metrics.append(Metric(key, float(value), "ratio" if ratio else "", HIGHER))
    for key in ("allocs_per_iter", "max_bytes_used"):
        if isinstance(entry.get(key), (int, float)):
            metrics.append(Metric(key, float(entry[key]), "allocs" if key[0] == "a" else "B", LOWER))
    return metrics


def _measurement(entry: dict, where: str, name: str, threads: int,
                 ratio: bool) -> tuple[list[Metric], list[str]]:
    """Time, rate and counter metrics of a row; ratio: a cv-like aggregate (unitless)."""
    scale = 1.0 if ratio else _to_ns(entry, where)
    real = _field(entry, "real_time", (int, float), where) * scale
    cpu = _field(entry, "cpu_time", (int, float), where) * scale
    time_unit = "ratio" if ratio else "ns"
    metrics = [Metric("real_time" if ratio else "real_time_ns", real, time_unit, LOWER),
               Metric("cpu_time" if ratio else "cpu_time_ns", cpu, time_unit, LOWER)]
    if "iterations" in entry:
        iterations = _field(entry, "iterations", (int, float), where)
        metrics.append(Metric("iterations", float(iterations), "iterations", HIGHER))
    metrics += _rate_metrics(entry, name, threads, ratio) + _counter_metrics(entry, ratio)
    notes = [] if ratio or name.endswith(WALL_CLOCK_SUFFIXES) or threads == 1 else \
        ["rates are per CPU-second summed over threads (CPU-time benchmark)"]
    kept, dropped = finite_metrics(metrics)
    return kept, notes + dropped


def _name_and_threads(entry: dict, where: str) -> tuple[str, int]:
    raw = entry.get("run_name") or _field(entry, "name", str, where)
    name, from_name = strip_threads(str(raw))
    threads = entry.get("threads", from_name or 1)
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
        raise EngineOutputError(f"{where}: field 'threads' is {threads!r}; expected an integer ≥ 1")
    return name, threads


def _iteration_row(entry: dict, where: str, seen: dict[tuple[str, int], int]) -> ResultRow:
    name, threads = _name_and_threads(entry, where)
    seen[(name, threads)] += 1
    index = entry.get("repetition_index")
    repetition = index + 1 if isinstance(index, int) else seen[(name, threads)]
    label = (f"label: {entry['label']}",) if entry.get("label") else ()
    if entry.get("error_occurred"):
        message = str(entry.get("error_message") or "error_occurred without a message")
        return ResultRow(name, repetition, threads, ROW_FAILED, message, notes=label)
    if entry.get("skipped"):
        message = str(entry.get("skip_message") or "skipped without a message")
        return ResultRow(name, repetition, threads, ROW_SKIPPED, message, notes=label)
    metrics, notes = _measurement(entry, where, name, threads, ratio=False)
    return ResultRow(name, repetition, threads, ROW_OK, "", tuple(metrics),
                     notes=tuple(notes) + label)


def _aggregate_row(entry: dict, where: str) -> AggregateRow:
    name, threads = _name_and_threads(entry, where)
    aggregate = _field(entry, "aggregate_name", str, where)
    if aggregate == "BigO":
        scale = _to_ns(entry, where)
        metrics = [Metric("cpu_coefficient_ns",
                          _field(entry, "cpu_coefficient", (int, float), where) * scale, "ns", LOWER),
                   Metric("real_coefficient_ns",
                          _field(entry, "real_coefficient", (int, float), where) * scale, "ns", LOWER)]
        kept, notes = finite_metrics(metrics)
        return AggregateRow(name, aggregate, threads, tuple(kept),
                            notes=(f"big_o: {entry.get('big_o', '?')}", *notes))
    if aggregate == "RMS":
        kept, notes = finite_metrics([Metric("rms", _field(entry, "rms", (int, float), where),
                                             "ratio", LOWER)])
        return AggregateRow(name, aggregate, threads, tuple(kept), notes=tuple(notes))
    ratio = entry.get("aggregate_unit") == "percentage"
    metrics, notes = _measurement(entry, where, name, threads, ratio)
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
            where += f" ({entry['name']})"
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
