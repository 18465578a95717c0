"""Which runs the summary and the Gate page compare, and the comparison itself (pure)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from orchestrator import stats

from .pages import delta_pct

# Verdicts of orchestrator.stats, in the order the summary lists them.
VERDICT_ORDER = {stats.SLOWER: 0, stats.FASTER: 1, stats.NO_CHANGE: 2, stats.NOT_ENOUGH: 3}


@dataclass(frozen=True)
class Baseline:
    """The configured baseline as the site resolved it: its selector (`baseline` in the gate
    config, or `tidemark site --baseline`), the run it matched, or why there is none."""

    selector: str
    run_id: str | None
    problem: str = ""  # set when run_id is None


def series_noises(points: pd.DataFrame, series_keys: Any, before: Any) -> dict[str, float]:
    """Each series' between-run noise from its run medians before the compared runs (one pass
    over the history for every series: a long history has hundreds of series)."""
    history = points[(points["started_at"] < before) & points["series_key"].isin(series_keys)]
    medians = history.dropna(subset=["ops_median"]).groupby("series_key")["ops_median"]
    noises = {key: stats.series_noise(values.tolist()) for key, values in medians}
    return {key: noises.get(key, stats.series_noise([])) for key in series_keys}


def previous_comparable(runs: pd.DataFrame, points: pd.DataFrame, run_id: str) -> str | None:
    """The newest older run that shares at least one series with `run_id`."""
    mine = set(points.loc[points["run_id"] == run_id, "series_key"])
    started = runs.loc[runs["run_id"] == run_id, "started_at"].iloc[0]
    older = points[(points["started_at"] < started) & points["series_key"].isin(mine)]
    if older.empty:
        return None
    return older.sort_values(["started_at", "run_id"]).iloc[-1]["run_id"]


# How far back the summary looks for a run that has an earlier comparable run.
SUMMARY_LOOKBACK_RUNS = 20


def summary_pair(runs: pd.DataFrame, points: pd.DataFrame) -> tuple[str, str | None]:
    """(new, previous comparable) for the executive summary.

    The newest run, or, when it is of a kind never measured before (e.g. a first micro suite),
    the newest recent run that has an earlier comparable run, so the summary still says what
    changed.
    """
    for run_id in runs["run_id"].head(SUMMARY_LOOKBACK_RUNS):
        old_id = previous_comparable(runs, points, run_id)
        if old_id is not None:
            return run_id, old_id
    return runs.iloc[0]["run_id"], None


def comparison_rows(points: pd.DataFrame, samples: pd.DataFrame, new_id: str, old_id: str,
                    thresholds: stats.Thresholds) -> list[dict[str, Any]]:
    """Each series both runs measured, compared by `orchestrator.stats` on the repetitions."""
    new = points[points["run_id"] == new_id].set_index("series_key")
    old = points[points["run_id"] == old_id].set_index("series_key")
    by_run = {key: group["value"].tolist() for key, group in samples.groupby(["run_id", "series_key"])}
    rows = []
    common = new.index.intersection(old.index)
    noises = series_noises(points, common, old["started_at"].min()) if len(common) else {}
    for key in common:
        n, o = new.loc[key].copy(), old.loc[key].copy()
        n["run_id"], o["run_id"] = new_id, old_id
        noise = noises[key]
        result = stats.compare_samples(by_run.get((old_id, key), []), by_run.get((new_id, key), []),
                                       stats.HIGHER, thresholds, noise=noise)
        rows.append({"new": n, "old": o, "result": result, "noise": noise,
                     "change": delta_pct(n["ops_median"], o["ops_median"]),
                     "p99_change": delta_pct(n["p99_median"], o["p99_median"])})
    return sorted(rows, key=lambda r: (VERDICT_ORDER.get(r["result"].verdict, 9),
                                       -abs(r["change"] or 0.0)))


def geomean_ratio(rows: list[dict[str, Any]]) -> float | None:
    ratios = [r["result"].ratio for r in rows if r["result"].ratio == r["result"].ratio]
    value = stats.geometric_mean(ratios) if ratios else float("nan")
    return None if value != value else value




def gate_pair(runs: pd.DataFrame, points: pd.DataFrame,
              baseline: Baseline) -> tuple[str, str | None, bool]:
    """(candidate, baseline run, whether it is the configured one) for the Gate page: the
    summarized run against the configured baseline, else against its previous comparable run."""
    new_id, old_id = summary_pair(runs, points)
    if baseline.run_id is not None and baseline.run_id != new_id:
        return new_id, baseline.run_id, True
    return new_id, old_id, False
