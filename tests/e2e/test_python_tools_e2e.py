"""Files pyperf and pytest-benchmark write for real, in this test (both installed from the
package index into a throwaway venv), imported: series, units, directions and repetitions as
the tools wrote them; the same file twice adds nothing; a file cut short is one line."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.fixtures import query, tidemark

TOOLS = ("pyperf==2.11.0", "pytest-benchmark==5.3.1")
PERF_TESTS = '''import pytest


def test_sum(benchmark):
    benchmark(sum, range(1000))


@pytest.mark.parametrize("n", [100, 1000])
def test_sorted(benchmark, n):
    benchmark(sorted, list(range(n, 0, -1)))
'''


def _run(argv: list, cwd: Path, env: dict) -> str:
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"{argv}: {proc.stdout[-1500:]}{proc.stderr[-1500:]}"
    return proc.stdout


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, Path]:
    """pyperf timeit's and pytest --benchmark-json's files, made now by the real tools."""
    tmp = tmp_path_factory.mktemp("pytools")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", venv], tmp, env)
    _run([venv / "bin" / "pip", "install", "-q", "--disable-pip-version-check", *TOOLS], tmp, env)
    python = venv / "bin" / "python"
    # 2 worker processes × 3 values each (and their warm-ups, which pyperf marks as such)
    _run([python, "-m", "pyperf", "timeit", "--processes", "2", "--values", "3", "--loops", "100",
          "-o", tmp / "timeit.json", "sorted(range(500, 0, -1))"], tmp, env)
    (tmp / "tests").mkdir()
    (tmp / "tests" / "test_perf.py").write_text(PERF_TESTS)
    (tmp / "pytest.ini").write_text("")
    _run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", tmp / "pytest.ini",
          tmp / "tests", f"--benchmark-json={tmp / 'bench.json'}", "--benchmark-save-data",
          "--benchmark-min-rounds=5", "--benchmark-max-time=0.000001"], tmp, env)
    return {"pyperf": tmp / "timeit.json", "pytest": tmp / "bench.json"}


def imp(tmp: Path, path: Path, fmt: str, check: bool = True):
    return tidemark(tmp, "import", str(path), "--format", fmt, "--db",
                    str(tmp / "tidemark.duckdb"), check=check)


def test_a_pyperf_file_keeps_every_value_and_skips_warmups(written, tmp_path):
    doc = json.loads(written["pyperf"].read_text())
    values = sum(len(r.get("values", [])) for b in doc["benchmarks"] for r in b["runs"])
    assert values == 6
    imp(tmp_path, written["pyperf"], "pyperf_json")
    assert "already imported" in imp(tmp_path, written["pyperf"], "pyperf_json").stdout
    rows = query(tmp_path, """SELECT count(*), count(DISTINCT i.repetition), any_value(m.name),
                                     any_value(m.unit), any_value(m.better), min(m.value)
                              FROM invocations i JOIN metrics m USING (invocation_id)""")
    assert rows[0][:5] == (6, 6, "wall_s", "s", "lower") and rows[0][5] > 0
    assert query(tmp_path, "SELECT count(*) FROM runs") == [(1,)]


def test_a_pytest_benchmark_file_keeps_each_round_and_its_params(written, tmp_path):
    imp(tmp_path, written["pytest"], "pytest_benchmark_json")
    assert "already imported" in imp(tmp_path, written["pytest"], "pytest_benchmark_json").stdout
    rows = query(tmp_path, """SELECT i.benchmark, i.params::VARCHAR, count(*), any_value(m.unit),
                                     any_value(m.better)
                              FROM invocations i JOIN metrics m USING (invocation_id)
                              WHERE m.name = 'wall_s' GROUP BY ALL ORDER BY 1, 2""")
    assert [(b.split("::")[-1].split("[")[0], n, unit, better) for b, _, n, unit, better in rows] == \
        [("test_sorted", 5, "s", "lower"), ("test_sorted", 5, "s", "lower"),
         ("test_sum", 5, "s", "lower")]
    assert {p for _, p, *_ in rows} >= {json.dumps({"n": 100}), json.dumps({"n": 1000})}


def test_a_file_cut_short_is_one_line_and_writes_nothing(written, tmp_path):
    for fmt, key in (("pyperf_json", "pyperf"), ("pytest_benchmark_json", "pytest")):
        cut = tmp_path / f"cut-{key}.json"
        cut.write_text(written[key].read_text()[:400])
        proc = imp(tmp_path, cut, fmt, check=False)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert cut.name in proc.stderr
    assert not (tmp_path / "tidemark.duckdb").exists() or \
        query(tmp_path, "SELECT count(*) FROM runs") == [(0,)]
