"""asv (airspeed velocity) results → ToolReport (pure).

`asv run` writes one file per commit and environment, `results/<machine>/<hash8>-<env>.json`;
beside it `machine.json` (what `asv machine` recorded) and one level up `benchmarks.json`
(each benchmark's `type`, `unit`, `param_names`). The result file is asv's api version 2
(`asv/results.py`, `Results.save`): `commit_hash`, `date` (the commit's, ms since the epoch),
`env_name`, `python`, `requirements`, `params` (the machine and environment), `result_columns`
and `results` {benchmark: one value per column, trailing nulls dropped}. The columns: `result`
(one per param combination: the median of the samples of a time benchmark, the measured value
of any other), `params` (a list of value lists, as asv writes them: `'-'`, `10`), `version`,
`started_at` (ms), `duration`, `stats_ci_99_a`/`_b`, `stats_q_25`/`_75`, `stats_number`,
`stats_repeat`, `samples` (only from `asv run --record-samples`), `profile`.

- A benchmark × param combination is one series: the row is the benchmark's full name
  (`benchmarks.Suite.time_join`), its params named by benchmarks.json's `param_names` (asv's own
  `param1`, `param2`, ... without it).
- Its kind is benchmarks.json's `type`, else asv's name prefix: time → `wall_s` (s), memory →
  `memory_bytes` (B), peakmemory → `max_rss_bytes` (B), track (and a plugin's type) →
  `track_value` in benchmarks.json's unit. All are lower-is-better: asv reads a smaller value
  as better for every benchmark (`asv compare`, its regression detection).
- A time benchmark's samples (seconds per iteration: asv divides by `number`) are its
  repetitions, 1..n per series. Without samples (asv ran without --record-samples) it has no
  rows, only aggregates: a summary, and the analysis says it has no repetitions. A track,
  memory or peakmemory benchmark is measured once per run: its result is that one repetition.
- The statistics are aggregates: `median` (a time benchmark's result), `q_25`, `q_75`. asv's
  99 % interval is left out: its posterior bound can lie below zero for a time.
- A null result is a failed row (the benchmark raised); NaN a skipped one (asv's skip).
- Context: `host_name` (the machine), `num_cpus`, `machine` (machine.json's facts), `commit`
  (sha and date: `tidemark import` records it as the run's build), `date` (the first
  benchmark's start), `asv_env`, `summary_only` (a time benchmark without samples, none with).
"""
from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Mapping

from ..errors import EngineOutputError
from ..record import LOWER, Metric
from .gbench_json import load_json
from .numbers import json_float
from .results import ROW_FAILED, ROW_OK, ROW_SKIPPED, AggregateRow, ParseRequest, ResultRow, \
    ToolReport
from .validate import INT32_MAX, check_metric

_API_VERSION = 2
# asv's type → (metric, unit); a track's unit is its benchmarks.json `unit`.
_KINDS = {"time": ("wall_s", "s"), "memory": ("memory_bytes", "B"),
          "peakmemory": ("max_rss_bytes", "B"), "track": ("track_value", "")}
_PREFIXES = (("timeraw_", "time"), ("time_", "time"), ("peakmem_", "peakmemory"),
             ("mem_", "memory"), ("track_", "track"))
_UNITS = {"seconds": "s", "bytes": "B"}
_STATS = ("q_25", "q_75")
_MACHINE_KEYS = ("machine", "os", "arch", "cpu", "num_cpu", "ram")
_SHA = re.compile(r"[0-9a-f]{7,64}")
_COMBINATION_LIMIT = 100_000  # asv would never write more; a hostile file could ask for 10^30


@dataclass(frozen=True)
class AsvFolder:
    """What a results folder says beside a result file (either may be missing: {})."""

    benchmarks: Mapping[str, Any] = field(default_factory=dict)  # benchmarks.json
    machine: Mapping[str, Any] = field(default_factory=dict)  # machine.json


def _object(text: str, source: str) -> dict:
    doc = load_json(text, source)
    if not isinstance(doc, dict):
        raise EngineOutputError(f"{source}: is {type(doc).__name__}; expected an object (is "
                                f"this asv's file?)")
    return doc


def parse_asv_folder(benchmarks: str | None, machine: str | None,
                     source: str = "asv results") -> AsvFolder:
    """benchmarks.json and machine.json (their text, None when absent) checked as objects."""
    found = {}
    for name, text in (("benchmarks.json", benchmarks), ("machine.json", machine)):
        found[name] = {} if text is None else _object(text, f"{source}/{name}")
    return AsvFolder(found["benchmarks.json"], found["machine.json"])


def _kind(name: str, info: Mapping[str, Any], where: str) -> tuple[Metric, tuple[str, ...]]:
    """The metric template (value 0) of a benchmark, and a note when its kind was assumed."""
    kind = info.get("type")
    if kind is None:
        last = name.rsplit(".", 1)[-1]
        kind = next((k for prefix, k in _PREFIXES if last.startswith(prefix)), "track")
    if not isinstance(kind, str):
        raise EngineOutputError(f"{where}: benchmarks.json field 'type' is {kind!r:.60}; "
                                f"expected text")
    metric, unit = _KINDS.get(kind, _KINDS["track"])
    notes: tuple[str, ...] = ()
    if metric == "track_value":
        given = info.get("unit", "")
        if not isinstance(given, str):
            raise EngineOutputError(f"{where}: benchmarks.json field 'unit' is {given!r:.60}; "
                                    f"expected text")
        unit = _UNITS.get(given, given)
        notes = (f"asv {kind} benchmark: lower is better, as asv reads every benchmark",)
    return Metric(metric, 0.0, unit, LOWER), notes


def _param_names(info: Mapping[str, Any], count: int) -> list[str]:
    names = info.get("param_names")
    if isinstance(names, list) and len(names) == count and all(isinstance(n, str) for n in names):
        return names
    return [f"param{i + 1}" for i in range(count)]  # asv's own names when a suite gives none


def _combinations(params: Any, info: Mapping[str, Any], where: str) -> list[tuple]:
    """Each param combination as sorted (name, value) pairs, in asv's order (itertools.product)."""
    if not isinstance(params, list) or not all(
            isinstance(p, list) and all(isinstance(v, (str, int, float)) and
                                        not isinstance(v, bool) for v in p) for p in params):
        raise EngineOutputError(f"{where}: field 'params' is {params!r:.60}; expected a list of "
                                f"lists of values")
    if math.prod(len(p) for p in params) > _COMBINATION_LIMIT:
        raise EngineOutputError(f"{where}: field 'params' has more than {_COMBINATION_LIMIT} "
                                f"combinations; expected what asv ran")
    names = _param_names(info, len(params))
    return [tuple(sorted(zip(names, values))) for values in itertools.product(*params)]


def _column(entry: dict[str, Any], key: str, count: int, where: str) -> list[Any]:
    """A per-combination column: `count` values (None where missing)."""
    value = entry.get(key)
    if value is None:
        return [None] * count
    if not isinstance(value, list) or len(value) != count:
        raise EngineOutputError(f"{where}: field {key!r} is {value!r:.60}; expected a list of "
                                f"{count} (one per param combination)")
    return value


def _finite(value: Any) -> float | None:
    number = json_float(value)
    return number if number is not None and math.isfinite(number) else None


def _number(value: Any, field_name: str, where: str) -> float:
    number = _finite(value)
    if number is None:
        raise EngineOutputError(f"{where}: field {field_name!r} is {value!r:.60}; expected a "
                                f"finite number")
    return number


def _measured(template: Metric, value: float, field_name: str, where: str) -> Metric:
    metric = Metric(template.name, value, template.unit, template.better)
    check_metric(metric, f"{where}: field {field_name!r}", repetition=True)
    return metric


def _iterations_note(number: Any) -> tuple[str, ...]:
    if isinstance(number, int) and not isinstance(number, bool) and number > 1:
        return (f"time per iteration: each sample is the mean of {number} iterations",)
    return ()


def _series_rows(name: str, template: Metric, notes: tuple[str, ...], entry: dict[str, Any],
                 index: int, params: tuple, where: str) -> list[ResultRow]:
    """One combination's rows: its samples, its one measured value, or a failure."""
    result = entry["result"][index]
    samples = entry["samples"][index]
    if result is None:
        return [ResultRow(name, 1, 1, ROW_FAILED, "asv recorded no result: the benchmark "
                          "failed (asv run --show-stderr tells why)", (), params, notes)]
    if isinstance(result, float) and math.isnan(result):
        return [ResultRow(name, 1, 1, ROW_SKIPPED, "asv skipped it", (), params, notes)]
    _number(result, f"result[{index}]", where)
    if template.name != "wall_s":  # measured once: the result is the measurement
        metric = _measured(template, float(result), f"result[{index}]", where)
        return [ResultRow(name, 1, 1, ROW_OK, "", (metric,), params, notes)]
    if samples is None:
        return []
    if not isinstance(samples, list) or not samples:
        raise EngineOutputError(f"{where}: field 'samples[{index}]' is {samples!r:.60}; "
                                f"expected a list of numbers")
    notes += _iterations_note(entry["stats_number"][index])
    return [ResultRow(name, rep, 1, ROW_OK, "", (_measured(
        template, _number(value, f"samples[{index}][{rep - 1}]", where),
        f"samples[{index}][{rep - 1}]", where),), params, notes)
        for rep, value in enumerate(samples, start=1)]


def _aggregates(name: str, template: Metric, entry: dict[str, Any], index: int,
                params: tuple, where: str) -> list[AggregateRow]:
    result = _finite(entry["result"][index])
    if template.name != "wall_s" or result is None:
        return []
    found = [("median", result)] + [(key, entry[f"stats_{key}"][index]) for key in _STATS]
    rows = []
    for aggregate, value in found:
        if value is None:
            continue
        metric = Metric(template.name, _number(value, f"stats_{aggregate}[{index}]", where),
                        template.unit, template.better)
        check_metric(metric, f"{where}: field 'stats_{aggregate}[{index}]'", repetition=False)
        rows.append(AggregateRow(name, aggregate, 1, (metric,), params))
    return rows


def _entry(values: Any, columns: list[str], where: str) -> dict[str, Any]:
    if not isinstance(values, list) or len(values) > len(columns):
        raise EngineOutputError(f"{where}: is {values!r:.60}; expected a list of at most "
                                f"{len(columns)} values (result_columns)")
    entry = dict(zip(columns, values))
    if "result" not in entry:
        raise EngineOutputError(f"{where}: field 'result' is missing; expected a value per "
                                f"param combination")
    return entry


def _benchmark(name: str, values: Any, columns: list[str], folder: AsvFolder,
               source: str) -> tuple[list[ResultRow], list[AggregateRow], bool]:
    """(rows, aggregates, whether it is a time benchmark without samples)."""
    where = f"{source}: benchmark {name[:80]!r}"
    if not name:
        raise EngineOutputError(f"{source}: a benchmark has an empty name; expected asv's names")
    info = folder.benchmarks.get(name)
    info = info if isinstance(info, dict) else {}
    template, notes = _kind(name, info, where)
    entry = _entry(values, columns, where)
    combos = _combinations(entry.get("params") or [], info, where)
    if entry["result"] is None:  # every combination failed: asv writes one null
        entry["result"] = [None] * len(combos)
    for key in ("result", "samples", "stats_number", *(f"stats_{k}" for k in _STATS)):
        entry[key] = _column(entry, key, len(combos), where)
    rows: list[ResultRow] = []
    aggregates: list[AggregateRow] = []
    for index, params in enumerate(combos):
        rows += _series_rows(name, template, notes, entry, index, params, where)
        aggregates += _aggregates(name, template, entry, index, params, where)
    unsampled = template.name == "wall_s" and any(
        s is None and _finite(r) is not None for r, s in zip(entry["result"], entry["samples"]))
    return rows, aggregates, unsampled


def _iso(ms: Any, field_name: str, source: str) -> str:
    """asv's JavaScript timestamp (ms since the epoch, UTC) as ISO 8601."""
    number = json_float(ms)
    try:
        if number is None:
            raise ValueError
        return datetime.fromtimestamp(number / 1000, tz=timezone.utc).isoformat()
    except (ValueError, OverflowError, OSError):
        raise EngineOutputError(f"{source}: field {field_name!r} is {ms!r:.60}; expected "
                                f"milliseconds since 1970 (asv's timestamps)") from None


def _header(doc: dict, source: str) -> tuple[str, list[str], dict]:
    """(commit sha, result columns, results) of a result file, checked."""
    version = doc.get("version")
    if version != _API_VERSION or isinstance(version, bool):
        raise EngineOutputError(f"{source}: field 'version' is {version!r:.40}; expected "
                                f"{_API_VERSION} (asv 0.5+); upgrade older results with "
                                f"`asv update`")
    sha = doc.get("commit_hash")
    if not isinstance(sha, str) or not _SHA.fullmatch(sha):
        raise EngineOutputError(f"{source}: field 'commit_hash' is {sha!r:.60}; expected the "
                                f"commit's hex sha")
    columns = doc.get("result_columns")
    if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns) \
            or "result" not in columns:
        raise EngineOutputError(f"{source}: field 'result_columns' is {columns!r:.60}; "
                                f"expected asv's column names, 'result' among them")
    results = doc.get("results")
    if not isinstance(results, dict) or not results:
        raise EngineOutputError(f"{source}: field 'results' is {results!r:.60}; expected an "
                                f"object of benchmarks")
    return sha, columns, results


def _scalars(values: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: values[k] for k in keys if isinstance(values.get(k), (str, int, float))
            and not isinstance(values.get(k), bool)}


def _context(doc: dict, sha: str, folder: AsvFolder, starts: list[Any],
             source: str) -> dict[str, Any]:
    params = doc.get("params") if isinstance(doc.get("params"), dict) else {}
    machine = _scalars(params, _MACHINE_KEYS) | _scalars(folder.machine, _MACHINE_KEYS)
    requirements = doc.get("requirements") if isinstance(doc.get("requirements"), dict) else {}
    context: dict[str, Any] = {"machine": machine, "commit": {"sha": sha}, "asv_env": _scalars(
        doc, ("env_name", "python")) | {"requirements": _scalars(requirements, tuple(requirements))}}
    if isinstance(machine.get("machine"), str) and machine["machine"]:
        context["host_name"] = machine["machine"]
    cpus = str(machine.get("num_cpu", ""))
    if cpus.isascii() and cpus.isdigit() and 1 <= int(cpus[:12]) <= INT32_MAX:
        context["num_cpus"] = int(cpus)
    if doc.get("date") is not None:
        context["commit"]["date"] = _iso(doc["date"], "date", source)
    if starts:
        context["date"] = min(_iso(ms, "started_at", source) for ms in starts)
    return context


def parse_asv_json(text: str, source: str = "asv result",
                   folder: AsvFolder = AsvFolder()) -> ToolReport:
    """Raises EngineOutputError naming the line (syntax) or the benchmark and field (content)."""
    doc = _object(text, source)
    sha, columns, results = _header(doc, source)
    rows: list[ResultRow] = []
    aggregates: list[AggregateRow] = []
    unsampled = 0
    starts = []
    for name, values in results.items():
        bench_rows, bench_aggregates, without = _benchmark(name, values, columns, folder, source)
        rows += bench_rows
        aggregates += bench_aggregates
        unsampled += without
        start = dict(zip(columns, values)).get("started_at")
        if start is not None:
            starts.append(start)
    context = _context(doc, sha, folder, starts, source)
    context["summary_only"] = bool(unsampled) and not any(
        r.status == ROW_OK and r.metrics[0].name == "wall_s" for r in rows)
    return ToolReport("asv_json", tuple(rows), tuple(aggregates), context)


class AsvJsonAdapter:
    """An asv result file (import only); request.asv holds its folder's benchmarks.json and
    machine.json (history/asv_results.py reads them)."""

    fmt = "asv_json"
    importable = True

    def parse(self, text: str, request: ParseRequest) -> ToolReport:
        return parse_asv_json(text, request.source, request.asv or AsvFolder())
