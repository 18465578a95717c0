"""Engines from YAML alone, end to end (issue 29): snappy 1.1.9 from Debian source (CMake) run
through its own Google Benchmark binary, and the zstd CLI (make) run as timed commands and
through its own benchmark mode parsed by a regex map. No Python of Tidemark knows either.

Timings are never asserted: only what was stored, and that the conditions were met.
"""
from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e.fixtures import query, tidemark

pytestmark = pytest.mark.engine

SNAPPY_SERIES = {"BM_UFlat/0", "BM_UFlat/1", "BM_ZFlat/0", "BM_ZFlat/1"}
FAST = "workload.params.extra.benchmark_min_time=0.01"


@pytest.fixture(scope="module")
def snappy(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("snappy")
    for cache in ("cold", "warm"):
        tidemark(tmp, "run", "engine=snappy", "workload=snappy_flat", "repetitions=2",
                 f"cache={cache}", FAST)
    return tmp


def test_snappy_stores_its_google_benchmark_series(snappy):
    rows = query(snappy, """SELECT i.benchmark, i.cache_state, count(*) FILTER (i.status = 'ok'),
                                   count(*)
                            FROM invocations i GROUP BY ALL""")
    assert {(b, c) for b, c, _, _ in rows} == {(b, c) for b in SNAPPY_SERIES
                                               for c in ("cold", "warm")}
    assert all(ok == n == 2 for _, _, ok, n in rows)  # 2 repetitions each, every one ok
    metrics = query(snappy, """SELECT DISTINCT name, unit, better FROM metrics
                               WHERE name IN ('bytes_per_second', 'real_time_ns')""")
    assert set(metrics) == {("bytes_per_second", "B/s", "higher"), ("real_time_ns", "ns", "lower")}
    engine, = query(snappy, "SELECT DISTINCT engine FROM runs")
    assert engine == ("snappy",)
    # the series name no db_bench param (num, value_size ...): only what the workload uses
    params = {p for p, in query(snappy, "SELECT DISTINCT params FROM invocations")}
    assert params == {json.dumps({"extra.benchmark_min_time": "0.01"})}


def test_cold_and_warm_record_the_residency_of_the_test_data(snappy):
    rows = query(snappy, """SELECT cache_state, min((conditions->>'$.residency_pct')::DOUBLE),
                                   max((conditions->>'$.residency_pct')::DOUBLE),
                                   min((conditions->>'$.data_bytes')::BIGINT)
                            FROM invocations GROUP BY 1""")
    by_state = {state: (lo, hi, size) for state, lo, hi, size in rows}
    assert by_state["cold"][1] <= 5 and by_state["warm"][0] >= 95
    assert by_state["cold"][2] > 100_000  # html + urls.10K of the source's testdata/
    procedure, = query(snappy, """SELECT DISTINCT conditions->>'$.cache_procedure'
                                  FROM invocations WHERE cache_state = 'cold'""")
    assert "posix_fadvise" in procedure[0]


def test_ab_of_two_snappy_versions_decides_through_the_core(snappy):
    proc = tidemark(snappy, "ab", "--a", "engine.version=1.1.9", "--b", "engine.version=1.2.2",
                    "--format", "json", "--", "engine=snappy", "workload=snappy_flat",
                    "repetitions=6", FAST, f"db={snappy / 'tidemark.duckdb'}",
                    f"results_dir={snappy}", f"data_dir={snappy / 'data'}")
    report = json.loads(proc.stdout[proc.stdout.index("{"):proc.stdout.rindex("}") + 1])
    rows = [r for r in report["rows"] if r["metric"] == "bytes_per_second"]
    # 1.2.2 names its level-1 cases BM_UFlat/0/1; the workload's rename keeps 1.1.9's names,
    # so all four pair (the workload declares bytes_per_second: ab judges it unasked)
    assert sorted(r["label"] for r in rows) == sorted(f"snappy_flat ({b})" for b in SNAPPY_SERIES)
    assert all(r["comparison"]["test"].startswith("Wilcoxon") for r in rows)
    versions = query(snappy, """SELECT DISTINCT r.engine_version, b.provenance->>'$.source_note',
                                       b.provenance->>'$.patches'
                                FROM runs r JOIN builds b USING (build_id)
                                WHERE r.run_id LIKE '%-b'""")
    (version, note, patches), = versions
    # trixie's Debian files are not served here: the orig tarball and our patch built it
    assert version == "1.2.2" and "not applied" in note and "system-benchmark" in patches


@pytest.fixture(scope="module")
def zstd(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("zstd")
    tidemark(tmp, "run", "engine=zstd", "suite=zstd_smoke", "repetitions=2")
    return tmp


def test_zstd_commands_are_timed_per_invocation_with_mb_per_s(zstd):
    rows = query(zstd, """SELECT i.workload, i.params->>'$."extra.level"', i.threads,
                                 count(DISTINCT i.invocation_id),
                                 count(*) FILTER (m.name = 'wall_s' AND m.value > 0),
                                 count(*) FILTER (m.name = 'user_s'),
                                 count(*) FILTER (m.name = 'max_rss_bytes' AND m.value > 0),
                                 count(*) FILTER (m.name = 'mb_per_s' AND m.value > 0)
                          FROM invocations i JOIN metrics m USING (invocation_id)
                          WHERE i.phase = 'measured' AND i.status = 'ok'
                            AND i.workload <> 'zstd_bench' GROUP BY ALL""")
    points = {(w, level, t) for w, level, t, *_ in rows}
    assert points == {(w, lv, t) for w in ("zstd_compress", "zstd_decompress")
                      for lv in ("1", "3", "19") for t in (1, 2)}
    assert all(row[3:] == (2, 2, 2, 2, 2) for row in rows), rows
    argv = json.loads(query(zstd, """SELECT command FROM invocations WHERE workload =
                                     'zstd_compress' AND threads = 2 AND phase = 'measured'
                                     AND (params->>'$."extra.level"') = '19' LIMIT 1""")[0][0])
    assert argv[0].endswith("/src/programs/zstd") and "-19" in argv and "-T2" in argv


def test_zstd_bench_mode_is_read_through_the_regex_map(zstd):
    rows = query(zstd, """SELECT m.name, m.unit, m.better, count(*) FROM invocations i
                          JOIN metrics m USING (invocation_id)
                          WHERE i.workload = 'zstd_bench' AND i.phase = 'measured'
                            AND i.status = 'ok' GROUP BY ALL""")
    by_name = {name: (unit, better, n) for name, unit, better, n in rows}
    assert by_name["ratio"] == ("x", "higher", 2)
    assert by_name["compress_mb_s"] == ("MB/s", "higher", 2)
    assert by_name["compressed_bytes"][:2] == ("B", "lower")


def test_a_gbench_workload_on_a_binary_that_is_not_google_benchmark_is_refused(zstd):
    proc = tidemark(zstd, "run", "engine=zstd", "workload=snappy_flat", "workload.engines=[]",
                    "workload.binary=zstd", "label=refused", check=False)
    err = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(err) == 1, proc.stderr
    assert "is not a Google Benchmark binary" in err[0] and "kind: command" in err[0]
    assert query(zstd, "SELECT count(*) FROM runs WHERE label = 'refused'") == [(0,)]


def test_a_recipe_binary_the_build_does_not_produce_is_one_line(zstd):
    proc = tidemark(zstd, "run", "engine=zstd", "workload=zstd_bench",
                    "engine.binaries.zstd=programs/zstd-missing", "label=missing", check=False)
    err = proc.stderr.strip().splitlines()
    assert proc.returncode != 0 and len(err) == 1, proc.stderr
    assert "zstd-missing does not exist; check engine.binaries.zstd" in err[0]
    assert query(zstd, "SELECT count(*) FROM runs WHERE label = 'missing'") == [(0,)]


def test_runner_docker_runs_snappy_in_its_own_image(tmp_path):
    """The binary's image holds it and the libraries ldd lists (its libsnappy.so from the build
    tree); the source's test data is mounted read-only at its host path."""
    tidemark(tmp_path, "run", "engine=snappy", "workload=snappy_flat", "repetitions=2",
             "runner=docker", FAST, "workload.benchmark='^BM_UFlat/0$'")
    rows = query(tmp_path, """SELECT status, conditions->>'$.runner',
                                     (conditions->>'$.residency_pct')::DOUBLE FROM invocations""")
    assert [r[:2] for r in rows] == [("ok", "docker")] * 2 and all(r[2] >= 95 for r in rows)
    images, = query(tmp_path, "SELECT provenance->>'$.images' FROM builds")
    assert json.loads(images[0])["snappy_benchmark"]["tag"].startswith(
        "tidemark/snappy-snappy-benchmark:")


PERF_TESTS = '''def test_sum(benchmark):
    benchmark(sum, range(1000))


def test_sorted(benchmark):
    benchmark(sorted, list(range(1000, 0, -1)))
'''
ENGINE = '''defaults: [engine_schema, _self_]
name: pyproj
version: "0.1"
source: {{kind: local, path: {project}}}
build_system: commands
build_commands:
  - python3 -m venv "$BUILD/venv"
  - '"$BUILD/venv/bin/pip" install -q --disable-pip-version-check pytest pytest-benchmark'
binaries: {{python: ../build/venv/bin/python}}
'''
WORKLOAD = '''defaults: [workload_schema, _self_]
name: py_perf
kind: command
command: ["{binary:python}", -m, pytest, -q, -p, no:cacheprovider, -c, "{source}/pytest.ini",
          "{source}/tests/test_perf.py", "--benchmark-json={out}", --benchmark-save-data,
          --benchmark-min-rounds=5, --benchmark-max-time=0.000001]
output: {format: pytest_benchmark_json, source: out}
'''


def test_a_pytest_benchmark_suite_from_the_users_own_config_folder(tmp_path):
    """A Python project's recipe and workload kept outside Tidemark (hydra.searchpath): built
    by its own commands (a venv), its suite run as a command writing {out}, each benchmark its
    own series and each round a repetition."""
    project, conf = tmp_path / "project", tmp_path / "conf"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_perf.py").write_text(PERF_TESTS)
    (project / "pytest.ini").write_text("")
    for group, text in (("engine", ENGINE.format(project=project)), ("workload", WORKLOAD)):
        (conf / group).mkdir(parents=True)
        (conf / group / f"py_{group}.yaml").write_text(text)
    for _ in range(2):  # the second reuses the build: its python is a link out of the folder
        proc = tidemark(tmp_path, "run", f"hydra.searchpath=[file://{conf}]", "engine=py_engine",
                        "workload=py_workload", "repetitions=1")
    assert "cached, no compile" in proc.stdout
    rows = query(tmp_path, """SELECT benchmark, count(*), count(DISTINCT repetition),
                                     min(status), max(status)
                              FROM invocations WHERE phase = 'measured' GROUP BY 1 ORDER BY 1""")
    assert rows == [("tests/test_perf.py::test_sorted", 10, 5, "ok", "ok"),
                    ("tests/test_perf.py::test_sum", 10, 5, "ok", "ok")]  # 2 runs × 5 rounds
    (engine, system), = query(tmp_path, """SELECT DISTINCT r.engine, b.provenance->>'$.build_system'
                                           FROM runs r JOIN builds b USING (build_id)""")
    assert (engine, system) == ("pyproj", "commands")
    # the user's folder is kept with the run's overrides: --resume and gate --confirm compose it
    overrides = {o for row in query(tmp_path, "SELECT overrides FROM runs")
                 for o in json.loads(row[0])}
    assert f"hydra.searchpath=[file://{conf}]" in overrides


def test_the_same_zstd_source_built_with_meson(zstd):
    """Meson configures into the build folder and Ninja builds the recipe's target; the run
    names the same engine (zstd), its build says how it was built."""
    tidemark(zstd, "run", "engine=zstd_meson", "workload=zstd_bench", "repetitions=1",
             "label=meson")
    rows = query(zstd, """SELECT i.status, b.provenance->>'$.build_system',
                                 b.provenance->>'$.binary_path'
                          FROM invocations i JOIN runs r USING (run_id) JOIN builds b
                          USING (build_id) WHERE r.label = 'meson' AND i.phase = 'measured'""")
    assert [(s, system) for s, system, _ in rows] == [("ok", "meson")]
    assert rows[0][2].endswith("/build/programs/zstd")


def test_a_source_tarball_is_checked_against_its_sha256(snappy, tmp_path):
    """engine.source.kind=tarball: the digest is checked before anything is unpacked (a wrong
    one is one line), and the build keys on it."""
    tree, = {Path(p) for p, in query(snappy, """SELECT DISTINCT provenance->>'$.source_dir'
                                               FROM builds WHERE source_kind = 'debian'
                                               AND (provenance->>'$.version') = '1.1.9'""")}
    tarball = tmp_path / "snappy-1.1.9.tar.gz"
    subprocess.run(["tar", "-czf", str(tarball), "-C", str(tree.parent), tree.name], check=True)
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    source = ["engine=snappy", "workload=snappy_flat", "repetitions=1", FAST,
              "engine.source.kind=tarball", f"engine.source.path={tarball}"]
    bad = tidemark(snappy, "run", *source, f"engine.source.sha256={'0' * 64}", check=False)
    assert bad.returncode != 0 and len(bad.stderr.strip().splitlines()) == 1
    assert f"has sha256 {digest}, and engine.source.sha256 says {'0' * 64}" in bad.stderr
    tidemark(snappy, "run", *source, f"engine.source.sha256={digest}", "label=tarball")
    (kind, version, ok), = query(snappy, """SELECT b.source_kind, b.source_version,
                                                   count(*) FILTER (i.status = 'ok')
                                            FROM runs r JOIN builds b USING (build_id)
                                            JOIN invocations i USING (run_id)
                                            WHERE r.label = 'tarball' GROUP BY ALL""")
    assert (kind, version, ok) == ("tarball", digest, 4)


def test_the_site_shows_zstd_like_any_engine(zstd, tmp_path):
    """No page knows zstd: the home page lists its runs, its workload pages show each series'
    own figures linked to their runs, the Compare tool has the pair of runs, the downloads
    have its series."""
    tidemark(zstd, "run", "engine=zstd", "workload=zstd_bench", "repetitions=2", "label=again")
    tidemark(zstd, "site", "--db", str(zstd / "tidemark.duckdb"), "--out", str(tmp_path))
    site = tmp_path / "site"
    home = (site / "index.html").read_text()
    assert "zstd 1.5.4" in home
    page, = (site / "workloads").glob("zstd-compress-*.html")
    text = page.read_text()
    assert "Values without ops/s" in text
    assert text.count('href="../runs/') >= 12  # 3 levels × 2 threads × the figures, each linked
    table = page.with_name(page.stem + ".values-without-opss.csv").read_text()
    assert "mb_per_s (MB/s)" in table and "wall_s (s)" in table and "level=19" in table
    bench, = (site / "workloads").glob("zstd-bench-*.html")
    # its trend is charted in the first metric it declares (metrics: [compress_mb_s, ...])
    assert "tidemarkTrend" in bench.read_text()
    assert "compress&#95;mb&#95;s (MB/s), median of repetitions" in bench.read_text()
    pairs = [json.loads(p.read_text()) for p in (site / "compare").glob("*.json")]
    judged = {row["metric"] for pair in pairs for row in (pair.get("rows") or [])}
    assert {"compress_mb_s", "decompress_mb_s"} <= judged  # zstd_bench's declared metrics
    assert list((site / "workloads").glob("zstd-bench-*.csv"))
