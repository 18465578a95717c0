"""Statistics page builders (pure) on a points frame shaped like queries.read_points'."""
import numpy as np
import pandas as pd

from orchestrator.analysis.compare import SeriesSamples, build_report
from orchestrator.analysis.paired import Design
from orchestrator.analysis.identity import SeriesIdentity
from orchestrator.analysis.noise import History
from orchestrator.analysis.stats import Thresholds
from reports.pages.format import Link
from reports.data.stats_data import AbPair, StatsData
from reports.pages.stats_pages import ab_page, changepoints_page, noise_page

IDENTITY = {"engine": "leveldb", "workload": "readrandom", "benchmark": "readrandom",
            "params": {}, "threads": 1, "cache_state": "warm", "build_variant": "release",
            "machine_fingerprint": "fp"}


def points(medians, versions):
    n = len(medians)
    return pd.DataFrame({
        "run_id": [f"r{i:02d}" for i in range(n)], "series_key": ["k"] * n, "engine": ["leveldb"] * n,
        "workload": ["readrandom"] * n, "threads": [1] * n, "cache_state": ["warm"] * n,
        "build_variant": ["release"] * n, "engine_version": versions, "ops_median": medians,
        "benchmark": ["readrandom"] * n, "params": [{}] * n,
        "ops_std": [2.0] * n, "ops_mean": medians, "p99_median": [40.0] * n, "p50_median": [10.0] * n})


def test_change_point_page_names_the_runs_and_versions_on_either_side():
    rng = np.random.default_rng(1)
    medians = list(np.r_[rng.normal(100, 1, 8), rng.normal(80, 1, 8)])
    page = changepoints_page(points(medians, ["1.22"] * 8 + ["1.23"] * 8))
    (row,) = page.sections[0].tables[0].rows
    assert row[1] == Link("r07 (1.22)", "../runs/r07.md")
    assert row[2] == Link("r08 (1.23)", "../runs/r08.md")
    assert row[5].startswith("-2") or row[5].startswith("-1")


def test_noise_page_shows_the_noise_the_newest_run_was_judged_with():
    medians = [100.0, 103, 97, 100, 150]  # the newest run (150) is left out of its own noise
    pairs = [("r00", "r01"), ("r02", "r03")]  # A/A changes +3.0 % and +3.09 %
    page = noise_page(points(medians, ["1.23"] * 5), pairs, Thresholds(min_effect=0.05))
    row = page.sections[0].tables[0].rows[0]
    assert row[0].href == "../runs/r04.md"
    # 4 other runs: spread 1.4826 × MAD(1.5) / 100 = 2.2 %; A/A median 3.046 % → noise 3.0 %;
    # run-to-run changes: only 103 → 97 (the A/A pairs' sides are not two separate runs; the
    # frame names no build, so of any build): tail 5.8 %;
    # threshold = max(5 % minimum effect, 2 × 3.046 %, 5.8 %) = 6.1 %
    assert row[1:] == [4, "2.2%", "2.0%", 2, "3.1%", "3.0%", "1 (any build)", "5.8%", "6.1%"]
    assert "max(5%, 2 × noise, tail)" in page.intro and "90% quantile" in page.intro


def test_noise_page_shows_the_tail_of_runs_of_one_build():
    medians = [100.0, 102, 100, 98, 100, 115, 100, 98, 100, 102, 101]  # run 5 shifted +15 %
    frame = points(medians, ["1.23"] * 11).assign(build_id=["b1"] * 11)
    row = noise_page(frame, [], Thresholds(min_effect=0.05)).sections[0].tables[0].rows[0]
    # The spread ignores the shifted run (1.5 %: 3.0 % × 2); the tail is the 15 % change.
    assert row[2] == "1.5%" and row[-3:] == ["9", "15.0%", "15.0%"]


def test_ab_page_links_medians_to_their_runs_and_names_differences():
    base = SeriesSamples(SeriesIdentity("k", IDENTITY, {}), {"ops_per_sec": [100.0] * 5},
                         {"ops_per_sec": "higher"})
    cand = SeriesSamples(SeriesIdentity("k2", {**IDENTITY, "params": {"value_size": 1000}}, {}),
                         {"ops_per_sec": [50.0, 51, 49, 50, 52]}, {"ops_per_sec": "higher"})
    report = build_report({"run_id": "ra"}, {"run_id": "rb"}, [base], [cand], ("ops_per_sec",),
                          Thresholds(), History(), allow_different=True)
    pair = AbPair("ab-1", "ra", "rb", 7, False, ["x=1"], ["x=2"], [{"order": "ba"}], report)
    section = ab_page(StatsData([pair])).sections[0]
    row = section.tables[0].rows[0]
    assert row[2] == Link("100", "../runs/ra.md") and row[3] == Link("50", "../runs/rb.md")
    assert row[-1] == "slower"
    assert section.warnings == ["differs (allowed in ab): params.value_size: None vs 1000"]


def test_ab_page_names_the_design_the_test_and_a_dropped_round():
    rounds = {"ops_per_sec": [1, 2, 3, 4, 5, 6, 7]}
    base = SeriesSamples(SeriesIdentity("k", IDENTITY, {}), {"ops_per_sec": [100.0 + i for i in range(7)]},
                         {"ops_per_sec": "higher"}, 0, rounds)
    cand = SeriesSamples(SeriesIdentity("k", IDENTITY, {}), {"ops_per_sec": [50.0 + i for i in range(6)]},
                         {"ops_per_sec": "higher"}, 1, {"ops_per_sec": [1, 2, 3, 4, 5, 6]})
    report = build_report({"run_id": "ra"}, {"run_id": "rb"}, [base], [cand], ("ops_per_sec",),
                          Thresholds(), History(), design=Design("duet"))
    schedule = [{"order": "ab", "together": True, "cpus": {"a": 0, "b": 1}},
                {"order": "ab", "together": True, "cpus": {"a": 1, "b": 0}}]
    pair = AbPair("ab-2", "ra", "rb", 7, False, [], [], schedule, report, "", "duet")
    section = ab_page(StatsData([pair])).sections[0]
    assert section.tables[0].rows[0][-2:] == ["Wilcoxon signed-rank (paired)", "slower"]
    assert "design duet" in section.text and "a@0+b@1 a@1+b@0" in section.text
    assert "ops_per_sec: round 7 dropped: no ok value of the candidate" in section.warnings[-1]
