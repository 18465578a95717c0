"""Plotly figures → HTML fragments for the pages (plotly.js itself is served once, offline)."""
from __future__ import annotations

import html
from typing import Any

import plotly.graph_objects as go
import plotly.io

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
HOVER = ("%{customdata[0]}<br>%{customdata[1]}<br>%{x|%Y-%m-%d %H:%M}<br>"
         "median %{y:,.0f} ops/s<br>min–max %{customdata[2]}<extra></extra>")


def _rgba(hex_color: str, alpha: float) -> str:
    red, green, blue = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha})"


def _series_traces(series: dict[str, Any], color: str) -> list[dict[str, Any]]:
    """A min–max band (two traces, filled between) under the median line, as plain trace dicts:
    plotly's validation of go.Scatter took most of a long history's build (see trend_chart)."""
    # Plotly renders some HTML in names and hover text: escape what came from the database.
    name = html.escape(series["label"])
    band = dict(type="scatter", x=series["x"], mode="lines", line=dict(width=0),
                legendgroup=series["key"], showlegend=False, hoverinfo="skip")
    custom = [[html.escape(run_id), html.escape(version), f"{low:,.0f}–{high:,.0f}"]
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


def trend_chart(series_list: list[dict[str, Any]], div_id: str) -> str:
    """Median ops/s per run (x = run date) with a min–max band over repetitions, as a div.

    Only the layout goes through plotly's validation; the traces (every run of every series,
    120,000 points a chart on a long history) are written as they are built."""
    figure = go.Figure()
    figure.update_layout(template="simple_white", height=460, hovermode="closest",
                         margin=dict(l=60, r=20, t=20, b=60),
                         yaxis=dict(title="ops/s (median of repetitions)", rangemode="tozero"),
                         xaxis=dict(title="run start (UTC)"),
                         legend=dict(orientation="h", yanchor="top", y=-0.22))
    spec = figure.to_dict()
    spec["data"] = [trace for index, series in enumerate(series_list)
                    for trace in _series_traces(series, COLORS[index % len(COLORS)])]
    fragment = plotly.io.to_html(spec, include_plotlyjs=False, full_html=False, div_id=div_id,
                                 validate=False, config={"displaylogo": False, "responsive": True})
    return _defer_until_loaded(fragment)


def _fragment(figure: go.Figure, div_id: str) -> str:
    fragment = figure.to_html(include_plotlyjs=False, full_html=False, div_id=div_id,
                              config={"displaylogo": False, "responsive": True})
    return _defer_until_loaded(fragment)


def _layout(figure: go.Figure, x_title: str, y_title: str, **axes: Any) -> None:
    figure.update_layout(template="simple_white", height=420, hovermode="closest",
                         margin=dict(l=60, r=20, t=20, b=60),
                         xaxis=dict(title=x_title, **axes.get("xaxis", {})),
                         yaxis=dict(title=y_title, **axes.get("yaxis", {})),
                         legend=dict(orientation="h", yanchor="top", y=-0.22))


def scaling_chart(curves: list[dict[str, Any]], div_id: str) -> str:
    """Aggregate ops/s against threads per curve, with the linear-scaling line from 1 thread."""
    figure = go.Figure()
    for index, item in enumerate(curves):
        color = COLORS[index % len(COLORS)]
        name = html.escape(item["label"])
        custom = [[html.escape(run_id)] for run_id in item["run_ids"]]
        figure.add_trace(go.Scatter(
            x=item["x"], y=item["y"], name=name, mode="lines+markers", line=dict(color=color),
            customdata=custom,
            hovertemplate="%{x} threads<br>%{y:,.0f} ops/s<br>run %{customdata[0]}<extra></extra>"))
        if item["x"] and item["x"][0] == 1 and item["y"][0] == item["y"][0]:
            figure.add_trace(go.Scatter(
                x=item["x"], y=[item["y"][0] * n for n in item["x"]], name=name + " linear",
                mode="lines", line=dict(color=color, dash="dot", width=1), hoverinfo="skip"))
    _layout(figure, "threads", "aggregate ops/s (median)",
            xaxis=dict(dtick=1), yaxis=dict(rangemode="tozero"))
    return _fragment(figure, div_id)


def drift_chart(series_list: list[dict[str, Any]], div_id: str) -> str:
    """Throughput per reporting interval over a sustained run, one line per invocation."""
    figure = go.Figure()
    for index, item in enumerate(series_list):
        figure.add_trace(go.Scatter(
            x=item["t"], y=item["qps"], name=html.escape(item["label"]), mode="lines+markers",
            line=dict(color=COLORS[index % len(COLORS)]),
            hovertemplate="t=%{x:.0f} s<br>%{y:,.0f} ops/s<extra></extra>"))
    _layout(figure, "seconds since start", "ops/s in the interval", yaxis=dict(rangemode="tozero"))
    return _fragment(figure, div_id)


def sweep_chart(curves: list[dict[str, Any]], x_title: str, div_id: str) -> str:
    """Throughput against a swept parameter on log-log axes (the slope is the exponent)."""
    figure = go.Figure()
    for index, item in enumerate(curves):
        figure.add_trace(go.Scatter(
            x=item["x"], y=item["y"], name=html.escape(item["label"]), mode="lines+markers",
            line=dict(color=COLORS[index % len(COLORS)]),
            hovertemplate="%{x:,}<br>%{y:,.0f} ops/s<extra></extra>"))
    _layout(figure, x_title + " (log)", "ops/s (median, log)",
            xaxis=dict(type="log"), yaxis=dict(type="log"))
    return _fragment(figure, div_id)
