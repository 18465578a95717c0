"""Page builders (pure): DataFrames from `queries` → plain dicts and lists for the templates.

Links are relative to the page being built: `base` is "" for the home page and "../" for pages
one folder down (workloads/, runs/).
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from .format import (MISSING, Link, anchor, date, is_missing, latency, nav_title, num, signed_pct,
                     slug)

# Older runs stay in the chart; the table keeps the newest columns so it fits a page.
MAX_TREND_COLUMNS = 12
PARAMS_SHOWN = ("num", "value_size")


def delta_pct(new: Any, old: Any) -> float | None:
    """Change from old to new in percent; None when either is missing or old is zero."""
    if is_missing(new) or is_missing(old) or float(old) == 0.0:
        return None
    return (float(new) - float(old)) / float(old) * 100.0


def cv_pct(std: Any, mean: Any) -> float | None:
    """Coefficient of variation in percent; None for one repetition (no std) or a zero mean."""
    if is_missing(std) or is_missing(mean) or float(mean) == 0.0:
        return None
    return float(std) / float(mean) * 100.0


def spread_text(low: Any, high: Any) -> str:
    """Min–max over repetitions, e.g. '250,000–280,000'."""
    if is_missing(low) or is_missing(high):
        return MISSING
    return f"{num(low)}–{num(high)}"


def params_summary(params: dict[str, Any] | None) -> str:
    """The params a reader tells series apart by, e.g. 'num=100,000 value_size=100'."""
    params = params or {}
    shown = [f"{k}={num(params[k]) if isinstance(params[k], (int, float)) else params[k]}"
             for k in PARAMS_SHOWN if k in params]
    return " ".join(shown) or MISSING


def profile_of(config: Any) -> str:
    """The machine profile a run used (its config's machine.name)."""
    machine = (config or {}).get("machine") if isinstance(config, dict) else None
    return str((machine or {}).get("name") or "unknown profile")


def run_href(run_id: str, base: str) -> str:
    return f"{base}runs/{slug(run_id)}.md"


def workload_href(workload: str, base: str) -> str:
    return f"{base}workloads/{slug(workload)}.md"


def series_label(point: pd.Series) -> str:
    """What tells one series row from another on a workload page."""
    bench = "" if point["benchmark"] == point["workload"] else f" {point['benchmark']}"
    return (f"{point['engine']}{bench} · {point['threads']} thr · {point['cache_state']} · "
            f"{params_summary(point['params'])} · {point['build_variant']}")


def point_row(point: pd.Series, run_page: str) -> dict[str, Any]:
    """One series point of one run; every number links to its first measured invocation."""
    href = f"{run_page}#{anchor(point['first_seq'])}"
    cv = cv_pct(point["ops_std"], point["ops_mean"])
    return {
        "workload": point["workload"], "benchmark": point["benchmark"],
        "version": f"{point['engine']} {point['engine_version']}",
        "threads": Link(str(point["threads"]), href), "cache_state": point["cache_state"],
        "params": params_summary(point["params"]),
        "ops": Link(num(point["ops_median"]), href),
        "p50": Link(latency(point["p50_median"]), href),
        "p99": Link(latency(point["p99_median"]), href),
        "mb": Link(num(point["mb_median"], 1), href) if not is_missing(point["mb_median"]) else None,
        "spread": Link(spread_text(point["ops_min"], point["ops_max"]), href),
        "cv": Link(MISSING if cv is None else f"{cv:.1f}%", href),
        "ok_n": Link(f"{point['n_ok']}/{point['n']}", href),
        "interference": Link(interference_cell(point), href),
    }


def interference_cell(point: pd.Series) -> str:
    """Median share of the engine's CPUs other tasks took, and how many invocations were
    flagged above machine.interference_max_pct."""
    text = num(point.get("interference_median"), 1)
    flagged = int(point.get("n_interfered") or 0)
    return text + (f" ⚠ {flagged} flagged" if flagged else "")


def status_text(run: pd.Series) -> str:
    """A run's status as its pages say it: resumed runs say so (`tidemark run --resume`)."""
    resumes = run.get("resumes") or []
    times = f" ×{len(resumes)}" if len(resumes) > 1 else ""
    return run["status"] + (f" (resumed{times})" if resumes else "")


def runner_text(run: pd.Series) -> str:
    """'host', or the container runner with its images and memory limit (runs.machine_state)."""
    runner = run.get("runner") or "host"
    container = (run.get("machine_state") or {}).get("container") or {}
    if runner != "docker" or not container:
        return runner
    images = ", ".join(f"{ref['tag']} ({str(ref['id'])[7:19]}, FROM {ref['base']})"
                       for ref in (container.get("images") or {}).values())
    memory = container.get("memory_bytes")
    limit = f"memory limit {memory / 2**20:,.0f} MiB" if memory else "no memory limit"
    return f"docker: image {images}; {limit}"


def run_summary(run: pd.Series, base: str) -> list[tuple[str, Any]]:
    """Key facts of one run as (label, value) pairs."""
    return [
        ("Run", Link(run["run_id"], run_href(run["run_id"], base))),
        ("Started", date(run["started_at"])),
        ("Engine", f"{run['engine']} {run['engine_version']}"),
        ("Build variant", run["build_variant"]),
        ("Runner", runner_text(run)),
        ("Machine", f"{run['hostname']} ({run['cpu_model']}, {run['logical_cpus']} CPUs)"),
        ("Status", status_text(run)),
        ("Invocations ok / failed",
         Link(f"{run['n_ok']} / {run['n_failed']} of {run['n_invocations']}",
              run_href(run["run_id"], base) + "#invocations")),
        ("Label", run["label"] or MISSING),
        ("Verified", "yes: the host matched its machine profile" if run["verified"] else
         "⚠ NO, unverified: " + "; ".join(str(n) for n in run["notes"] or [])),
        ("Machine page", Link(run["machine_fingerprint"][:12],
                              f"{base}machines/{run['machine_fingerprint'][:12]}.md")),
    ]


def workload_links(points: pd.DataFrame, base: str) -> list[Link]:
    names = sorted(points["workload"].unique()) if len(points) else []
    return [Link(name, workload_href(name, base)) for name in names]


def home_page(runs: pd.DataFrame, points: pd.DataFrame) -> dict[str, Any]:
    """Latest run summary, its series points, and where to go next."""
    latest = runs.iloc[0]
    mine = points[points["run_id"] == latest["run_id"]]
    rows = []
    for _, point in mine.iterrows():
        row = point_row(point, run_href(latest["run_id"], ""))
        row["workload"] = Link(point["workload"], workload_href(point["workload"], ""))
        rows.append(row)
    return {"summary": run_summary(latest, ""), "rows": rows,
            "workloads": workload_links(points, ""), "runs_href": "runs/index.md",
            "n_runs": len(runs), "verified": bool(latest["verified"]),
            "unverified": [Link(r["run_id"], run_href(r["run_id"], ""))
                           for _, r in runs[~runs["verified"].astype(bool)].head(10).iterrows()]}


def runs_index(runs: pd.DataFrame) -> dict[str, Any]:
    """Every run, newest first."""
    rows = [{"run": Link(run["run_id"], f"{slug(run['run_id'])}.md"),
             "started": date(run["started_at"]),
             "engine": f"{run['engine']} {run['engine_version']}",
             "variant": run["build_variant"], "workloads": ", ".join(run["workloads"]),
             "status": status_text(run) + ("" if run["verified"] else " ⚠ unverified"),
             "ok_n": Link(f"{run['n_ok']}/{run['n_invocations']}",
                          f"{slug(run['run_id'])}.md#invocations"),
             "host": run["hostname"], "runner": run.get("runner") or "host",
             "label": run["label"]}
            for _, run in runs.iterrows()]
    return {"rows": rows}


def _trend_columns(points: pd.DataFrame) -> pd.DataFrame:
    """The runs of one workload, oldest → newest."""
    columns = points[["run_id", "started_at", "engine", "engine_version"]]
    return columns.drop_duplicates("run_id").sort_values(["started_at", "run_id"])


def trend_row(series: pd.DataFrame, run_ids: list[str], base: str) -> list[Link | None]:
    """Median ops/s per run column (None where the series was not run), with Δ% vs the last value."""
    by_run = series.set_index("run_id")
    cells: list[Link | None] = []
    previous = None
    for run_id in run_ids:
        if run_id not in by_run.index or is_missing(by_run.at[run_id, "ops_median"]):
            cells.append(None)
            continue
        value = by_run.at[run_id, "ops_median"]
        change = delta_pct(value, previous)
        text = num(value) if change is None else f"{num(value)} ({signed_pct(change)})"
        seq = by_run.at[run_id, "first_seq"]
        cells.append(Link(text, f"{run_href(run_id, base)}#{anchor(seq)}"))
        previous = value
    return cells


def trend_table(points: pd.DataFrame, base: str) -> dict[str, Any]:
    """Rows = series, columns = the newest runs of this workload; cells link to the run."""
    runs = _trend_columns(points)
    shown = runs.tail(MAX_TREND_COLUMNS)
    run_ids = list(shown["run_id"])
    columns = [Link(f"{date(r['started_at'])} · {r['engine']} {r['engine_version']}",
                    run_href(r["run_id"], base)) for _, r in shown.iterrows()]
    rows = []
    for key, series in points.groupby("series_key", sort=False):
        rows.append({"label": series_label(series.iloc[-1]), "key": key,
                     "cells": trend_row(series, run_ids, base)})
    rows.sort(key=lambda row: row["label"])
    return {"columns": columns, "rows": rows, "hidden_runs": len(runs) - len(shown)}


def chart_series(points: pd.DataFrame) -> list[dict[str, Any]]:
    """Per series, oldest run first: median and min/max ops/s, for `charts.trend_chart`."""
    # Per run, not per point: a long history has 200,000 points and only 1,000 runs.
    runs = points.drop_duplicates("run_id")
    when = dict(zip(runs["run_id"], (ts.isoformat() for ts in runs["started_at"])))
    version = dict(zip(runs["run_id"], runs["engine"] + " " + runs["engine_version"]))
    series_list = []
    for key, series in points.groupby("series_key", sort=False):
        series = series[series["ops_median"].notna()].sort_values(["started_at", "run_id"])
        if series.empty:
            continue
        run_ids = series["run_id"].tolist()
        series_list.append({
            "label": series_label(series.iloc[-1]), "key": key,
            "x": [when[r] for r in run_ids],
            "median": series["ops_median"].tolist(), "low": series["ops_min"].tolist(),
            "high": series["ops_max"].tolist(), "run_ids": run_ids,
            "versions": [version[r] for r in run_ids],
        })
    return sorted(series_list, key=lambda s: s["label"])


def latest_verdicts(latest: pd.DataFrame, comparison: Any) -> dict[str, Any]:
    """The latest run's verdicts on this workload's series, as the analysis core gave them
    against its previous comparable run (the Summary's comparison when it is the summarized run)."""
    if comparison is None or comparison.report is None:
        return {"partner": None, "problem": comparison.problem if comparison else "", "rows": []}
    labels = {p["series_key"]: p for _, p in latest.iterrows()}
    base_id = comparison.report.base["run_id"]
    rows = []
    for row in comparison.report.rows:
        point = labels.get(row.series_key)
        if point is None:
            continue
        c = row.comparison
        label = series_label(point) + (f" ({row.metric})" if row.metric != "ops_per_sec" else "")
        rows.append({"label": label,
                     "change": Link(MISSING if c.ratio != c.ratio else f"{c.change_pct:+.1f}%",
                                    f"{run_href(point['run_id'], '../')}#{anchor(point['first_seq'])}"),
                     "threshold": f"{c.threshold * 100:.1f}%", "verdict": c.verdict})
    return {"partner": Link(base_id, run_href(base_id, "../")), "problem": "",
            "rows": sorted(rows, key=lambda r: r["label"])}


def workload_page(workload: str, points: pd.DataFrame,
                  comparisons: dict[str, Any] | None = None) -> dict[str, Any]:
    """The latest run's points of one workload, its verdicts against its previous comparable
    run (`comparisons`: run → reports.comparisons.Comparison), its trend table and chart data."""
    mine = points[points["workload"] == workload]
    latest_id = _trend_columns(mine).iloc[-1]["run_id"]
    latest = mine[mine["run_id"] == latest_id]
    rows = [point_row(point, run_href(latest_id, "../")) for _, point in latest.iterrows()]
    # One workload can run several benchmarks (Get hit / miss / MultiGet of a harness binary).
    show_benchmark = bool((latest["benchmark"] != workload).any())
    return {"name": workload, "show_benchmark": show_benchmark, "title": nav_title(workload), "latest_run": Link(latest_id, run_href(latest_id, "../")),
            "latest_date": date(latest.iloc[0]["started_at"]), "rows": rows,
            "verdicts": latest_verdicts(latest, (comparisons or {}).get(latest_id)),
            "trend": trend_table(mine, "../"), "series": chart_series(mine)}
