"""Plotly figures → HTML fragments for the pages (plotly.js itself is served once, offline).

Figures are built as plain dicts: only the shared layout goes through plotly's validation, once
per process (validating a template per chart, and every point of every trace, was most of the
chart time on a long history). Names and hover text from the database are escaped here, because
plotly renders some HTML in them.
"""
from __future__ import annotations

import copy
import functools
import html
from typing import Any

import plotly.graph_objects as go
import plotly.io

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
HOVER = ("%{customdata[0]}<br>%{customdata[1]}<br>%{x|%Y-%m-%d %H:%M}<br>"
         "median %{y:,.0f} ops/s<br>min–max %{customdata[2]}<extra></extra>")
CONFIG = {"displaylogo": False, "responsive": True}


@functools.cache
def _validated_layout(height: int) -> dict[str, Any]:
    figure = go.Figure()
    figure.update_layout(template="simple_white", height=height, hovermode="closest",
                         margin=dict(l=60, r=20, t=20, b=60),
                         legend=dict(orientation="h", yanchor="top", y=-0.22))
    return figure.to_dict()["layout"]


def _layout(x_axis: dict[str, Any], y_axis: dict[str, Any], height: int = 420) -> dict[str, Any]:
    layout = copy.deepcopy(_validated_layout(height))
    layout["xaxis"], layout["yaxis"] = x_axis, y_axis
    return layout


def _rgba(hex_color: str, alpha: float) -> str:
    red, green, blue = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha})"


def _defer_until_loaded(fragment: str) -> str:
    """Run the inline plot script after the page's scripts (plotly.js is loaded at the end of
    <body> by MkDocs' extra_javascript, i.e. after this inline script would otherwise run)."""
    opening = '<script type="text/javascript">'
    if fragment.count(opening) != 1:
        raise ValueError("unexpected plotly HTML: expected one inline script")
    fragment = fragment.replace(opening, opening + 'window.addEventListener("DOMContentLoaded", '
                                "function () {", 1)
    head, _, tail = fragment.rpartition("</script>")
    return head + "});</script>" + tail


def _fragment(traces: list[dict[str, Any]], layout: dict[str, Any], div_id: str) -> str:
    spec = {"data": traces, "layout": layout}
    fragment = plotly.io.to_html(spec, include_plotlyjs=False, full_html=False, div_id=div_id,
                                 validate=False, config=CONFIG)
    return _defer_until_loaded(fragment)


def _series_traces(series: dict[str, Any], color: str) -> list[dict[str, Any]]:
    """A min–max band (two traces, filled between) under the median line."""
    name = html.escape(series["label"])
    band = dict(type="scatter", x=series["x"], mode="lines", line=dict(width=0),
                legendgroup=series["key"], showlegend=False, hoverinfo="skip")
    escaped: dict[str, str] = {}  # run ids and versions repeat: escape each once
    custom = [[escaped.get(run_id) or escaped.setdefault(run_id, html.escape(run_id)),
               escaped.get(version) or escaped.setdefault(version, html.escape(version)),
               f"{low:,.0f}–{high:,.0f}"]
              for run_id, version, low, high in zip(series["run_ids"], series["versions"],
                                                    series["low"], series["high"])]
    return [
        dict(y=series["high"], name=name + " max", **band),
        dict(y=series["low"], name=name + " min", fill="tonexty", fillcolor=_rgba(color, 0.18),
             **band),
        dict(type="scatter", x=series["x"], y=series["median"], name=name, mode="lines+markers",
             line=dict(color=color), legendgroup=series["key"], customdata=custom,
             hovertemplate=HOVER),
    ]


def trend_chart(series_list: list[dict[str, Any]], div_id: str) -> str:
    """Median ops/s per run (x = run date) with a min–max band over repetitions, as a div."""
    traces = [trace for index, series in enumerate(series_list)
              for trace in _series_traces(series, COLORS[index % len(COLORS)])]
    layout = _layout(dict(title=dict(text="run start (UTC)")),
                     dict(title=dict(text="ops/s (median of repetitions)"), rangemode="tozero"),
                     height=460)
    return _fragment(traces, layout, div_id)


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
                     dict(title=dict(text="aggregate ops/s (median)"), rangemode="tozero"))
    return _fragment(traces, layout, div_id)


def _line_chart(lines: list[dict[str, Any]], x: str, y: str, hover: str,
                x_axis: dict[str, Any], y_axis: dict[str, Any], div_id: str) -> str:
    """One line (with markers) per item, x and y from the item's `x` and `y` keys."""
    traces = [dict(type="scatter", x=item[x], y=item[y], name=html.escape(item["label"]),
                   mode="lines+markers", line=dict(color=COLORS[index % len(COLORS)]),
                   hovertemplate=hover) for index, item in enumerate(lines)]
    return _fragment(traces, _layout(x_axis, y_axis), div_id)


def drift_chart(series_list: list[dict[str, Any]], div_id: str) -> str:
    """Throughput per reporting interval over a sustained run, one line per invocation."""
    return _line_chart(series_list, "t", "qps", "t=%{x:.0f} s<br>%{y:,.0f} ops/s<extra></extra>",
                       dict(title=dict(text="seconds since start")),
                       dict(title=dict(text="ops/s in the interval"), rangemode="tozero"), div_id)


def sweep_chart(curves: list[dict[str, Any]], x_title: str, div_id: str) -> str:
    """Throughput against a swept parameter on log-log axes (the slope is the exponent)."""
    return _line_chart(curves, "x", "y", "%{x:,}<br>%{y:,.0f} ops/s<extra></extra>",
                       dict(title=dict(text=html.escape(x_title) + " (log)"), type="log"),
                       dict(title=dict(text="ops/s (median, log)"), type="log"), div_id)


def power_chart(lines: list[dict[str, Any]], div_id: str) -> str:
    """Share of trials called slower against the planted cost, one line per A/B design."""
    return _line_chart(lines, "x", "y", "planted +%{x}%<br>called slower in %{y:.0f}% of trials"
                       "<extra></extra>", dict(title=dict(text="planted cost per read (%)")),
                       dict(title=dict(text="trials called slower (%)"), range=[0, 105]), div_id)
