"""hyperfine `--export-json` → ToolReport (pure).

Each entry of `results` is one command (or one parameter point of `--parameter-scan`):
- every element of `times[]` is one repetition (a sample) with `wall_s`; its exit code from
  `exit_codes[]` (non-zero or null, i.e. killed by a signal → a failed row) and, where present
  (hyperfine 1.17+), its `memory_usage_byte[]` as `max_rss_bytes`;
- mean, median, min, max and stddev of the wall time, and the mean user and system times, are
  aggregates (hyperfine reports user/system only as means);
- `parameters` become the rows' params.

A time, memory figure or statistic that is NaN, infinite or negative is a parse error (the
checks in validate.py): hyperfine never writes one.
"""
from __future__ import annotations

from typing import Any

from ..errors import EngineOutputError
from ..record import LOWER, Metric
from .gbench_json import load_json
from .numbers import json_float
from .results import ROW_FAILED, ROW_OK, AggregateRow, ParseRequest, ResultRow, ToolReport
from .validate import check_metric

_STATISTICS = ("mean", "median", "min", "max", "stddev")


def _number(entry: dict, key: str, where: str, optional: bool = False) -> float | None:
    value = entry.get(key)
    if value is None and optional:
        return None
    number = json_float(value)
    if number is None:
        got = "missing" if key not in entry else repr(value)[:60]
        raise EngineOutputError(f"{where}: field {key!r} is {got}; expected a number")
    return number


def _list(entry: dict, key: str, where: str, length: int | None) -> list | None:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or (length is not None and len(value) != length):
        raise EngineOutputError(f"{where}: field {key!r} must be a list of {length} values "
                                f"(one per time), got {repr(value)[:60]}")
    return value


def _samples(entry: dict, where: str, name: str,
             params: tuple[tuple[str, Any], ...]) -> list[ResultRow]:
    times = _list(entry, "times", where, None)
    if times is None:
        raise EngineOutputError(f"{where}: field 'times' is missing; export with hyperfine "
                                f"--export-json (it lists every sample)")
    codes = _list(entry, "exit_codes", where, len(times)) or [0] * len(times)
    memory = _list(entry, "memory_usage_byte", where, len(times))
    rows = []
    for index, wall in enumerate(times):
        sample = f"{where} times[{index}]"
        seconds = json_float(wall)
        if seconds is None:
            raise EngineOutputError(f"{sample} is {wall!r:.60}; expected seconds")
        metrics = [Metric("wall_s", seconds, "s", LOWER)]
        rss = json_float(memory[index]) if memory is not None else None
        if rss is not None:
            metrics.append(Metric("max_rss_bytes", rss, "B", LOWER))
        code = codes[index]
        ok = code == 0 and not isinstance(code, bool)
        for metric in metrics:  # here, where the sample is known; validate.py checks again
            check_metric(metric, sample, repetition=ok)
        status = ROW_OK if ok else ROW_FAILED
        error = "" if ok else ("killed by a signal" if code is None else f"exit code {code!r:.40}")
        rows.append(ResultRow(name, index + 1, 1, status, error, tuple(metrics), params))
    return rows


def _aggregates(entry: dict, where: str, name: str,
                params: tuple[tuple[str, Any], ...]) -> list[AggregateRow]:
    rows = []
    for stat in _STATISTICS:
        value = _number(entry, stat, where, optional=(stat == "stddev"))
        if value is not None:
            metric = Metric("wall_s", value, "s", LOWER)
            check_metric(metric, f"{where}: field {stat!r}", repetition=False)
            rows.append(AggregateRow(name, stat, 1, (metric,), params))
    cpu = [Metric(f"{key}_s", v, "s", LOWER) for key in ("user", "system")
           if (v := _number(entry, key, where, optional=True)) is not None]
    for metric in cpu:
        check_metric(metric, f"{where}: field {metric.name[:-2]!r}", repetition=False)
    if cpu:
        rows.append(AggregateRow(name, "mean_cpu", 1, tuple(cpu), params))
    return rows


def parse_hyperfine_json(text: str, source: str = "hyperfine JSON") -> ToolReport:
    """Raises EngineOutputError naming the line (syntax) or the result and field (content)."""
    doc = load_json(text, source)
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise EngineOutputError(f"{source}: no 'results' list at the top level; is this "
                                f"hyperfine --export-json output?")
    rows: list[ResultRow] = []
    aggregates: list[AggregateRow] = []
    for index, entry in enumerate(doc["results"]):
        where = f"{source}: results[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
            raise EngineOutputError(f"{where}: field 'command' is missing; expected a string")
        parameters = entry.get("parameters") or {}
        if not isinstance(parameters, dict):
            raise EngineOutputError(f"{where}: field 'parameters' is {parameters!r}; expected an object")
        params = tuple(sorted((str(k), v) for k, v in parameters.items()))
        for key, value in params:
            if isinstance(value, (dict, list)):
                raise EngineOutputError(f"{where}: parameter {key!r} is {value!r:.60}; expected "
                                        f"text or a number")
        rows += _samples(entry, where, entry["command"], params)
        aggregates += _aggregates(entry, where, entry["command"], params)
    return ToolReport("hyperfine_json", tuple(rows), tuple(aggregates), {})


class HyperfineJsonAdapter:
    """A hyperfine `--export-json` file (import only)."""

    fmt = "hyperfine_json"
    importable = True

    def parse(self, text: str, request: ParseRequest) -> ToolReport:
        return parse_hyperfine_json(text, request.source)
