"""Readable headline pages (pure builders): labels that tell rows apart, verdict colours and
sentences from the core, the dashboard, charts that read well with one run, pages that claim
no more than they did, caveats and notes."""
from __future__ import annotations

import pandas as pd
import pytest

from orchestrator.analysis.compare import SeriesSamples, build_report
from orchestrator.analysis.identity import SeriesIdentity
from orchestrator.analysis.noise import History
from orchestrator.analysis.stats import Thresholds
from reports.pages import charts
from reports.pages.labels import WITH_WORKLOAD, Labeler

IDENTITY = {"engine": "leveldb", "workload": "readrandom", "benchmark": "readrandom",
            "params": {"num": 1000}, "threads": 2, "cache_state": "warm",
            "build_variant": "release", "machine_fingerprint": "fp"}


def report_of(base: list[float], cand: list[float], key: str = "s2"):
    samples = [SeriesSamples(SeriesIdentity(key, IDENTITY, {}), {"ops_per_sec": values},
                             {"ops_per_sec": "higher"}) for values in (base, cand)]
    return build_report({"run_id": "r2"}, {"run_id": "r3"}, samples[:1], samples[1:],
                        ("ops_per_sec",), Thresholds(min_effect=0.05), History())


def point(run_id: str, day: int, ops: float, threads: int = 2, **extra) -> dict:
    row = {"run_id": run_id, "series_key": f"s{threads}", "workload": "readrandom",
           "benchmark": "readrandom", "threads": threads, "params": {"num": 1000},
           "cache_state": "warm", "n": 3, "n_ok": 3, "first_seq": 3, "ops_median": ops,
           "ops_min": ops * 0.9, "ops_max": ops * 1.1, "ops_mean": ops, "ops_std": ops * 0.05,
           "p50_median": 2.5, "p99_median": 9.0, "mb_median": float("nan"),
           "started_at": pd.Timestamp(f"2026-01-{day:02d} 10:00", tz="UTC"),
           "engine": "leveldb", "engine_version": "1.23", "build_variant": "release",
           "machine_fingerprint": "ab" * 32}
    row.update(extra)
    return row


def test_labels_name_only_what_differs_between_rows():
    base = {"engine": "rocksdb", "workload": "fillrandom", "benchmark": "fillrandom",
            "threads": 1, "cache_state": "warm", "build_variant": "release",
            "machine_fingerprint": "ab" * 32}
    rows = [{**base, "params": {"num": 500000, "value_size": 100, "compression": c,
                                "key_size": 16}} for c in ("none", "lz4", "zstd")]
    imported = {**base, "params": {}, "build_variant": "imported", "caveat": "imported from x",
                "machine_fingerprint": "import:lab-box"}
    labeler = Labeler.of(rows + [imported])
    assert [labeler.label(r) for r in rows] == [
        "1 thr · warm · compression=none · release", "1 thr · warm · compression=lz4 · release",
        "1 thr · warm · compression=zstd · release"]
    assert labeler.label(imported) == "1 thr · warm · imported ⚠ · on lab-box"
    assert labeler.shared == "rocksdb"  # an imported series has none of db_bench's params
    alone = Labeler.of(rows[:1])
    assert alone.label(rows[0]) == "1 thr · warm"
    assert alone.shared == "rocksdb · num=500,000 · value_size=100 · compression=none · release"
    assert Labeler.of(rows, drop=(), always=WITH_WORKLOAD).label(rows[1]).startswith(
        "fillrandom · 1 thr")


def test_the_verdict_decides_colour_and_sentence_never_the_sign():
    from reports.pages.verdict_words import sentence, verdict_css

    slower = report_of([100.0, 101, 99, 100, 100, 101], [80.0, 81, 79, 80, 80, 81]).rows[0]
    assert verdict_css(slower.comparison.verdict) == "tm-slower"
    assert sentence(slower, "run b", "run a").startswith(
        "run b is 20.0 % slower than run a (ops/s -20.0 %, p = ")
    # +3 % inside a 6 % threshold is not good news: not green.
    small = report_of([100.0, 101, 99, 100, 100, 101], [103.0, 104, 102, 103, 103, 104]).rows[0]
    assert small.comparison.change_pct > 0 and verdict_css(small.comparison.verdict) == "tm-same"
    assert "do not differ significantly" in sentence(small, "run b", "run a")


def _runs() -> pd.DataFrame:
    return pd.DataFrame([{
        "run_id": run, "started_at": pd.Timestamp(f"2026-01-0{day} 10:00", tz="UTC"),
        "engine": "leveldb", "engine_version": "1.23", "build_variant": "release",
        "hostname": "vm", "cpu_model": "Xeon", "logical_cpus": 2, "ram_gib": 23.5,
        "status": "ok", "n_ok": 5, "n_failed": 0, "n_invocations": 5, "label": "",
        "verified": True, "notes": [], "source": "run", "caveat": "",
        "overrides": ["threads=2", "db=/tmp/x.duckdb"], "tidemark_sha": "a" * 40,
        "user_notes": [], "machine_fingerprint": "ab" * 32}
        for day, run in ((3, "r3"), (2, "r2"), (1, "r1"))])


def test_dashboard_says_the_newest_run_in_one_line_and_its_verdicts_first():
    from reports.data.comparisons import Baseline, Comparison, SiteVerdicts
    from reports.pages.dashboard import home_page

    frame = pd.DataFrame([point("r1", 1, 100.0), point("r2", 2, 110.0), point("r3", 3, 99.0),
                          point("r1", 1, 50.0, threads=1), point("r3", 3, 60.0, threads=1)])
    comparison = Comparison("r3", "r2", report_of([110.0, 111, 109, 110, 110, 111],
                                                  [99.0, 98, 99, 100, 99, 98]))
    verdicts = SiteVerdicts("r3", comparison, None, Baseline("label=baseline", None, "none"),
                            None, "", {"r3": comparison})
    page = home_page(_runs(), frame, verdicts)
    assert page["line"] == ("2026-01-03 10:00 UTC · leveldb 1.23 release · vm (Xeon, 2 CPUs, "
                            "23.5 GiB) · ok: 5 of 5 invocations ok")
    (line,) = page["verdicts"]["lines"]
    assert line.css == "tm-slower"
    assert line.text.startswith("readrandom · 2 thr · warm: the newest run is 10.0 % slower")
    assert page["verdicts"]["counts"] == "1 regression, 0 improvements"
    cards = page["cards"]  # the changed series first
    assert [c["title"].text for c in cards] == ["readrandom · 2 thr · warm",
                                                "readrandom · 1 thr · warm"]
    assert cards[0]["change"].css == "tm-slower" and cards[0]["title"].href.endswith(".html")
    assert (cards[0]["series"]["pages"][-1], cards[0]["series"]["anchors"][-1]) == \
        ("runs/r3.html", "inv-0003")
    # Where the run's files went is no part of what it measured.
    assert page["reproduce"] == [
        f"git checkout {'a' * 40}  # the Tidemark commit that measured it", "make setup",
        ".venv/bin/tidemark run threads=2"]


def test_a_date_axis_reads_well_with_one_run_and_with_runs_minutes_apart():
    one = charts.date_axis(["2026-01-01T10:00:00+00:00"])
    assert one["type"] == "date" and one["tickformat"] == "%Y-%m-%d"
    assert one["range"] == ["2025-12-31T10:00:00+00:00", "2026-01-02T10:00:00+00:00"]
    close = charts.date_axis(["2026-01-01T10:00:00+00:00", "2026-01-01T10:02:00+00:00"])
    assert close["range"][0] == "2026-01-01T09:55:00+00:00" and "tickformat" not in close
    assert "range" not in charts.date_axis(["2026-01-01T10:00:00+00:00",
                                            "2026-01-21T10:00:00+00:00"])
    # A long history: buttons for its recent part, counted back from just after its newest run.
    long = charts.date_axis(["2025-01-01T10:00:00+00:00", "2026-03-01T10:00:00+00:00"])
    assert long["range"][1] == "2026-03-01T22:00:00+00:00"
    assert [b["label"] for b in long["rangeselector"]["buttons"]] == ["week", "month", "year", "all"]


def test_legends_grow_the_figure_instead_of_squeezing_the_plot():
    assert charts.legend_rows([]) == 0 and charts.legend_rows(["a"]) == 1
    assert charts.legend_rows(["x" * 60] * 6) == 3  # 460 px each, two to a 1,000 px row
    few = charts._layout({}, {}, ["a", "b"])
    many = charts._layout({}, {}, ["x" * 60] * 6)
    assert many["height"] - few["height"] == 2 * charts.LEGEND_ROW
    assert charts.log_ticks([100.0, 400.0, 1000.0, 400.0])["ticktext"] == ["100", "400", "1,000"]


@pytest.mark.parametrize("xs, fitted", [([100, 400, 1000], False), ([100, 400, 1000, 4000], True),
                                        ([100, 100, 400, 1000], False)])
def test_no_exponent_is_fitted_to_fewer_than_four_points(xs, fitted):
    from reports.pages.variant_pages import fit_exponent

    k = fit_exponent(xs, [1e6 / x for x in xs])
    assert (k is not None) == fitted and (k is None or k == pytest.approx(-1.0))


def test_change_points_say_how_many_series_were_searched():
    from reports.pages.stats_pages import searched_text

    assert searched_text(0, 7, 0).startswith("None of the 7 series has the 6 runs")
    assert searched_text(2, 7, 0) == ("2 of 7 series had 6 or more runs and were searched: no "
                                      "significant step. The other 5 have too few runs to tell.")
    assert "1 significant step." in searched_text(1, 1, 1)


def test_history_columns_keep_the_older_runs_of_a_series_with_history():
    from reports.pages.history_pages import HISTORY_COLUMNS, history_columns

    # One series measured in r1 and r2, then eight one-off sweep runs, each its own series.
    rows = [point("r1", 1, 100.0), point("r2", 2, 100.0)] + \
        [point(f"s{i}", 3 + i, 100.0, series_key=f"one-off-{i}") for i in range(8)]
    chosen = history_columns(pd.DataFrame(rows))
    assert len(chosen) == HISTORY_COLUMNS and chosen[-1] == "s7"  # the newest run is there
    assert chosen[:2] == ["r1", "r2"]  # so is the history of the one series that has one


def test_sustained_windows_are_the_median_over_every_repetition():
    from reports.pages.sustained_page import drift_pct, median_windows

    windows = pd.DataFrame([{"seq": seq, "window": w, "qps_p50": value, "t_from": 5.0 * w,
                             "t_to": 5.0 * w + 4} for seq, values in
                            ((3, [100.0, 90.0]), (4, [110.0, 99.0]), (5, [120.0, 80.0]))
                            for w, value in enumerate(values)])
    series = median_windows(windows)
    assert series["p50"].tolist() == [110.0, 90.0] and series["reps"].tolist() == [3, 3]
    assert series["low"].tolist() == [100.0, 80.0] and series["high"].tolist() == [120.0, 99.0]
    assert drift_pct(series) == pytest.approx(-200 / 11)


def test_compression_variants_show_their_size_on_disk_where_it_was_recorded():
    from reports.pages.variant_pages import size_cells

    params = {"num": 500_000, "key_size": 16, "value_size": 100}  # 58 MB raw
    flushed = point("r1", 1, 100.0, data_bytes_median=30_000_000.0,
                    table_bytes_median=29_000_000.0, params=params)
    size, ratio = size_cells(flushed)
    assert size.text == "28.6" and ratio.text == "2.00×"
    in_log = point("r1", 1, 100.0, data_bytes_median=60_000_000.0, table_bytes_median=0.0,
                   params=params)
    assert size_cells(in_log)[1] == "in the log"  # the log is not compressed: no ratio
    assert size_cells(point("r1", 1, 100.0, data_bytes_median=float("nan"))) == [None, None]


def test_caveats_mark_instrumented_and_imported_runs_and_notes_keep_their_date():
    from reports.pages.caveats import caveat_warnings, note_lines
    from reports.data.caveats import run_caveat

    assert run_caveat({"build_variant": "debug"}, {"debug", "asan"}).startswith(
        "debug build (instrumented)")
    imported = {"source": "import", "build_variant": "imported",
                "source_meta": {"file": "/x/sleep_runs5.json", "format": "hyperfine_json"}}
    assert run_caveat(imported, set()).startswith("imported from sleep_runs5.json (hyperfine_json)")
    assert run_caveat({"build_variant": "release"}, {"debug"}) == ""
    (warning,) = caveat_warnings([{"caveat": "debug build"}, {"caveat": ""},
                                  {"caveat": "debug build"}])
    assert warning == "⚠ marks numbers that are not a release run's. Debug build."
    note = {"text": "new allocator", "at": pd.Timestamp("2026-01-02 03:04", tz="UTC")}
    assert note_lines({"user_notes": [note]}) == ["new allocator (2026-01-02 03:04 UTC)"]


def test_software_counters_in_words_on_the_invocation_line():
    from reports.pages.run_tables import counters_text

    assert counters_text({"page_faults": 832.0, "context_switches": 36.0, "migrations": 2.0,
                          "cpu_clock_ms": 84.66}) == \
        "832 page faults · 36 context switches · 2 CPU migrations · 84.7 ms CPU clock"
    assert counters_text({"page_faults": float("nan")}) == ""
