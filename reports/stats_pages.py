"""Statistics pages (pure): series noise, change points, A/B comparisons, targets.

Every number links to the run that produced it (runs/<run_id>.md).
"""
from __future__ import annotations

import math
from typing import Any

import pandas as pd
from markupsafe import Markup

from orchestrator.changepoints import detect_change_points
from orchestrator.stats import Thresholds, effective_threshold, robust_cv, series_noise
from orchestrator.targets import evaluate

from .format import MISSING, Link, escape_text, num
from .pages import run_href
from .stats_data import AbPair, StatsData
from .tables import Page, Section, Table

MIN_RUNS_FOR_STEPS = 6  # E-Divisive needs at least min_size (3) runs on each side of a step


def _pct(value: float | None) -> str:
    return MISSING if value is None or not math.isfinite(value) else f"{value * 100:.1f}%"


def _series_label(row: Any) -> str:
    """Engine (latest version), workload, threads, data set size, cache state, build variant."""
    threads = f" ×{row.threads}" if row.threads != 1 else ""
    params = getattr(row, "params", None)
    num = f" num={params['num']:,}" if isinstance(params, dict) and "num" in params else ""
    return (f"{row.engine} {row.engine_version} {row.workload}{threads}{num} "
            f"[{row.cache_state}, {row.build_variant}]")


def _within_cv(group: pd.DataFrame) -> float:
    cvs = (group["ops_std"] / group["ops_mean"]).dropna()
    return float(cvs.median()) if len(cvs) else float("nan")


def noise_page(points: pd.DataFrame, aa: dict[str, list[float]], thresholds: Thresholds,
               base: str = "../") -> Page:
    """Each series' noise: spread of run medians, spread within a run, A/A changes, and the
    threshold a change must beat with `thresholds` (the gate config's)."""
    rows = []
    for key, group in points.dropna(subset=["ops_median"]).groupby("series_key", sort=False):
        last = group.iloc[-1]
        medians = list(group["ops_median"])
        noise = series_noise(medians, aa.get(key, []))
        rows.append([Link(_series_label(last), run_href(last.run_id, base)), len(group),
                     _pct(robust_cv(medians)) if len(medians) >= 3 else MISSING,
                     _pct(_within_cv(group)), len(aa.get(key, [])),
                     _pct(max((abs(v) for v in aa.get(key, [])), default=float("nan"))),
                     _pct(noise), _pct(effective_threshold(thresholds, noise))])
    table = Table(("series (latest run)", "runs", "spread of run medians", "spread within a run",
                   "A/A pairs", "largest A/A change", "noise", "threshold used"), rows)
    intro = Markup(
        "Noise is what a change must beat. <b>Spread of run medians</b> is 1.4826 × MAD / median "
        "of the series' per-run ops/s medians (from 3 runs on); <b>A/A</b> are `tidemark ab` pairs "
        "that ran one build on both sides. A series' noise is the larger of the two (– while "
        f"neither is measured: then {thresholds.unmeasured_noise:.0%} is assumed); "
        f"`compare`, `ab` and `gate` call a change only above max({thresholds.min_effect:.0%} minimum "
        f"effect, {thresholds.noise_k:g} × noise). Spread within a run is shown for context: a "
        "median of repetitions already averages it.")
    return Page("Series noise", intro, [Section("Noise by series", tables=[table])] if rows else [])


CHANGE_POINT_WINDOW = 200


def changepoints_page(points: pd.DataFrame, base: str = "../") -> Page:
    """Each significant step in a series' ops/s history, with the runs on either side."""
    rows = []
    for _, group in points.dropna(subset=["ops_median"]).groupby("series_key", sort=False):
        if len(group) < MIN_RUNS_FOR_STEPS:
            continue
        # The newest runs only: a step older than the window is history the trend already shows,
        # and E-Divisive's cost grows with the square of the series' length.
        group = group.tail(CHANGE_POINT_WINDOW).reset_index(drop=True)
        for cp in detect_change_points(list(group["ops_median"])):
            before, after = group.iloc[cp.index - 1], group.iloc[cp.index]
            rows.append([_series_label(after),
                         Link(f"{before.run_id} ({before.engine_version})", run_href(before.run_id, base)),
                         Link(f"{after.run_id} ({after.engine_version})", run_href(after.run_id, base)),
                         Link(num(cp.before_median), run_href(before.run_id, base)),
                         Link(num(cp.after_median), run_href(after.run_id, base)),
                         f"{cp.change_pct:+.1f}%", f"{cp.p_value:.3f}"])
    table = Table(("series", "last run before", "first run after", "ops/s before (median)",
                   "ops/s after (median)", "change", "p (permutation)"), rows)
    intro = Markup(
        "Steps found by E-Divisive means (Matteson &amp; James) over each series' per-run ops/s "
        f"medians (the newest {CHANGE_POINT_WINDOW} runs), oldest first, with a 199-shuffle "
        "permutation test at p &lt; 0.05 "
        f"(orchestrator/changepoints.py). Series with fewer than {MIN_RUNS_FOR_STEPS} runs are "
        "not searched.")
    sections = [Section("Detected steps", tables=[table])] if rows else \
        [Section("Detected steps", text=Markup("No significant step in any series."))]
    return Page("Change points", intro, sections)


def _ab_section(pair: AbPair, base: str) -> Section:
    a, b = run_href(pair.run_a, base), run_href(pair.run_b, base)
    order = " ".join(r["order"] for r in pair.schedule)
    text = Markup("A: <code>{}</code><br>B: <code>{}</code><br>seed {} · order per round: {}").format(
        escape_text(" ".join(pair.overrides_a)), escape_text(" ".join(pair.overrides_b)), pair.seed,
        escape_text(order))
    if pair.report is None:
        return Section(pair.ab_id, text=text, warnings=[pair.error or "no measurements"])
    rows = []
    for row in pair.report.rows:
        c = row.comparison
        rows.append([row.label, row.metric, Link(num(c.base_median), a), Link(num(c.cand_median), b),
                     f"{c.change_pct:+.1f}%",
                     f"{(c.ci_low - 1) * 100:+.1f}% … {(c.ci_high - 1) * 100:+.1f}%"
                     if math.isfinite(c.ci_low) else MISSING, f"{c.p_value:.3g}", c.verdict])
    table = Table(("benchmark", "metric", "A median", "B median", "change", "95% CI", "p (U)",
                   "verdict"), rows, (False, False, True, True, True, True, True, False))
    warnings = [f"differs (allowed in ab): {d}" for d in pair.report.differences]
    return Section(f"{pair.ab_id}{' (A/A)' if pair.same_build else ''}", text=text, tables=[table],
                   warnings=warnings + [f"note: {n}" for n in pair.report.notes])


def ab_page(data: StatsData, base: str = "../") -> Page:
    intro = Markup(
        "Each `tidemark ab` job ran two configs interleaved A B A B … on one machine, in a seeded "
        "random order per round. Verdicts need p &lt; 0.05 (Mann–Whitney U), a 95% bootstrap CI "
        "of the ratio of medians that excludes 0% change, and a change above the threshold. "
        "Keys that differ between the sides are named.")
    return Page("AB comparisons", intro, [_ab_section(p, base) for p in data.ab_pairs],
                empty="No `tidemark ab` job in this database yet.")


def _observed(points: pd.DataFrame, run_id: str) -> tuple[dict, dict]:
    rows = points[points["run_id"] == run_id]
    observed: dict[tuple[str, str], float] = {}
    for r in rows.itertuples():
        for metric, column in (("ops_per_sec", "ops_median"), ("p99_us", "p99_median"),
                               ("p50_us", "p50_median")):
            value = getattr(r, column)
            if value is not None and not pd.isna(value):
                observed[(r.workload, metric)] = float(value)
    return observed, {"ops_per_sec": "higher", "p99_us": "lower", "p50_us": "lower"}


def targets_page(points: pd.DataFrame, data: StatsData, base: str = "../") -> Page:
    """Declared targets and bars of each workload's latest run; bars against the run before."""
    runs = list(dict.fromkeys(points["run_id"]))  # oldest first
    latest: dict[str, str] = {}
    for run_id in runs:
        for workload in data.declarations.get(run_id, {}):
            latest[workload] = run_id
    rows = []
    for workload, run_id in sorted(latest.items()):
        observed, better = _observed(points, run_id)
        earlier = [r for r in runs[:runs.index(run_id)] if workload in
                   set(points[points["run_id"] == r]["workload"])]
        baseline = _observed(points, earlier[-1])[0] if earlier else {}
        declared = {workload: data.declarations[run_id][workload]}
        for result in evaluate(declared, observed, baseline, better, run_id):
            rows.append([workload, result.target,
                         Link(num(result.observed, 2), run_href(run_id, base))
                         if result.observed is not None else MISSING, result.status])
    table = Table(("workload", "target", "observed (median)", "status"), rows,
                  (False, False, True, False))
    intro = Markup(
        "Targets (<code>p99_us &lt; 50</code>) and bars (<code>p99_us: 1.5</code> = at most 1.5 × "
        "the previous run's median) declared in the workload config, against each workload's "
        "latest run. `tidemark gate --targets` fails a candidate that is over target.")
    return Page("Targets", intro, [Section("Target vs observed", tables=[table])] if rows else [],
                empty="No workload declares targets or bars yet (WorkloadConf.targets / bars).")
