"""Which code a build compiles: a git ref resolved to its commit, a local tree's content.

Side effects: git. A build is keyed by what it compiles, never by a name that can move:

* `git` source: a mirror clone of `source.path` per repository, fetched on every resolve (a
  branch moves; an existing clone used to be measured stale), then `source.ref` (a branch, tag
  or commit, short or full) resolved to its commit sha. The build exports that commit into its
  own folder (`export_commit`), so builds of several commits never share a checkout.
* `local` source: the checkout as it is. In a git checkout, its HEAD commit, and when it has
  uncommitted changes (tracked or untracked, not ignored) a hash of them: `dirty`. Elsewhere a
  hash of every file's path and content.

A Revision is the build's provenance (`Build.revision`) and part of its key (engine.build_key).
"""
from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import BuildError
from ..plan.runplan import short_hash
from ..plan.schema import EngineConf

_LOG_FORMAT = "%H%x00%s%x00%an <%ae>%x00%cI"


@dataclass(frozen=True)
class Revision:
    """The code of one build: its commit (sha '' when the tree is not a git checkout), and a
    hash of the changes on top of it ('' when clean)."""

    sha: str = ""
    subject: str = ""
    author: str = ""
    date: str = ""  # the commit's committer date, ISO 8601
    dirty: str = ""

    def key(self) -> dict[str, str]:
        """What the build key holds of it: the code, not the commit's words."""
        return {"commit": self.sha, **({"dirty": self.dirty} if self.dirty else {})}

    def record(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def short(self) -> str:
        """e.g. "3f2a1c9d0b1e fix the cache" or "3f2a1c9d0b1e+dirty"."""
        text = self.sha[:12] + ("+dirty" if self.dirty else "")
        return f"{text} {self.subject}".strip() if self.sha else ("dirty tree" if self.dirty else "")


def _git(args: list[str], cwd: Path, what: str, log: Path | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
    if log is not None:
        with log.open("a") as fh:
            fh.write(f"$ git {' '.join(args)}\n{proc.stdout}{proc.stderr}")
    if proc.returncode != 0:
        detail = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        raise BuildError(f"{what} failed: {detail}")
    return proc.stdout


def repository(path: str) -> str:
    """A repository as git is given it: a URL as written, a folder with ~ expanded and made
    absolute (git would resolve it against the sources folder it runs in)."""
    if "://" in path or (":" in path.split("/")[0] and not Path(path).exists()):
        return path  # https://…, ssh://…, git@host:org/repo
    return str(Path(path).expanduser().resolve())


def mirror(path: str, sources_dir: Path) -> Path:
    """The mirror clone of the repository at `path`, cloned once and fetched every call."""
    path = repository(path)
    sources_dir.mkdir(parents=True, exist_ok=True)
    repo = sources_dir / f"mirror-{short_hash([path])}.git"
    log = sources_dir / f"{repo.name}.log"
    if not (repo / "HEAD").exists():
        _git(["clone", "--mirror", "--quiet", path, str(repo)], sources_dir,
             f"git clone {path} (engine.source.path)", log)
    else:
        _git(["fetch", "--quiet", "--prune", "--force", "--tags", "origin"], repo,
             f"git fetch {path} (engine.source.path)", log)
    return repo


def commit_of(repo: Path, ref: str, where: str) -> Revision:
    """The commit `ref` names in `repo`, with its subject, author and date."""
    try:
        sha = _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], repo, "").strip()
    except BuildError:
        raise BuildError(f"engine.source.ref={ref!r} is not a branch, tag or commit of {where}; "
                         f"give one that exists there (git branch -a, git tag)") from None
    sha_, subject, author, date = _git(["log", "-1", f"--format={_LOG_FORMAT}", sha], repo,
                                       f"git log {sha}").rstrip("\n").split("\x00")
    return Revision(sha=sha_, subject=subject, author=author, date=date)


def commits_between(repo: Path, first: str, last: str) -> list[Revision]:
    """The commits of first..last on the first-parent line, oldest first, `first` included."""
    start, end = commit_of(repo, first, str(repo)), commit_of(repo, last, str(repo))
    out = _git(["log", "--first-parent", "--reverse", f"--format={_LOG_FORMAT}",
                f"{start.sha}..{end.sha}"], repo, f"git log {first}..{last}")
    commits = [start]
    for line in out.splitlines():
        sha, subject, author, date = line.split("\x00")
        commits.append(Revision(sha=sha, subject=subject, author=author, date=date))
    if len(commits) == 1 and start.sha != end.sha:
        raise BuildError(f"{first} is not an ancestor of {last} in {repo}; give --good an older "
                         f"commit of the same line")
    return commits


def export_commit(repo: Path, sha: str, dest: Path) -> Path:
    """The commit's files (no .git) in `dest`, which must not exist yet."""
    dest.mkdir(parents=True)
    archive = subprocess.Popen(["git", "archive", "--format=tar", sha], cwd=repo,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    untar = subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout,
                           capture_output=True)
    assert archive.stdout is not None
    archive.stdout.close()
    err = archive.stderr.read().decode() if archive.stderr else ""
    if archive.wait() != 0 or untar.returncode != 0:
        raise BuildError(f"exporting commit {sha[:12]} of {repo} failed: "
                         f"{(err or untar.stderr.decode()).strip()[:200]}")
    return dest


def _dirty_hash(tree: Path) -> str:
    """A hash of a git checkout's uncommitted changes ('' when clean): the diff against HEAD
    and every untracked, not ignored file's path and content."""
    status = _git(["status", "--porcelain=v1", "-z", "--untracked-files=all"], tree,
                  f"git status in {tree}")
    if not status:
        return ""
    digest = hashlib.sha256(_git(["diff", "--binary", "HEAD"], tree, f"git diff in {tree}")
                            .encode())
    for entry in status.split("\0"):
        if entry.startswith("?? "):
            path = tree / entry[3:]
            digest.update(entry[3:].encode() + b"\0")
            if path.is_file():
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def tree_hash(tree: Path) -> str:
    """Every file's path and content under `tree` but .git (a local tree outside git)."""
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for name in sorted(files):
            path = Path(root, name)
            digest.update(str(path.relative_to(tree)).encode() + b"\0")
            if path.is_file() and not path.is_symlink():
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def local_revision(tree: Path) -> Revision:
    """A local checkout's HEAD and uncommitted changes; a tree outside git, its content."""
    try:
        top = _git(["rev-parse", "--show-toplevel"], tree, "").strip()
    except BuildError:
        top = ""
    if not top or Path(top).resolve() != tree.resolve():
        return Revision(dirty=tree_hash(tree))
    head = commit_of(tree, "HEAD", str(tree))
    return Revision(head.sha, head.subject, head.author, head.date, _dirty_hash(tree))


def resolve_revision(engine: EngineConf, sources_dir: Path) -> tuple[Revision | None, Path | None]:
    """The revision a build of this recipe compiles and, for a git source, its mirror clone;
    (None, None) for a Debian source (its package version pins it)."""
    src = engine.source
    if src.kind == "git":
        if not src.path or not src.ref:
            raise BuildError(f"engine {engine.name!r}: a git source needs source.path and "
                             f"source.ref")
        repo = mirror(src.path, sources_dir)
        return commit_of(repo, src.ref, src.path), repo
    if src.kind == "local":
        tree = Path(src.path).expanduser()
        if not tree.is_dir():
            raise BuildError(f"engine.source.path={src.path!r} is not a folder; point it at the "
                             f"engine's checkout")
        return local_revision(tree), None
    return None, None
