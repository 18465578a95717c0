"""Statistics page builders (pure) on a points frame shaped like queries.read_points'."""
import numpy as np
import pandas as pd

from orchestrator.compare import build_report
from orchestrator.comparability import SeriesSide
from orchestrator.samples import SideSeries
from orchestrator.stats import Thresholds
from reports.format import Link
from reports.stats_data import AbPair, StatsData
from reports.stats_pages import ab_page, changepoints_page, noise_page, targets_page

IDENTITY = {"engine": "leveldb", "workload": "readrandom", "benchmark": "readrandom",
            "params": {}, "threads": 1, "cache_state": "warm", "build_variant": "release",
            "compiler_version": "g++", "cmake_flags": [], "machine_fingerprint": "fp"}


def points(medians, versions):
    n = len(medians)
    return pd.DataFrame({
        "run_id": [f"r{i:02d}" for i in range(n)], "series_key": ["k"] * n, "engine": ["leveldb"] * n,
        "workload": ["readrandom"] * n, "threads": [1] * n, "cache_state": ["warm"] * n,
        "build_variant": ["release"] * n, "engine_version": versions, "ops_median": medians,
        "ops_std": [2.0] * n, "ops_mean": medians, "p99_median": [40.0] * n, "p50_median": [10.0] * n})


def test_change_point_page_names_the_runs_and_versions_on_either_side():
    rng = np.random.default_rng(1)
    medians = list(np.r_[rng.normal(100, 1, 8), rng.normal(80, 1, 8)])
    page = changepoints_page(points(medians, ["1.22"] * 8 + ["1.23"] * 8))
    (row,) = page.sections[0].tables[0].rows
    assert row[1] == Link("r07 (1.22)", "../runs/r07.md")
    assert row[2] == Link("r08 (1.23)", "../runs/r08.md")
    assert row[5].startswith("-2") or row[5].startswith("-1")


def test_noise_page_shows_spread_and_aa_and_the_threshold():
    page = noise_page(points([100.0, 102, 98, 100], ["1.23"] * 4), {"k": [0.03, -0.01]},
                      Thresholds(min_effect=0.05))
    row = page.sections[0].tables[0].rows[0]
    # threshold = max(5 % minimum effect of the given thresholds, 2 × 2.0 % noise)
    assert row[1:] == [4, "1.5%", "2.0%", 2, "3.0%", "2.0%", "5.0%"]
    assert "max(5% minimum effect" in page.intro


def test_ab_page_links_medians_to_their_runs_and_names_differences():
    base = SideSeries(SeriesSide("k", IDENTITY, "1.23"), {"ops_per_sec": [100.0] * 5}, {"ops_per_sec": "higher"}, "ra")
    cand = SideSeries(SeriesSide("k2", {**IDENTITY, "params": {"value_size": 1000}}, "1.23"),
                      {"ops_per_sec": [50.0, 51, 49, 50, 52]}, {"ops_per_sec": "higher"}, "rb")
    report = build_report({"run_id": "ra"}, {"run_id": "rb"}, [base], [cand], ("ops_per_sec",),
                          Thresholds(), lambda k, m: 0.0, allow_different=True)
    pair = AbPair("ab-1", "ra", "rb", 7, False, ["x=1"], ["x=2"], [{"order": "ba"}], report)
    section = ab_page(StatsData([pair], {}, {})).sections[0]
    row = section.tables[0].rows[0]
    assert row[2] == Link("100", "../runs/ra.md") and row[3] == Link("50", "../runs/rb.md")
    assert row[-1] == "slower"
    assert section.warnings == ["differs (allowed in ab): params.value_size: None vs 1000"]


def test_targets_page_meets_and_over_target():
    data = StatsData([], {}, {"r01": {"readrandom": {"targets": ["p99_us < 50", "ops_per_sec > 1000"],
                                                     "bars": {"p99_us": 1.5}}}})
    rows = targets_page(points([100.0, 100], ["1.23"] * 2), data).sections[0].tables[0].rows
    assert [r[3] for r in rows] == ["meets", "over target", "meets"]
