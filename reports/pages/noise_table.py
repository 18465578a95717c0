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

from orchestrator.analysis.noise import MIN_RUNS_FOR_SPREAD, History, series_noise
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
    return History({(key, METRIC): tuple(zip(run_ids[p].tolist(), medians[p].tolist()))
                    for key, p in positions.items()}, tuple(aa_pairs))


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
        noise = series_noise(history, key, METRIC, (last["run_id"],))
        largest = max((abs(v) for v in noise.aa_changes), default=float("nan"))
        label = f"{last['workload']} · {describe(last)}"
        rows.append([Link(label, run_href(last["run_id"], base)),
                     noise.runs, _pct(noise.spread), _pct(_within_cv(cvs[mine])),
                     len(noise.aa_changes), _pct(largest), _pct(noise.value),
                     _pct(effective_threshold(thresholds, noise.value))])
    return Table(("Series (newest run)", "Other runs", "Spread of run medians",
                  "Spread within a run", "A/A pairs", "Largest A/A change", "Noise",
                  "Threshold used"), rows)


def noise_intro(thresholds: Thresholds) -> str:
    return (f"Noise is what a change must beat. Per series, over every run but its newest: the "
            f"spread of its per-run median ops/s (1.4826 × MAD / median, from "
            f"{MIN_RUNS_FOR_SPREAD} runs on) and the median change of its A/A pairs (`tidemark "
            f"ab` with one build on both sides); the larger of the two is its noise (– while "
            f"neither is measured: {thresholds.unmeasured_noise:.0%} is then assumed). A change "
            f"of the newest run is called only above max({thresholds.min_effect:.0%}, "
            f"{thresholds.noise_k:g} × noise), the threshold the Summary, the Gate and `tidemark "
            f"gate` used. Spread within a run is for context: a median of repetitions already "
            f"averages it.")
