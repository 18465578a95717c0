"""pyperf JSON → ToolReport (pure).

`pyperf timeit ... -o FILE` and a `pyperf.Runner` script's `-o FILE` write pyperf's JSON format
(`version` "1.0"; perf 0.9.6+'s version 6 has the same keys): `metadata` and `benchmarks[]`,
one or several, each with `metadata` and `runs[]` of `metadata`, `warmups` and `values`. pyperf
gzips a file whose name ends in `.gz`; this module reads text, so gunzip such a file first.

- Metadata is layered as pyperf loads it: the file's (what all benchmarks share), the
  benchmark's, the run's; the narrower wins. The row name is the first run's `name` (pyperf's
  `Benchmark.get_name`); `unit` ("second" if absent, pyperf's default) names the metric:
  second → `wall_s` (s), byte → `memory_bytes` (B: `--track-memory`, or a memory figure made
  the values by `pyperf convert --extract-metadata`), integer → `count`.
- Every value of every run is one repetition, numbered 1.. across the benchmark in file order.
  Values are already per loop iteration: pyperf's worker divides each raw timing by
  `loops * inner_loops` (`_worker.py`: `value = raw_value / (self.loops * inner_loops)`), so
  nothing is divided here; a time row notes how many iterations its value averages.
- Warm-ups (`warmups`, `[loops, value]` pairs) and calibration runs (runs without values: they
  only calibrate loops or warm-ups) are not repetitions: skipped.
- pyperf stores no statistics (it computes them when it loads a file), so there are no
  aggregates; and it always keeps every value, so there is no summary-only file.
- The context keeps the metadata that describes conditions (`_CONDITIONS`) of the measured
  runs: `conditions` what they all share, `benchmark_conditions[name]` what differs (the value
  a benchmark's runs share, else one entry per measured run); `host_name` and `num_cpus` for
  `tidemark import`; `first_run_date`, the earliest run's `date`: pyperf's local time without
  a zone, so it is not offered as the run's `date`.

A value that is not a finite number > 0 (pyperf's Run refuses zero too), an unknown unit, a
benchmark without `runs`, a name or any value is a parse error naming the benchmark and field.
"""
from __future__ import annotations

import math
from typing import Any

from ..errors import EngineOutputError
from ..record import LOWER, Metric
from .gbench_json import load_json
from .numbers import json_float
from .results import ROW_OK, ParseRequest, ResultRow, ToolReport
from .validate import INT32_MAX, INT64_MAX, check_metric

_VERSIONS = ("1.0", 6)
# pyperf's units (its UNIT_FORMATTERS) → (metric, unit). Every one is lower-is-better: pyperf
# itself reads a smaller mean as "faster" whatever the unit (`compare_to`), and its integer
# values are counts (loops, objects, allocations), not rates.
_UNITS = {"second": ("wall_s", "s"), "byte": ("memory_bytes", "B"), "integer": ("count", "count")}
_CONDITIONS = ("hostname", "platform", "cpu_model_name", "cpu_count", "cpu_affinity",
               "cpu_config", "cpu_freq", "cpu_temp", "aslr", "python_version",
               "python_implementation", "python_compiler", "python_hash_seed", "load_avg_1min",
               "runnable_threads", "timer", "perf_version")


def _object(entry: dict, key: str, where: str) -> dict:
    value = entry.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise EngineOutputError(f"{where}: field {key!r} is {repr(value)[:60]}; expected an object")
    return value


def _scalar(value: Any) -> bool:
    """A metadata value the store keeps as it is (pyperf writes text and numbers)."""
    return isinstance(value, (str, bool)) or (isinstance(value, int) and abs(value) <= INT64_MAX) \
        or (isinstance(value, float) and math.isfinite(value))


def _conditions(meta: dict) -> dict[str, Any]:
    return {k: meta[k] for k in _CONDITIONS if k in meta and _scalar(meta[k])}


def _unit(meta: dict, where: str) -> str:
    unit = meta.get("unit", "second")
    if not isinstance(unit, str) or unit not in _UNITS:
        raise EngineOutputError(f"{where}: field 'metadata.unit' is {repr(unit)[:60]}; expected "
                                f"one of {', '.join(_UNITS)}")
    return unit


def _loops_note(meta: dict, unit: str) -> tuple[str, ...]:
    """Only times are per loop: a byte or integer value is a whole-process figure."""
    total = 1
    for key in ("loops", "inner_loops"):
        count = meta.get(key, 1)  # pyperf writes ints ≥ 1; anything else only loses the note
        if isinstance(count, int) and not isinstance(count, bool) and count > 0:
            total *= count
    if unit != "second" or total == 1:
        return ()
    return (f"time per loop iteration: each value is the mean of {total} iterations",)


def _values(run: dict, where: str, unit: str) -> list[Metric]:
    values = run.get("values")
    if values is None:
        return []
    if not isinstance(values, list):
        raise EngineOutputError(f"{where}: field 'values' is {repr(values)[:60]}; expected a list")
    name, symbol = _UNITS[unit]
    metrics = []
    for index, value in enumerate(values):
        field = f"{where}: field 'values[{index}]'"
        number = json_float(value)
        if number is None:
            raise EngineOutputError(f"{field} is {repr(value)[:60]}; expected a number ({unit})")
        metric = Metric(name, number, symbol, LOWER)
        check_metric(metric, field, repetition=True)  # NaN, infinity, negative
        if number == 0:
            raise EngineOutputError(f"{field} is 0; expected a number > 0 (pyperf never "
                                    f"writes a zero value)")
        metrics.append(metric)
    return metrics


def _runs(entry: dict, where: str) -> list[dict]:
    runs = entry.get("runs")
    if not isinstance(runs, list) or not runs:
        got = "missing" if "runs" not in entry else repr(runs)[:60]
        raise EngineOutputError(f"{where}: field 'runs' is {got}; expected a non-empty list")
    for index, run in enumerate(runs):
        if not isinstance(run, dict):
            raise EngineOutputError(f"{where}: field 'runs[{index}]' is {repr(run)[:60]}; "
                                    f"expected an object")
    return runs


def _benchmark(entry: Any, where: str,
               suite: dict) -> tuple[str, list[ResultRow], list[dict], list[str]]:
    """(name, repetitions, each measured run's conditions, every run's date)."""
    if not isinstance(entry, dict):
        raise EngineOutputError(f"{where} is {type(entry).__name__}; expected an object")
    bench = suite | _object(entry, "metadata", where)
    runs = entry.get("runs")
    first = runs[0] if isinstance(runs, list) and runs and isinstance(runs[0], dict) else {}
    name = (bench | _object(first, "metadata", f"{where}: runs[0]")).get("name")
    if not isinstance(name, str) or not name.strip():
        _runs(entry, where)  # missing runs are the cause to name, not the name they would hold
        raise EngineOutputError(f"{where}: field 'metadata.name' is {repr(name)[:60]}; expected "
                                f"the benchmark's name")
    where += f" ({name[:80]})" if name.isprintable() else f" ({name[:80]!r})"
    runs = _runs(entry, where)
    rows: list[ResultRow] = []
    measured: list[dict] = []
    dates: list[str] = []
    units = set()
    for index, run in enumerate(runs):
        run_where = f"{where}: runs[{index}]"
        meta = bench | _object(run, "metadata", run_where)
        units.add(unit := _unit(meta, run_where))
        if len(units) > 1:
            raise EngineOutputError(f"{run_where}: field 'metadata.unit' is {unit!r} while "
                                    f"other runs have {min(units - {unit})!r}; expected one unit")
        notes = _loops_note(meta, unit)
        for metric in _values(run, run_where, unit):
            rows.append(ResultRow(name, len(rows) + 1, 1, ROW_OK, "", (metric,), (), notes))
        if run.get("values"):
            measured.append(_conditions(meta))
        if isinstance(meta.get("date"), str):  # calibration runs too: the benchmark's start
            dates.append(meta["date"])
    if not rows:
        raise EngineOutputError(f"{where}: no run has 'values' (only calibration runs); "
                                f"expected at least one measured value")
    return name, rows, measured, dates


def _shared(runs: list[dict]) -> dict[str, Any]:
    """The conditions every one of `runs` holds with the same value."""
    first, *rest = runs
    return {k: v for k, v in first.items() if all(k in o and o[k] == v for o in rest)}


def _context(measured: dict[str, list[dict]], dates: list[str]) -> dict[str, Any]:
    common = _shared([run for runs in measured.values() for run in runs])
    per_bench: dict[str, dict[str, Any]] = {}
    for name, runs in measured.items():
        shared = _shared(runs)
        keys = sorted({k for run in runs for k in run} - set(common))
        varying = {k: shared[k] if k in shared else [run.get(k) for run in runs] for k in keys}
        if varying:
            per_bench[name] = varying
    context: dict[str, Any] = {"conditions": common, "benchmark_conditions": per_bench}
    if isinstance(common.get("hostname"), str):
        context["host_name"] = common["hostname"]
    count = common.get("cpu_count")
    if isinstance(count, int) and not isinstance(count, bool) and 1 <= count <= INT32_MAX:
        context["num_cpus"] = count
    if dates:
        context["first_run_date"] = min(dates)  # one fixed-width format: text order is time order
    return context


def parse_pyperf_json(text: str, source: str = "pyperf JSON") -> ToolReport:
    """Raises EngineOutputError naming the line (syntax) or the benchmark and field (content)."""
    doc = load_json(text, source)
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise EngineOutputError(f"{source}: no 'benchmarks' list at the top level; is this a "
                                f"pyperf -o file?")
    version = doc.get("version")
    if isinstance(version, bool) or version not in _VERSIONS:
        raise EngineOutputError(f"{source}: field 'version' is {repr(version)[:40]}; expected "
                                f"'1.0' (pyperf 1.0+) or 6; upgrade an older file with "
                                f"`python -m pyperf convert OLD.json -o NEW.json`")
    if not doc["benchmarks"]:
        raise EngineOutputError(f"{source}: field 'benchmarks' is empty; expected a benchmark")
    suite = _object(doc, "metadata", source)
    rows: list[ResultRow] = []
    measured: dict[str, list[dict]] = {}
    dates: list[str] = []
    for index, entry in enumerate(doc["benchmarks"]):
        where = f"{source}: benchmarks[{index}]"
        name, bench_rows, metas, bench_dates = _benchmark(entry, where, suite)
        if name in measured:  # pyperf refuses a suite with two benchmarks of one name
            raise EngineOutputError(f"{where}: field 'metadata.name' {name[:80]!r} repeats an "
                                    f"earlier benchmark's; expected unique names")
        rows += bench_rows
        measured[name] = metas
        dates += bench_dates
    return ToolReport("pyperf_json", tuple(rows), (), _context(measured, dates))


class PyperfJsonAdapter:
    """A pyperf JSON file, `pyperf timeit -o` or a Runner script's `-o` (import only)."""

    fmt = "pyperf_json"
    importable = True

    def parse(self, text: str, request: ParseRequest) -> ToolReport:
        return parse_pyperf_json(text, request.source)
