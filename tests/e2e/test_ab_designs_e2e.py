"""`tidemark ab --design duet` and `--adaptive` on real LevelDB runs (tiny data sets).

Structure only, never a verdict drawn from timings: a duet's two processes overlap in time, each
on its own CPU (read back from /proc/<pid>/status), the CPUs swapped every round; an adaptive
job records the rounds it used (within its budget) and why it stopped; and `tidemark compare`
on the two runs of the job gives the verdict and test `tidemark ab` printed (one analysis core).
"""
import json
from datetime import datetime
from pathlib import Path

import pytest

from tests.e2e.fixtures import query, tidemark

pytestmark = pytest.mark.engine

# 20,000 keys: each process reads for a few hundred milliseconds, far longer than the gap
# between the two launches of a duet round.
LEVELDB = ["engine=leveldb", "workload=readrandom", "workload.params.num=20000", "counters=false"]
TINY = ["engine=leveldb", "workload=readrandom", "workload.params.num=2000", "counters=false"]


def paths(tmp: Path) -> list[str]:
    return [f"db={tmp / 'tidemark.duckdb'}", f"results_dir={tmp}", f"data_dir={tmp / 'data'}"]


def report_of(proc) -> dict:
    return json.loads(proc.stdout[proc.stdout.index("{"):])


def verdicts(report: dict) -> list[tuple]:
    return [(r["label"], r["metric"], r["comparison"]["verdict"], r["comparison"]["test"],
             r["comparison"]["base_n"]) for r in report["rows"]]


def compare_agrees(tmp: Path, report: dict) -> None:
    """`tidemark compare` on the job's two runs: the same verdicts and tests as `tidemark ab`."""
    (run_a, run_b), = query(tmp, "SELECT run_a, run_b FROM ab_pairs")
    again = tidemark(tmp, "compare", run_a, run_b, "--db", str(tmp / "tidemark.duckdb"),
                     "--allow-different", "--format", "json")
    assert verdicts(report_of(again)) == verdicts(report)


def at(text) -> datetime:
    return text if isinstance(text, datetime) else datetime.fromisoformat(str(text))


def test_duet_runs_both_sides_at_once_on_swapped_cpus(tmp_path):
    proc = tidemark(tmp_path, "ab", "--seed", "4", "--design", "duet", "--format", "json",
                    "--", *LEVELDB, "repetitions=4", *paths(tmp_path))
    (run_a, run_b, design, schedule), = query(
        tmp_path, "SELECT run_a, run_b, design, schedule FROM ab_pairs")
    assert design == "duet"
    rounds = json.loads(schedule)
    assert [r["rep"] for r in rounds] == [1, 2, 3, 4] and all(r["together"] for r in rounds)
    rows = query(tmp_path, "SELECT run_id, repetition, started_at, ended_at, status, "
                           "conditions->>'$.cpus_allowed' FROM invocations "
                           "WHERE phase = 'measured' ORDER BY repetition, run_id")
    assert len(rows) == 8 and all(r[4] == "ok" for r in rows)
    cpus_of_a = []
    for rnd, (a, b) in zip(rounds, zip(rows[::2], rows[1::2])):
        assert (a[0], b[0], a[1], b[1]) == (run_a, run_b, rnd["rep"], rnd["rep"])
        assert at(a[2]) < at(b[3]) and at(b[2]) < at(a[3])  # the two processes overlapped
        cpu_a, cpu_b = json.loads(a[5]), json.loads(b[5])  # read back while each ran
        assert cpu_a == [rnd["cpus"]["a"]] and cpu_b == [rnd["cpus"]["b"]] and cpu_a != cpu_b
        cpus_of_a.append(cpu_a[0])
    assert cpus_of_a == [0, 1, 0, 1]  # swapped every round
    report = report_of(proc)
    (row,) = report["rows"]
    assert row["comparison"]["test"] == "Wilcoxon signed-rank (paired)"
    assert row["comparison"]["verdict"] == "not enough repetitions"  # 4 pairs: p ≥ 2/16
    assert report["extra"]["design"] == "duet"
    compare_agrees(tmp_path, report)


def test_adaptive_records_the_rounds_it_used_within_its_budget(tmp_path):
    proc = tidemark(tmp_path, "ab", "--seed", "5", "--adaptive", "--max-rounds", "8",
                    "--format", "json", "--", *TINY, *paths(tmp_path))
    (design, adaptive, schedule), = query(tmp_path, "SELECT design, adaptive, schedule FROM ab_pairs")
    adaptive, rounds = json.loads(adaptive), json.loads(schedule)
    used, stopped = adaptive["rounds_used"]["1"], adaptive["stopped"]["1"]
    assert design == "interleaved" and adaptive["max_rounds"] == 8
    assert 1 <= used <= 8 and len(rounds) == used and stopped in ("decided", "max_rounds")
    per_side = query(tmp_path, "SELECT run_id, count(*) FROM invocations WHERE phase = 'measured' "
                               "GROUP BY 1 ORDER BY 1")
    assert [n for _, n in per_side] == [used, used]
    (row,) = report_of(proc)["rows"]
    verdict, test = row["comparison"]["verdict"], row["comparison"]["test"]
    assert test.startswith("sequential Wilcoxon signed-rank (paired; ")
    # "cannot tell" exactly when the budget ran out undecided.
    assert (verdict == "cannot tell") == (stopped == "max_rounds")
    assert f"rounds used point 1: {used} of 8 ({stopped})" in proc.stdout
    compare_agrees(tmp_path, report_of(proc))
    gate = tidemark(tmp_path, "gate", "--db", str(tmp_path / "tidemark.duckdb"), "--baseline",
                    "latest~1", "--candidate", "latest", check=False)
    # The gate reads the same stopped job: its exit code follows the verdict ab printed.
    assert gate.returncode == {"slower": 1, "cannot tell": 2}.get(verdict, 0), gate.stdout


def test_adaptive_out_of_time_runs_one_round_and_cannot_tell(tmp_path):
    proc = tidemark(tmp_path, "ab", "--seed", "6", "--adaptive", "--max-rounds", "20",
                    "--max-minutes", "0.0001", "--format", "json", "--", *TINY, *paths(tmp_path))
    (adaptive,), = query(tmp_path, "SELECT adaptive FROM ab_pairs")
    adaptive = json.loads(adaptive)
    assert adaptive["rounds_used"] == {"1": 1} and adaptive["stopped"] == {"1": "max_minutes"}
    (row,) = report_of(proc)["rows"]
    assert row["comparison"]["verdict"] == "cannot tell" and row["comparison"]["base_n"] == 1
    refused = tidemark(tmp_path, "ab", "--adaptive", "--", *TINY, "repetitions=5",
                       *paths(tmp_path), check=False)
    assert refused.returncode == 2 and "replace 'repetitions=5' with --max-rounds N" in refused.stderr
