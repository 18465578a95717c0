"""`tidemark run` and `tidemark ab` share one run loop and one context builder: on the real
engines, ab puts the engine in its cgroup exactly as run does, and runs the Google Benchmark
harness (not db_bench) for a suite=micro workload. Structure only: no verdict drawn from
timings is asserted (this shared machine moves 4–11 % between runs).
"""
import json
from pathlib import Path

import pytest

from tests.e2e.fixtures import query, tidemark

pytestmark = pytest.mark.engine

TINY_LEVELDB = ["engine=leveldb", "workload=readrandom", "workload.params.num=2000", "counters=false"]
TINY_MICRO_GET = ["suite=micro", "suite.items=[{workload: micro_get}]",
                  "suite.workloads.micro_get.params.num=2000",
                  "suite.workloads.micro_get.params.extra.benchmark_min_time=0.01"]


def ab_paths(tmp: Path) -> list[str]:
    return [f"db={tmp / 'tidemark.duckdb'}", f"results_dir={tmp}", f"data_dir={tmp / 'data'}"]


def measured_order(tmp: Path, run_ids: tuple[str, str]) -> str:
    """The sides ('a'/'b') of the measured processes in the order they started (the rows of one
    harness process share its start)."""
    rows = query(tmp, "SELECT run_id FROM invocations WHERE phase = 'measured' AND run_id IN (?, ?) "
                      "GROUP BY run_id, started_at ORDER BY started_at", list(run_ids))
    return "".join("a" if run_id == run_ids[0] else "b" for (run_id,) in rows)


def test_ab_puts_the_engine_in_its_cgroup_as_run_does(tmp_path):
    tidemark(tmp_path, "ab", "--seed", "3", "--", *TINY_LEVELDB, "repetitions=3",
             "machine.cgroup=true", *ab_paths(tmp_path))
    tidemark(tmp_path, "run", *TINY_LEVELDB, "repetitions=1", "machine.cgroup=true", "label=run")
    (run_a, run_b, schedule), = query(tmp_path, "SELECT run_a, run_b, schedule FROM ab_pairs")
    (run_id,), = query(tmp_path, "SELECT run_id FROM runs WHERE label = 'run'")
    rows = query(tmp_path, "SELECT run_id, phase, status, conditions->'$.cgroups' FROM invocations")
    assert {r[0] for r in rows} == {run_a, run_b, run_id}
    for owner, phase, status, cgroups in rows:
        assert status == "ok", (owner, phase)
        lines = json.loads(cgroups)  # read back from /proc/<pid>/cgroup while the engine ran
        assert lines and all(line.endswith(f":/tidemark-{owner}") for line in lines), lines
        assert any(":cpuset:" in line or line.startswith("0::") for line in lines)
    for owner in (run_a, run_b, run_id):  # removed when the run ended
        assert not list(Path("/sys/fs/cgroup").glob(f"*/tidemark-{owner}"))
        assert not Path(f"/sys/fs/cgroup/tidemark-{owner}").exists()
    # The loop ran the measured steps in the recorded interleaved order.
    assert measured_order(tmp_path, (run_a, run_b)) == "".join(r["order"] for r in json.loads(schedule))


def test_ab_on_suite_micro_runs_the_harness_interleaved_and_compares(tmp_path):
    proc = tidemark(tmp_path, "ab", "--seed", "7", "--format", "json", "--", *TINY_MICRO_GET,
                    "repetitions=3", *ab_paths(tmp_path))
    assert "harness (Release)" in proc.stdout
    (run_a, run_b, schedule), = query(tmp_path, "SELECT run_a, run_b, schedule FROM ab_pairs")
    rounds = json.loads(schedule)
    assert [(r["point"], r["rep"]) for r in rounds] == [(1, 1)]  # one harness process per side
    assert sorted(rounds[0]["order"]) == ["a", "b"]
    assert measured_order(tmp_path, (run_a, run_b)) == rounds[0]["order"]
    processes = query(tmp_path, "SELECT DISTINCT run_id, command, conditions->>'$.binary' "
                                "FROM invocations")
    assert len(processes) == 2
    for _, command, harness in processes:
        argv = json.loads(command)
        assert argv[0] == harness and Path(harness).name == "rocksdb_harness"
        assert "--benchmark_repetitions=3" in argv and not any(a.startswith("--benchmarks=") for a in argv)
    per_side = query(tmp_path, "SELECT run_id, count(*), count(DISTINCT seq), count(DISTINCT benchmark) "
                               "FROM invocations WHERE status = 'ok' GROUP BY 1 ORDER BY 1")
    assert per_side == [(run_a, 9, 9, 3), (run_b, 9, 9, 3)]  # Get/hit, Get/miss, MultiGet × 3
    assert query(tmp_path, "SELECT count(DISTINCT run_id) FROM aggregates") == [(2,)]
    # The decision after ab: one comparison per series, each side's 3 repetitions.
    report = json.loads(proc.stdout[proc.stdout.index("{"):])
    rows = [r["comparison"] for r in report["rows"]]
    assert rows and all(r["verdict"] and r["base_n"] == r["cand_n"] == 3 for r in rows)
