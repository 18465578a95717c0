"""A series' noise between runs (pure): the one definition every verdict uses.

noise = max( robust CV of the series' per-run medians (from 3 runs on),
             median |B/A − 1| of its A/A pairs (`tidemark ab` with one build on both sides) )

over every run but the candidate being judged (a real change in the candidate must not widen
the threshold it is judged by); NaN while neither part is measured, and the thresholds then
assume `unmeasured_noise`. Between-run noise, not the spread of single repetitions: a median of
N repetitions already averages the latter away, while a shift of a whole run (another tenant, a
thermal state) does not average away and is what makes a false alarm.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from .stats import median, robust_cv

MIN_RUNS_FOR_SPREAD = 3


@dataclass(frozen=True)
class History:
    """Per-run medians of each series and metric, and the A/A pairs, as read from the store.

    `medians[(series_key, metric)]` = ((run_id, median), ...) oldest first;
    `aa_pairs` = ((run_a, run_b), ...) of `tidemark ab` jobs that ran one build on both sides.
    """

    medians: Mapping[tuple[str, str], Sequence[tuple[str, float]]] = field(default_factory=dict)
    aa_pairs: Sequence[tuple[str, str]] = ()


@dataclass(frozen=True)
class Noise:
    """One series' noise and what it was measured from."""

    value: float  # NaN: not measured yet
    runs: int  # run medians that entered the spread
    spread: float  # robust CV of run medians; NaN under MIN_RUNS_FOR_SPREAD runs
    aa_changes: tuple[float, ...]  # B/A − 1 of each A/A pair


def aa_changes(history: History, series_key: str, metric: str,
               exclude: Sequence[str] = ()) -> tuple[float, ...]:
    """B/A − 1 of this series over the A/A pairs that involve no excluded run."""
    if not history.aa_pairs:  # most histories: no series' medians to look up
        return ()
    by_run = dict(history.medians.get((series_key, metric), ()))
    out = []
    for run_a, run_b in history.aa_pairs:
        if run_a in exclude or run_b in exclude:
            continue
        a, b = by_run.get(run_a), by_run.get(run_b)
        if a and b is not None:
            out.append(b / a - 1.0)
    return tuple(out)


def series_noise(history: History, series_key: str, metric: str,
                 exclude: Sequence[str] = ()) -> Noise:
    """The noise of one series and metric, leaving out the `exclude` runs (the candidate)."""
    medians = [v for run, v in history.medians.get((series_key, metric), ()) if run not in exclude]
    spread = robust_cv(medians) if len(medians) >= MIN_RUNS_FOR_SPREAD else math.nan
    changes = aa_changes(history, series_key, metric, exclude)
    parts = [p for p in (spread, median([abs(c) for c in changes]) if changes else math.nan)
             if math.isfinite(p)]
    return Noise(max(parts) if parts else math.nan, len(medians), spread, changes)
