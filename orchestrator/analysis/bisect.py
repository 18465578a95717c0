"""Bisect a regression to its commit (pure): which commit to judge next, and what was found.

The commits of `--good..--bad` are numbered 0 (good) … n−1 (bad) on the first-parent line.
Each judged commit is measured against the good commit in one paired, adaptive `tidemark ab`
job (orchestrator/run/bisect.py), and its verdict becomes a state:

* **bad**: significantly worse than the good commit beyond the threshold (the regression is in);
* **good**: no change, or better (the regression is not in yet);
* **skip**: it does not build, or its job could not tell even with the larger budget, as
  `git bisect skip`: never judged again, and the commits around it are tried instead.

Like `git bisect`, one regression is assumed: every commit from the first bad on is bad. The next
commit is the untested one nearest the middle of (last good, first bad); when none is left,
the first bad commit is found — unless skipped commits lie just before it, and then the
regression is in one of them or in it (`Found.ambiguous`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from .stats import FASTER, NO_CHANGE, SLOWER

GOOD, BAD, SKIP = "good", "bad", "skip"


def state_of(verdict: str) -> str | None:
    """A paired comparison's verdict (the judged commit against the good one) as a state;
    None when the job could not tell (the caller adds rounds, then skips)."""
    if verdict == SLOWER:
        return BAD
    if verdict in (NO_CHANGE, FASTER):
        return GOOD
    return None


def _bounds(n: int, states: Mapping[int, str]) -> tuple[int, int]:
    bad = min((i for i, s in states.items() if s == BAD), default=n - 1)
    good = max((i for i, s in states.items() if s == GOOD and i < bad), default=0)
    return good, bad


def next_commit(n: int, states: Mapping[int, str]) -> int | None:
    """The commit to judge next (its number), or None when the first bad one is known.
    Commit n−1 is judged first: a bisect of a range that holds no regression stops there."""
    if n < 2:
        raise ValueError("a bisect needs a good and a later bad commit")
    if n - 1 not in states:
        return n - 1
    if states[n - 1] != BAD:
        return None
    good, bad = _bounds(n, states)
    untested = [i for i in range(good + 1, bad) if i not in states]
    if not untested:
        return None
    middle = (good + bad) / 2
    return min(untested, key=lambda i: (abs(i - middle), i))


@dataclass(frozen=True)
class Found:
    """What a finished bisect found."""

    first_bad: int | None  # None: the bad commit is not worse than the good one
    last_good: int
    ambiguous: tuple[int, ...] = ()  # skipped commits between last good and first bad


def found(n: int, states: Mapping[int, str]) -> Found:
    if states.get(n - 1) != BAD:
        return Found(None, 0)
    good, bad = _bounds(n, states)
    skipped = tuple(i for i in range(good + 1, bad) if states.get(i) == SKIP)
    return Found(bad, good, skipped)
