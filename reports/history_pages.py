"""Historical comparisons: the last runs of each workload side by side (pure)."""
from __future__ import annotations

from typing import Any

import pandas as pd
from markupsafe import Markup

from .format import Link, date, escape_text, signed_pct, slug
from .pages import delta_pct, run_href
from .tables import Page, Section, Table, describe, linked, point_href, with_identity

HISTORY_COLUMNS = 6


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


def _series_rows(frame: pd.DataFrame, run_ids: list[str], a: str, b: str) -> list[list[Any]]:
    """One row per series: its median ops/s in each column, then the Δ% from run a to run b."""
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
    return sorted(rows, key=lambda r: r[0])


def history_section(workload: str, points: pd.DataFrame, runs: pd.DataFrame,
                    instrumented: set[str], compare: tuple[int, int]) -> Section:
    frame = with_identity(points)
    run_ids = (frame.drop_duplicates("run_id").sort_values(["started_at", "run_id"])["run_id"]
               .tail(HISTORY_COLUMNS).tolist())
    columns = runs.set_index("run_id").loc[run_ids].reset_index()
    rows = _series_rows(frame, run_ids, run_ids[compare[0]], run_ids[compare[1]])
    caveat = _caveat(columns)
    if caveat:
        rows.append(caveat)
    warnings = [f"column {i + 1} ({r['run_id']}) is an instrumented {r['build_variant']} build: "
                f"its numbers are not comparable with optimized builds"
                for i, (_, r) in enumerate(columns.iterrows()) if r["build_variant"] in instrumented]
    links = Markup(" · ").join(Markup("[column {}: {}]({})").format(i + 1, escape_text(r),
                                                                    run_href(r, ""))
                               for i, r in enumerate(run_ids))
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
    sections = [history_section(w, mine, runs, instrumented, compare)
                for w, mine in points.groupby("workload", sort=True)]
    intro = Markup(
        f"Per workload, the last {HISTORY_COLUMNS} runs that measured it, oldest to newest; each "
        "cell is the median ops/s of one series in one run and links to it. The last column is "
        "the change between the first and the last column by default (pick any two columns above "
        "each table). Rows put side by side what has the "
        "same engine, benchmark, threads, cache state and params; when build variant, compiler "
        "or machine differ between columns a **caveat** row names them, and an instrumented "
        "(debug, sanitizer) column is flagged. p50 latencies: see [Latest refresh](latest.md).")
    return Page("Historical comparisons", intro, sections)

