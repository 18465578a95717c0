"""The verdicts' sample summaries kept between builds (reports/data/verdict_cache.py): a rebuild of
the Compare page's data after a run is added equals a build without the cache, and takes the
summaries of samples it summarized before from the cache, never a summary of other samples."""
from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.analysis import compare, stats
from orchestrator.analysis.stats import SampleSummary, summarize_samples
from orchestrator.gate import GateConf
from reports.data import verdict_cache
from reports.build.compare_site import write_comparisons
from reports.data.site_cache import SiteCache
from reports.data.verdict_cache import KIND, KeptSummaries, summary_key
from tests.reports.build.test_site_cache import add_run, differences, run_id, site_verdicts

SAMPLES = [((100.0, 101.0, 99.0), (90.0, 91.0, 89.5)), ((1.0, 2.0), (1.0, 2.0, 3.0)),
           ((5.0, 5.0, 5.0), (5.0, 5.0, 5.0)), ((0.0, 1.0, 2.0), (1.0, 2.0, 3.0)),
           ((1, 2, 3), (1.0, 2.0, 3.0))]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # a resample of median 0
@pytest.mark.parametrize("base,cand", SAMPLES)
def test_a_kept_summary_is_the_summary_of_the_same_samples(base, cand) -> None:
    first = KeptSummaries()
    summary = first(base, cand)
    assert repr(summary) == repr(summarize_samples(base, cand))
    again = KeptSummaries(first.used)
    assert again(base, cand) is summary and set(again.used) == set(first.used)


def test_a_summary_kept_for_other_samples_is_never_given() -> None:
    planted = SampleSummary(1.0, 2.0, 2.0, 1.5, 2.5, 0.01)
    kept = KeptSummaries({summary_key((1.0, 2.0, 3.0), (4.0, 5.0, 6.0)): planted})
    # Other values, another order, ints for floats: each is summarized afresh.
    for base, cand in [((1.0, 2.0, 3.0), (4.0, 5.0, 6.5)), ((2.0, 1.0, 3.0), (4.0, 5.0, 6.0)),
                       ((1, 2, 3), (4, 5, 6)), ((4.0, 5.0, 6.0), (1.0, 2.0, 3.0))]:
        assert kept(base, cand) != planted
    assert kept((1.0, 2.0, 3.0), (4.0, 5.0, 6.0)) is planted


def _compare_data(db: Path, dest: Path, cache: Path | None) -> int:
    runs, points, found = site_verdicts(db)
    return write_comparisons(db, dest, runs, points, GateConf(baseline=run_id(1)), run_id(1),
                             found.candidate, found, cache)


def test_compare_data_rebuilt_with_the_cache_equals_a_build_without_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "logs").mkdir()
    db = tmp_path / "tidemark.duckdb"
    for index in range(5):
        add_run(db, index)
    cache = tmp_path / "cache"
    _compare_data(db, tmp_path / "first", cache)
    kept = set(SiteCache(cache).entries(KIND))
    assert kept
    add_run(db, 5)  # every series' history (so its noise) changes; older pairs' samples do not
    computed: list[tuple] = []

    def counted(base, cand):  # type: ignore[no-untyped-def]
        computed.append((base, cand))
        return summarize_samples(base, cand)

    monkeypatch.setattr(verdict_cache, "summarize_samples", counted)
    _compare_data(db, tmp_path / "cached", cache)
    with_cache = len(computed)
    used = set(SiteCache(cache).entries(KIND))
    computed.clear()
    compare._summary.cache_clear()
    _compare_data(db, tmp_path / "fresh", None)
    assert not differences(tmp_path / "fresh", tmp_path / "cached")
    assert with_cache < len(computed) and used & kept and used - kept


def test_the_cache_keys_what_computes_a_summary() -> None:
    assert stats.BOOTSTRAP_SEED in verdict_cache._COMPUTED_BY
    assert summary_key((1.0,), (2.0,)) != summary_key((2.0,), (1.0,))
