"""Commit-aware builds on a real LevelDB: a git ref is resolved to its commit before the build
key is made (a moving branch is never measured stale), a local checkout with uncommitted changes
is keyed by its content, and every run names the commit it measured."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.fixtures import query, tidemark
from tests.e2e.git_engine import commit_note, git, git_engine, leveldb_repo

pytestmark = pytest.mark.engine

SMALL = ["workload=readrandom", "workload.params.num=2000", "repetitions=1", "counters=false"]


def run(tmp: Path, *overrides: str) -> str:
    proc = tidemark(tmp, "run", *SMALL, *overrides)
    return proc.stdout.split("run ")[-1].split(":")[0]


def commit_of(tmp: Path, run_id: str) -> tuple:
    return query(tmp, "SELECT b.commit_sha, b.commit_subject, b.commit_dirty, r.build_cached "
                      "FROM runs r JOIN builds b USING (build_id) WHERE r.run_id = ?", [run_id])[0]


def test_a_moved_branch_builds_its_new_commit_and_both_runs_name_theirs(tmp_path):
    repo = leveldb_repo(tmp_path / "repo")
    first_sha = git(repo, "rev-parse", "HEAD")
    first = run(tmp_path, *git_engine(repo, "main"))
    again = run(tmp_path, *git_engine(repo, "main"))
    second_sha = commit_note(repo, "note the second commit")
    second = run(tmp_path, *git_engine(repo, "main"))
    assert commit_of(tmp_path, first)[:3] == (first_sha, "import leveldb 1.23", None)
    assert commit_of(tmp_path, again)[3] is True  # the same commit: the cached build
    sha, subject, _, cached = commit_of(tmp_path, second)
    assert (sha, subject, cached) == (second_sha, "note the second commit", False)
    # A comparison across them names both commits.
    proc = tidemark(tmp_path, "compare", first, second, "--db", str(tmp_path / "tidemark.duckdb"),
                    check=False)
    assert first_sha[:12] in proc.stdout and second_sha[:12] in proc.stdout, proc.stdout
    # A tag or a short sha names a commit as well as a branch does.
    git(repo, "tag", "v-first", first_sha)
    by_tag = run(tmp_path, *git_engine(repo, "v-first"))
    assert commit_of(tmp_path, by_tag)[0] == first_sha and commit_of(tmp_path, by_tag)[3]


def test_an_unknown_ref_is_one_line_naming_it(tmp_path):
    repo = leveldb_repo(tmp_path / "repo")
    proc = tidemark(tmp_path, "run", *SMALL, *git_engine(repo, "no-such-branch"), check=False)
    assert proc.returncode != 0
    assert "engine.source.ref='no-such-branch' is not a branch, tag or commit" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_a_local_checkout_with_uncommitted_changes_is_keyed_by_content(tmp_path):
    repo = leveldb_repo(tmp_path / "repo")
    local = ["engine=leveldb", "engine.source.kind=local", f"engine.source.path={repo}",
             "engine.patches=[]"]
    clean = run(tmp_path, *local)
    (repo / "NEWS.tidemark").write_text("not committed\n")
    dirty = run(tmp_path, *local)
    (repo / "NEWS.tidemark").write_text("changed again\n")
    dirtier = run(tmp_path, *local)
    head = git(repo, "rev-parse", "HEAD")
    assert commit_of(tmp_path, clean)[:3] == (head, "import leveldb 1.23", None)
    sha, _, mark, cached = commit_of(tmp_path, dirty)
    assert sha == head and mark and not cached
    assert commit_of(tmp_path, dirtier)[2] not in (None, mark)


def test_backfill_measures_every_kth_commit_once_and_resumes(tmp_path):
    repo = leveldb_repo(tmp_path / "repo")
    shas = [git(repo, "rev-parse", "HEAD")] + [commit_note(repo, f"note {n}") for n in (2, 3, 4)]
    db = str(tmp_path / "tidemark.duckdb")
    where = [f"db={db}", f"results_dir={tmp_path}", f"data_dir={tmp_path / 'data'}"]
    engine = git_engine(repo, "main")[:-2] + ["engine.patches=[]"]  # backfill sets the ref
    argv = ["backfill", "--refs", f"{shas[0]}..main", "--every", "2", "--", *SMALL, *engine,
            *where]
    first = tidemark(tmp_path, *argv)
    assert "4 commits, 3 chosen (every 2), 0 already measured" in first.stdout
    measured = query(tmp_path, "SELECT b.commit_sha FROM runs r JOIN builds b USING (build_id) "
                               "WHERE r.label = 'backfill' ORDER BY b.commit_date, r.started_at")
    assert sorted(s for (s,) in measured) == sorted([shas[0], shas[2], shas[3]])
    again = tidemark(tmp_path, *argv)
    assert "3 already measured" in again.stdout
    assert query(tmp_path, "SELECT count(*) FROM runs")[0][0] == 3
