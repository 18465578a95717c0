"""Pure page builders and formatting: Δ%, spread/CV, the escaping `cell` filter, trend rows."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from markupsafe import Markup

from reports.pages import charts
from reports.pages.format import Link, cell, cpu_ranges, latency, nav_title, num, slug
from reports.pages.labels import params_text
from reports.pages.shared import cv_pct, delta_pct, spread_text
from reports.build.render import environment
from reports.pages.run_page import plain
from reports.pages.workload_page import trend_table, workload_page

NAN = float("nan")


def assert_close(result: float | None, expected: float | None) -> None:
    if expected is None:
        assert result is None
    else:
        assert result == pytest.approx(expected)


@pytest.mark.parametrize("new, old, expected", [
    (110.0, 100.0, 10.0),
    (90.0, 100.0, -10.0),
    (100.0, 100.0, 0.0),
    (5.0, 0.0, None),  # no change in percent from zero
    (NAN, 100.0, None),
    (100.0, None, None),
])
def test_delta_pct(new, old, expected):
    assert_close(delta_pct(new, old), expected)


@pytest.mark.parametrize("std, mean, expected", [
    (10.0, 200.0, 5.0),
    (0.0, 200.0, 0.0),
    (NAN, 200.0, None),  # one repetition: DuckDB's stddev_samp is NULL
    (1.0, 0.0, None),
])
def test_cv_pct(std, mean, expected):
    assert_close(cv_pct(std, mean), expected)


def test_spread_and_number_formats():
    assert spread_text(250000.4, 280000.6) == "250,000–280,001"
    assert spread_text(NAN, 1.0) == "–"
    assert num(1234567.891) == "1,234,568" and num(39.84, 1) == "39.8" and num(None) == "–"
    assert latency(2.781) == "2.78" and latency(1234.5) == "1,234" and latency(NAN) == "–"
    assert params_text({"num": 100000, "value_size": 100, "key_size": 16}) == \
        "num=100,000 value_size=100"
    assert params_text({}) == "–"
    assert cpu_ranges([0, 1, 2, 5, 7, 8]) == "0-2,5,7-8" and cpu_ranges([]) == "–"


@pytest.mark.parametrize("value, expected", [
    ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
    ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"),
    ("a|b", "a&#124;b"),
    ("line one\nline two", "line one<br>line two"),
    ("*bold* _em_ `code` [x](y)", "&#42;bold&#42; &#95;em&#95; &#96;code&#96; &#91;x&#93;(y)"),
    ('"quoted" & more', "&#34;quoted&#34; &amp; more"),
    (None, "–"),
    ("", "–"),
    (NAN, "–"),
    (42, "42"),
])
def test_cell_escapes_html_and_markdown(value, expected):
    out = cell(value)
    assert isinstance(out, Markup) and str(out) == expected


def test_cell_link_escapes_text_and_encodes_href():
    out = str(cell(Link("<b>|x", "../runs/a b.md#inv-0003")))
    assert out == "[&lt;b&gt;&#124;x](../runs/a%20b.md#inv-0003)"


def test_templates_autoescape_and_cell_filter():
    env = environment()
    rendered = env.from_string("{{ name }} | {{ name|cell }}").render(name="<i>|")
    assert rendered == "&lt;i&gt;| | &lt;i&gt;&#124;"


def test_slug_and_nav_title_are_plain_and_distinct():
    assert slug("readrandom") == "readrandom"
    hostile = slug("<script>alert(1)</script>")
    assert hostile.startswith("script-alert-1-script-") and "<" not in hostile
    assert slug("a/b") != slug("a:b")
    assert nav_title("readrandom") == "readrandom"
    assert nav_title("<script>x</script>") == slug("<script>x</script>")


def _point(run_id: str, day: int, ops: float, threads: int = 2, **extra) -> dict:
    row = {"run_id": run_id, "series_key": f"s{threads}", "workload": "readrandom",
           "benchmark": "readrandom", "threads": threads, "params": {"num": 1000},
           "cache_state": "warm", "n": 3, "n_ok": 3, "first_seq": 3, "ops_median": ops,
           "ops_min": ops * 0.9, "ops_max": ops * 1.1, "ops_mean": ops, "ops_std": ops * 0.05,
           "p50_median": 2.5, "p99_median": 9.0, "mb_median": NAN,
           "started_at": pd.Timestamp(f"2026-01-{day:02d} 10:00", tz="UTC"),
           "engine": "leveldb", "engine_version": "1.23", "build_variant": "release"}
    row.update(extra)
    return row


def points_frame() -> pd.DataFrame:
    return pd.DataFrame([
        _point("r1", 1, 100.0), _point("r2", 2, 110.0), _point("r3", 3, 99.0),
        _point("r1", 1, 50.0, threads=1), _point("r3", 3, 60.0, threads=1),
    ])


def test_trend_table_newest_values_first_with_the_change_from_the_run_before():
    table = trend_table(points_frame())
    assert table.columns[:3] == ("Series", "Newest", "Previous") and table.columns[-1] == "Runs"
    by_threads = {row[0]: row[1:] for row in table.rows}
    two = by_threads["2 thr · warm"]
    assert [c.text for c in two[:3]] == ["99 (-10.0%)", "110 (+10.0%)", "100"]
    assert two[0].href == "../runs/r3.md#inv-0003" and two[3] is None
    assert two[-1] == "3"  # runs of the series (the chart has their dates)
    one = by_threads["1 thr · warm"]  # not run in r2: r3 compares with r1
    assert [c.text for c in one[:2]] == ["60 (+20.0%)", "50"]


def test_workload_page_fewer_columns_and_rows_named_by_what_differs():
    page = workload_page("readrandom", points_frame())
    assert page["latest_run"].href == "../runs/r3.md"
    table = page["latest"]
    # No MB/s (LevelDB readrandom prints none); the spread is on the run page.
    assert table.columns == ("Series", "ops/s", "Δ ops/s", "Verdict", "p50 µs", "p99 µs", "CV",
                             "ok/n")
    rows = {row[0]: row for row in table.rows}
    assert rows["2 thr · warm"][1].text == "99" and rows["2 thr · warm"][6].text == "5.0%"
    assert rows["2 thr · warm"][2] is None and rows["2 thr · warm"][3] == "no earlier run"
    assert page["shared"] == "leveldb · num=1,000 · release"
    series = {s["key"]: s for s in page["series"]}
    assert series["s2"]["median"].tolist() == [100.0, 110.0, 99.0]
    assert (series["s2"]["pages"][-1], series["s2"]["anchors"][-1]) == \
        ("../runs/r3.html", "inv-0003")  # a point opens its run
    harness = points_frame().assign(workload="micro_get",
                                    benchmark=["Get/hit", "Get/miss", "Get/hit", "Get/hit", "MultiGet"])
    page = workload_page("micro_get", harness)
    labels = sorted(row[0] for row in page["latest"].rows)
    assert labels == ["Get/hit · 2 thr · warm", "MultiGet · 1 thr · warm"]
    markdown = environment().get_template("workload.md.j2").render(page=page, chart=False)
    assert "| Get/hit · 2 thr · warm |" in markdown


def test_plain_words_for_stored_values():
    assert plain([{"name": "db_bench", "pid": 7, "cpu_pct": 4.8}]) == "name db_bench, pid 7, cpu pct 4.8"
    assert plain({"num_cpus": 2, "cpu_scaling_enabled": False}) == "CPUs 2, CPU frequency scaling no"
    assert plain([0.5, 1.0, 1.5]) == "0.5 1 1.5" and plain(None) == "–"


def test_trend_chart_is_a_div_whose_script_waits_for_plotly():
    series = [{"label": "<b>x</b>", "key": "s", "x": ["2026-01-01T10:00:00+00:00"],
               "median": [1.0], "low": [0.5], "high": [1.5], "run_ids": ["r1"],
               "versions": ["leveldb 1.23"], "pages": ["../runs/r1.html"],
               "anchors": ["inv-0001"]}]
    html = charts.trend_chart(series, "trend-0")
    assert html.startswith("<div>") and 'id="trend-0"' in html and "plotly-graph-div" in html
    assert "<script src" not in html  # plotly.js is served once from the site's assets
    assert 'window.addEventListener("DOMContentLoaded"' in html
    assert "<b>x</b>" not in html and r"..\u002fruns\u002fr1.html" in html and "inv-0001" in html


def test_trend_chart_script_holds_the_figure_as_json():
    series = [{"label": "a</script>", "key": "s",
               "x": ["2026-01-01T10:00:00+00:00", "2026-01-02T10:00:00+00:00"],
               "median": [1.0, float("nan")], "low": [0.5, 0.25], "high": [1.5, 2.0000004],
               "run_ids": ["r1", "r<2>"], "versions": ["v1", "v2"], "pages": ["h1", "h2"],
               "anchors": ["inv-0001", ""]}]
    html = charts.trend_chart(series, "trend-0")
    call = html.split('tidemarkTrend("trend-0", ', 1)[1]
    decoder = json.JSONDecoder()
    data, end = decoder.raw_decode(call)
    layout, _ = decoder.raw_decode(call, end + 2)
    assert "</script>" not in call.rsplit("</script>", 1)[0]  # only the script's own end
    (line,) = data["series"]
    assert line["median"] == [1.0, None]  # NaN is null: JSON has no NaN
    assert line["name"] == "a&lt;/script&gt;" and line["low"] == [0.5, 0.25]
    assert line["high"] == [1.5, 2.0]  # six significant digits: a chart's, not a table's
    # Each point's run (escaped), version, page and x, and its anchor, as tidemark.js reads them.
    assert line["run"] == [0, 1]  # each a step from the point before
    assert [data["runs"][at] for at in line["run"]] == [
        ["r1", "v1", "h1", "2026-01-01T10:00:00+00:00"],
        ["r&lt;2&gt;", "v2", "h2", "2026-01-02T10:00:00+00:00"]]
    assert "x" not in line
    assert [data["anchors"][at] for at in line["anchor"]] == ["inv-0001", ""]
    assert "%{customdata[2]:,.0f}–%{customdata[3]:,.0f}" in data["hover"]
    assert layout["height"] == charts.PLOT_HEIGHT + 20 + 60 + charts.LEGEND_ROW + 10
    assert f'style="height:{layout["height"]}px; width:100%;"' in html


def test_charts_of_one_page_share_one_table_of_runs():
    def series(run: str, x: str) -> dict:
        return {"label": run, "key": run, "x": [x], "median": [1.0], "low": [1.0], "high": [1.0],
                "run_ids": [run], "versions": ["v"], "pages": [f"{run}.html"], "anchors": ["inv-0001"]}

    runs = charts.ChartRuns("page")
    drawn = [charts.spark_chart(series(run, x), f"spark-{i}", runs) for i, (run, x) in
             enumerate([("r1", "2026-01-01"), ("r2", "2026-01-02"), ("r1", "2026-01-01")])]
    decoder = json.JSONDecoder()
    datas = [decoder.raw_decode(html.split(f'tidemarkTrend("spark-{i}", ', 1)[1])[0]
             for i, html in enumerate(drawn)]
    assert all(data["table"] == "page" and "runs" not in data for data in datas)
    assert [data["series"][0]["run"] for data in datas] == [[0], [1], [0]]  # r1 listed once
    script = runs.script()
    table = decoder.raw_decode(script.split('["page"] = ', 1)[1])[0]
    assert table == {"runs": [["r1", "v", "r1.html", "2026-01-01"], ["r2", "v", "r2.html",
                                                                     "2026-01-02"]],
                     "anchors": ["inv-0001"]}


@pytest.mark.parametrize("value, shown", [
    (102367.2470323971, "102367"), (3.2512345678, "3.25123"), (0.000123456789, "0.000123457"),
    (1234567.891, "1234570"), (-5.55555555, "-5.55556"), (0.0, "0"), (2.5, "2.5"),
    (float("nan"), "null"), (float("inf"), "null")])
def test_chart_values_keep_six_significant_digits_and_are_written_with_them(value, shown):
    import orjson

    written = orjson.dumps(charts.chart_values([value]))
    assert written.decode() == f"[{shown}]"


def _invocations(**overrides):
    import pandas as pd

    row = {"invocation_id": "i1", "run_id": "r1", "seq": 2, "workload": "<script>alert(1)</script>",
           "benchmark": "readrandom", "phase": "measured", "repetition": 1, "threads": 2,
           "status": "failed", "wall_s": 1.5, "max_rss_kb": pd.NA, "ops": float("nan"),
           "p50": 3.25, "p99": 1234.0, "residency": 99.5, "error": "<img src=x onerror=alert(1)>",
           "notes": ["a & b"], "conditions": {"cpus_allowed": [0, 1]}, "command": ["db_bench", "--x=1 2"],
           "log_path": "/tmp/log"}
    row.update(overrides)
    frame = pd.DataFrame([row])
    frame["max_rss_kb"] = frame["max_rss_kb"].astype("Int64")
    return frame


def test_invocation_rows_escape_text_format_numbers_and_keep_permalinks():
    from reports.pages.run_tables import COMPACT_HEADER, compact_rows_json, detailed_rows

    # An older run's rows, as JSON for the page's script: cells as text, unescaped (the script
    # sets them as text), numbers as the detailed rows show them, no detail line.
    compact = json.loads(compact_rows_json(_invocations())["r1"])
    assert compact["header"] == list(COMPACT_HEADER) and compact["linked"][0] is True
    (row,) = compact["rows"]
    assert row[:3] == ["inv-0002", 1, "2"] and row[3] == "<script>alert(1)</script>"
    cell = dict(zip(COMPACT_HEADER, row[2:]))
    assert (cell["ops/s"], cell["p50 µs"], cell["p99 µs"]) == ("–", "3.25", "1,234")  # NaN, µs rules
    assert "db_bench" not in json.dumps(compact)  # no detail line on older runs' pages
    quoted = compact_rows_json(_invocations(workload='a "b" \\ c\td'))["r1"]
    assert json.loads(quoted)["rows"][0][3] == 'a "b" \\ c\td'  # escaped where it must be
    detailed = str(detailed_rows(_invocations(), {"i1": "last <line>"})["r1"])
    assert "&lt;img src=x onerror=alert(1)&gt;" in detailed and "<img" not in detailed
    assert "<td>0-1</td>" in detailed and "a &amp; b" in detailed
    assert "db_bench &#39;--x=1 2&#39;" in detailed and "last &lt;line&gt;" in detailed
    assert 'class="tm-detail tm-failed"' in detailed


def test_slots_fill_built_pages_and_refuse_a_page_without_the_placeholder(tmp_path: Path):
    from reports.build import slots

    site, fragments = tmp_path / "site", tmp_path / "fragments"
    (site / "runs").mkdir(parents=True)
    (site / "runs" / "r1.html").write_text(f"<h2>A</h2>{slots.placeholder('results')}<h2>B</h2>")
    slots.save(fragments, "runs/r1", "results", "<table>1</table>")
    slots.fill(site, fragments)
    assert (site / "runs" / "r1.html").read_text() == "<h2>A</h2><table>1</table><h2>B</h2>"
    (site / "runs" / "r2.html").write_text("<h2>A</h2>")
    slots.save(tmp_path / "more", "runs/r2", "results", "<table>2</table>")
    with pytest.raises(RuntimeError, match="r2.html has no slot 'results'"):
        slots.fill(site, tmp_path / "more")


def test_slots_put_in_after_the_csv_step_what_it_passes_over(tmp_path: Path):
    """A chart fragment (no table, no heading) goes into its page after the CSV step, as its
    bytes: the pages and CSV files are those of filling every slot before the step."""
    from reports.build import slots
    from reports.build.table_csv import add_csv_downloads, passes_over

    table = ("<table>\n<thead>\n<tr>\n<th>A</th>\n</tr>\n</thead>\n"
             "<tbody>\n<tr>\n<td>1</td>\n</tr>\n</tbody>\n</table>")
    fragments = tmp_path / "fragments"
    for name, html in (("table-1", table), ("chart-2", '<div class="tm-chart">{"y":[1,2]}</div>'),
                       ("chart-3", "<div>line\r\nend</div>"), ("table-4", table)):
        (fragments / "p").mkdir(parents=True, exist_ok=True)
        (fragments / "p" / f"{name}.html").write_bytes(html.encode())
    page = "".join(f"<h2 id=\"h{i}\">H</h2>{slots.placeholder(name)}"
                   for i, name in enumerate(("chart-2", "table-1", "chart-3", "table-4")))
    built = {}
    for how, over in (("after", passes_over), ("before", lambda fragment: False)):
        site = tmp_path / how
        site.mkdir()
        (site / "p.html").write_text(page)
        slots.fill(site, fragments, slots.Finish(
            lambda path, html, site=site: add_csv_downloads(path, site, html), over))
        built[how] = {path.name: path.read_bytes() for path in site.iterdir()}
    assert built["after"] == built["before"] and len(built["after"]) == 3
    assert b'{"y":[1,2]}' in built["after"]["p.html"] and b"line\nend" in built["after"]["p.html"]
    assert passes_over(b'<div>{"y":[1]}</div>') and not passes_over(table.encode())


def _history_runs() -> pd.DataFrame:
    return pd.DataFrame([{"run_id": r, "started_at": pd.Timestamp(f"2026-01-0{day} 10:00", tz="UTC"),
                          "engine": "leveldb", "engine_version": "1.23", "build_variant": "release",
                          "compiler_version": "gcc 12.2", "hostname": "vm",
                          "machine_fingerprint": "ab" * 32} for day, r in enumerate(("r1", "r2", "r3"), 1)])


def test_history_compares_first_and_last_column_and_a_single_run_has_no_delta():
    from reports.pages.history_pages import history_page

    table = history_page(_history_runs(), points_frame(), set()).sections[0].tables[0]
    assert table.columns[-1] == "Δ% column 1 → 3" and len(table.columns) == 5
    two = next(row for row in table.rows if "2 thr" in row[0])
    assert [c.text for c in two[1:4]] == ["100", "110", "99"]
    assert two[-1].text == "-1.0%" and two[-1].href == "runs/r3.md#inv-0003"
    one = next(row for row in table.rows if "1 thr" in row[0])
    assert one[2] is None and one[-1].text == "+20.0%"
    only = points_frame()[points_frame()["run_id"] == "r1"]
    section = history_page(_history_runs(), only, set()).sections[0]
    assert section.tables[0].columns[-1].startswith("2026-01-01")  # no Δ% of a run with itself
    assert all(len(row) == 2 for row in section.tables[0].rows)
    assert "tm-delta-picker" not in section.text


def test_invocation_rows_show_interference_beside_the_numbers_it_may_have_moved():
    from reports.pages.shared import interference_cell
    from reports.pages.run_tables import HEADER, compact_rows_json, detailed_rows

    measured = {"cpus": [1], "other_cpu_s": 0.12, "other_pct": 12.5, "steal_pct": 0.0,
                "involuntary_switches": 40, "load1_before": 1.5, "load1_after": 1.75,
                "flagged": True, "attempt": 2, "kept": True}
    shielded = {"mode": "own", "engine_in_bench_cpuset": True, "bench_cpus": "1",
                "rest_tasks_on_bench_cpus": 0}
    frame = _invocations(interference=12.5, status="ok",
                         conditions={"cpus_allowed": [1], "interference": measured, "shield": shielded})
    assert HEADER[-1] == "Interference %"
    detailed = str(detailed_rows(frame, {})["r1"])
    assert '<td><a href="#inv-0002">12.5</a></td></tr>' in detailed  # the row's last cell
    assert "⚠ other tasks 12.5% of CPUs 1 (0.12 s)" in detailed and "attempt 2, kept" in detailed
    assert "shield own: engine in bench cpuset yes (CPUs 1), 0 other task(s)" in detailed
    assert json.loads(compact_rows_json(_invocations())["r1"])["rows"][0][-1] == "–"
    assert interference_cell(pd.Series({"interference_median": 3.14, "n_interfered": 2})) == "3.1 ⚠ 2 flagged"
    assert interference_cell(pd.Series({"interference_median": None, "n_interfered": 0})) == "–"


def test_fleet_page_puts_machines_side_by_side_and_never_in_one_line():
    from reports.pages.fleet_page import fleet_page, machine_lines, with_machines

    # Two profiles on two hosts, and a third profile on host a's hardware: three machines.
    hosts = {"r1": ("fleet-a", "a" * 16), "r2": ("fleet-b", "b" * 16), "r3": ("fleet-a", "a" * 16),
             "r4": ("fleet-c", "a" * 16)}
    points = pd.DataFrame([_point(run, day, ops, machine_fingerprint=hosts[run][1],
                                  series_key=f"s-{hosts[run][1]}")
                           for run, day, ops in (("r1", 1, 100.0), ("r2", 2, 80.0),
                                                 ("r3", 3, 105.0), ("r4", 4, 90.0))])
    runs = pd.DataFrame({"run_id": list(hosts), "config": [{"machine": {"name": p}}
                                                           for p, _ in hosts.values()],
                         "binary_sha256": ["f" * 64] * 4})
    page = fleet_page(points, runs)
    machines, side_by_side, chart = page.sections
    assert "fleet-0" in chart.chart
    assert [(row[0].text, row[0].href) for row in machines.tables[0].rows] == [
        ("fleet-a · aaaaaaaa", "../machines/aaaaaaaaaaaa.md"),
        ("fleet-b · bbbbbbbb", "../machines/bbbbbbbbbbbb.md"),
        ("fleet-c · aaaaaaaa", "../machines/aaaaaaaaaaaa.md")]
    (row,) = side_by_side.tables[0].rows  # one series, its newest median on each machine
    assert [cell.text for cell in row[2:5]] == ["105", "80", "90"]
    assert row[2].href == "../runs/r3.md#inv-0003" and row[-1] == "2 / 1 / 1"
    # One chart line per machine: each line's runs all come from that machine.
    lines = machine_lines(with_machines(points, runs))
    assert [(line["label"], line["run_ids"].tolist()) for line in lines] == [
        ("fleet-a · aaaaaaaa", ["r1", "r3"]), ("fleet-b · bbbbbbbb", ["r2"]),
        ("fleet-c · aaaaaaaa", ["r4"])]


def test_machine_page_says_why_it_has_no_cache_tables_instead_of_showing_them_empty():
    from reports.pages.machine_pages import machine_page

    machine = pd.Series({"fingerprint": "c" * 16, "hostname": "h", "n_runs": 1, "last_state": {},
                         "facts": {"l3_kb": 32768, "ram_gib": 24}})
    runs = pd.DataFrame({"run_id": ["r1"], "started_at": [pd.Timestamp("2026-11-25", tz="UTC")],
                         "config": [{}], "status": ["ok"], "machine_state": [{}],
                         "verified": [True]})
    columns = ["workload", "cache_state", "num", "value_size", "n", "n_not_met",
               "residency_median", "data_bytes_median", "cache_procedure", "last_run_id",
               "last_seq"]
    titles = [s.title for s in machine_page(machine, runs, pd.DataFrame(columns=columns)).sections]
    assert titles[-1] == "Page-cache state" and "Cache-drop procedure" not in titles
    measured = pd.DataFrame([["readrandom", "cold", 1000, 100, 3, 0, 2.5, 8 * 2**20,
                              ["sync", "drop_caches 3"], "r1", 2]], columns=columns)
    sections = machine_page(machine, runs, measured).sections
    procedure = next(s for s in sections if s.title == "Cache-drop procedure")
    assert procedure.tables[0].rows == [["cold", "sync → drop_caches 3"]]
    assert sections[-1].title == "Residency note" and "0.25× L3" in str(sections[-1].text)
