"""`tidemark bisect --good REF --bad REF -- OVERRIDES`: the commit that made a workload slower.

The overrides name the engine (a git source: engine.source.kind=git, engine.source.path=REPO)
and the workload; each judged commit's config is them with the engine pinned to the commit.
The range and the steps are run/bisect.py's; the same command resumes an unfinished bisect.
Exit 0: the first bad commit is named; 2: no regression in the range, or only skipped commits
could hold it.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import duckdb
from rich.console import Console
from rich.table import Table

from ..analysis.bisect import found
from ..analysis.sequential import plan_looks
from ..analysis.stats import Thresholds
from ..build.filelock import held
from ..build.revision import Revision, commits_between, mirror
from ..errors import ConfigError
from ..store.connection import connect
from ..store.reads import resolve_run
from .compose import compose_conf, parse_with_overrides

# What the bisect sets on every side itself.
_OWN = ("engine.source.ref", "repetitions", "label")


def _args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(prog="tidemark bisect", description=(
        "Find the first commit between --good and --bad that makes a workload worse: each "
        "judged commit is measured paired against the good one (an adaptive tidemark ab). "
        "e.g. tidemark bisect --good v1.22 --bad main -- engine=leveldb engine.source.kind=git "
        "engine.source.path=~/src/leveldb workload=readrandom"))
    parser.add_argument("--good", required=True, help="a commit, tag or branch without the "
                        "regression, or run=SELECTOR: the commit a stored run measured "
                        "(e.g. run=label=nightly~1)")
    parser.add_argument("--bad", required=True, help="a later commit, tag or branch with it, "
                        "or run=SELECTOR (e.g. run=latest)")
    parser.add_argument("--metric", help="the metric judged (default: the workload's first "
                        "`metrics:` entry, else ops_per_sec)")
    parser.add_argument("--min-effect", type=float, default=0.02,
                        help="the smallest change that counts at the bad end (default 0.02)")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--max-rounds", type=int, default=30,
                        help="each job's round budget (default 30; a job that cannot tell "
                             "runs once more with twice as many, then the commit is skipped)")
    args, shared = parse_with_overrides(parser, argv)
    own = [o for o in shared if o.split("=", 1)[0].lstrip("+~") in _OWN]
    if own:
        raise ConfigError(f"{own[0]!r}: tidemark bisect sets it for every commit; remove it")
    return args, shared


def commit_of_run(db: Path, ref: str) -> str:
    """`run=SELECTOR` → the commit sha that run's build compiled; any other ref as given."""
    if not ref.startswith("run="):
        return ref
    if not db.exists():
        raise ConfigError(f"{ref}: no results DB at {db}; give db=PATH after '--'")
    con = connect(db, read_only=True)
    try:
        run_id = resolve_run(con, ref[4:])
        row = con.execute("SELECT b.commit_sha FROM runs r LEFT JOIN builds b USING (build_id) "
                          "WHERE r.run_id = ?", [run_id]).fetchone()
    finally:
        con.close()
    if not row or not row[0]:
        raise ConfigError(f"{ref}: run {run_id} measured a build without a commit (not a git "
                          f"source); give a commit, tag or branch instead")
    return row[0]


def commits_of(conf: Any, good: str, bad: str) -> tuple[str, list[Revision]]:
    src = conf.engine.source
    if src.kind != "git" or not src.path:
        raise ConfigError(f"tidemark bisect needs a git engine source, not "
                          f"engine.source.kind={src.kind!r}; add engine.source.kind=git "
                          f"engine.source.path=REPO after '--'")
    sources = Path(conf.cache_dir).expanduser() / "sources"
    sources.mkdir(parents=True, exist_ok=True)
    with held(sources / ".fetch.lock", "another fetch of engine sources", print):
        repo = mirror(src.path, sources)
    commits = commits_between(repo, good, bad)
    if len(commits) < 2:
        raise ConfigError(f"--good {good} and --bad {bad} are the same commit; give a later --bad")
    return src.path, commits


def _unfinished(db: Path, key: dict[str, Any]) -> dict[str, Any] | None:
    """The stored bisect of this very range, workload and metric that has not finished."""
    if not db.exists():
        return None
    con = connect(db, read_only=True)
    try:
        row = con.execute(
            "SELECT bisect_id, steps::VARCHAR FROM bisects WHERE repo = ? AND good = ? AND "
            "bad = ? AND metric = ? AND overrides::VARCHAR = ?::JSON::VARCHAR AND "
            "status = 'running' ORDER BY created_at DESC LIMIT 1",
            [key["repo"], key["good"], key["bad"], key["metric"],
             json.dumps(key["overrides"])]).fetchone()
    except duckdb.CatalogException:  # a DB from before bisects: nothing to resume
        return None
    finally:
        con.close()
    return {**key, "bisect_id": row[0], "steps": json.loads(row[1])} if row else None


def _table(bisect: dict[str, Any]) -> Table:
    """Every judged commit in commit order: the evidence."""
    table = Table(title=f"bisect {bisect['bisect_id']}: {bisect['metric']}, each commit "
                        f"against {bisect['good'][:12]} (paired)")
    for column in ("#", "commit", "subject", "state", "change", "interval", "rounds", "ab"):
        table.add_column(column)
    for step in sorted(bisect["steps"], key=lambda s: s["index"]):
        change = interval = ""
        if step["ratio"] is not None:
            change = f"{(step['ratio'] - 1) * 100:+.1f}%"
            interval = f"{(step['ci_low'] - 1) * 100:+.1f}% … {(step['ci_high'] - 1) * 100:+.1f}%"
        table.add_row(str(step["index"] + 1), step["sha"][:12], step["subject"], step["state"],
                      change, interval or step["why"][:60], str(step["rounds"]), step["ab_id"])
    return table


def _declared_metric(conf: Any) -> str:
    """The first metric the bisected workload declares (`workload.metrics`), or ops/s."""
    workloads = [conf.workload] if conf.workload is not None else \
        list(conf.suite.workloads.values()) if conf.suite is not None else []
    return next((m for wl in workloads for m in wl.metrics), "ops_per_sec")


def bisect_command(argv: list[str], console: Console) -> None:
    from ..run.bisect import BisectOptions, run_bisect
    from ..run.ab import Side
    from ..signals import signals_interrupt

    args, shared = _args(argv)
    if not 0 < args.alpha < 1 or plan_looks(args.alpha, args.max_rounds) is None:
        raise ConfigError(f"--max-rounds {args.max_rounds} --alpha {args.alpha:g} leaves the "
                          f"stopping rule no look; use --max-rounds 20 or more and an alpha "
                          f"between 0 and 1, e.g. 0.05")
    conf, _ = compose_conf(shared)
    args.metric = args.metric or _declared_metric(conf)
    db = Path(conf.db)
    repo, commits = commits_of(conf, commit_of_run(db, args.good), commit_of_run(db, args.bad))
    key = {"repo": repo, "good": commits[0].sha, "bad": commits[-1].sha, "overrides": shared,
           "metric": args.metric}
    bisect = _unfinished(db, key) or {
        **key, "bisect_id": "bisect-" + time.strftime("%Y%m%dT%H%M%S", time.gmtime()),
        "steps": [], "status": "running", "first_bad": None}
    bisect["commits"] = [{"sha": c.sha, "subject": c.subject, "author": c.author,
                          "date": c.date} for c in commits]

    def side_for(sha: str, name: str, rounds: int) -> Side:
        overrides = [*shared, f"engine.source.ref={sha}", f"repetitions={rounds}",
                     f"label={bisect['bisect_id']}"]
        side_conf, config = compose_conf(overrides)
        return Side(name, side_conf, overrides, config)

    console.print(f"{bisect['bisect_id']}: {len(commits)} commits from {args.good} "
                  f"({commits[0].sha[:12]}) to {args.bad} ({commits[-1].sha[:12]})",
                  markup=False, soft_wrap=True)
    options = BisectOptions(args.metric, Thresholds(args.alpha, args.min_effect, 0.0, 0.0),
                            args.max_rounds, 2 * args.max_rounds)
    with signals_interrupt():
        bisect = run_bisect(bisect, commits, side_for, db, console, options)
    console.print(_table(bisect))
    _verdict(bisect, commits, console)


def _verdict(bisect: dict[str, Any], commits: list[Revision], console: Console) -> None:
    states = {0: "good", **{s["index"]: s["state"] for s in bisect["steps"]}}
    result = found(len(commits), states)
    # Every judged commit's build, and the good commit's (side a of every job).
    builds = 1 + len({s["build_id"] for s in bisect["steps"] if s["build_id"]})
    bad_end = next((s for s in bisect["steps"] if s["index"] == len(commits) - 1), None)
    if result.first_bad is None and bad_end is not None and bad_end["state"] == "skip":
        console.print(f"bisect: the bad end {commits[-1].sha[:12]} could not be judged "
                      f"({bad_end['why']}); nothing was bisected", markup=False, soft_wrap=True)
        raise SystemExit(2)
    if result.first_bad is None:
        console.print(f"bisect: {commits[-1].sha[:12]} is not worse than {commits[0].sha[:12]}; "
                      f"no regression to find in this range", markup=False)
        raise SystemExit(2)
    first = commits[result.first_bad]
    if result.ambiguous:
        skipped = ", ".join(commits[i].sha[:12] for i in result.ambiguous)
        console.print(f"bisect: the regression is in {first.sha[:12]} or in the skipped "
                      f"{skipped} (they could not be judged)", markup=False, soft_wrap=True)
        raise SystemExit(2)
    console.print(f"bisect: first bad commit {first.sha} ({result.first_bad + 1} of "
                  f"{len(commits)}) {first.subject!r} by {first.author}, {first.date}; "
                  f"{builds} builds", markup=False, soft_wrap=True)
