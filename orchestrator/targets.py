"""Workload targets and regression bars (pure).

A target is an absolute promise, `p99_us < 50` or `ops_per_sec > 200000`; a bar is headroom over
the observed baseline, `p99_us: 1.5` = at most 1.5 × the baseline's p99 (for a higher-is-better
metric: at least baseline / 1.5). Both come from the workload config (WorkloadConf.targets/bars).
"""
from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .errors import ConfigError

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
    workload: str
    target: str  # as written, e.g. "p99_us < 50" or "p99_us ≤ 1.5 × baseline (…)"
    observed: float | None
    status: str  # meets | over target | no data
    run_id: str = ""


def parse_target(text: str) -> Target:
    match = TARGET.match(text)
    if not match:
        raise ConfigError(f"bad target {text!r}; write METRIC OP VALUE, e.g. 'p99_us < 50' or "
                          f"'ops_per_sec > 200000'")
    return Target(match["metric"], match["op"], float(match["value"]))


def check_target(workload: str, target: Target, observed: float | None, run_id: str = "") -> TargetResult:
    if observed is None:
        return TargetResult(workload, str(target), None, NO_DATA, run_id)
    ok = OPS[target.op](observed, target.value)
    return TargetResult(workload, str(target), observed, MEETS if ok else OVER, run_id)


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


def evaluate(declared: Mapping[str, Mapping[str, Any]], observed: Mapping[tuple[str, str], float],
             baseline: Mapping[tuple[str, str], float], better: Mapping[str, str],
             run_id: str = "", use_bars: bool = True) -> list[TargetResult]:
    """Every declared target and bar against observed medians keyed by (workload, metric)."""
    results: list[TargetResult] = []
    for workload, decl in sorted(declared.items()):
        for text in decl.get("targets", []):
            target = parse_target(text)
            results.append(check_target(workload, target, observed.get((workload, target.metric)), run_id))
        if not use_bars:
            continue
        for metric, factor in sorted(decl.get("bars", {}).items()):
            base = baseline.get((workload, metric))
            if base is None:
                results.append(TargetResult(workload, f"{metric} bar {factor:g}× baseline", None,
                                            NO_DATA, run_id))
                continue
            target = bar_target(metric, float(factor), base, better.get(metric, "higher"))
            result = check_target(workload, target, observed.get((workload, metric)), run_id)
            results.append(TargetResult(workload, f"{target} ({factor:g}× baseline {base:.4g})",
                                        result.observed, result.status, run_id))
    return results
