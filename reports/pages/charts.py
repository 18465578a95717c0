"""Plotly figures → HTML fragments for the pages (plotly.js itself is served once, offline).

Figures are built as plain dicts: only the shared layout goes through plotly's validation, once
per process (validating a template per chart, and every point of every trace, was most of the
chart time on a long history). Names and hover text from the database are escaped here, because
plotly renders some HTML in them. A point whose customdata ends with a run page's href opens
that page when clicked (site/assets/tidemark.js): every number links to the run behind it.
Trends (a thousand points per series) hold their data once, and tidemark.js makes their traces
and their points' customdata (`_trend_data`).
"""
from __future__ import annotations

import functools
import html
import itertools
import json
import math
from datetime import datetime, timedelta
from typing import Any, Iterable

import numpy as np
import orjson
import plotly.graph_objects as go

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
HOVER = ("%{customdata[0]}<br>%{customdata[1]}<br>%{x|%Y-%m-%d %H:%M}<br>"
         "median %{y:,.0f} ops/s<br>min–max %{customdata[2]:,.0f}–%{customdata[3]:,.0f}"
         "<extra></extra>")
CONFIG = {"displaylogo": False, "responsive": True}
PLOT_HEIGHT = 340  # px of plot area; the legend below it adds its own rows
LEGEND_ROW = 22  # px per row of legend entries
LEGEND_WIDTH = 1000  # px a legend row may use (the content column at 1,400 px, tables' width)
MANY_POINTS = 150  # above this a line has no markers (a thousand markers hide the line)


_VALIDATED: list[dict[str, Any]] = []  # the shared layout, once validated (or adopted)


def validated_layout() -> dict[str, Any]:
    """The shared layout, validated once per process: a chart sets its height and bottom
    margin in a shallow copy (the template, most of it, is shared and never written)."""
    if not _VALIDATED:
        figure = go.Figure()
        figure.update_layout(template="simple_white", height=PLOT_HEIGHT, hovermode="closest",
                             margin=dict(l=70, r=20, t=20, b=60),
                             legend=dict(orientation="h", yref="container", y=0,
                                         yanchor="bottom", x=0, xanchor="left"))
        _VALIDATED.append(figure.to_dict()["layout"])
    return _VALIDATED[0]


def adopt_layout(layout: dict[str, Any]) -> None:
    """Use a layout `validated_layout` gave earlier with the same code and plotly (a site
    build keeps it in its cache: validating it costs 0.2 s before the build can fork)."""
    _VALIDATED[:] = [layout]


def legend_rows(labels: list[str], width: int = LEGEND_WIDTH) -> int:
    """How many rows a horizontal legend of these labels takes (about 7 px a character and 40
    for the swatch), so the figure can grow by them instead of squeezing its plot."""
    rows, used = 1, 0
    for label in labels:
        entry = 40 + 7 * len(label)
        if used and used + entry > width:
            rows, used = rows + 1, 0
        used += entry
    return rows if labels else 0


def _layout(x_axis: dict[str, Any], y_axis: dict[str, Any],
            legend: list[str] | None = None) -> dict[str, Any]:
    """A plot area of PLOT_HEIGHT with room for the x title and the legend's rows below it."""
    rows = legend_rows(legend or [])
    bottom = 60 + (rows * LEGEND_ROW + 10 if rows else 0)
    shared = validated_layout()
    layout = dict(shared, height=PLOT_HEIGHT + 20 + bottom)  # same keys, in the same order
    layout["margin"] = dict(shared["margin"], b=bottom)
    layout["showlegend"] = bool(rows)
    layout["xaxis"], layout["yaxis"] = x_axis, y_axis
    return layout


def date_axis(x: Iterable[str], title: str = "run start (UTC)") -> dict[str, Any]:
    """A date axis that reads well for one run and for a thousand: a single instant gets a day
    either side (plotly would zoom to milliseconds), and ticks are dates, never fractions."""
    axis: dict[str, Any] = dict(title=dict(text=title), type="date", automargin=True)
    # Each distinct instant once: a chart's series share their runs' dates.
    moments = [datetime.fromisoformat(value) for value in set(x)]
    if not moments:
        return axis
    first, last = min(moments), max(moments)
    if first == last:  # one instant: its day, with a day either side
        axis.update(range=[(first - timedelta(days=1)).isoformat(),
                           (first + timedelta(days=1)).isoformat()],
                    dtick=86_400_000, tickformat="%Y-%m-%d")
    elif last - first < timedelta(hours=1):  # minutes apart: some room either side
        pad = max((last - first) / 5, timedelta(minutes=5))
        axis["range"] = [(first - pad).isoformat(), (last + pad).isoformat()]
    elif last - first > timedelta(days=45):  # a long history: the recent part a click away
        # The buttons count back from the axis' end: it ends just after the newest run.
        axis["range"] = [(first - (last - first) / 50).isoformat(),
                         (last + timedelta(hours=12)).isoformat()]
        axis["rangeselector"] = dict(buttons=[
            dict(count=7, label="week", step="day", stepmode="backward"),
            dict(count=1, label="month", step="month", stepmode="backward"),
            dict(count=1, label="year", step="year", stepmode="backward"),
            dict(label="all", step="all")])
    return axis


def _rgba(hex_color: str, alpha: float) -> str:
    red, green, blue = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha})"


# What JSON may not hold inside an inline <script> as it is: plotly.io's own escapes.
_SCRIPT_SAFE = ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"/", b"\\u002f"),
                ("\u2028".encode(), b"\\u2028"), ("\u2029".encode(), b"\\u2029"))
_CONFIG_JSON = json.dumps(CONFIG)


def _script_json(value: Any) -> str:
    """JSON safe inside an inline script. orjson writes NaN as null in one pass (plotly's json
    encoder wrote the figure twice to do that: most of a long trend's chart time)."""
    data = orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY)
    for unsafe, safe in _SCRIPT_SAFE:
        data = data.replace(unsafe, safe)
    return data.decode()


def _fragment(traces: list[dict[str, Any]] | dict[str, Any], layout: dict[str, Any],
              div_id: str, draw: str = "Plotly.newPlot") -> str:
    """The plot's div and the inline script that draws it once the page's scripts have run:
    plotly.js (and assets/tidemark.js) are loaded at the end of <body> by MkDocs'
    extra_javascript, i.e. after this inline script would otherwise run. `draw`: the function
    given the div's id, `traces`, the layout and the config (tidemarkTrend: a trend's data)."""
    return (f'<div><div id="{div_id}" class="plotly-graph-div" '
            f'style="height:{layout["height"]}px; width:100%;"></div>'
            '<script type="text/javascript">window.addEventListener("DOMContentLoaded", '
            f'function () {{{draw}("{div_id}", {_script_json(traces)}, '
            f'{_script_json(layout)}, {_CONFIG_JSON});}});</script></div>')


# Pure: a run id is escaped once per build, not once per series that ran in it.
_escaped = functools.lru_cache(maxsize=1 << 16)(html.escape)


class ChartRuns:
    """The runs a chart's points come from, each once: (run id, engine version, its page's
    href, the point's x: the run's start), escaped; and the anchors on those pages. A point
    names its run and anchor by position, where the figure's customdata held all of them, and
    its min and max again, for every point (5 of a long history's 11 MB workload page); its x
    is its run's (every series of a workload page repeated the same dates: 11 of 36 MB).

    A page of many charts over the same runs (the dashboard's small trends, the fleet's) keeps
    one table for all of them: made with a `name`, its charts refer to it by that name and
    `script()` defines it once on the page (a 10,000-run table is 1 MB; the fleet page had
    twelve)."""

    def __init__(self, name: str = "") -> None:
        self.name = name
        self._runs: dict[tuple[str, str, str, str], int] = {}
        self._anchors: dict[str, int] = {}

    def positions(self, series: dict[str, Any]) -> tuple[list[int], list[int]]:
        # Comprehensions over the columns: a loop over the points with two appends each was a
        # third of a 10,000-run build's trend charts.
        runs, anchors = self._runs, self._anchors
        return ([runs.setdefault(key, len(runs)) for key in zip(
                    series["run_ids"], series["versions"], series["pages"], series["x"])],
                [anchors.setdefault(anchor, len(anchors)) for anchor in series["anchors"]])

    def tables(self) -> dict[str, Any]:
        """What a chart's data holds of its runs: the tables, or the shared table's name."""
        if self.name:
            return {"table": self.name}
        return self._tables()

    def _tables(self) -> dict[str, list[Any]]:
        return {"runs": [[_escaped(run), _escaped(version), page, x]
                         for run, version, page, x in self._runs],
                "anchors": list(self._anchors)}

    def script(self) -> str:
        """The shared table, defined for the page's charts (inline: it runs as the page is
        read, before the charts are drawn on DOMContentLoaded)."""
        return ('<script type="text/javascript">(window.tidemarkRuns = window.tidemarkRuns || '
                f'{{}})[{_script_json(self.name)}] = {_script_json(self._tables())};</script>')


SIGNIFICANT_DIGITS = 6  # a chart's values: far finer than any run-to-run noise, a third of 17


def chart_values(values: Any) -> list[float | int | None]:
    """Numbers rounded to SIGNIFICANT_DIGITS for a chart's JSON (NaN and infinities: None, a
    gap), a whole one as an int (JSON without '.0': ops/s are whole at six digits). Rounded
    as an integer divided or multiplied by a power of ten, so each is the double nearest its
    decimal and is written with its few digits (the tables show every value exactly)."""
    rounded = _rounded(values)
    whole = np.isfinite(rounded) & (rounded == np.round(rounded)) & (np.abs(rounded) < 2**53)
    out = rounded.astype(object)  # Python floats, and ints where whole
    out[whole] = rounded[whole].astype(np.int64)
    out[~np.isfinite(rounded)] = None
    return out.tolist()


def _rounded(values: Any) -> np.ndarray:
    """Floats rounded to SIGNIFICANT_DIGITS (NaN and infinities kept)."""
    array = np.asarray(values, dtype="float64")
    magnitude = np.floor(np.log10(np.abs(np.where((array == 0) | ~np.isfinite(array), 1.0,
                                                      array))))
    shift = np.clip(SIGNIFICANT_DIGITS - 1 - magnitude, -300, 300).astype(np.int64)
    scale = np.power(10.0, np.abs(shift))
    with np.errstate(invalid="ignore"):
        return np.where(shift >= 0, np.round(array * scale) / scale,
                        np.round(array / scale) * scale)


def _steps(positions: list[int]) -> list[int]:
    """Each position as the step from the one before (the first from 0): a series' runs are
    mostly the next one, '1' where 10,000 runs took five digits."""
    return np.diff(np.asarray(positions, dtype=np.int64), prepend=0).tolist()


def _trend_data(series_list: list[dict[str, Any]], runs: ChartRuns | None = None
                ) -> dict[str, Any]:
    """What site/assets/tidemark.js (`tidemarkTrend`) draws a trend from: per series, a
    min–max band (two traces, filled between) under the median line, whose points' hover
    (HOVER: run id, engine version, min, max) and click (the run page, anchored) it makes
    from the chart's runs and anchors, and each point's x from its run's (`run`: each
    point's position in the runs table as a step from the point before)."""
    runs, payload = runs or ChartRuns(), []
    for index, series in enumerate(series_list):
        color = COLORS[index % len(COLORS)]
        run_at, anchor_at = runs.positions(series)
        payload.append({
            "name": html.escape(series["label"]), "key": series["key"], "color": color,
            "fill": _rgba(color, 0.18),
            "mode": "lines" if len(series["x"]) > MANY_POINTS else "lines+markers",
            "median": chart_values(series["median"]), "low": chart_values(series["low"]),
            "high": chart_values(series["high"]), "run": _steps(run_at), "anchor": anchor_at})
    return {"series": payload, "hover": HOVER, **runs.tables()}


_DRAW_TREND = "tidemarkTrend"  # site/assets/tidemark.js: a trend's traces from `_trend_data`


def _ops_axis(title: str = "ops/s (median of repetitions)") -> dict[str, Any]:
    return dict(title=dict(text=title), rangemode="tozero", automargin=True)


def trend_chart(series_list: list[dict[str, Any]], div_id: str, axis: str = "",
                runs: ChartRuns | None = None) -> str:
    """Median ops/s (or the `axis` metric) per run (x = run date) with a min–max band over
    repetitions, as a div (its runs in the page's shared `runs` table when given)."""
    x = itertools.chain.from_iterable(series["x"] for series in series_list)
    layout = _layout(date_axis(x), _ops_axis(axis) if axis else _ops_axis(),
                     [s["label"] for s in series_list])
    return _fragment(_trend_data(series_list, runs), layout, div_id, _DRAW_TREND)


def spark_chart(series: dict[str, Any], div_id: str, runs: ChartRuns | None = None) -> str:
    """A small trend of one series for the dashboard: median ops/s per run with its band."""
    x_axis = date_axis(series["x"], "")
    x_axis.pop("rangeselector", None)  # no room for buttons on a small chart
    layout = _layout(x_axis, _ops_axis("ops/s"))
    layout.update(height=200, margin=dict(l=60, r=10, t=10, b=30))
    return _fragment(_trend_data([series], runs), layout, div_id, _DRAW_TREND)


def scaling_chart(curves: list[dict[str, Any]], div_id: str) -> str:
    """Aggregate ops/s against threads per curve, with the linear-scaling line from 1 thread."""
    traces = []
    for index, item in enumerate(curves):
        color = COLORS[index % len(COLORS)]
        name = html.escape(item["label"])
        traces.append(dict(
            type="scatter", x=item["x"], y=item["y"], name=name, mode="lines+markers",
            line=dict(color=color), customdata=[[html.escape(r)] for r in item["run_ids"]],
            hovertemplate="%{x} threads<br>%{y:,.0f} ops/s<br>run %{customdata[0]}<extra></extra>"))
        if item["x"] and item["x"][0] == 1 and item["y"][0] == item["y"][0]:
            traces.append(dict(
                type="scatter", x=item["x"], y=[item["y"][0] * n for n in item["x"]],
                name=name + " linear", mode="lines", line=dict(color=color, dash="dot", width=1),
                hoverinfo="skip"))
    layout = _layout(dict(title=dict(text="threads"), dtick=1),
                     _ops_axis("aggregate ops/s (median)"), [t["name"] for t in traces])
    return _fragment(traces, layout, div_id)


def _line_chart(lines: list[dict[str, Any]], x: str, y: str, hover: str,
                x_axis: dict[str, Any], y_axis: dict[str, Any], div_id: str) -> str:
    """One line (with markers) per item, x and y from the item's `x` and `y` keys; an item may
    set `width` and `dash` (a thin line per repetition under a bold median, say)."""
    traces = [dict(type="scatter", x=item[x], y=item[y], name=html.escape(item["label"]),
                   mode=item.get("mode", "lines+markers"),
                   line=dict(color=item.get("color") or COLORS[index % len(COLORS)],
                             width=item.get("width", 2)),
                   hovertemplate=hover) for index, item in enumerate(lines)]
    return _fragment(traces, _layout(x_axis, y_axis, [item["label"] for item in lines]), div_id)


def drift_chart(series_list: list[dict[str, Any]], div_id: str) -> str:
    """Throughput per reporting interval over a sustained run, one line per item."""
    return _line_chart(series_list, "t", "qps", "t=%{x:.0f} s<br>%{y:,.0f} ops/s<extra></extra>",
                       dict(title=dict(text="seconds since start (s)")),
                       _ops_axis("ops/s in the interval"), div_id)


def log_ticks(values: list[float]) -> dict[str, Any]:
    """Ticks at the measured values of a log axis (plotly's own read '9, 100, 2 3 4 … 9')."""
    shown = sorted({v for v in values if v and v > 0 and math.isfinite(v)})
    return dict(tickvals=shown, ticktext=[f"{v:,.0f}" if v >= 1 else f"{v:g}" for v in shown])


def sweep_chart(curves: list[dict[str, Any]], x_title: str, div_id: str) -> str:
    """Throughput against a swept parameter on log-log axes (the slope is the exponent);
    `x_title` names the parameter and its unit."""
    x_values = [v for curve in curves for v in curve["x"]]
    return _line_chart(curves, "x", "y", "%{x:,}<br>%{y:,.0f} ops/s<extra></extra>",
                       dict(title=dict(text=html.escape(x_title) + ", log scale"), type="log",
                            **log_ticks(x_values)),
                       dict(title=dict(text="ops/s (median), log scale"), type="log",
                            automargin=True), div_id)


def power_chart(lines: list[dict[str, Any]], div_id: str) -> str:
    """Share of trials called slower against the planted cost, one line per A/B design."""
    return _line_chart(lines, "x", "y", "planted +%{x}%<br>called slower in %{y:.0f}% of trials"
                       "<extra></extra>", dict(title=dict(text="planted cost per read (%)")),
                       dict(title=dict(text="trials called slower (%)"), range=[0, 105]), div_id)


def commit_chart(points: list[dict[str, Any]], div_id: str) -> str:
    """A bisect's judged commits in commit order: each one's paired change against the good
    commit with its interval, coloured by its state (good, bad, skip); hover names the commit."""
    colors = {"good": COLORS[2], "bad": COLORS[1], "skip": COLORS[6]}
    traces = []
    for state in ("good", "bad", "skip"):
        mine = [p for p in points if p["state"] == state]
        if not mine:
            continue
        traces.append(dict(
            type="scatter", mode="markers", name=state, x=[p["number"] for p in mine],
            y=[p["change"] for p in mine], marker=dict(color=colors[state], size=10),
            error_y=dict(type="data", symmetric=False, array=[p["up"] for p in mine],
                         arrayminus=[p["down"] for p in mine]),
            text=[html.escape(p["label"]) for p in mine],
            hovertemplate="%{text}<br>%{y:+.1f}% against the good commit<extra></extra>"))
    layout = _layout(dict(title=dict(text="commit (in commit order)"), dtick=1),
                     dict(title=dict(text="change against the good commit (%)"),
                          zeroline=True, automargin=True), [t["name"] for t in traces])
    return _fragment(traces, layout, div_id)


def commit_trend_chart(lines: list[dict[str, Any]], commits: list[str], div_id: str,
                       unit: str = "ops/s", axis: str = "ops/s (median of repetitions)") -> str:
    """Median ops/s (or `unit`) per run against its commit, the commits in commit order on a
    category axis (each once, even where a series skipped one); a point's hover names commit
    and run."""
    traces = [dict(type="scatter", mode="lines+markers", x=[html.escape(c) for c in item["x"]],
                   y=item["y"], name=html.escape(item["label"]),
                   text=[html.escape(r) for r in item["runs"]],
                   line=dict(color=COLORS[index % len(COLORS)], width=2),
                   hovertemplate=f"%{{x}}<br>run %{{text}}<br>%{{y:,.0f}} {unit}<extra></extra>")
              for index, item in enumerate(lines)]
    x_axis = dict(title=dict(text="commit (in commit order)"), type="category",
                  categoryorder="array", categoryarray=[html.escape(c) for c in commits],
                  automargin=True, tickangle=-30)
    return _fragment(traces, _layout(x_axis, _ops_axis(axis), [t["name"] for t in traces]),
                     div_id)
