"""asv for real, then `tidemark import --format asv_json` of its results folder: asv 0.6.6 is
installed from the package index into a throwaway venv (pip's cache makes a re-run fast), runs
a two-commit git repository's suite with `--environment existing` and `--record-samples`, and
its results folder becomes one imported run per commit, carrying the commit."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from orchestrator.store.reads import run_facts
from tests.e2e.fixtures import query, tidemark

ASV = "asv==0.6.6"
SUITE = '''
N = {n}


def time_sort():
    sorted(range(N, 0, -1))


time_sort.repeat, time_sort.number, time_sort.warmup_time, time_sort.rounds = 5, 50, 0, 1


class Join:
    params = [10, 1000]
    param_names = ["n"]
    repeat, number, warmup_time, rounds = 4, 50, 0, 1

    def time_join(self, n):
        "-".join(["x"] * n)

    def track_parts(self, n):
        return n
    track_parts.unit = "parts"
'''
# Per run: time_sort's 5 samples, time_join's 4 per param, track_parts' one value per param.
SERIES, PER_RUN = 1 + 2 + 2, 5 + 2 * 4 + 2


def _run(argv: list, cwd: Path, env: dict) -> str:
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"{argv} exited {proc.returncode}:\n{proc.stdout[-2000:]}" \
                                 f"\n{proc.stderr[-2000:]}"
    return proc.stdout


def _commit(repo: Path, env: dict, n: int, day: int) -> str:
    (repo / "benchmarks" / "benchmarks.py").write_text(SUITE.format(n=n))
    _run(["git", "add", "-A"], repo, env)
    stamp = f"2024-05-0{day}T10:00:00Z"
    _run(["git", "commit", "-qm", f"sort {n}", "--date", stamp], repo,
         env | {"GIT_COMMITTER_DATE": stamp})
    return _run(["git", "rev-parse", "HEAD"], repo, env).strip()


@pytest.fixture(scope="module")
def asv_results(tmp_path_factory) -> tuple[Path, list[str]]:
    """results/<machine>/ of two commits of a tiny suite (time_sort 4x slower in the second)."""
    tmp = tmp_path_factory.mktemp("asv")
    venv, repo, home = tmp / "venv", tmp / "repo", tmp / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env |= {"HOME": str(home), "GIT_AUTHOR_NAME": "dev", "GIT_AUTHOR_EMAIL": "dev@example.org",
            "GIT_COMMITTER_NAME": "dev", "GIT_COMMITTER_EMAIL": "dev@example.org"}
    home.mkdir()
    (repo / "benchmarks").mkdir(parents=True)
    _run([sys.executable, "-m", "venv", venv], tmp, env)
    _run([venv / "bin" / "pip", "install", "-q", "--disable-pip-version-check", ASV], tmp, env)
    asv, python = venv / "bin" / "asv", venv / "bin" / "python"
    (repo / "asv.conf.json").write_text(json.dumps({
        "version": 1, "project": "tiny", "repo": ".", "branches": ["HEAD"],
        "environment_type": "existing", "benchmark_dir": "benchmarks",
        "results_dir": "results", "html_dir": "html"}))
    (repo / "benchmarks" / "__init__.py").write_text("")
    (repo / ".gitignore").write_text("results/\n")
    _run(["git", "init", "-q"], repo, env)
    _run([asv, "machine", "--yes"], repo, env)  # the machine's facts, in $HOME
    shas = []
    for day, n in ((1, 1000), (2, 4000)):
        shas.append(_commit(repo, env, n, day))
        _run([asv, "run", "--environment", f"existing:{python}", "--set-commit-hash", shas[-1],
              "--record-samples"], repo, env)
    (machine,) = [p for p in (repo / "results").iterdir() if p.is_dir()]
    return machine, shas


def imp(tmp: Path, path: Path, check: bool = True):
    return tidemark(tmp, "import", str(path), "--format", "asv_json", "--db",
                    str(tmp / "tidemark.duckdb"), check=check)


def counts(tmp: Path) -> tuple:
    return query(tmp, "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM invocations), "
                      "(SELECT count(*) FROM aggregates), (SELECT count(*) FROM builds)")[0]


def test_an_asv_results_folder_is_one_run_per_commit_with_its_samples(tmp_path, asv_results):
    machine, shas = asv_results
    first = imp(tmp_path, machine)
    assert first.stdout.count("imported run") == 2 and f"{PER_RUN} invocations" in first.stdout
    runs = query(tmp_path, """SELECT b.commit_sha, strftime(b.commit_date, '%Y-%m-%d'),
        r.machine_fingerprint, r.source FROM runs r JOIN builds b USING (build_id)
        ORDER BY b.commit_date""")
    assert runs == [(shas[0], "2024-05-01", f"import:{machine.name}", "import"),
                    (shas[1], "2024-05-02", f"import:{machine.name}", "import")]
    per_series = query(tmp_path, """SELECT i.benchmark, i.params->>'$.n', m.name, m.unit,
        m.better, count(*) FROM invocations i JOIN metrics m USING (invocation_id)
        WHERE i.status = 'ok' GROUP BY ALL ORDER BY ALL""")
    assert per_series == [
        ("benchmarks.Join.time_join", "10", "wall_s", "s", "lower", 8),
        ("benchmarks.Join.time_join", "1000", "wall_s", "s", "lower", 8),
        ("benchmarks.Join.track_parts", "10", "track_value", "parts", "lower", 2),
        ("benchmarks.Join.track_parts", "1000", "track_value", "parts", "lower", 2),
        ("benchmarks.time_sort", None, "wall_s", "s", "lower", 10)]
    assert query(tmp_path, "SELECT count(DISTINCT series_key) FROM invocations")[0][0] == SERIES
    # both runs' samples, as asv stored them, are the repetitions
    for sha in shas:
        stored = [v for (v,) in query(tmp_path, """SELECT m.value FROM invocations i
            JOIN metrics m USING (invocation_id) JOIN runs r USING (run_id)
            JOIN builds b USING (build_id) WHERE b.commit_sha = ? AND
            i.benchmark = 'benchmarks.time_sort' ORDER BY i.repetition""", [sha])]
        (result,) = [p for p in machine.glob(f"{sha[:8]}-*.json")]
        columns = json.loads(result.read_text())
        entry = dict(zip(columns["result_columns"], columns["results"]["benchmarks.time_sort"]))
        assert stored == entry["samples"][0] and len(stored) == 5
    con = duckdb.connect(str(tmp_path / "tidemark.duckdb"), read_only=True)
    try:
        run_ids = [r for (r,) in con.execute("SELECT run_id FROM runs").fetchall()]
        assert {run_facts(con, r)["commit"] for r in run_ids} == {s[:12] for s in shas}
    finally:
        con.close()


def test_the_same_folder_twice_adds_nothing(tmp_path, asv_results):
    machine, _ = asv_results
    imp(tmp_path, machine)
    before = counts(tmp_path)
    again = imp(tmp_path, machine.parent)  # asv's results/ folder: the same files
    assert again.stdout.count("already imported") == 2
    assert counts(tmp_path) == before and before[0] == 2 and before[3] == 2


@pytest.mark.parametrize("damage, message", [
    (lambda text: text[:len(text) // 2], "line 1 column"),
    (lambda text: text.replace('"version": 2', '"version": 1'), "field 'version' is 1"),
    (lambda text: text.replace('"result_columns": ["result", ', '"result_columns": ['),
     "field 'result_columns'"),
])
def test_a_damaged_file_is_one_line_and_writes_nothing(tmp_path, asv_results, damage, message):
    machine, _ = asv_results
    copy = tmp_path / "results" / machine.name
    copy.mkdir(parents=True)
    for path in machine.iterdir():
        (copy / path.name).write_text(path.read_text())
    (bad,) = sorted(p for p in copy.glob("*-*.json"))[-1:]
    bad.write_text(damage(bad.read_text()))
    proc = imp(tmp_path, copy, check=False)
    assert proc.returncode == 2 and message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and bad.name in proc.stderr
    assert not (tmp_path / "tidemark.duckdb").exists()  # the good file was not written either


def test_a_gate_between_the_commits_as_junit_xml(tmp_path, asv_results):
    """`tidemark gate --format junit` on the two imported commits: the document alone on
    stdout, valid JUnit; time_sort (4x the work) fails, each track value (one repetition) is
    skipped as cannot tell, and every outcome is the gate's own verdict (its JSON report)."""
    import xml.etree.ElementTree as ET

    import xmlschema

    from tests.conftest import DATA

    imp(tmp_path, asv_results[0])
    base, cand = [r for (r,) in query(tmp_path, "SELECT r.run_id FROM runs r JOIN builds b "
                                                "USING (build_id) ORDER BY b.commit_date")]
    gate = ("gate", "--db", str(tmp_path / "tidemark.duckdb"), "--baseline", base,
            "--candidate", cand, "--metric", "wall_s", "--metric", "track_value")
    junit = tidemark(tmp_path, *gate, "--format", "junit", check=False)
    assert junit.returncode == 1 and "gate: REGRESSION" in junit.stderr
    xmlschema.XMLSchema(str(DATA / "junit" / "junit-10.xsd")).validate(junit.stdout)
    report, _ = json.JSONDecoder().raw_decode(tidemark(tmp_path, *gate, "--format", "json",
                                                       check=False).stdout)
    expected: dict[str, list[str]] = {}  # label → the outcome of each of its series
    for row in report["rows"]:  # one metric per series here
        expected.setdefault(row["label"], []).append(
            {"slower": "failure", "not enough repetitions": "skipped"}.get(
                row["comparison"]["verdict"], "passed"))
    suite = ET.fromstring(junit.stdout)
    outcomes = {}
    for case in suite.iter("testcase"):
        kinds = [c.tag for c in case if c.tag in ("failure", "skipped")]
        outcomes[(case.get("classname"), case.get("name"))] = kinds[0] if kinds else "passed"
    assert outcomes[("benchmarks", "benchmarks (benchmarks.time_sort)")] == "failure"
    assert [outcomes[("benchmarks.Join", f"benchmarks.Join (benchmarks.Join.track_parts) n={n}")]
            for n in (10, 1000)] == ["skipped", "skipped"]
    got: dict[str, list[str]] = {}
    for (_, name), outcome in outcomes.items():
        got.setdefault(name.split(" n=")[0], []).append(outcome)
    assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in expected.items()}
    assert (suite.get("tests"), suite.get("errors")) == (str(SERIES), "0")
    assert suite.get("failures") == str(list(outcomes.values()).count("failure"))
