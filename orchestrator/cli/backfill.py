"""`tidemark backfill --refs A..B [--every K] -- OVERRIDES`: a range of commits measured.

The commits of A..B on the first-parent line (A included), every K-th of them and always the
last, run as one sweep (`tidemark run -m ... engine.source.ref=SHA1,SHA2,...`): each commit is
built once into the build cache (ccache reuses what a commit did not change), and the Commits
page shows the runs in commit order. A commit that already has a run with the same label is
skipped, so the same command resumes an interrupted backfill.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import duckdb

from ..errors import ConfigError
from ..store.connection import connect
from ..store.reads import has_table
from .bisect import commits_of
from .compose import compose_conf, parse_with_overrides
from .run import run_command

_OWN = ("engine.source.ref", "label")


def pick(commits: list[str], every: int) -> list[str]:
    """Every K-th commit from the first, and always the last (pure)."""
    chosen = commits[::every]
    return chosen if chosen[-1] == commits[-1] else [*chosen, commits[-1]]


def _measured(db: Path, label: str) -> set[str]:
    """The commits that already have a run labelled `label`."""
    if not db.exists():
        return set()
    con = connect(db, read_only=True)
    try:
        if not has_table(con, "builds"):
            return set()
        rows = con.execute("SELECT DISTINCT b.commit_sha FROM runs r JOIN builds b USING "
                           "(build_id) WHERE r.label = ? AND r.status = 'ok'", [label]).fetchall()
    except duckdb.BinderException:  # a DB from before commits were recorded
        return set()
    finally:
        con.close()
    return {sha for (sha,) in rows if sha}


def backfill_command(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="tidemark backfill", description=(
        "Measure a range of commits of a git engine, every K-th (and the last), each built once: "
        "e.g. tidemark backfill --refs v1.22..main --every 5 -- engine=leveldb "
        "engine.source.kind=git engine.source.path=~/src/leveldb workload=readrandom"))
    parser.add_argument("--refs", required=True, help="FIRST..LAST (FIRST included)")
    parser.add_argument("--every", type=int, default=1, help="measure every K-th commit (default 1)")
    parser.add_argument("--label", default="backfill", help="label of the runs (default backfill)")
    args, shared = parse_with_overrides(parser, argv)
    if ".." not in args.refs or args.every < 1:
        raise ConfigError(f"--refs {args.refs} --every {args.every}: give --refs FIRST..LAST "
                          f"and --every 1 or more")
    own = [o for o in shared if o.split("=", 1)[0].lstrip("+~") in _OWN]
    if own:
        raise ConfigError(f"{own[0]!r}: tidemark backfill sets it; use --refs and --label")
    first, last = args.refs.split("..", 1)
    conf, _ = compose_conf(shared)
    _, commits = commits_of(conf, first, last)
    chosen = pick([c.sha for c in commits], args.every)
    done = _measured(Path(conf.db), args.label)
    todo = [sha for sha in chosen if sha not in done]
    print(f"backfill {args.refs}: {len(commits)} commits, {len(chosen)} chosen (every "
          f"{args.every}), {len(chosen) - len(todo)} already measured", flush=True)
    if todo:
        run_command(["-m", *shared, f"engine.source.ref={','.join(todo)}",
                     f"label={json.dumps(args.label)}"])
