"""Executive summary and historical comparisons (pure)."""
from __future__ import annotations

from typing import Any

import pandas as pd
from markupsafe import Markup

from orchestrator import stats

from .format import MISSING, Link, date, signed_pct, slug
from .pages import delta_pct, run_href
from .tables import Page, Section, Table, describe, linked, point_href, with_identity

HISTORY_COLUMNS = 6
# Verdicts of orchestrator.stats, in the order the summary lists them.
VERDICT_ORDER = {stats.SLOWER: 0, stats.FASTER: 1, stats.NO_CHANGE: 2, stats.NOT_ENOUGH: 3}


def series_noise(points: pd.DataFrame, series_key: str, before: Any) -> float:
    """The series' between-run noise from its run medians before the compared runs."""
    history = points[(points["series_key"] == series_key) & (points["started_at"] < before)]
    return stats.series_noise(history["ops_median"].dropna().tolist())


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


def comparison_rows(points: pd.DataFrame, samples: pd.DataFrame, new_id: str,
                    old_id: str) -> list[dict[str, Any]]:
    """Each series both runs measured, compared by `orchestrator.stats` on the repetitions."""
    new = points[points["run_id"] == new_id].set_index("series_key")
    old = points[points["run_id"] == old_id].set_index("series_key")
    by_run = {key: group["value"].tolist() for key, group in samples.groupby(["run_id", "series_key"])}
    rows = []
    for key in new.index.intersection(old.index):
        n, o = new.loc[key].copy(), old.loc[key].copy()
        n["run_id"], o["run_id"] = new_id, old_id
        noise = series_noise(points, key, o["started_at"])
        result = stats.compare_samples(by_run.get((old_id, key), []), by_run.get((new_id, key), []),
                                       stats.HIGHER, noise=noise)
        rows.append({"new": n, "old": o, "result": result, "noise": noise,
                     "change": delta_pct(n["ops_median"], o["ops_median"]),
                     "p99_change": delta_pct(n["p99_median"], o["p99_median"])})
    return sorted(rows, key=lambda r: (VERDICT_ORDER.get(r["result"].verdict, 9),
                                       -abs(r["change"] or 0.0)))


def geomean_ratio(rows: list[dict[str, Any]]) -> float | None:
    ratios = [r["result"].ratio for r in rows if r["result"].ratio == r["result"].ratio]
    value = stats.geometric_mean(ratios) if ratios else float("nan")
    return None if value != value else value


def _ci_text(result: stats.Comparison) -> str:
    if result.ci_low != result.ci_low:
        return MISSING
    return f"{result.ci_low:.3f}–{result.ci_high:.3f}"


def _summary_table(rows: list[dict[str, Any]]) -> Table:
    body = []
    for r in rows:
        n, o, result = r["new"], r["old"], r["result"]
        mark = {stats.SLOWER: "⚠ regression (slower)",
                stats.FASTER: "▲ improvement (faster)"}.get(result.verdict, result.verdict)
        href = point_href(n, "")
        body.append([n["workload"], describe(n), linked(o["ops_median"], o, ""),
                     linked(n["ops_median"], n, ""), Link(signed_pct(r["change"]), href),
                     Link(_ci_text(result), href),
                     Link(MISSING if result.p_value != result.p_value else f"{result.p_value:.3f}", href),
                     Link(f"{result.threshold * 100:.1f}%", href),
                     Link(signed_pct(r["p99_change"]), href), mark])
    return Table(("Workload", "Series", "Previous ops/s", "Latest ops/s", "Δ ops/s",
                  "95% CI of ratio", "p (U test)", "Threshold", "Δ p99", "Verdict"), body,
                 (False, False, True, True, True, True, True, True, True, False))


def summary_page(runs: pd.DataFrame, points: pd.DataFrame, samples: pd.DataFrame) -> Page:
    """`samples`: ops/s of every ok measured repetition of the compared runs (run_id,
    series_key, value)."""
    new_id, old_id = summary_pair(runs, points)
    latest = runs[runs["run_id"] == new_id].iloc[0]
    warnings = [] if latest["verified"] else \
        [f"the compared run is UNVERIFIED: {'; '.join(str(n) for n in latest['notes'] or [])}"]
    header = Markup("Latest run [{}]({}) · {} · {} {} ({}) on {}").format(
        latest["run_id"], run_href(latest["run_id"], ""), date(latest["started_at"]),
        latest["engine"], latest["engine_version"], latest["build_variant"], latest["hostname"])
    newest = runs.iloc[0]
    if newest["run_id"] != new_id:
        header = Markup("The newest run [{}]({}) ({}) has no earlier comparable run; the newest "
                        "run that has one is summarized. ").format(
            newest["run_id"], run_href(newest["run_id"], ""), date(newest["started_at"])) + header
    if old_id is None:
        return Page("Executive summary", header, [Section(
            "Changes", warnings=warnings, text=Markup("No earlier run measured any series of the "
                                                      "latest run, so there is nothing to compare."))])
    rows = comparison_rows(points, samples, latest["run_id"], old_id)
    counts = {v: sum(1 for r in rows if r["result"].verdict == v) for v in (stats.SLOWER, stats.FASTER)}
    ratio = geomean_ratio(rows)
    old_run = runs[runs["run_id"] == old_id].iloc[0]
    text = Markup(
        "Compared with the previous comparable run [{}]({}) ({}, {} {}): **{} regressions**, "
        "**{} improvements**, {} series in common; geometric mean of throughput ratios "
        "latest/previous **{}**. Verdicts come from `orchestrator.stats`: a Mann–Whitney U test "
        "on the repetitions, a bootstrap 95 % CI of the ratio of medians, and a threshold of "
        "max(minimum effect, k × the series' noise measured over its earlier runs); all three "
        "must agree. No baseline is configured yet, so the comparison is with the previous "
        "comparable run only.").format(
        old_id, run_href(old_id, ""), date(old_run["started_at"]), old_run["engine"],
        old_run["engine_version"], counts[stats.SLOWER], counts[stats.FASTER], len(rows),
        MISSING if ratio is None else f"{ratio:.3f}")
    return Page("Executive summary", header, [
        Section("Changes", text=text, warnings=warnings, tables=[_summary_table(rows)])])


def _column_label(run: pd.Series, instrumented: set[str]) -> str:
    flag = " ⚠ instrumented" if run["build_variant"] in instrumented else ""
    return f"{date(run['started_at'])} · {run['engine']} {run['engine_version']} · {run['build_variant']}{flag}"


def _caveat(columns: pd.DataFrame) -> list[Any] | None:
    """A row naming build variant, compiler and machine per column, when they differ."""
    fields = {"build variant": "build_variant", "compiler": "compiler_version", "machine": "hostname"}
    differing = [label for label, col in fields.items() if columns[col].nunique(dropna=False) > 1]
    if not differing and columns["machine_fingerprint"].nunique() <= 1:
        return None
    differing = differing or ["machine"]
    cells = [" / ".join(str(run[fields[d]]) + (f" ({run['machine_fingerprint'][:8]})" if d == "machine" else "")
                        for d in differing) for _, run in columns.iterrows()]
    return [f"⚠ caveat: {', '.join(differing)} differ", *cells, ""]


def history_section(workload: str, points: pd.DataFrame, runs: pd.DataFrame,
                    instrumented: set[str], compare: tuple[int, int]) -> Section:
    frame = with_identity(points)
    run_ids = (frame.drop_duplicates("run_id").sort_values(["started_at", "run_id"])["run_id"]
               .tail(HISTORY_COLUMNS).tolist())
    columns = runs.set_index("run_id").loc[run_ids].reset_index()
    a, b = run_ids[compare[0]], run_ids[compare[1]]
    rows = []
    keys = ["engine", "benchmark", "threads", "cache_state", "params_json"]
    for _, group in frame[frame["run_id"].isin(run_ids)].groupby(keys, sort=False):
        by_run = {p["run_id"]: p for _, p in group.iterrows()}
        cells = [linked(by_run[r]["ops_median"], by_run[r], "") if r in by_run else None
                 for r in run_ids]
        change = delta_pct(by_run[b]["ops_median"], by_run[a]["ops_median"]) \
            if a != b and a in by_run and b in by_run else None
        rows.append([describe(group.iloc[0], ("build_variant",)), *cells,
                     Link(signed_pct(change), point_href(by_run[b], "")) if change is not None else None])
    rows.sort(key=lambda r: r[0])
    caveat = _caveat(columns)
    if caveat:
        rows.append(caveat)
    header = ["Series (median ops/s)"] + [_column_label(r, instrumented) for _, r in columns.iterrows()]
    header.append(f"Δ% column {compare[0] % len(run_ids) + 1} → {compare[1] % len(run_ids) + 1}")
    warnings = [f"column {i + 1} ({r['run_id']}) is an instrumented {r['build_variant']} build: "
                f"its numbers are not comparable with optimized builds"
                for i, (_, r) in enumerate(columns.iterrows()) if r["build_variant"] in instrumented]
    links = Markup(" · ").join(Markup("[column {}: {}]({})").format(i + 1, r, run_href(r, ""))
                               for i, r in enumerate(run_ids))
    return Section(workload, text=links, warnings=warnings, anchor=slug(workload).lower(),
                   tables=[Table(tuple(header), rows)])


def history_page(runs: pd.DataFrame, points: pd.DataFrame, instrumented: set[str],
                 compare: tuple[int, int] = (0, -1)) -> Page:
    sections = [history_section(w, mine, runs, instrumented, compare)
                for w, mine in points.groupby("workload", sort=True)]
    intro = Markup(
        f"Per workload, the last {HISTORY_COLUMNS} runs that measured it, oldest to newest; each "
        "cell is the median ops/s of one series in one run and links to it. The last column is "
        "the change between the first and the last column. Rows put side by side what has the "
        "same engine, benchmark, threads, cache state and params; when build variant, compiler "
        "or machine differ between columns a **caveat** row names them, and an instrumented "
        "(debug, sanitizer) column is flagged. p50 latencies: see [Latest refresh](latest.md).")
    return Page("Historical comparisons", intro, sections)

