"""Historical comparisons: the last runs of each workload side by side (pure)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from markupsafe import Markup

from ..data.frames import records
from .format import Link, date, escape_text, signed_pct, slug
from .labels import Labeler
from .shared import delta_pct, run_href, workload_href
from .tables import Page, Section, Table, linked, point_href, with_identity

HISTORY_COLUMNS = 6


def _column_label(run: pd.Series, instrumented: set[str]) -> str:
    """'2026-11-24 06:45 · leveldb 1.23', with a build variant other than release and ⚠."""
    flag = " ⚠" if run.get("caveat") or run["build_variant"] in instrumented else ""
    variant = "" if run["build_variant"] == "release" else f" · {run['build_variant']}"
    return f"{date(run['started_at'])[:16]} · {run['engine']} {run['engine_version']}{variant}{flag}"


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


def _series_rows(frame: pd.DataFrame, run_ids: list[str], a: str, b: str) -> list[list[Any]]:
    """One row per series: its median ops/s in each column, then the Δ% from run a to run b."""
    rows = []
    keys = ["engine", "benchmark", "threads", "cache_state", "params_json"]
    shown = frame[frame["run_id"].isin(run_ids)]
    # Each row's points by position, as first shown: no frame copied per row.
    groups = sorted(shown.groupby(keys, sort=False).indices.values(), key=lambda p: p[0])
    rows_of = records(shown)
    labeler = Labeler.of([rows_of[p[0]] for p in groups], drop=("workload", "build_variant"))
    for positions in groups:
        by_run = {rows_of[i]["run_id"]: rows_of[i] for i in positions}
        cells = [linked(by_run[r]["ops_median"], by_run[r], "") if r in by_run else None
                 for r in run_ids]
        change = delta_pct(by_run[b]["ops_median"], by_run[a]["ops_median"]) \
            if a != b and a in by_run and b in by_run else None
        rows.append([labeler.label(rows_of[positions[0]]), *cells,
                     Link(signed_pct(change), point_href(by_run[b], "")) if change is not None else None])
    return sorted(rows, key=lambda r: r[0])


def history_columns(frame: pd.DataFrame) -> list[str]:
    """Up to HISTORY_COLUMNS runs of one workload, oldest first: its newest run, then (newest
    first) runs that measured a series of the runs already chosen, then runs of any series
    with history, then the rest. The newest N runs alone can all be one-off sweep runs, which
    would hide the older runs of the one series that has a history."""
    order = frame.drop_duplicates("run_id").sort_values(["started_at", "run_id"],
                                                       ascending=False)["run_id"].tolist()
    keys = frame["series_key"].to_numpy()
    series = {run: set(keys[positions].tolist())  # run → the series it measured
              for run, positions in frame.groupby("run_id", sort=False).indices.items()}
    counts = frame.groupby("series_key")["run_id"].nunique()
    with_history = set(counts[counts > 1].index)
    chosen: list[str] = order[:1]
    passes = (lambda run: bool(series[run] & set().union(*(series[c] for c in chosen))),
              lambda run: bool(series[run] & with_history), lambda run: True)
    for wanted in passes:
        for run in order:
            if len(chosen) < HISTORY_COLUMNS and run not in chosen and wanted(run):
                chosen.append(run)
    return sorted(chosen, key=order.index, reverse=True)


def history_section(workload: str, points: pd.DataFrame, runs: pd.DataFrame,
                    instrumented: set[str], compare: tuple[int, int],
                    mine: np.ndarray | None = None) -> Section:
    """`mine`: the positions of the workload's points in `points` (default: all of them)."""
    mine = np.arange(len(points)) if mine is None else mine
    # Three columns to choose the runs, every column only for the chosen runs' points.
    run_ids = history_columns(points[["run_id", "started_at", "series_key"]].iloc[mine])
    hidden = points["run_id"].iloc[mine].nunique() - len(run_ids)
    frame = with_identity(points.iloc[mine[points["run_id"].iloc[mine].isin(run_ids).to_numpy()]])
    columns = runs.set_index("run_id").loc[run_ids].reset_index()
    rows = _series_rows(frame, run_ids, run_ids[compare[0]], run_ids[compare[1]])
    caveat = _caveat(columns)
    if caveat:
        rows.append(caveat)
    warnings = [f"column {i + 1} ({r['run_id']}): ⚠ {r['caveat']}"
                for i, (_, r) in enumerate(columns.iterrows()) if r.get("caveat")]
    links = Markup(" · ").join(Markup("[column {}: {}]({})").format(i + 1, escape_text(r),
                                                                    run_href(r, ""))
                               for i, r in enumerate(run_ids))
    if hidden:
        links += Markup("<br>{} more run(s) of this workload: on [its page]({}).").format(
            hidden, workload_href(workload, ""))
    header = ["Series (median ops/s)"] + [_column_label(r, instrumented) for _, r in columns.iterrows()]
    if len(run_ids) < 2:  # one run: nothing to compare, so no Δ% column and no pickers
        return Section(workload, text=links, warnings=warnings, anchor=slug(workload).lower(),
                       tables=[Table(tuple(header), [row[:-1] for row in rows])])
    first, last = compare[0] % len(run_ids) + 1, compare[1] % len(run_ids) + 1
    header.append(f"Δ% column {first} → {last}")
    # assets/tidemark.js turns this into two pickers that recompute the Δ% column in the page.
    picker = Markup('<div class="tm-delta-picker" data-from="{}" data-to="{}"></div>').format(
        first, last)
    return Section(workload, text=links + Markup("\n\n") + picker, warnings=warnings,
                   anchor=slug(workload).lower(), tables=[Table(tuple(header), rows)])


def history_page(runs: pd.DataFrame, points: pd.DataFrame, instrumented: set[str],
                 compare: tuple[int, int] = (0, -1)) -> Page:
    positions = points.groupby("workload", sort=True).indices  # no copy of each workload's points
    imported = (points["build_variant"] == "imported").to_numpy()
    workloads = sorted(sorted(positions), key=lambda w: bool(imported[positions[w]].all()))
    sections = [history_section(w, points, runs, instrumented, compare, positions[w])
                for w in workloads]  # measured workloads first
    intro = Markup(
        f"Per workload, up to {HISTORY_COLUMNS} runs that measured it, oldest to newest: its "
        "newest run and the runs that give its series (or other series) a history, so that a "
        "series measured now and then is not hidden behind one-off sweep runs; each "
        "cell is the median ops/s of one series in one run and links to it. The last column is "
        "the change between the first and the last column by default (pick any two columns above "
        "each table). Rows put side by side what has the "
        "same engine, benchmark, threads, cache state and params; when build variant, compiler "
        "or machine differ between columns a **caveat** row names them, and an instrumented "
        "(debug, sanitizer) column is flagged. p50 latencies: see [Latest refresh](latest.md).")
    return Page("Historical comparisons", intro, sections, wide=True)

