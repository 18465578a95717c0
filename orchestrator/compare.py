"""Baseline vs candidate run: pair their series, compare each metric, summarise (tidemark compare).

`build_report` is pure (samples and a noise lookup in, a Report out); `compare_runs` reads the DB.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import samples
from .comparability import check_comparable, pair_series
from .errors import UserError
from .stats import (Comparison, Thresholds, compare_samples, geometric_mean, performance_ratio,
                    series_noise)
from .store import connect

DEFAULT_METRICS = ("ops_per_sec",)

NoiseFn = Callable[[str, str], float]  # (series key, metric) → relative noise


@dataclass(frozen=True)
class Row:
    label: str  # the benchmark as a reader names it, e.g. readrandom or readrandom ×4
    metric: str
    better: str
    series_key: str
    noise: float
    comparison: Comparison
    differences: tuple[str, ...] = ()


@dataclass(frozen=True)
class Report:
    base: dict[str, Any]  # run facts of the baseline (run_id, engine_version, ...)
    cand: dict[str, Any]
    rows: tuple[Row, ...]
    geomean: float  # geometric mean of performance ratios (>1: candidate better)
    differences: tuple[str, ...] = ()  # differing keys allowed with --allow-different
    notes: tuple[str, ...] = ()
    only_base: tuple[str, ...] = ()
    only_cand: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. the A/B schedule


def _label(identity: dict[str, Any], show_cache: bool) -> str:
    label = identity["workload"]
    if identity["benchmark"] != identity["workload"]:
        label += f" ({identity['benchmark']})"
    if identity.get("threads", 1) != 1:
        label += f" ×{identity['threads']}"
    if show_cache:
        label += f" [{identity['cache_state']}]"
    return label


def build_report(base_facts: dict[str, Any], cand_facts: dict[str, Any],
                 base: list[samples.SideSeries], cand: list[samples.SideSeries],
                 metrics: tuple[str, ...], thresholds: Thresholds, noise_of: NoiseFn,
                 allow_different: bool = False) -> Report:
    """Pair, guard, compare; raises NotComparableError when keys differ and not allowed."""
    by_key_base = {s.side.series_key: s for s in base}
    by_key_cand = {s.side.series_key: s for s in cand}
    pairing = pair_series([s.side for s in base], [s.side for s in cand])
    differing = check_comparable(pairing, allow_different)
    caches = {p.base.identity["cache_state"] for p in pairing.pairs}
    rows: list[Row] = []
    notes: list[str] = []
    for pair in pairing.pairs:
        b, c = by_key_base[pair.base.series_key], by_key_cand[pair.cand.series_key]
        notes.extend(n for n in pair.notes if n not in notes)
        for metric in metrics:
            if metric not in b.values and metric not in c.values:
                continue
            better = b.better.get(metric) or c.better.get(metric, "higher")
            noise = noise_of(pair.base.series_key, metric)
            result = compare_samples(b.values.get(metric, []), c.values.get(metric, []), better,
                                     thresholds, noise)
            diffs = tuple(f"{k}: {a} vs {v}" for k, a, v in pair.differences)
            rows.append(Row(_label(pair.base.identity, len(caches) > 1), metric, better,
                            pair.base.series_key, noise, result, diffs))
    ratios = [performance_ratio(r.comparison.ratio, r.better) for r in rows]
    return Report(base_facts, cand_facts, tuple(rows), geometric_mean(ratios), tuple(differing),
                  tuple(notes), tuple(_label(s.identity, True) for s in pairing.only_base),
                  tuple(_label(s.identity, True) for s in pairing.only_cand))


def history_noise(con: Any, exclude_runs: tuple[str, ...]) -> NoiseFn:
    """Noise of a series from its history (run medians) and stored A/A comparisons."""
    def noise_of(series_key: str, metric: str) -> float:
        medians = [v for _, v in samples.history_medians(con, series_key, metric, exclude_runs)]
        return series_noise(medians, samples.aa_changes(con, series_key, metric,
                                                             exclude_runs))
    return noise_of


def compare_runs(db: Path, base_selector: str, cand_selector: str,
                 metrics: tuple[str, ...] = DEFAULT_METRICS, thresholds: Thresholds = Thresholds(),
                 allow_different: bool = False, use_noise: bool = True) -> Report:
    """Resolve both selectors in the DB and compare the two runs."""
    con = connect(db, read_only=True)
    try:
        base_id = samples.resolve_run(con, base_selector)
        cand_id = samples.resolve_run(con, cand_selector)
        if base_id == cand_id:  # e.g. right after `tidemark label latest baseline`
            raise UserError(f"baseline {base_selector!r} and candidate {cand_selector!r} are the "
                            f"same run {base_id}; pick another baseline or candidate")
        base = samples.load_side(con, base_id, list(metrics))
        cand = samples.load_side(con, cand_id, list(metrics))
        noise = history_noise(con, (base_id, cand_id)) if use_noise else (lambda k, m: 0.0)
        return build_report(samples.run_facts(con, base_id), samples.run_facts(con, cand_id),
                            base, cand, metrics, thresholds, noise, allow_different)
    finally:
        con.close()
