"""Which run a run is compared with (pure): one rule for `tidemark gate`, the summary and the
Gate, Targets and workload pages.

* The **previous comparable run** of a run is the earlier run that measured the most of its
  series (ties: the newest), so a nightly run is compared with the last full run before it,
  not with a sweep that shares one series of sixteen.
* The **gate's partner** is the configured baseline (a run selector in the gate config) when it
  names a run other than the candidate; otherwise the previous comparable run, and the reason
  is said where the verdict is shown.
* The **summarized run** is the newest run, or, when it is of a kind never measured before,
  the newest recent run that has a previous comparable run.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

# How far back the summary looks for a run that has an earlier comparable run.
SUMMARY_LOOKBACK_RUNS = 20


@dataclass(frozen=True)
class RunCoverage:
    """A run and the series it measured (at least one repetition that ended ok)."""

    run_id: str
    started_at: Any  # anything ordered: a datetime or ISO text
    series: frozenset[str]


@dataclass(frozen=True)
class Partner:
    """The run a candidate is compared with, and how it was chosen."""

    run_id: str | None
    configured: bool  # the configured baseline, not the previous comparable run
    why: str = ""  # why not the configured baseline (or why there is no partner)


def _order(run: RunCoverage) -> tuple:
    return (run.started_at, run.run_id)


def previous_comparable(runs: Sequence[RunCoverage], run_id: str) -> str | None:
    """The earlier run covering the most of `run_id`'s series (ties: the newest); None if none."""
    me = next(r for r in runs if r.run_id == run_id)
    mine, most = _order(me), len(me.series)
    best: tuple | None = None
    for other in runs:
        order = _order(other)
        if order >= mine:
            continue
        # A run sharing at most as many series as the best, and older, cannot win: its
        # intersection (most of this loop's time over a long history) is not counted.
        if best is not None and (min(len(other.series), most), order) < best[:2]:
            continue
        shared = len(other.series & me.series)
        if shared and (best is None or (shared, order) > best[:2]):
            best = (shared, order, other.run_id)
    return best[2] if best else None


def summarized_run(runs: Sequence[RunCoverage]) -> tuple[str, str | None]:
    """(summarized run, its previous comparable run); `runs` newest first."""
    for run in runs[:SUMMARY_LOOKBACK_RUNS]:
        old = previous_comparable(runs, run.run_id)
        if old is not None:
            return run.run_id, old
    return runs[0].run_id, None


def gate_partner(runs: Sequence[RunCoverage], candidate: str, configured: str | None,
                 configured_problem: str = "") -> Partner:
    """The configured baseline run when it is another run, else the previous comparable run.

    `configured`: the run the configured selector names (None: `configured_problem` says why).
    """
    if configured is not None and configured != candidate:
        return Partner(configured, True)
    why = configured_problem or f"the candidate {candidate} is the configured baseline itself"
    previous = previous_comparable(runs, candidate)
    if previous is None:
        return Partner(None, False, f"{why}, and no earlier run measured any of its series")
    return Partner(previous, False, f"{why}; compared with its previous comparable run {previous}")
