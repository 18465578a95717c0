"""Baseline vs candidate run (pure): pair their series, compare each metric, summarise.

Each metric is judged by its rule: wall-clock metrics by the U test and bootstrap CI (stats),
deterministic ones (instruction counts) by threshold and spread (deterministic).

The one comparison behind `tidemark compare`, `gate` and `ab` and the site's Summary, Gate, A/B
and Targets pages: they render the Report, never decide. The two sides of a `tidemark ab` job
are analysed as their design says (analysis.paired: per-round pairs; analysis.sequential: the
adaptive stopping rule); any other two runs as independent samples (stats: U test).
"""
from __future__ import annotations

import functools
import math
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Sequence

from .deterministic import compare_deterministic, is_deterministic
from .identity import SeriesIdentity
from .noise import History, Noise, series_noise
from .paired import UNPAIRED, Design, compare_paired, pair_rounds
from .pairing import pair_series
from .sequential import compare_sequential
from .stats import (Comparison, Summarizer, Thresholds, compare_samples, geometric_mean,
                    performance_ratio, summarize_samples)


@dataclass(frozen=True)
class SeriesSamples:
    """One run's measured repetitions of one series."""

    series: SeriesIdentity
    values: Mapping[str, Sequence[float]]  # metric → repetitions that ended ok, in run order
    better: Mapping[str, str]  # metric → higher | lower
    failed: int = 0  # measured invocations of this series that did not end ok
    # metric → the repetition of each value: its round, when the runs are the sides of an A/B job
    rounds: Mapping[str, Sequence[int]] = field(default_factory=dict)


@dataclass(frozen=True)
class Row:
    label: str  # the benchmark as a reader names it, e.g. readrandom ×4 [cold]
    metric: str
    better: str
    series_key: str  # the baseline's (equal to the candidate's unless differences were allowed)
    noise: Noise
    comparison: Comparison
    differences: tuple[str, ...] = ()  # differing series keys (allowed)
    failed: tuple[int, int] = (0, 0)  # failed measured invocations (baseline, candidate)


@dataclass(frozen=True)
class Report:
    base: dict[str, Any]  # run facts of the baseline (run_id, engine_version, status, ...)
    cand: dict[str, Any]
    rows: tuple[Row, ...]
    geomean: float  # geometric mean of performance ratios (>1: candidate better), of the
    # wall-clock rows (of the deterministic rows when there are no others)
    differences: tuple[str, ...] = ()  # differing series keys, allowed with --allow-different
    named: tuple[str, ...] = ()  # differing named keys (engine version, flags, ...)
    only_base: tuple[str, ...] = ()
    only_cand: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. the A/B schedule


def series_label(identity: Mapping[str, Any], show_cache: bool = True) -> str:
    label = str(identity["workload"])
    if identity["benchmark"] != identity["workload"]:
        label += f" ({identity['benchmark']})"
    if identity.get("threads", 1) != 1:
        label += f" ×{identity['threads']}"
    if show_cache and identity.get("cache_state"):
        label += f" [{identity['cache_state']}]"
    return label


def compare_metric(design: Design, base: SeriesSamples, cand: SeriesSamples, metric: str,
                   better: str, thresholds: Thresholds, noise: float,
                   tail: float = math.nan) -> Comparison:
    """One metric of two paired series, analysed as the design they were measured in;
    deterministic metrics (instruction counts) by their own rule, whatever the design.
    `tail` (Noise.tail) judges two separate runs only: a paired job's rounds cancel the
    whole-run shifts it measures (analysis.noise)."""
    b, c = base.values.get(metric, []), cand.values.get(metric, [])
    if is_deterministic(metric):
        return compare_deterministic(b, c, better, thresholds)
    if not design.paired:
        return _unpaired(tuple(b), tuple(c), better, thresholds, noise, tail)
    pairs = pair_rounds(b, base.rounds.get(metric, ()), c, cand.rounds.get(metric, ()))
    if design.adaptive:
        return compare_sequential(pairs, better, design.max_rounds, thresholds, noise)
    return compare_paired(pairs, better, thresholds, noise)


# Pure (the bootstrap is seeded): the site asks the same pair of samples once for the summary
# and again for the gate, and the bootstrap and U test are most of a report's time.
_summary = functools.lru_cache(maxsize=4096)(summarize_samples)
# The summarizers `summarizing_with` blocks put in place, innermost last.
_SUMMARIZERS: list[Summarizer] = []


@contextmanager
def summarizing_with(summarize: Summarizer) -> Iterator[None]:
    """Within the block, unpaired comparisons take their samples' summary from `summarize`,
    which answers as stats.summarize_samples does (the site's: reports/data/verdict_cache.py, the
    answers of the last build for the same samples, and a record of what was asked)."""
    _SUMMARIZERS.append(summarize)
    try:
        yield
    finally:
        _SUMMARIZERS.pop()


def _unpaired(base: tuple[float, ...], cand: tuple[float, ...], better: str,
              thresholds: Thresholds, noise: float, tail: float) -> Comparison:
    return compare_samples(base, cand, better, thresholds, noise,
                           _SUMMARIZERS[-1] if _SUMMARIZERS else _summary, tail)


def build_report(base_facts: dict[str, Any], cand_facts: dict[str, Any],
                 base: Sequence[SeriesSamples], cand: Sequence[SeriesSamples],
                 metrics: Sequence[str], thresholds: Thresholds, history: History,
                 allow_different: bool = False, design: Design = Design(UNPAIRED)) -> Report:
    """Pair, compare every metric; raises NotComparableError when nothing may be paired.

    `design`: how the two runs were measured (the sides of one `tidemark ab` job: paired by
    round); two unrelated runs are unpaired samples."""
    by_key_base = {s.series.series_key: s for s in base}
    by_key_cand = {s.series.series_key: s for s in cand}
    pairing = pair_series([s.series for s in base], [s.series for s in cand], allow_different)
    caches = {p.base.identity.get("cache_state") for p in pairing.pairs}
    rows: list[Row] = []
    for pair in pairing.pairs:
        b, c = by_key_base[pair.base.series_key], by_key_cand[pair.cand.series_key]
        for metric in metrics:
            if metric not in b.values and metric not in c.values:
                continue
            better = b.better.get(metric) or c.better.get(metric, "higher")
            noise = series_noise(history, pair.base.series_key, metric, (cand_facts["run_id"],),
                                 thresholds.tail_quantile)
            result = compare_metric(design, b, c, metric, better, thresholds, noise.value,
                                    noise.tail)
            rows.append(Row(series_label(pair.base.identity, len(caches) > 1), metric, better,
                            pair.base.series_key, noise, result,
                            tuple(f"{k}: {x} vs {y}" for k, x, y in pair.differences),
                            (b.failed, c.failed)))
    # The geometric mean summarises wall-clock rows; instruction counts only when alone.
    timed = [r for r in rows if not is_deterministic(r.metric)] or rows
    ratios = [performance_ratio(r.comparison.ratio, r.better) for r in timed]
    return Report(base_facts, cand_facts, tuple(rows), geometric_mean(ratios),
                  tuple(pairing.differences()), tuple(pairing.named()),
                  tuple(series_label(s.identity) for s in pairing.only_base),
                  tuple(series_label(s.identity) for s in pairing.only_cand),
                  {"design": design.name, "max_rounds": design.max_rounds} if design.paired else {})
