"""Each series' noise as the analysis core measures it (pure), for the Noise and Methodology
pages.

The history is the site's per-run medians (`points.ops_median`, the median of each run's ok
measured ops/s, which is what store.reads.load_history reads for `ops_per_sec`), and the noise
is analysis.noise.series_noise over every run but the series' newest: the noise the newest run's
verdicts were judged with on the Summary and Gate pages and by `tidemark gate`.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from orchestrator.analysis.noise import (MIN_RUNS_FOR_SPREAD, History, Noise, SeriesMedians,
                                         series_noise)
from orchestrator.analysis.stats import Thresholds, effective_threshold

from ..data.frames import records
from .format import MISSING, Link
from .shared import run_href
from .tables import Table, describe

METRIC = "ops_per_sec"


def measured_series(points: pd.DataFrame) -> dict[str, np.ndarray]:
    """Each series' positions in `points` of its points with an ops/s median, in run order;
    series as first measured (as groupby(sort=False) orders them, without copying the frame
    per series or the whole frame for the points without a median: a long history has 200
    series of 1,000 runs)."""
    measured = np.flatnonzero(points["ops_median"].notna().to_numpy())
    codes, keys = pd.factorize(points["series_key"].to_numpy()[measured])
    measured, codes = measured[codes >= 0], codes[codes >= 0]  # groupby drops a missing key
    by_series = measured[np.argsort(codes, kind="stable")]
    ends = np.cumsum(np.bincount(codes, minlength=len(keys)))
    return dict(zip(keys.tolist(), np.split(by_series, ends[:-1])))


def _history(points: pd.DataFrame, positions: dict[str, np.ndarray],
             aa_pairs: Sequence[tuple[str, str]]) -> History:
    run_ids, medians = points["run_id"].to_numpy(), points["ops_median"].to_numpy(dtype=float)
    return History({(key, METRIC): SeriesMedians(run_ids[p], medians[p])
                    for key, p in positions.items()}, tuple(aa_pairs), _builds(points))


def _builds(points: pd.DataFrame) -> dict[str, str]:
    """run → its build, as store.reads.run_builds reads it (`points.build_id` is the run's)."""
    if "build_id" not in points:
        return {}
    known = points[points["build_id"].notna()]
    return dict(zip(known["run_id"].tolist(), known["build_id"].tolist()))


def _pct(value: float | None) -> str:
    return MISSING if value is None or not math.isfinite(value) else f"{value * 100:.1f}%"


def _within_cv(cvs: np.ndarray) -> float:
    cvs = cvs[~np.isnan(cvs)]
    return float(np.median(cvs)) if len(cvs) else float("nan")


def noise_table(points: pd.DataFrame, aa_pairs: Sequence[tuple[str, str]],
                thresholds: Thresholds, base: str) -> Table:
    """One row per series: its newest run, how many other runs and A/A pairs measured its
    noise, the noise and the threshold a change of its newest run had to beat."""
    positions = measured_series(points)
    history = _history(points, positions, aa_pairs)
    cvs = (points["ops_std"] / points["ops_mean"]).to_numpy(dtype=float)
    newest = records(points.iloc[[mine[-1] for mine in positions.values()]])
    rows = []
    for (key, mine), last in zip(positions.items(), newest):
        noise = series_noise(history, key, METRIC, (last["run_id"],), thresholds.tail_quantile)
        largest = max((abs(v) for v in noise.aa_changes), default=float("nan"))
        label = f"{last['workload']} · {describe(last)}"
        rows.append([Link(label, run_href(last["run_id"], base)),
                     noise.runs, _pct(noise.spread), _pct(_within_cv(cvs[mine])),
                     len(noise.aa_changes), _pct(largest), _pct(noise.value),
                     _changes(noise), _pct(noise.tail),
                     _pct(effective_threshold(thresholds, noise.value, noise.tail))])
    return Table(("Series (newest run)", "Other runs", "Spread of run medians",
                  "Spread within a run", "A/A pairs", "Largest A/A change", "Noise",
                  "Run-to-run changes", "Tail of the changes", "Threshold used"), rows)


def _changes(noise: Noise) -> str:
    """How many changes the tail was taken from, and whether of one build (else any)."""
    if not noise.changes:
        return MISSING
    return f"{noise.changes}" if noise.same_build else f"{noise.changes} (any build)"


def noise_intro(thresholds: Thresholds) -> str:
    tail = thresholds.tail_quantile > 0
    return (f"Noise is what a change must beat. Per series, over every run but its newest: the "
            f"spread of its per-run median ops/s (1.4826 × MAD / median, from "
            f"{MIN_RUNS_FOR_SPREAD} runs on) and the median change of its A/A pairs (`tidemark "
            f"ab` with one build on both sides); the larger of the two is its noise (– while "
            f"neither is measured: {thresholds.unmeasured_noise:.0%} is then assumed). "
            f"{_tail(thresholds)} A change of the newest run is called only above "
            f"max({thresholds.min_effect:.0%}, {thresholds.noise_k:g} × noise"
            f"{', tail' if tail else ''}), the threshold the Summary, the Gate and `tidemark "
            f"gate` used. Spread within a run is for context: a median of repetitions already "
            f"averages it.")


def _tail(thresholds: Thresholds) -> str:
    if not thresholds.tail_quantile > 0:
        return "The tail of run-to-run changes is left out (tail_quantile 0)."
    return (f"That spread ignores the occasional shift of a whole run, which makes false "
            f"alarms; the tail does not: the {thresholds.tail_quantile:.0%} quantile of the sizes "
            f"of the changes m2 / m1 − 1 between its consecutive runs of one build (of any "
            f"builds while no two consecutive runs share one; the two sides of an A/A pair are "
            f"not two separate runs), the largest while there are too few to place it.")
