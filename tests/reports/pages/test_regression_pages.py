"""The Confirmations and Bisects pages show what was stored, each number linked to its run."""
from orchestrator.analysis.stats import Comparison
from reports.data.stats_data import StatsData
from reports.pages.format import Link
from reports.pages.regression_pages import bisects_page, confirmations_page

BETWEEN = Comparison(6, 6, 100.0, 89.2, 0.892, 0.85, 0.93, 0.002, 0.054, "slower").__dict__
PAIRED = Comparison(24, 24, 100.0, 99.7, 0.997, 0.993, 1.004, 0.6, 0.054,
                    "no significant change", "sequential").__dict__


def test_a_confirmation_links_the_flag_to_the_candidate_and_the_paired_change_to_its_job():
    row = {"created_at": "2026-11-29 02:45:00", "label": "readrandom", "metric": "ops_per_sec",
           "base_run": "R1", "cand_run": "R2", "between": BETWEEN, "paired": PAIRED,
           "verdict": "not confirmed", "same_build": True, "ab_id": "ab-R3", "why": None}
    page = confirmations_page(StatsData([], [row]))
    (cells,) = page.sections[0].tables[0].rows
    flagged, found = cells[5], cells[7]
    assert isinstance(flagged, Link) and flagged.href.endswith("runs/R2.md")
    assert flagged.text == "-10.8% (threshold 5.4%)"
    assert found.href.endswith("runs/R3-b.md") and "-0.7% … +0.4%, 24 rounds" in found.text
    assert cells[6] == "not confirmed" and "machine drifted" in cells[8]
    assert confirmations_page(StatsData([])).sections == []


def _step(index, state, ratio):
    return {"index": index, "sha": f"{index:02x}" + "c" * 38, "subject": f"commit {index + 1}",
            "state": state, "verdict": "", "ratio": ratio, "ci_low": ratio - 0.01,
            "ci_high": ratio + 0.01, "rounds": 10, "threshold": 0.1, "ab_id": f"ab-J{index}",
            "build_id": f"b{index}", "why": ""}


def test_a_bisect_lists_its_commits_in_commit_order_and_names_the_first_bad_one():
    commits = [{"sha": f"{i:02x}" + "c" * 38, "subject": f"commit {i + 1}", "author": "A <a@b>",
                "date": "2026-11-01T00:00:00+00:00"} for i in range(16)]
    steps = [_step(15, "bad", 0.5), _step(7, "good", 1.0), _step(11, "bad", 0.5),
             _step(9, "good", 1.0), _step(10, "bad", 0.5)]
    bisect = {"bisect_id": "bisect-1", "good": commits[0]["sha"], "bad": commits[15]["sha"],
              "overrides": ["workload=readrandom"], "metric": "ops_per_sec", "commits": commits,
              "steps": steps, "status": "done", "first_bad": commits[10]["sha"]}
    (section,) = bisects_page(StatsData([], [], [bisect])).sections
    assert "first bad commit 0acccccccccc (11 of 16): commit 11" in section.text
    assert [r[0] for r in section.tables[0].rows] == ["8", "10", "11", "12", "16"]
    assert section.tables[0].rows[2][4].href.endswith("runs/J10-b.md")
    assert 'id="bisect-0"' in section.chart and "commit 11: bad" in section.chart
    unfinished = {**bisect, "status": "running", "first_bad": None}
    assert "resumes" in bisects_page(StatsData([], [], [unfinished])).sections[0].text
