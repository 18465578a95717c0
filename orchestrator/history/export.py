"""A stored run in other tools' formats (pure): Bencher Metric Format for `bencher run --file`.

BMF (orchestrator/adapters/bmf_json.py reads it back) holds one value per benchmark and measure,
with optional bounds. A run's series each become one benchmark, named so that it reads as a
Google Benchmark name does and keeps the series' parameters apart:
`<workload>[/<benchmark>][/<param>=<value>...][/cache=<state>]/threads:<n>`; each measured
metric becomes a measure holding the median of the run's repetitions that ended ok, with their
minimum and maximum as `lower_value` and `upper_value`. A series without an ok repetition of a
metric has no measure for it (BMF has no way to say "failed").
"""
from __future__ import annotations

import statistics
from typing import Any, Iterable, Mapping

from ..analysis.compare import SeriesSamples


def bmf_benchmark_name(identity: Mapping[str, Any]) -> str:
    parts = [str(identity["workload"])]
    if identity["benchmark"] != identity["workload"]:
        parts.append(str(identity["benchmark"]))
    parts += [f"{key}={value}" for key, value in sorted((identity.get("params") or {}).items())]
    if identity.get("cache_state"):
        parts.append(f"cache={identity['cache_state']}")
    parts.append(f"threads:{identity.get('threads') or 1}")
    return "/".join(parts)


def bmf_document(series: Iterable[SeriesSamples]) -> dict[str, dict[str, dict[str, float]]]:
    """benchmark → measure → {value: median, lower_value: min, upper_value: max}."""
    doc: dict[str, dict[str, dict[str, float]]] = {}
    for samples in series:
        measures = {metric: {"value": statistics.median(values), "lower_value": min(values),
                             "upper_value": max(values)}
                    for metric, values in sorted(samples.values.items()) if values}
        if measures:
            doc[bmf_benchmark_name(samples.series.identity)] = measures
    return dict(sorted(doc.items()))
