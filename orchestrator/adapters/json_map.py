"""`json_map`: records of a JSON or JSONL file mapped to results by a small config (pure).

A map (YAML or a dict) names which fields hold what:

```yaml
layout: jsonl            # jsonl: one record per line | json: one document
records: ""              # json: dotted path to the list of records ("" = the document itself)
name: name               # field with the benchmark name (required)
threads: threads         # optional field with the thread count (default 1)
repetition: ""           # optional field with the repetition number (default: order of records)
params: [doc_size]       # fields copied into params
values:                  # field → metric; `better` is higher | lower
  ops_per_sec: {unit: ops/s, better: higher}
  duration_ms_median: {metric: duration_ms, unit: ms, better: lower, aggregate: median}
```

A value whose field holds a list gives one repetition per element; a scalar gives one repetition
per record; a value with `aggregate:` is a statistic the harness computed and is stored as an
aggregate, never as a repetition. Records with the same name, threads and params are
repetitions in file order. A record with none of the mapped values is an error naming its line,
and so is a params field that is not a scalar, a repetition that is not a whole number, or a
value that is NaN, infinite or negative where its unit or name says it cannot be (validate.py).
"""
from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterator

from ..errors import ConfigError, EngineOutputError
from ..record import HIGHER, LOWER, Metric
from .gbench_json import load_json
from .numbers import json_float
from .results import ROW_OK, AggregateRow, ParseRequest, ResultRow, ToolReport
from .validate import check_metric


@dataclass(frozen=True)
class ValueMap:
    field: str
    metric: str
    unit: str = ""
    better: str = HIGHER
    aggregate: str = ""  # non-empty: a statistic (mean, median, p99, ...), not a repetition


@dataclass(frozen=True)
class JsonMap:
    name: str
    values: tuple[ValueMap, ...]
    layout: str = "jsonl"
    records: str = ""
    threads: str = ""
    repetition: str = ""
    params: tuple[str, ...] = ()


_TOP_KEYS = {"layout", "records", "name", "threads", "repetition", "params", "values"}
_VALUE_KEYS = {"metric", "unit", "better", "aggregate"}


def _check_keys(given: dict, valid: set[str], where: str) -> None:
    unknown = sorted(set(given) - valid)
    if unknown:
        raise ConfigError(f"json_map {where}: unknown key {unknown[0]!r}; valid keys: "
                          f"{', '.join(sorted(valid))}")


def _value_map(field_name: str, spec: Any) -> ValueMap:
    spec = spec or {}
    if not isinstance(spec, dict):
        raise ConfigError(f"json_map values.{field_name} is {spec!r}; expected a mapping such as "
                          f"{{unit: ops/s, better: higher}}")
    _check_keys(spec, _VALUE_KEYS, f"values.{field_name}")
    better = str(spec.get("better", HIGHER))
    if better not in (HIGHER, LOWER):
        raise ConfigError(f"json_map values.{field_name}.better is {better!r}; use higher or lower")
    return ValueMap(field_name, str(spec.get("metric") or field_name), str(spec.get("unit", "")),
                    better, str(spec.get("aggregate") or ""))


def parse_map_config(raw: Any) -> JsonMap:
    """A loaded YAML/JSON mapping → JsonMap; ConfigError names the bad key."""
    if not isinstance(raw, dict):
        raise ConfigError("json_map config must be a mapping with at least 'name' and 'values'")
    _check_keys(raw, _TOP_KEYS, "config")
    if not isinstance(raw.get("name"), str) or not raw["name"]:
        raise ConfigError("json_map config needs 'name': the field holding the benchmark name")
    values = raw.get("values")
    if not isinstance(values, dict) or not values:
        raise ConfigError("json_map config needs 'values': a mapping of field → {unit, better}")
    layout = str(raw.get("layout", "jsonl"))
    if layout not in ("json", "jsonl"):
        raise ConfigError(f"json_map layout is {layout!r}; use json or jsonl")
    params = raw.get("params") or []
    if not isinstance(params, list):
        raise ConfigError(f"json_map params is {params!r}; expected a list of field names")
    return JsonMap(name=raw["name"], values=tuple(_value_map(k, v) for k, v in values.items()),
                   layout=layout, records=str(raw.get("records") or ""),
                   threads=str(raw.get("threads") or ""),
                   repetition=str(raw.get("repetition") or ""), params=tuple(map(str, params)))


def _records(text: str, cfg: JsonMap, source: str) -> Iterator[tuple[str, Any]]:
    """(where, record) pairs; where names the JSONL line or the JSON list index."""
    if cfg.layout == "jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise EngineOutputError(f"{source}: line {number} column {exc.colno}: "
                                            f"{exc.msg}; each line must be one JSON object") from None
                except (ValueError, RecursionError) as exc:  # 4,300+ digits; deep nesting
                    raise EngineOutputError(f"{source}: line {number}: {str(exc)[:100]}; each "
                                            f"line must be one JSON object") from None
                yield f"{source}: line {number}", record
        return
    node = load_json(text, source)
    for key in filter(None, cfg.records.split(".")):
        if not isinstance(node, dict) or key not in node:
            raise EngineOutputError(f"{source}: no field {key!r} on the path {cfg.records!r}")
        node = node[key]
    for index, record in enumerate(node if isinstance(node, list) else [node]):
        yield f"{source}: records[{index}]", record


def _number(value: Any, where: str, field_name: str) -> float:
    number = json_float(value)
    if number is None:
        raise EngineOutputError(f"{where}: field {field_name!r} is {value!r:.60}; expected a number")
    return number


def _repetition(value: Any, where: str, field_name: str) -> int:
    """A 1-based repetition number: a whole number (2 or 2.0), never 1.5, NaN or a string."""
    number = _number(value, where, field_name)
    if not number.is_integer() or not 1 <= number <= 2**31 - 1:
        raise EngineOutputError(f"{where}: field {field_name!r} is {value!r:.60}; expected a "
                                f"whole number in 1..{2**31 - 1}")
    return int(number)


def _params(record: dict, cfg: JsonMap, where: str) -> tuple[tuple[str, Any], ...]:
    params = tuple(sorted((p, record[p]) for p in cfg.params if p in record))
    for key, value in params:
        if isinstance(value, (dict, list)):
            raise EngineOutputError(f"{where}: field {key!r} (a param) is {value!r:.60}; "
                                    f"expected text, a number, true/false or null")
    return params


def _threads(record: dict, cfg: JsonMap, where: str) -> int:
    if not cfg.threads or cfg.threads not in record:
        return 1
    value = record[cfg.threads]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise EngineOutputError(f"{where}: field {cfg.threads!r} is {value!r:.60}; expected an "
                                f"integer ≥ 1")
    return value


def _samples(record: dict, cfg: JsonMap, where: str) -> tuple[list[list[Metric]], list[Metric]]:
    """Per-repetition metric lists and aggregate metrics of one record."""
    per_rep: dict[int, list[Metric]] = defaultdict(list)
    aggregates: list[Metric] = []
    for vm in cfg.values:
        if vm.field not in record:
            continue
        raw = record[vm.field]
        values = raw if isinstance(raw, list) else [raw]
        numbers = [_number(v, where, vm.field) for v in values]
        metrics = [Metric(vm.metric, n, vm.unit, vm.better) for n in numbers]
        for metric in metrics:  # here, where the line is known; validate.py checks again
            check_metric(metric, f"{where}: field {vm.field!r}", repetition=not vm.aggregate)
        if vm.aggregate:
            aggregates += metrics[:1]
        for index, metric in enumerate(metrics if not vm.aggregate else []):
            per_rep[index].append(metric)
    if not per_rep and not aggregates:
        fields = ", ".join(vm.field for vm in cfg.values)
        raise EngineOutputError(f"{where}: none of the mapped value fields ({fields}) is present")
    return [per_rep[i] for i in sorted(per_rep)], aggregates


def parse_json_map(text: str, cfg: JsonMap, source: str = "json_map file") -> ToolReport:
    """Raises EngineOutputError naming the line (JSONL) or record index (JSON) and field."""
    rows: list[ResultRow] = []
    aggregates: list[AggregateRow] = []
    seen: dict[tuple, int] = defaultdict(int)
    for where, record in _records(text, cfg, source):
        if not isinstance(record, dict):
            raise EngineOutputError(f"{where}: is {type(record).__name__}; expected a JSON object")
        if not isinstance(record.get(cfg.name), str) or not record[cfg.name]:
            raise EngineOutputError(f"{where}: field {cfg.name!r} (the benchmark name) is missing")
        name, threads = record[cfg.name], _threads(record, cfg, where)
        params = _params(record, cfg, where)
        reps, stats = _samples(record, cfg, where)
        by_stat: dict[str, list[Metric]] = defaultdict(list)
        for vm, metric in zip([v for v in cfg.values if v.aggregate and v.field in record], stats):
            by_stat[vm.aggregate].append(metric)
        aggregates += [AggregateRow(name, stat, threads, tuple(ms), params)
                       for stat, ms in by_stat.items()]
        for metrics in reps:
            key = (name, threads, params)
            seen[key] += 1
            rep = record.get(cfg.repetition) if cfg.repetition else None
            repetition = _repetition(rep, where, cfg.repetition) if rep is not None else seen[key]
            rows.append(ResultRow(name, repetition, threads, ROW_OK, "", tuple(metrics), params))
    if not rows and not aggregates:
        raise EngineOutputError(f"{source}: no records; is the layout ({cfg.layout}) right?")
    return ToolReport("json_map", tuple(rows), tuple(aggregates),
                      {"map": dataclasses.asdict(cfg)})


class JsonMapAdapter:
    """JSON or JSONL written by any harness, read through a user-given field map (--map)."""

    fmt = "json_map"
    importable = True

    def parse(self, text: str, request: ParseRequest) -> ToolReport:
        if request.json_map is None:
            raise ConfigError("--format json_map needs --map CONFIG.yaml naming the fields "
                              "(see orchestrator/adapters/json_map.py)")
        return parse_json_map(text, request.json_map, request.source)
