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

from .format import MISSING, Link
from .pages import run_href
from .tables import Table, describe

METRIC = "ops_per_sec"


def _series_positions(ok: pd.DataFrame) -> dict[str, np.ndarray]:
    """Each series' points' positions, series as first measured (no frame copied per series:
    a long history has 200 series of 1,000 runs)."""
    positions = ok.groupby("series_key", sort=False).indices
    return {key: positions[key] for key in ok["series_key"].unique()}


def _history(ok: pd.DataFrame, positions: dict[str, np.ndarray],
             aa_pairs: Sequence[tuple[str, str]]) -> History:
    run_ids, medians = ok["run_id"].to_numpy(), ok["ops_median"].to_numpy(dtype=float)
    return History({(key, METRIC): tuple(zip(run_ids[p].tolist(), medians[p].tolist()))
                    for key, p in positions.items()}, tuple(aa_pairs))


def _pct(value: float | None) -> str:
    return MISSING if value is None or not math.isfinite(value) else f"{value * 100:.1f}%"


def _within_cv(cvs: np.ndarray) -> float:
    cvs = pd.Series(cvs).dropna()
    return float(cvs.median()) if len(cvs) else float("nan")


def noise_table(points: pd.DataFrame, aa_pairs: Sequence[tuple[str, str]],
                thresholds: Thresholds, base: str) -> Table:
    """One row per series: its newest run, how many other runs and A/A pairs measured its
    noise, the noise and the threshold a change of its newest run had to beat."""
    ok = points.dropna(subset=["ops_median"])
    positions = _series_positions(ok)
    history = _history(ok, positions, aa_pairs)
    cvs = (ok["ops_std"] / ok["ops_mean"]).to_numpy()
    rows = []
    for key, mine in positions.items():
        last = ok.iloc[mine[-1]]
        noise = series_noise(history, key, METRIC, (last.run_id,))
        largest = max((abs(v) for v in noise.aa_changes), default=float("nan"))
        rows.append([Link(f"{last.workload} · {describe(last)}", run_href(last.run_id, base)),
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
