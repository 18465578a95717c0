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


@dataclass(frozen=True)
class Evidence:
    """What runs are compared with: each run's series medians (`points`), the repetitions of
    the compared runs (`samples`: run_id, series_key, value), the A/A pairs of `tidemark ab`
    (run_a, run_b) and the gate config's thresholds, so verdicts here are the gate's."""

    points: pd.DataFrame
    samples: pd.DataFrame
    aa_pairs: pd.DataFrame
    thresholds: stats.Thresholds


def aa_changes(points: pd.DataFrame, pairs: pd.DataFrame) -> dict[str, list[float]]:
    """ratio − 1 of each series' ops/s medians over A/A pairs (`pairs`: run_a, run_b of
    `tidemark ab` jobs that ran one build on both sides)."""
    medians = points[["run_id", "series_key", "ops_median"]].dropna()
    side_a = medians.rename(columns={"run_id": "run_a", "ops_median": "a"})
    side_b = medians.rename(columns={"run_id": "run_b", "ops_median": "b"})
    both = pairs[["run_a", "run_b"]].merge(side_a, on="run_a").merge(side_b, on=["run_b", "series_key"])
    both = both[both["a"] != 0]
    return {key: (group["b"] / group["a"] - 1.0).tolist()
            for key, group in both.groupby("series_key")}


def series_noises(points: pd.DataFrame, series_keys: Any, compared: tuple[str, str],
                  aa_pairs: pd.DataFrame) -> dict[str, float]:
    """Each series' noise as `tidemark gate` measures it (orchestrator.compare.history_noise):
    the spread of its ops/s medians in every other run, and its A/A changes; the two compared
    runs take no part. One pass for every series: a long history has hundreds."""
    others = points[~points["run_id"].isin(compared) & points["series_key"].isin(series_keys)]
    medians = {key: values.tolist() for key, values in
               others.dropna(subset=["ops_median"]).groupby("series_key")["ops_median"]}
    pairs = aa_pairs[~aa_pairs["run_a"].isin(compared) & ~aa_pairs["run_b"].isin(compared)]
    aa = aa_changes(others, pairs)
    return {key: stats.series_noise(medians.get(key, []), aa.get(key, [])) for key in series_keys}


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


def comparison_rows(evidence: Evidence, new_id: str, old_id: str) -> list[dict[str, Any]]:
    """Each series both runs measured, compared by `orchestrator.stats` on the repetitions."""
    points, samples = evidence.points, evidence.samples
    new = points[points["run_id"] == new_id].set_index("series_key")
    old = points[points["run_id"] == old_id].set_index("series_key")
    by_run = {key: group["value"].tolist() for key, group in samples.groupby(["run_id", "series_key"])}
    rows = []
    common = new.index.intersection(old.index)
    noises = series_noises(points, common, (new_id, old_id), evidence.aa_pairs) if len(common) else {}
    for key in common:
        n, o = new.loc[key].copy(), old.loc[key].copy()
        n["run_id"], o["run_id"] = new_id, old_id
        noise = noises[key]
        result = stats.compare_samples(by_run.get((old_id, key), []), by_run.get((new_id, key), []),
                                       stats.HIGHER, evidence.thresholds, noise=noise)
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
