"""Trends in commit order: runs of engines built from git, each commit once, in commit order."""
import pandas as pd

from reports.pages.commits_page import commits_page

IDENTITY = {"workload": "readrandom", "benchmark": "readrandom", "threads": 1,
            "cache_state": "warm", "params": {"num": 1000}, "engine": "leveldb",
            "engine_version": "1.23", "build_variant": "release", "machine_fingerprint": "m",
            "series_key": "s1"}


def test_runs_stand_at_their_commit_in_commit_order():
    runs = pd.DataFrame([
        {"run_id": "R3", "commit_sha": "c" * 40, "commit_subject": "third", "commit_dirty": None,
         "commit_date": pd.Timestamp("2026-11-03", tz="UTC")},
        {"run_id": "R1", "commit_sha": "a" * 40, "commit_subject": "first", "commit_dirty": None,
         "commit_date": pd.Timestamp("2026-11-01", tz="UTC")},
        {"run_id": "R2", "commit_sha": "a" * 40, "commit_subject": "first", "commit_dirty": "d1",
         "commit_date": pd.Timestamp("2026-11-01", tz="UTC")},
        {"run_id": "R0", "commit_sha": None, "commit_subject": None, "commit_dirty": None,
         "commit_date": None}])
    points = pd.DataFrame([{**IDENTITY, "run_id": r, "ops_median": v,
                            "started_at": pd.Timestamp(f"2026-11-2{i}", tz="UTC")}
                           for i, (r, v) in enumerate([("R1", 100.0), ("R2", 101.0),
                                                       ("R3", 80.0), ("R0", 99.0)])])
    (section,) = commits_page(points, runs).sections
    rows = section.tables[0].rows
    assert [r[0] for r in rows] == ["aaaaaaaaaaaa first", "aaaaaaaaaaaa+dirty first",
                                    "cccccccccccc third"]
    assert rows[2][3].href == "runs/R3.md"  # every number links to its run
    assert "3 commits, 3 runs" in section.text
    assert section.chart.index("first") < section.chart.index("third")
    assert commits_page(points, runs.assign(commit_sha=None)).sections == []


def test_instruction_counts_get_their_own_chart_in_commit_order():
    """Runs that counted instructions (callgrind) show them per workload beside ops/s, each
    number linked to its run; a workload counted but not timed still gets its chart."""
    runs = pd.DataFrame([
        {"run_id": f"R{n}", "commit_sha": sha * 40, "commit_subject": subject,
         "commit_dirty": None, "commit_date": pd.Timestamp(f"2026-11-0{n}", tz="UTC")}
        for n, sha, subject in ((1, "a", "first"), (2, "b", "make reads spin"))])
    counted = pd.DataFrame([{**IDENTITY, "series_key": f"c{num}",
                             "params": {"num": 100, "value_size": num}, "run_id": run,
                             "instructions_median": value,
                             "started_at": pd.Timestamp("2026-11-20", tz="UTC")}
                            for run, value, num in (("R2", 4200.0, 100), ("R1", 4000.0, 100),
                                                    ("R1", 9000.0, 400))])
    points = pd.DataFrame([{**IDENTITY, "run_id": "R1", "ops_median": 100.0,
                            "started_at": pd.Timestamp("2026-11-20", tz="UTC")}])
    timed, instructions = commits_page(points, runs, counted).sections
    assert timed.title == "readrandom" and "instructions" in instructions.title
    rows = instructions.tables[0].rows
    assert [r[0] for r in rows] == ["aaaaaaaaaaaa first", "aaaaaaaaaaaa first",
                                    "bbbbbbbbbbbb make reads spin"]
    assert rows[2][3].href == "runs/R2.md" and rows[2][3].text == "4,200"
    # Each series its own line: a value size is never a median with another.
    assert {r[2] for r in rows} == {"1 thr · warm · value_size=100",
                                    "1 thr · warm · value_size=400"}
    assert "instructions per operation (callgrind, median)" in instructions.chart
    (alone,) = commits_page(points.iloc[0:0], runs, counted).sections
    assert "instructions" in alone.title
