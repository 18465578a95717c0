"""pytest-benchmark JSON → ToolReport (pure).

`pytest --benchmark-json=PATH` and `--benchmark-save` (`.benchmarks/<machine>/NNNN_<name>.json`)
write one shape: `machine_info`, `commit_info`, `datetime`, `version`, and `benchmarks[]` with
`name` (`test_sort[1000]`), `fullname` (the node id, `test_sorting.py::test_sort[1000]`),
`param` (the parametrize id `1000` or null), `params` (`{"size": 1000}` or null), `group`, `stats`.

- Row name: `fullname` without the `[param]` suffix (or `name` if a file lacks `fullname`):
  pytest-benchmark matches runs by `fullname` (`--benchmark-compare`), and `name` repeats across
  modules and classes. `params` become the params (a list or object value as compact JSON
  text); `group` is a note.
- `stats.data` is one value per round: the round's duration divided by its iterations
  (`stats.Metadata.update`), so seconds per call. Each is one repetition (`wall_s`).
  `--benchmark-json` always writes it; a saved file has it only with `--benchmark-save-data`.
- The statistics (over those per-call values) are aggregates named as the file names them:
  times as `wall_s` (`total` is the sum of `data`, not the elapsed time), `ops` as `ops_per_sec`
  (rounds / total), `rounds`, `iterations` (per round), the outlier counts. A file without
  `data` gives no rows and `context["summary_only"] = True` (as bmf_json).
- The context keeps chosen `machine_info` and `commit_info` keys, the version, and what
  `tidemark import` reads: `host_name` (machine_info.node), `num_cpus` (cpu.count), `date`.

A statistic or data value that is not a finite number ≥ 0 is a parse error naming the
benchmark and the field: pytest-benchmark never writes one.
"""
from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from typing import Any

from ..errors import EngineOutputError
from ..record import HIGHER, LOWER, Metric
from .gbench_json import load_json
from .numbers import json_float
from .results import ROW_OK, AggregateRow, ParseRequest, ResultRow, ToolReport
from .validate import INT32_MAX, INT64_MAX, check_metric

# stats field → (metric, unit, better, required, lowest integer or None for a float);
# `outliers` ("3;9") only repeats the two outlier counts.
_TIME = ("wall_s", "s", LOWER)
_FIELDS: dict[str, tuple[str, str, str, bool, int | None]] = {
    **{key: (*_TIME, True, None) for key in ("min", "max", "mean", "median", "stddev")},
    **{key: (*_TIME, False, None) for key in ("q1", "q3", "iqr", "ld15iqr", "hd15iqr", "total")},
    "ops": ("ops_per_sec", "ops/s", HIGHER, False, None),
    "rounds": ("rounds", "repetitions", HIGHER, True, 1),
    "iterations": ("iterations", "iterations", HIGHER, False, 1),
    "iqr_outliers": ("iqr_outliers", "count", LOWER, False, 0),
    "stddev_outliers": ("stddev_outliers", "count", LOWER, False, 0),
}
_MACHINE_KEYS = ("node", "processor", "machine", "system", "release", "python_implementation",
                 "python_version", "python_compiler")
_CPU_KEYS = {"brand_raw": "cpu_brand", "brand": "cpu_brand", "arch": "cpu_arch",
             "count": "cpu_count"}  # `brand` is py-cpuinfo < 5's name of `brand_raw`
_COMMIT_KEYS = ("id", "branch", "dirty", "time", "author_time", "project")

Params = tuple[tuple[str, Any], ...]


def _statistic(stats: dict, key: str, where: str) -> Metric | None:
    name, unit, better, required, lowest = _FIELDS[key]
    if key not in stats and not required:
        return None
    value, field = stats.get(key), f"{where}: field 'stats.{key}'"
    got = "missing" if key not in stats else repr(value)[:60]
    if lowest is None and json_float(value) is None:
        raise EngineOutputError(f"{field} is {got}; expected a number")
    if lowest is not None and (isinstance(value, bool) or not isinstance(value, int)
                               or not lowest <= value <= INT64_MAX):
        raise EngineOutputError(f"{field} is {got}; expected an integer ≥ {lowest}")
    metric = Metric(name, json_float(value), unit, better)
    check_metric(metric, field, repetition=False)
    return metric


def _aggregates(stats: dict, where: str, name: str, params: Params,
                notes: tuple[str, ...]) -> list[AggregateRow]:
    rows = []
    for key in _FIELDS:
        metric = _statistic(stats, key, where)
        if metric is not None:
            rows.append(AggregateRow(name, key, 1, (metric,), params, notes))
    return rows


def _repetitions(stats: dict, where: str, name: str, params: Params,
                 notes: tuple[str, ...]) -> list[ResultRow]:
    data = stats["data"]
    if not isinstance(data, list) or len(data) != stats.get("rounds"):
        raise EngineOutputError(f"{where}: field 'stats.data' must be a list of "
                                f"{stats.get('rounds')!r:.20} values (one per round), got "
                                f"{repr(data)[:60]}")
    iterations = stats.get("iterations")
    if isinstance(iterations, int) and iterations > 1:  # what a repetition is, for the reader
        notes += (f"time per iteration of a round of {iterations} iterations",)
    rows = []
    for index, value in enumerate(data):
        field = f"{where}: field 'stats.data[{index}]'"
        seconds = json_float(value)
        if seconds is None:
            raise EngineOutputError(f"{field} is {repr(value)[:60]}; expected seconds")
        metric = Metric("wall_s", seconds, "s", LOWER)
        check_metric(metric, field, repetition=True)
        rows.append(ResultRow(name, index + 1, 1, ROW_OK, "", (metric,), params, notes))
    return rows


def _identity(entry: dict, where: str) -> tuple[str, Params, tuple[str, ...]]:
    """(row name, params, notes) of one benchmark."""
    key = "fullname" if "fullname" in entry else "name"
    full = entry.get(key)
    if not isinstance(full, str) or not full:
        got = "missing" if key not in entry else repr(full)[:60]
        raise EngineOutputError(f"{where}: field {key!r} is {got}; expected a non-empty string")
    param = entry.get("param")
    if isinstance(param, str) and full.endswith(f"[{param}]") and len(full) > len(param) + 2:
        full = full[:-len(param) - 2]  # by the id, not a regex: an id may hold brackets
    raw = entry.get("params") or {}
    if not isinstance(raw, dict):
        raise EngineOutputError(f"{where}: field 'params' is {raw!r:.60}; expected an object")
    params = tuple(sorted((key, json.dumps(value, sort_keys=True, separators=(",", ":"))
                           if isinstance(value, (dict, list)) else value)
                          for key, value in raw.items()))
    group = entry.get("group")
    notes = (f"group: {group}",) if isinstance(group, str) and group else ()
    return full, params, notes


def _scalars(source: dict, keys: dict[str, str]) -> dict[str, Any]:
    """The given keys (renamed) whose value the store keeps as it is: metadata with a nested or
    odd value loses that key, the file is not refused for it."""
    kept: dict[str, Any] = {}
    for key, out in keys.items():
        value = source.get(key)
        if isinstance(value, (str, bool)) or (isinstance(value, int) and abs(value) <= INT64_MAX) \
                or (isinstance(value, float) and math.isfinite(value)):
            kept.setdefault(out, value)
    return kept


def _object(doc: dict, key: str, source: str) -> dict:
    value = doc.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise EngineOutputError(f"{source}: field {key!r} is {type(value).__name__}; expected "
                                f"an object")
    return value


def _context(doc: dict, source: str, summary_only: bool) -> dict[str, Any]:
    machine = _object(doc, "machine_info", source)
    cpu = machine.get("cpu") if isinstance(machine.get("cpu"), dict) else {}
    machine_info = _scalars(machine, {k: k for k in _MACHINE_KEYS}) | _scalars(cpu, _CPU_KEYS)
    context: dict[str, Any] = {
        "machine_info": machine_info, "summary_only": summary_only,
        "commit_info": _scalars(_object(doc, "commit_info", source), {k: k for k in _COMMIT_KEYS})}
    if isinstance(machine_info.get("node"), str) and machine_info["node"]:
        context["host_name"] = machine_info["node"]
    count = machine_info.get("cpu_count")
    if isinstance(count, int) and not isinstance(count, bool) and 1 <= count <= INT32_MAX:
        context["num_cpus"] = count
    if isinstance(doc.get("version"), str):
        context["pytest_benchmark_version"] = doc["version"]
    stamp = doc.get("datetime")
    try:  # as importer.check_date reads it; a date it would refuse is left out, not guessed
        datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(timezone.utc)
        context["date"] = stamp
    except (AttributeError, ValueError, OverflowError):
        pass
    return context


def parse_pytest_benchmark_json(text: str, source: str = "pytest-benchmark JSON") -> ToolReport:
    """Raises EngineOutputError naming the line (syntax) or the benchmark and field (content)."""
    doc = load_json(text, source)
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise EngineOutputError(f"{source}: no 'benchmarks' list at the top level; is this "
                                f"pytest --benchmark-json output?")
    rows: list[ResultRow] = []
    aggregates: list[AggregateRow] = []
    with_data, without_data = 0, []
    for index, entry in enumerate(doc["benchmarks"]):
        where = f"{source}: benchmarks[{index}]"
        if not isinstance(entry, dict):
            raise EngineOutputError(f"{where} is {type(entry).__name__}; expected an object")
        name, params, notes = _identity(entry, where)
        where += f" ({name[:80]})" if name.isprintable() else f" ({name[:80]!r})"
        stats = entry.get("stats")
        if not isinstance(stats, dict):
            raise EngineOutputError(f"{where}: field 'stats' is {repr(stats)[:60]}; expected an "
                                    f"object of statistics")
        aggregates += _aggregates(stats, where, name, params, notes)
        if stats.get("data") is None:
            without_data.append(where)
        else:
            rows += _repetitions(stats, where, name, params, notes)
            with_data += 1
    if with_data and without_data:  # pytest-benchmark writes data for every benchmark or none
        raise EngineOutputError(f"{without_data[0]}: field 'stats.data' is missing while "
                                f"{with_data} other benchmark(s) have it; expected it for all")
    summary_only = bool(without_data) and not with_data
    return ToolReport("pytest_benchmark_json", tuple(rows), tuple(aggregates),
                      _context(doc, source, summary_only))


class PytestBenchmarkJsonAdapter:
    """A pytest-benchmark JSON file, `--benchmark-json` or a saved run (import only)."""

    fmt = "pytest_benchmark_json"
    importable = True

    def parse(self, text: str, request: ParseRequest) -> ToolReport:
        return parse_pytest_benchmark_json(text, request.source)
