"""Workload targets and regression bars (pure).

A target is an absolute promise, `p99_us < 50` or `ops_per_sec > 200000`; a bar is headroom over
the observed baseline, `p99_us: 1.5` = at most 1.5 × the baseline's p99 (for a higher-is-better
metric: at least baseline / 1.5). Both come from the workload config (WorkloadConf.targets/bars).

A workload's targets hold for every series of it (each thread count, cache state, params
point) and each series is judged on its own medians; a bar compares a series with the same
series in the baseline run, never with another thread count or cache state.
"""
from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from ..errors import ConfigError

OPS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
TARGET = re.compile(r"^\s*(?P<metric>[A-Za-z_][\w.]*)\s*(?P<op><=|>=|<|>)\s*(?P<value>[-+0-9.eE]+)\s*$")
MEETS = "meets"
OVER = "over target"
NO_DATA = "no data"


@dataclass(frozen=True)
class Target:
    metric: str
    op: str
    value: float

    def __str__(self) -> str:
        return f"{self.metric} {self.op} {self.value:g}"


@dataclass(frozen=True)
class TargetResult:
    series: str  # the series as a reader names it, e.g. readrandom ×4 [cold]
    target: str  # as written, e.g. "p99_us < 50" or "p99_us ≤ 1.5 × baseline (…)"
    observed: float | None
    status: str  # meets | over target | no data
    run_id: str = ""
    series_key: str = ""


@dataclass(frozen=True)
class SeriesMedians:
    """One run's medians of one series, the input of targets and bars."""

    series_key: str
    label: str
    workload: str
    medians: Mapping[str, float]  # metric → median of the measured repetitions
    better: Mapping[str, str]  # metric → higher | lower


def parse_target(text: str) -> Target:
    match = TARGET.match(text)
    if not match:
        raise ConfigError(f"bad target {text!r}; write METRIC OP VALUE, e.g. 'p99_us < 50' or "
                          f"'ops_per_sec > 200000'")
    return Target(match["metric"], match["op"], float(match["value"]))


def check_target(series: SeriesMedians, target: Target, run_id: str) -> TargetResult:
    observed = series.medians.get(target.metric)
    if observed is None:
        return TargetResult(series.label, str(target), None, NO_DATA, run_id, series.series_key)
    ok = OPS[target.op](observed, target.value)
    return TargetResult(series.label, str(target), observed, MEETS if ok else OVER, run_id,
                        series.series_key)


def bar_target(metric: str, factor: float, baseline: float, better: str) -> Target:
    """The absolute target a headroom bar sets over an observed baseline."""
    if better == "lower":
        return Target(metric, "<=", baseline * factor)
    return Target(metric, ">=", baseline / factor)


def workload_declarations(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """workload name → {"targets": [...], "bars": {...}} from a run's stored config."""
    workloads: list[Mapping[str, Any]] = []
    if config.get("workload"):
        workloads.append(config["workload"])
    suite = config.get("suite") or {}
    workloads += list((suite.get("workloads") or {}).values())
    return {w["name"]: {"targets": list(w.get("targets") or []), "bars": dict(w.get("bars") or {})}
            for w in workloads if w.get("targets") or w.get("bars")}


def evaluate(declared: Mapping[str, Mapping[str, Any]], observed: Sequence[SeriesMedians],
             baseline: Mapping[str, SeriesMedians], run_id: str = "",
             use_bars: bool = True) -> list[TargetResult]:
    """Every declared target and bar of each observed series (targets by workload, bars against
    `baseline`, the same series' medians in the baseline run, keyed by series key)."""
    results: list[TargetResult] = []
    for series in sorted(observed, key=lambda s: s.label):
        decl = declared.get(series.workload)
        if not decl:
            continue
        results += [check_target(series, parse_target(text), run_id)
                    for text in decl.get("targets", [])]
        if use_bars:
            results += [_bar(series, metric, float(factor), baseline.get(series.series_key), run_id)
                        for metric, factor in sorted(decl.get("bars", {}).items())]
    return results


def _bar(series: SeriesMedians, metric: str, factor: float, base: SeriesMedians | None,
         run_id: str) -> TargetResult:
    value = base.medians.get(metric) if base else None
    if value is None:
        return TargetResult(series.label, f"{metric} bar {factor:g}× baseline", None, NO_DATA,
                            run_id, series.series_key)
    target = bar_target(metric, factor, value, series.better.get(metric, "higher"))
    result = check_target(series, target, run_id)
    return TargetResult(series.label, f"{target} ({factor:g}× baseline {value:.4g})",
                        result.observed, result.status, run_id, series.series_key)
