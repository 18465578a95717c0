"""`tidemark bisect` (side effects): a regression between two commits traced to its commit.

Each judged commit is one paired, adaptive `tidemark ab` job (run/ab.py) of the good commit's
build (side a) against the commit's build (side b), both from the build cache (a commit is
built once; ccache reuses every file it did not change). Which commit comes next and what the
verdicts mean is analysis.bisect. The bad end is judged first, at the gate's minimum effect: a
range without a regression stops there. Every later commit is judged at half the regression the
bad end showed (at least the minimum effect): a commit that carries it is worse than the good one
by about all of it, one that does not by about none, so the half way is the fairest line and
asks far fewer rounds than telling either from a small minimum effect.

A commit that does not build, or whose job cannot tell even with the larger budget, is skipped.
The bisect's row (store: bisects) is saved after every step; the same command resumes it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from rich.console import Console

from .. import verdicts
from ..analysis.bisect import GOOD, SKIP, found, next_commit, state_of
from ..analysis.stats import SLOWER, Comparison, Thresholds
from ..build.revision import Revision
from ..errors import BuildError, UserError
from ..store import Store
from ..store.connection import connect
from .ab import AbOptions, Side, run_ab
from .jobsetup import build_engine_with_progress

SideFor = Callable[[str, str, int], Side]  # (commit sha, side name, round budget) → its side


@dataclass(frozen=True)
class BisectOptions:
    metric: str = "ops_per_sec"
    thresholds: Thresholds = Thresholds(noise_k=0.0, unmeasured_noise=0.0)
    max_rounds: int = 30  # each job's round budget
    retry_rounds: int = 60  # a job that could not tell runs once more with this budget


def _worst(db: Path, ab: dict[str, Any], metric: str, thresholds: Thresholds
           ) -> tuple[Comparison | None, str]:
    """The job's comparison that decides the commit (a worse one first), and run b's build."""
    con = connect(db, read_only=True)
    try:
        build = con.execute("SELECT build_id FROM runs WHERE run_id = ?", [ab["run_b"]]).fetchone()
        try:
            report = verdicts.compare_runs(con, ab["run_a"], ab["run_b"], (metric,), thresholds,
                                           allow_different=True, declared=False)
        except UserError:
            return None, build[0] if build else ""
    finally:
        con.close()
    rows = sorted(report.rows, key=lambda r: (r.comparison.verdict != SLOWER,
                                              state_of(r.comparison.verdict) is not None))
    return (rows[0].comparison if rows else None), (build[0] if build else "")


def _step(index: int, commit: Revision, state: str, comparison: Comparison | None = None,
          ab_id: str = "", build_id: str = "", why: str = "") -> dict[str, Any]:
    c = comparison
    return {"index": index, "sha": commit.sha, "subject": commit.subject, "state": state,
            "verdict": c.verdict if c else "", "ratio": c.ratio if c else None,
            "ci_low": c.ci_low if c else None, "ci_high": c.ci_high if c else None,
            "rounds": c.cand_n if c else 0, "threshold": c.threshold if c else None,
            "ab_id": ab_id, "build_id": build_id, "why": why}


def step_text(step: dict[str, Any], n: int) -> str:
    """e.g. "commit 11/16 3f2a1c9d0b1e make reads spin: bad (-5.2%, paired, 14 rounds,
    -6.0% … -4.4%)"."""
    head = f"commit {step['index'] + 1}/{n} {step['sha'][:12]} {step['subject']}: {step['state']}"
    if step["ratio"] is None:
        return f"{head} ({step['why']})"
    return (f"{head} ({(step['ratio'] - 1) * 100:+.1f}%, paired, {step['rounds']} rounds, "
            f"{(step['ci_low'] - 1) * 100:+.1f}% … {(step['ci_high'] - 1) * 100:+.1f}%)")


def _judge(index: int, commits: list[Revision], side_for: SideFor, db: Path, console: Console,
           options: BisectOptions, thresholds: Thresholds) -> dict[str, Any]:
    """One commit against the good one: bad, good, or skip (no build; cannot tell twice)."""
    commit = commits[index]
    for rounds in (options.max_rounds, options.retry_rounds):
        try:
            ab = run_ab(side_for(commits[0].sha, "a", rounds), side_for(commit.sha, "b", rounds),
                        console, AbOptions(adaptive=True, max_rounds=rounds,
                                           metrics=(options.metric,), thresholds=thresholds))
        except BuildError as error:
            return _step(index, commit, SKIP, why=f"does not build: {error}")
        comparison, build_id = _worst(db, ab, options.metric, thresholds)
        state = state_of(comparison.verdict) if comparison else None
        if state is not None:
            return _step(index, commit, state, comparison, ab["ab_id"], build_id)
    return _step(index, commit, SKIP, comparison, ab["ab_id"], build_id,
                 why=f"cannot tell after {options.retry_rounds} rounds")


def _midpoint_thresholds(options: BisectOptions, steps: list[dict[str, Any]], n: int) -> Thresholds:
    """Half the regression the bad end showed, at least the minimum effect."""
    bad_end = next(s for s in steps if s["index"] == n - 1)
    half = abs(bad_end["ratio"] - 1.0) / 2.0 if bad_end["ratio"] else 0.0
    return dataclasses.replace(options.thresholds,
                               min_effect=max(options.thresholds.min_effect, half))


def run_bisect(bisect: dict[str, Any], commits: list[Revision], side_for: SideFor, db: Path,
               console: Console, options: BisectOptions) -> dict[str, Any]:
    """Judge commits until the first bad one is known; the bisect row, saved after each step."""
    n = len(commits)
    steps: list[dict[str, Any]] = list(bisect["steps"])
    states = {0: GOOD, **{s["index"]: s["state"] for s in steps}}
    for step in steps:
        console.print(f"resumed: {step_text(step, n)}", markup=False, soft_wrap=True)
    # The good commit must build: without it nothing can be judged.
    build_engine_with_progress(side_for(commits[0].sha, "a", options.max_rounds).conf, console)
    while (index := next_commit(n, states)) is not None:
        thresholds = options.thresholds if index == n - 1 else \
            _midpoint_thresholds(options, steps, n)
        step = _judge(index, commits, side_for, db, console, options, thresholds)
        steps.append(step)
        states[index] = step["state"]
        console.print(step_text(step, n), markup=False, soft_wrap=True)
        _save(db, {**bisect, "steps": steps})
    result = found(n, states)
    first = commits[result.first_bad].sha if result.first_bad is not None else None
    bisect = {**bisect, "steps": steps, "status": "done", "first_bad": first}
    _save(db, bisect)
    return bisect


def _save(db: Path, bisect: dict[str, Any]) -> None:
    store = Store(db)
    try:
        store.save_bisect(bisect)
    finally:
        store.close()

