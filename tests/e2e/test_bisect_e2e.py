"""`tidemark bisect` on a real LevelDB history: 16 commits of LevelDB 1.23's Debian source, the
11th making every read dearer by a planted 5 % of its instructions (a volatile loop in
DBImpl::Get, as the planted patch spins, sized from a callgrind count of the first commit).
The bisect judges instruction counts (callgrind, paired in each job): a 5 % change there is
exact, where this shared machine's wall-clock noise would decide a 5 % test (the wall-clock
bisect runs in the nightly flow's test, on a large cost; its power at 5 % is in benchmarks/)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.fixtures import query, tidemark
from tests.e2e.git_engine import commit_get_cost, commit_note, git, git_engine, leveldb_repo

pytestmark = pytest.mark.engine

WORKLOAD = ["machine=ci-2core", "workload=readrandom", "workload.params.num=50000",
            "counters=false"]
CALLGRIND = ["callgrind=true", "callgrind_ops=5000", "callgrind_repetitions=2"]
PLANTED_SHARE = 0.05
# Instructions per iteration of commit_get_cost's volatile loop (gcc 12 -O2, x86-64: load,
# compare, branch, load, add, store, jump), measured here as the count difference of 1000 spins.
SPIN_INSTRUCTIONS = 7.0


def instructions_per_read(tmp: Path, repo: Path) -> float:
    """The first commit's instructions per read under callgrind."""
    work = tmp / "calibrate"
    work.mkdir()
    tidemark(work, "run", *WORKLOAD, *CALLGRIND, "repetitions=1", *git_engine(repo, "main"))
    ((value,),) = query(work, "SELECT median(m.value) FROM metrics m JOIN invocations i "
                              "USING (invocation_id) WHERE m.name = 'instructions_per_op' "
                              "AND i.phase = 'callgrind'")
    return value


def history(tmp: Path, spins: int | None = None) -> tuple[Path, list[str]]:
    """16 commits; the 11th makes every read spin `spins` (default: a planted 5 %)."""
    repo = leveldb_repo(tmp / "repo")
    shas = [git(repo, "rev-parse", "HEAD")]
    if spins is None:
        spins = round(PLANTED_SHARE * instructions_per_read(tmp, repo) / SPIN_INSTRUCTIONS)
    for number in range(2, 17):
        if number == 11:
            shas.append(commit_get_cost(repo, spins, "commit 11: make every read spin"))
        else:
            shas.append(commit_note(repo, f"commit {number}: a note"))
    return repo, shas


def run_at(tmp: Path, repo: Path, sha: str) -> str:
    proc = tidemark(tmp, "run", *WORKLOAD, *CALLGRIND, "repetitions=3",
                    *git_engine(repo, sha))
    return proc.stdout.split("run ")[-1].split(":")[0]


def bisect(tmp: Path, repo: Path, *args: str):
    db = tmp / "tidemark.duckdb"
    return tidemark(tmp, "bisect", *args, "--metric", "instructions_per_op", "--max-rounds",
                    "20", "--", *WORKLOAD, *CALLGRIND, *git_engine(repo, "main")[:-2],
                    "engine.patches=[]", f"db={db}", f"results_dir={tmp}",
                    f"data_dir={tmp / 'data'}", check=False)


def test_bisect_names_commit_11_in_six_builds(tmp_path):
    repo, shas = history(tmp_path)
    proc = bisect(tmp_path, repo, "--good", shas[0], "--bad", "main")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"first bad commit {shas[10]} (11 of 16) 'commit 11: make every read spin'" \
        in proc.stdout
    builds = int(proc.stdout.split(" builds")[0].rsplit(" ", 1)[-1])
    assert builds <= 6
    ((steps, status, first),) = query(tmp_path, "SELECT steps, status, first_bad FROM bisects")
    steps = json.loads(steps)
    assert status == "done" and first == shas[10]
    assert {s["index"] for s in steps if s["state"] == "bad"} >= {10}
    assert all(s["state"] == ("bad" if s["index"] >= 10 else "good") for s in steps)
    # The planted cost is the 5 % it was sized to, in the instructions the bad end measured.
    (bad_end,) = [s for s in steps if s["index"] == 15]
    assert 1.03 < bad_end["ratio"] < 1.07, bad_end
    # Each judged commit was built once, from its own commit.
    built = dict(query(tmp_path, "SELECT commit_sha, count(*) FROM builds GROUP BY 1"))
    assert set(built.values()) == {1} and len(built) == builds
    assert set(built) <= set(shas)
    # The site's Bisects page: the judged commits in commit order, the step at commit 11 named.
    out = tmp_path / "site"
    tidemark(tmp_path, "site", "--db", str(tmp_path / "tidemark.duckdb"), "--out", str(out))
    page = (out / "site" / "statistics" / "bisects.html").read_text()
    assert f"first bad commit {shas[10][:12]} (11 of 16): commit 11: make every read spin" in page
    assert 'id="bisect-0"' in page and "against the good commit" in page
    # The trend in commit order: every judged commit's runs at their commit, commit 11 named.
    commits = (out / "site" / "commits.html").read_text()
    assert 'id="commits-0"' in commits and "commit 11: make every read spin" in commits
    # ... and the instruction counts in commit order: the 5 % step at commit 11, clear of noise.
    assert 'id="commits-instructions-0"' in commits
    # The gate between a run of commit 10 and one of commit 11 flags the 5 %, and its paired
    # re-measurement confirms it: exit 1.
    base, cand = (run_at(tmp_path, repo, sha) for sha in (shas[9], shas[10]))
    gate = tidemark(tmp_path, "gate", "--db", str(tmp_path / "tidemark.duckdb"), "--baseline",
                    base, "--candidate", cand, "--metric", "instructions_per_op", "--confirm",
                    "--confirm-rounds", "20", check=False)
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert "flagged between runs" in gate.stdout and "confirmed slower (paired" in gate.stdout


def test_a_range_without_a_regression_says_so(tmp_path):
    repo = leveldb_repo(tmp_path / "repo")
    good = git(repo, "rev-parse", "HEAD")
    commit_note(repo, "a note")
    proc = bisect(tmp_path, repo, "--good", good, "--bad", "main")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "no regression to find in this range" in proc.stdout
