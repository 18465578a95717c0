"""`tidemark import` into a real DuckDB file: idempotent, all-or-nothing, marked imported."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import DATA
from tests.e2e.fixtures import query, tidemark

GBENCH = DATA / "gbench" / "demo_reps3_libbenchmark1.7.1.json"


def imp(tmp: Path, path: Path, *args: str, check: bool = True):
    return tidemark(tmp, "import", str(path), "--db", str(tmp / "tidemark.duckdb"), *args,
                    check=check)


def counts(tmp: Path) -> tuple:
    return query(tmp, "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM invocations), "
                      "(SELECT count(*) FROM metrics), (SELECT count(*) FROM aggregates), "
                      "(SELECT count(*) FROM series)")[0]


def test_gbench_import_is_marked_and_idempotent(tmp_path):
    first = imp(tmp_path, GBENCH, "--format", "gbench_json", "--machine", "ci-vm", "--engine",
                "rocksdb", "--engine-version", "7.8.3", "--label", "legacy", "--date", "2024-03-01")
    assert "33 invocations, 43 aggregates" in first.stdout
    before = counts(tmp_path)
    second = imp(tmp_path, GBENCH, "--format", "gbench_json", "--machine", "other")
    assert "already imported" in second.stdout
    assert counts(tmp_path) == before
    run = query(tmp_path, "SELECT source, source_sha256, engine, engine_version, label, "
                          "strftime(started_at, '%Y-%m-%d'), machine_fingerprint, "
                          "source_meta->>'$.context.library_build_type' FROM runs")[0]
    assert run[0] == "import" and len(run[1]) == 64
    assert run[2:] == ("rocksdb", "7.8.3", "legacy", "2024-03-01", "import:ci-vm", "debug")
    failed = query(tmp_path, "SELECT count(*), any_value(error) FROM invocations WHERE status = 'failed'")
    assert failed == [(3, "db open failed: IO error: lock held")]
    # Aggregates are never repetitions: 33 rows are invocations, the statistics live apart.
    assert query(tmp_path, "SELECT count(*) FROM invocations WHERE benchmark LIKE '%\\_mean' "
                           "ESCAPE '\\'")[0][0] == 0
    assert query(tmp_path, "SELECT DISTINCT aggregate FROM aggregates WHERE benchmark = 'BM_Sort' "
                           "AND aggregate IN ('BigO', 'RMS') ORDER BY 1") == [("BigO",), ("RMS",)]


@pytest.mark.parametrize("name, cut", [("truncated.json", 0.6), ("empty.json", 0.0)])
def test_bad_file_writes_nothing_and_names_the_line(tmp_path, name, cut):
    imp(tmp_path, DATA / "hyperfine" / "sleep_runs5.json", "--format", "hyperfine_json")
    before = counts(tmp_path)
    text = GBENCH.read_text()
    bad = tmp_path / name
    bad.write_text(text[: int(len(text) * cut)])
    proc = imp(tmp_path, bad, "--format", "gbench_json", check=False)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{name}: line " in lines[0]
    assert counts(tmp_path) == before


def test_bad_row_deep_in_the_file_writes_nothing(tmp_path):
    bad = tmp_path / "bad_row.json"
    bad.write_text(GBENCH.read_text().replace('"time_unit": "s"', '"time_unit": "sec"', 1))
    proc = imp(tmp_path, bad, "--format", "gbench_json", check=False)
    assert proc.returncode == 2
    assert "field 'time_unit' is 'sec'" in proc.stderr and "BM_Secs" in proc.stderr
    assert not (tmp_path / "tidemark.duckdb").exists() or counts(tmp_path)[0] == 0


def test_json_map_and_db_bench_and_hyperfine_imports(tmp_path):
    imp(tmp_path, DATA / "jsonmap" / "ingestion.jsonl", "--format", "json_map", "--map",
        str(DATA / "jsonmap" / "ingestion_map.yaml"))
    imp(tmp_path, DATA / "rocksdb" / "readrandom_t2.stdout", "--format", "db_bench_rocksdb",
        "--threads", "2", "--engine-version", "7.8.3")
    imp(tmp_path, DATA / "hyperfine" / "parameter_scan_delay.json", "--format", "hyperfine_json")
    rows = query(tmp_path, "SELECT r.engine, i.workload, count(*) FROM invocations i JOIN runs r "
                           "USING (run_id) GROUP BY ALL ORDER BY ALL")
    assert rows == [("rocksdb", "readrandom", 1), ("unknown", "Ingestion_MediumDocument", 5),
                    ("unknown", "Ingestion_SmallDocument", 5), ("unknown", "hyperfine", 9)]
    ops = query(tmp_path, "SELECT value FROM metrics m JOIN invocations i USING (invocation_id) "
                          "WHERE i.workload = 'readrandom' AND m.name = 'ops_per_sec'")
    assert ops == [(635247.0,)]
    assert query(tmp_path, "SELECT params->>'$.delay' FROM invocations WHERE workload = "
                           "'hyperfine' ORDER BY seq LIMIT 1") == [("0.01",)]


def test_missing_map_and_bad_date_are_one_line(tmp_path):
    proc = imp(tmp_path, DATA / "jsonmap" / "ingestion.jsonl", "--format", "json_map", check=False)
    assert proc.returncode == 2 and "needs --map" in proc.stderr
    proc = imp(tmp_path, GBENCH, "--format", "gbench_json", "--date", "yesterday", check=False)
    assert proc.returncode == 2 and "--date 'yesterday' is not ISO 8601" in proc.stderr


def test_comparison_samples_count_each_gbench_repetition_once(tmp_path):
    """Google Benchmark rows store items/s twice (items_per_second and its ops_per_sec alias);
    the samples the summary and Gate page test must still hold one value per repetition."""
    import duckdb

    from orchestrator.store.reads import load_samples

    imp(tmp_path, GBENCH, "--format", "gbench_json", "--machine", "ci-vm")
    (run_id,) = query(tmp_path, "SELECT run_id FROM runs")[0]
    con = duckdb.connect(str(tmp_path / "tidemark.duckdb"), read_only=True)
    try:
        samples = load_samples(con, run_id, ["ops_per_sec"])
    finally:
        con.close()
    expected = query(tmp_path, """SELECT i.series_key, m.value FROM invocations i
        JOIN metrics m USING (invocation_id) WHERE i.phase = 'measured' AND i.status = 'ok'
        AND m.name = 'items_per_second' ORDER BY i.seq""")
    assert len(expected) == 12  # the capture's ok measured rows that report items/s
    got = [(s.series.series_key, v) for s in samples for v in s.values["ops_per_sec"]]
    assert sorted(got) == sorted(expected)


@pytest.mark.engine
def test_a_site_with_imported_hyperfine_and_json_map_runs_builds(tmp_path):
    # `tidemark site` once crashed for good when the DB held such a run (pd.NA in a cell, an
    # imported machine without a CPU count); it must build, with the measured run beside them.
    tidemark(tmp_path, "run", "engine=leveldb", "counters=false", "workload=readrandom",
             "workload.params.num=3000", "repetitions=2")
    imp(tmp_path, DATA / "hyperfine" / "parameter_scan_delay.json", "--format", "hyperfine_json")
    imp(tmp_path, DATA / "jsonmap" / "ingestion.jsonl", "--format", "json_map", "--map",
        str(DATA / "jsonmap" / "ingestion_map.yaml"))
    site = tidemark(tmp_path, "site", "--db", str(tmp_path / "tidemark.duckdb"), "--out",
                    str(tmp_path / "build"))
    assert "site:" in site.stdout and "Traceback" not in site.stderr
    imported = [r for (r,) in query(tmp_path, "SELECT run_id FROM runs WHERE source = 'import'")]
    docs = "\n".join(p.read_text() for p in (tmp_path / "build" / "docs").rglob("*.md"))
    assert len(imported) == 2 and all(run_id in docs for run_id in imported)


@pytest.mark.engine
def test_a_run_exported_as_bmf_and_imported_back_keeps_its_medians(tmp_path):
    """A measured LevelDB run → `tidemark export --format bmf` → `tidemark import --format
    bmf_json`: the same median per series and metric, stored as aggregates (a BMF file is a
    summary: no invocations, so no test is ever run on it); importing it twice adds nothing."""
    tidemark(tmp_path, "run", "engine=leveldb", "counters=false", "workload=readrandom",
             "workload.params.num=3000", "repetitions=3")
    db = str(tmp_path / "tidemark.duckdb")
    in_db = dict(query(tmp_path, """SELECT m.name, median(m.value) FROM invocations i
        JOIN metrics m USING (invocation_id)
        WHERE i.phase = 'measured' AND i.status = 'ok' GROUP BY ALL"""))
    out = tmp_path / "run.bmf.json"
    tidemark(tmp_path, "export", "latest", "--format", "bmf", "--out", str(out), "--db", db)
    (name, measures), = json.loads(out.read_text()).items()
    assert name.startswith("readrandom/") and "num=3000" in name and name.endswith("/threads:1")
    exported = {metric: m["value"] for metric, m in measures.items()}
    assert exported == pytest.approx(in_db) and "ops_per_sec" in exported
    before = counts(tmp_path)
    assert "0 invocations" in imp(tmp_path, out, "--format", "bmf_json").stdout
    assert "already imported" in imp(tmp_path, out, "--format", "bmf_json").stdout
    stored = dict(query(tmp_path, """SELECT a.name, a.value FROM aggregates a
        JOIN runs r USING (run_id) WHERE r.source = 'import' AND a.aggregate = 'value'"""))
    assert stored == pytest.approx(exported)
    assert counts(tmp_path)[1] == before[1]  # the summary added no invocation


@pytest.mark.parametrize("name, invocations", [("raw.json", 156), ("summary.json", 0)])
def test_pytest_benchmark_import_keeps_rounds_units_and_directions(tmp_path, name, invocations):
    """Files pytest-benchmark 5.3.1 wrote (tests/data/pytest_benchmark/test_sorting.py.txt):
    each round of raw.json is a repetition; summary.json (saved without its data) is aggregates
    only; seconds are lower-is-better, ops/s higher; the same file twice adds nothing."""
    path = DATA / "pytest_benchmark" / name
    first = imp(tmp_path, path, "--format", "pytest_benchmark_json")
    assert f"{invocations} invocations" in first.stdout
    assert "already imported" in imp(tmp_path, path, "--format", "pytest_benchmark_json").stdout
    assert query(tmp_path, "SELECT count(*) FROM invocations")[0][0] == invocations
    workloads = {w for (w,) in query(tmp_path, "SELECT DISTINCT workload FROM aggregates")}
    assert workloads == {"test_sorting.py"}
    kinds = set(query(tmp_path, "SELECT DISTINCT name, unit, better FROM aggregates "
                                "WHERE name IN ('wall_s', 'ops_per_sec')"))
    assert kinds == {("wall_s", "s", "lower"), ("ops_per_sec", "ops/s", "higher")}
    if invocations:
        per_series = query(tmp_path, "SELECT series_key, count(*) FROM invocations GROUP BY ALL "
                                     "ORDER BY 1, 2")
        rounds = json.loads(path.read_text())["benchmarks"]
        assert sorted(n for _, n in per_series) == sorted(len(b["stats"]["data"]) for b in rounds)


def test_a_truncated_pytest_benchmark_file_is_one_line_and_writes_nothing(tmp_path):
    bad = tmp_path / "cut.json"
    bad.write_text((DATA / "pytest_benchmark" / "raw.json").read_text()[:5000])
    proc = imp(tmp_path, bad, "--format", "pytest_benchmark_json", check=False)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "cut.json: line" in proc.stderr
    assert not (tmp_path / "tidemark.duckdb").exists() or counts(tmp_path)[0] == 0


def test_pyperf_import_keeps_every_value_and_skips_warmups(tmp_path):
    """A pyperf 2.x suite (tests/data/pyperf/suite_bench.py.txt): two benchmarks, every value
    of every measured run one invocation, warm-ups none; the same file twice adds nothing."""
    path = DATA / "pyperf" / "suite.json"
    doc = json.loads(path.read_text())
    values = {b["metadata"]["name"]: sum(len(r.get("values", [])) for r in b["runs"])
              for b in doc["benchmarks"]}
    first = imp(tmp_path, path, "--format", "pyperf_json")
    assert f"{sum(values.values())} invocations" in first.stdout
    assert "already imported" in imp(tmp_path, path, "--format", "pyperf_json").stdout
    per_bench = dict(query(tmp_path, "SELECT benchmark, count(*) FROM invocations GROUP BY 1"))
    assert per_bench == values
    assert set(query(tmp_path, "SELECT DISTINCT name, unit FROM metrics")) == {("wall_s", "s")}
