"""Sweeps (throughput against a parameter, fitted exponent) and variants (A vs B) — pure."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pandas as pd
from markupsafe import Markup

from . import charts
from .caveats import caveat_warnings
from .format import Link, date, escape_text, is_missing, latency, num
from .point_groups import PointGroups
from .shared import run_href
from .tables import (Page, Section, Table, describe, group_key, linked, per_params, point_href,
                     with_identity)

SWEPT = ("num", "value_size")
UNITS = {"num": "keys", "value_size": "bytes"}  # the swept parameter's unit, for the x axis
MIN_FIT_POINTS = 4  # an exponent fitted to 2 or 3 points says nothing about the shape
VARIANT_PARAMS = ("compression",)
EXPONENT_TOLERANCE = 0.10  # |Δ exponent| above this is flagged as a departure
BASELINE_VALUES = {"compression": "none", "build_variant": "release", "runner": "host"}


def fit_exponent(xs: list[float], ys: list[float]) -> float | None:
    """Least-squares slope of log(y) on log(x): y ∝ x^k. None with fewer than MIN_FIT_POINTS
    distinct positive x (a line through 2 or 3 points always "fits")."""
    pairs = [(math.log(x), math.log(y)) for x, y in zip(xs, ys)
             if not is_missing(x) and not is_missing(y) and x > 0 and y > 0]
    if len({x for x, _ in pairs}) < MIN_FIT_POINTS:
        return None
    mx = sum(x for x, _ in pairs) / len(pairs)
    my = sum(y for _, y in pairs) / len(pairs)
    sxx = sum((x - mx) ** 2 for x, _ in pairs)
    return sum((x - mx) * (y - my) for x, y in pairs) / sxx


def _with_param(points: pd.DataFrame, param: str, has: Callable[[Any], bool],
                value: Callable[[Any], Any], column: str, groups: PointGroups
                ) -> tuple[pd.DataFrame, Callable[[], np.ndarray]]:
    """The points whose params `has` `param`, with its `value` in `column`, and what numbers
    their otherwise-equal series (params without `param`), called only when needed."""
    kept = per_params(points["params"], has).to_numpy(dtype=bool)
    rows = None if kept.all() else np.flatnonzero(kept)
    # A shallow copy: a column is added, the points' arrays are never written into (and a
    # slice of them is not a view pandas would warn about writing into).
    frame = (points if rows is None else points.iloc[rows]).copy(deep=False)
    if len(frame):
        frame[column] = per_params(frame["params"], value)
    return frame, lambda: groups.ids(rows, drop_params=(param,))


def _sweeps(points: pd.DataFrame, param: str, groups: PointGroups) -> pd.DataFrame:
    """Points of runs that measured ≥ 2 values of `param` with all else equal, keyed by group."""
    frame, series = _with_param(points, param,
                                lambda p: isinstance((p or {}).get(param), (int, float)),
                                lambda p: float(p[param]), "x", groups)
    if frame.empty:
        return frame
    return varied_in_run(frame, "x", keep_runs=2, series=series)


def varied_in_run(frame: pd.DataFrame, column: str, keep_runs: int,
                  series: Callable[[], np.ndarray]) -> pd.DataFrame:
    """Rows of (group, run) pairs that measured ≥ 2 values of `column`, the newest `keep_runs`
    such runs of each group; `group` numbers the otherwise-equal series (`series()`: each
    row's, as PointGroups.ids numbers them)."""
    if not (frame.groupby("run_id")[column].nunique() >= 2).any():
        return frame.iloc[:0].assign(group=0)  # no run varied it: skip grouping every point
    group = pd.Series(series(), index=frame.index)
    varied = (frame.groupby([group, frame["run_id"]])[column].transform("nunique") >= 2).to_numpy()
    # The (group, run) pairs are chosen on three columns: only their points are copied.
    light = pd.DataFrame({"group": group, "run_id": frame["run_id"],
                          "started_at": frame["started_at"]})
    pairs = light[varied].drop_duplicates(["group", "run_id"]).sort_values(["started_at", "run_id"])
    keep = pairs.groupby("group").tail(keep_runs)
    kept = varied & pd.MultiIndex.from_frame(light[["group", "run_id"]]).isin(
        pd.MultiIndex.from_frame(keep[["group", "run_id"]]))
    return frame[kept].assign(group=group[kept]).reset_index(drop=True)


def _exponents(sweeps: pd.DataFrame) -> pd.DataFrame:
    """One row per (group, run): its exponent, oldest run first."""
    rows = [{"group": g, "run_id": r, "started_at": s["started_at"].iloc[0],
             "k": fit_exponent(s["x"].tolist(), s["ops_median"].tolist())}
            for (g, r), s in sweeps.groupby(["group", "run_id"], sort=False)]
    return pd.DataFrame(rows).sort_values(["started_at", "run_id"]) if rows else pd.DataFrame()


def sweep_section(param: str, group: pd.DataFrame, history: pd.DataFrame, index: int) -> Section:
    history = history.reset_index(drop=True)
    newest_id = history.iloc[-1]["run_id"]
    newest = group[group["run_id"] == newest_id].sort_values("x")
    k = history.iloc[-1]["k"]
    previous = history.iloc[-2] if len(history) > 1 else None
    rows = [[Link(num(p["x"]), point_href(p, "")), linked(p["ops_median"], p, ""),
             Link(latency(p["p50_median"]), point_href(p, "")), linked(p["mb_median"], p, "", 1)]
            for _, p in newest.iterrows()]
    warnings, prev_text = [], "no earlier run swept this"
    if previous is not None and previous["k"] is not None and k is not None:
        prev_text = escape_text(f"{previous['k']:.3f} in run {previous['run_id']}")
        if abs(k - previous["k"]) > EXPONENT_TOLERANCE:
            warnings.append(f"the exponent moved from {previous['k']:.3f} to {k:.3f} "
                            f"(|Δ| > {EXPONENT_TOLERANCE}): throughput now scales differently "
                            f"with {param}")
    if k is None:
        fit = Markup("{} values of {}: no exponent is fitted to fewer than {} points").format(
            len(newest), param, MIN_FIT_POINTS)
    else:
        fit = Markup("fitted exponent **k = {:.3f}** (ops/s ∝ {}<sup>k</sup>) · previous: "
                     "{}").format(k, param, prev_text)
    text = Markup("Run [{}]({}) · {}").format(escape_text(newest_id), run_href(newest_id, ""), fit)
    curves = [{"label": f"run {r}", "x": ordered["x"].tolist(), "y": ordered["ops_median"].tolist()}
              for r, s in group[group["run_id"].isin(history["run_id"].tail(2))].groupby("run_id")
              for ordered in [s.sort_values("x")]]
    first = newest.iloc[0]
    unit = f"{param} ({UNITS[param]})" if param in UNITS else param
    return Section(f"{first['workload']} · {param} · {describe(first, (param,))}", text=text,
                   warnings=warnings + caveat_warnings(newest),
                   chart=charts.sweep_chart(curves, unit, f"sweep-{param}-{index}"),
                   tables=[Table((unit, "ops/s", "p50 µs", "MB/s"), rows)])


def sweeps_page(points: pd.DataFrame, groups: PointGroups | None = None) -> Page:
    """`groups`: the points' identity, factorized (point_groups)."""
    sections: list[Section] = []
    groups = (groups or PointGroups(points)) if not points.empty else None
    for param in SWEPT:
        sweeps = _sweeps(points, param, groups) if groups else pd.DataFrame()
        if sweeps.empty:
            continue
        exponents = _exponents(sweeps)
        points_of = dict(iter(sweeps.groupby("group", sort=False)))  # one pass, not one per group
        for group, history in exponents.groupby("group", sort=True):
            sections.append(sweep_section(param, points_of[group], history, len(sections)))
    intro = Markup(
        "Throughput against a parameter swept within one run (`num` or `value_size`), with "
        "everything else equal. The exponent k is the least-squares slope of log(ops/s) on "
        "log(parameter): k = 0 means throughput does not depend on it, k = −1 means it falls in "
        f"proportion; it is fitted only to {MIN_FIT_POINTS} or more values. A change of more "
        f"than {EXPONENT_TOLERANCE} from the previous run's exponent is flagged.")
    return Page("Sweeps", intro, sections, empty="No run has swept num or value_size yet.")


TABLE_SHARE = 0.9  # a ratio only when the table files hold (nearly) all of the data set


def size_cells(point: Any) -> list[Any]:
    """The data set on disk (a writer's files after it ran, a reader's before) and, for a
    writer whose table files hold the data set, its compression ratio: raw key + value bytes ÷
    table bytes. Data still in the memtable sits uncompressed in the log: no ratio then."""
    size, tables = point.get("data_bytes_median"), point.get("table_bytes_median")
    params = point.get("params") or {}
    if is_missing(size) or not size:
        return [None, None]
    raw = params.get("num", 0) * (params.get("key_size", 0) + params.get("value_size", 0))
    held = not is_missing(tables) and tables >= TABLE_SHARE * size
    ratio = Link(f"{raw / tables:.2f}×", point_href(point, "")) if raw and held else \
        "in the log" if not is_missing(tables) else None
    return [linked(size / 2**20, point, "", 1), ratio]


def ratio_rows(group: pd.DataFrame, column: str) -> list[list[Any]]:
    """Each variant against the baseline: slowdown = base ops / variant ops, overhead = −1."""
    base_value = BASELINE_VALUES.get(column)
    values = group[column].tolist()
    base = group[group[column] == base_value] if base_value in values else group.iloc[[0]]
    base_ops = base.iloc[0]["ops_median"]
    rows = []
    for _, p in group.iterrows():
        slowdown = base_ops / p["ops_median"] if not is_missing(p["ops_median"]) and p["ops_median"] else None
        overhead = None if slowdown is None else (slowdown - 1) * 100
        rows.append([str(p[column]) + (" (baseline)" if p[column] == base.iloc[0][column] else ""),
                     Link(date(p["started_at"]), run_href(p["run_id"], "")),
                     linked(p["ops_median"], p, ""),
                     Link(latency(p["p50_median"]), point_href(p, "")),
                     linked(overhead, p, "", 1, " %"),
                     linked(slowdown, p, "", 3, "×"), *size_cells(p)])
    return rows


RATIO_COLUMNS = ("Variant", "Run", "ops/s", "p50 µs", "Overhead", "Slowdown ratio",
                 "On disk MiB", "Compression ratio")
RATIO_ALIGN = (False, False, True, True, True, True, True, True)


def param_variant_sections(points: pd.DataFrame, groups: PointGroups) -> list[Section]:
    sections = []
    for param in VARIANT_PARAMS:
        frame, series = _with_param(points, param, lambda p: param in (p or {}),
                                    lambda p: str(p[param]), param, groups)
        if frame.empty:
            continue
        for _, group in varied_in_run(frame, param, 1, series).groupby("group", sort=False):
            first = group.iloc[0]
            sections.append(Section(f"{first['workload']} · {param} · {describe(first, (param,))}",
                                    tables=[Table(RATIO_COLUMNS, ratio_rows(group, param), RATIO_ALIGN)]))
    return sections


def across_runs_sections(points: pd.DataFrame, column: str, label: str) -> list[Section]:
    """Same engine version, machine and series except `column` (the build variant, the
    runner), across runs: the newest run of each value against the baseline value."""
    if points[column].nunique() < 2:
        return []  # one value in every run: no pair, and no need to group every point
    frame = with_identity(points)
    keys = group_key(frame, (column,)) + ["engine_version"]
    # Only groups with two values of `column` make a section: find them in one pass, not one
    # sort per group (a long history has hundreds of groups and nearly all have one value).
    frame = frame[frame.groupby(keys, sort=False, dropna=False)[column].transform("nunique") >= 2]
    sections = []
    for _, group in frame.groupby(keys, sort=False, dropna=False):
        latest = group.sort_values(["started_at", "run_id"]).groupby(column).tail(1)
        if len(latest) < 2:
            continue
        first = latest.iloc[0]
        text = Markup("{} {} · newest run of each {}, {}").format(
            escape_text(first["engine"]), escape_text(first["engine_version"]), label,
            date(latest["started_at"].max()))
        sections.append(Section(f"{first['workload']} · {label} · {describe(first, (column,))}",
                                text=text, tables=[Table(RATIO_COLUMNS, ratio_rows(latest, column),
                                                         RATIO_ALIGN)],
                                warnings=caveat_warnings(latest)))
    return sections


def variants_page(points: pd.DataFrame, groups: PointGroups | None = None) -> Page:
    """`groups`: the points' identity, factorized (point_groups)."""
    sections: list[Section] = []
    if not points.empty:
        sections = (param_variant_sections(points, groups or PointGroups(points))
                    + across_runs_sections(points, "build_variant", "build variant")
                    + across_runs_sections(points, "runner", "runner"))
    intro = Markup(
        "A against B with everything else equal: a parameter such as compression within one "
        "run, or the build variant (release vs asan/debug) or the runner (host vs docker) "
        "across runs of the same engine version on the same machine. **Slowdown ratio** = baseline ops/s ÷ variant ops/s; "
        "**overhead** = (slowdown − 1) × 100 %, the extra time per operation the variant costs. "
        "The baseline is compression=none, the release build and the host runner where "
        "present: the runner rows give the container runner's overhead against the host "
        "(`runner=docker`); for a figure measured side by side, interleaved in one job, see "
        "`benchmarks/docker_overhead.py`. **On disk** is "
        "the data set's size as recorded (a writer's database files after it ran, a reader's "
        "before); **compression ratio** = num × (key size + value size) ÷ the bytes of its table "
        "files, shown when they hold the data set (\"in the log\": most of it was still in "
        "the memtable, whose log is not compressed); a dash where the run did not record it.")
    return Page("Variants", intro, sections, wide=True,
                empty="No variant pair has been measured yet.")
