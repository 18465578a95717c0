"""A git repository of LevelDB 1.23's Debian source, for tests of commit-aware builds and
bisect: the source comes through Tidemark's own fetch (the real build cache's sources), the
commits are made here."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from orchestrator.build.engine import fetch_debian_source
from orchestrator.build.filelock import held
from orchestrator.plan.schema import EngineConf, SourceConf

SOURCES = Path("~/.cache/tidemark/sources").expanduser()
GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "Tidemark Test", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "Tidemark Test", "GIT_COMMITTER_EMAIL": "t@example.org"}
# The planted point-read cost as a code change (not an environment variable): a fixed volatile
# loop in every DBImpl::Get, the change a bisect must find.
GET_SIGNATURE = "Status DBImpl::Get(const ReadOptions& options, const Slice& key,\n" \
                "                   std::string* value) {\n"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True,
                          env=GIT_ENV).stdout.strip()


def leveldb_tree() -> Path:
    engine = EngineConf(name="leveldb", version="1.23",
                        source=SourceConf(kind="debian", package="leveldb",
                                          package_version="1.23-4"))
    SOURCES.mkdir(parents=True, exist_ok=True)
    with held(SOURCES / ".fetch.lock", "another fetch of engine sources", print):
        return fetch_debian_source(engine, SOURCES)


def leveldb_repo(dest: Path) -> Path:
    """dest: a git repository (branch main) whose first commit is LevelDB 1.23."""
    shutil.copytree(leveldb_tree(), dest, symlinks=True)
    git(dest, "init", "--quiet", "--initial-branch=main")
    git(dest, "add", "--all")
    git(dest, "commit", "--quiet", "-m", "import leveldb 1.23")
    return dest


def commit_note(repo: Path, subject: str) -> str:
    """A commit that changes no compiled code (a line of NEWS.tidemark); its sha."""
    with (repo / "NEWS.tidemark").open("a") as fh:
        fh.write(subject + "\n")
    git(repo, "add", "NEWS.tidemark")
    git(repo, "commit", "--quiet", "-m", subject)
    return git(repo, "rev-parse", "HEAD")


def commit_get_cost(repo: Path, spins: int, subject: str) -> str:
    """A commit that makes every DBImpl::Get spin `spins` iterations of a volatile loop."""
    path = repo / "db" / "db_impl.cc"
    text = path.read_text()
    assert GET_SIGNATURE in text
    loop = f"  for (volatile int tidemark_i = 0; tidemark_i < {spins}; tidemark_i = tidemark_i + 1) {{\n  }}\n"
    path.write_text(text.replace(GET_SIGNATURE, GET_SIGNATURE + loop))
    git(repo, "commit", "--quiet", "-am", subject)
    return git(repo, "rev-parse", "HEAD")


def git_engine(repo: Path, ref: str) -> list[str]:
    """The overrides that build LevelDB from this repository at `ref` (no patches of ours)."""
    return ["engine=leveldb", "engine.source.kind=git", f"engine.source.path={repo}",
            f"engine.source.ref={ref}", "engine.patches=[]"]
