"""Bencher Metric Format (BMF) JSON → ToolReport (pure).

The shape (Bencher's reference, "Bencher Metric Format"): an object of benchmarks, each an
object of measures, each `{"value": number, "lower_value": number?, "upper_value": number?}`:

    {"readrandom/threads:1": {"ops_per_sec": {"value": 512000.0, "lower_value": 498000.0,
                                              "upper_value": 530000.0}}}

A BMF file is a summary: one value per benchmark and measure, no repetitions. So the report has
no ResultRows, only AggregateRows (`value`, and `lower_value`/`upper_value` where given), and an
import of it stores no samples: the analysis core says "not enough repetitions" for its series
instead of running a test on one number.

BMF names a measure but not its unit or direction. Bencher's built-in measures and the metric
names Tidemark writes (`tidemark export --format bmf`) are known (MEASURES); any other measure is
read as lower-is-better unless its name says it is a rate, and the row says so in a note.
"""
from __future__ import annotations

import re
from typing import Any

from ..errors import EngineOutputError
from ..record import HIGHER, LOWER, Metric
from .gbench_json import load_json
from .numbers import json_float
from .results import AggregateRow, ParseRequest, ToolReport, strip_threads
from .validate import check_metric

# measure → (unit, better): Bencher's built-in measures, then Tidemark's own metric names.
MEASURES: dict[str, tuple[str, str]] = {
    "latency": ("ns", LOWER), "throughput": ("ops/s", HIGHER),
    "build-time": ("s", LOWER), "file-size": ("B", LOWER),
    "ops_per_sec": ("ops/s", HIGHER), "per_thread_ops_per_sec": ("ops/s", HIGHER),
    "mb_per_sec": ("MB/s", HIGHER), "items_per_second": ("items/s", HIGHER),
    "bytes_per_second": ("B/s", HIGHER), "wall_s": ("s", LOWER), "user_s": ("s", LOWER),
    "system_s": ("s", LOWER), "micros_per_op": ("us", LOWER), "real_time": ("ns", LOWER),
    "cpu_time": ("ns", LOWER), "max_rss_bytes": ("B", LOWER),
    "instructions_per_op": ("Ir/op", LOWER), "instructions": ("Ir", LOWER),
}
_RATE = re.compile(r"(throughput|per_sec|per_second|/s$|ops_s$)")
_BOUNDS = ("lower_value", "upper_value")


def measure_kind(measure: str) -> tuple[str, str, str]:
    """(unit, better, note) of a measure; the note says when the direction was assumed."""
    if measure in MEASURES:
        return (*MEASURES[measure], "")
    if re.search(r"_p\d+(_\d+)?_us$|^p\d+(_\d+)?_us$", measure):  # Tidemark's percentiles
        return "us", LOWER, ""
    better = HIGHER if _RATE.search(measure) else LOWER
    return "", better, (f"measure {measure!r} is not one Tidemark knows: read as "
                        f"{'higher' if better == HIGHER else 'lower'} is better")


def _value(entry: dict, key: str, where: str) -> float | None:
    if key not in entry and key != "value":
        return None
    number = json_float(entry.get(key))
    if number is None:
        got = "missing" if key not in entry else repr(entry[key])[:60]
        raise EngineOutputError(f"{where}: field {key!r} is {got}; expected a number")
    return number


def _measure_rows(name: str, threads: int, measure: str, entry: Any,
                  where: str) -> list[AggregateRow]:
    if not isinstance(entry, dict):
        raise EngineOutputError(f"{where}: is {entry!r:.60}; expected an object with 'value'")
    unit, better, note = measure_kind(measure)
    rows = []
    for key in ("value", *_BOUNDS):
        number = _value(entry, key, where)
        if number is None:
            continue
        metric = Metric(measure, number, unit, better)
        check_metric(metric, f"{where}: field {key!r}", repetition=False)
        rows.append(AggregateRow(name, key, threads, (metric,), (), (note,) if note else ()))
    return rows


def parse_bmf_json(text: str, source: str = "BMF JSON") -> ToolReport:
    """Raises EngineOutputError naming the line (syntax) or the benchmark and measure (shape)."""
    doc = load_json(text, source)
    if not isinstance(doc, dict) or not doc:
        raise EngineOutputError(f"{source}: expected an object of benchmarks at the top level "
                                f"(Bencher Metric Format), got {repr(doc)[:60]}")
    aggregates: list[AggregateRow] = []
    for benchmark, measures in doc.items():
        where = f"{source}: benchmark {benchmark!r:.80}"
        if not isinstance(measures, dict) or not measures:
            raise EngineOutputError(f"{where}: is {measures!r:.60}; expected an object of "
                                    f"measures")
        name, threads = strip_threads(benchmark)
        for measure, entry in measures.items():
            aggregates += _measure_rows(name, threads or 1, measure, entry,
                                        f"{where} measure {measure!r:.60}")
    return ToolReport("bmf_json", (), tuple(aggregates), {"summary_only": True})


class BmfJsonAdapter:
    """A Bencher Metric Format file (import only; a summary: no repetitions)."""

    fmt = "bmf_json"
    importable = True

    def parse(self, text: str, request: ParseRequest) -> ToolReport:
        return parse_bmf_json(text, request.source)
