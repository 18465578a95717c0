"""Confirmation of a between-run verdict by paired re-measurement (pure).

Two runs of one binary on this shared machine move ±10 % between separate processes, so a
change that the gate (or the summary, or a change point) finds between two runs is only
*flagged*. `tidemark gate --confirm` re-measures the baseline's build and the candidate's build
in one interleaved, paired, adaptive `tidemark ab` job (orchestrator/run/confirm.py), and the
gate then exits on what that job finds:

* the paired interval is clear of the threshold on the flagged side → **confirmed**;
* it lies inside the threshold, or clear on the other side → **not confirmed** (no change);
* the round budget ran out → **cannot tell**;
* the runs could not be re-measured (an import, a build that no longer rebuilds to the same
  binary, another machine) → **provisional**: the between-run verdict stands, marked so, and a
  regression that could not be checked never passes.

The paired job is judged at the threshold the flag crossed (`confirm_thresholds`), with no
noise term on top: pairing by round already removes the whole-run shifts the between-run
noise stands for, and the question is whether the flagged change exceeds that same threshold.
When both runs used one build, whatever the between-run comparison saw was the machine's
drift: the confirmation says so whatever the paired job finds.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Sequence

from .compare import Report, Row
from .decide import CANNOT_TELL, PASS, Decision, GateResult, decide
from .stats import FASTER, NO_CHANGE, SLOWER, Comparison, Thresholds

CONFIRMED = "confirmed"
NOT_CONFIRMED = "not confirmed"
CANNOT_CONFIRM = "cannot tell"
PROVISIONAL = "provisional"
FLAGGED = (SLOWER, FASTER)
DRIFT = ("one build and one config on both sides, so what moved between the runs was the "
         "machine (not re-measured)")


@dataclass(frozen=True)
class Confirmation:
    """One flagged series and metric: what the runs showed and what the paired job found."""

    series_key: str
    metric: str
    label: str
    between: Comparison  # the flagged between-run comparison
    paired: Comparison | None  # None: not re-measured (provisional)
    verdict: str  # CONFIRMED | NOT_CONFIRMED | CANNOT_CONFIRM | PROVISIONAL
    same_build: bool = False  # one build on both sides: the flag was the machine's drift
    ab_id: str = ""
    why: str = ""  # provisional: why it was not re-measured

    def text(self) -> str:
        """e.g. "readrandom ops_per_sec: flagged between runs −10.8 %; confirmed: no change
        (paired, 24 rounds, −0.3 % … +0.4 %)"."""
        head = f"{self.label} {self.metric}: flagged between runs {self.between.change_pct:+.1f}%"
        if self.paired is None and self.verdict == NOT_CONFIRMED:
            return f"{head}; not confirmed: {DRIFT}"
        if self.paired is None:
            return f"{head}; provisional: {self.why}"
        p = self.paired
        found = {CONFIRMED: f"confirmed {p.verdict}", NOT_CONFIRMED: "not confirmed: no change",
                 CANNOT_CONFIRM: "cannot tell"}[self.verdict]
        drift = "; one build on both sides: the machine drifted" if self.same_build else ""
        return (f"{head}; {found} (paired, {p.cand_n} rounds, {(p.ci_low - 1) * 100:+.1f}% … "
                f"{(p.ci_high - 1) * 100:+.1f}%){drift}")


def flagged_rows(report: Report) -> list[Row]:
    """The rows a gate re-measures: the regressions the between-run comparison flags. A flagged
    improvement cannot fail the gate, so it is not worth machine time here: it stays a
    between-run verdict (the first study re-measured improvements too, and they took 5 of its
    first 6 machine-minutes of confirmation)."""
    return [r for r in report.rows if r.comparison.verdict == SLOWER]


def confirm_thresholds(base: Thresholds, rows: Sequence[Row]) -> Thresholds:
    """The paired job's stopping thresholds: the smallest threshold a flagged row crossed (the
    strictest question of the job), with no noise term (see the module docstring). Each row is
    then judged at its own (`row_thresholds`)."""
    floor = min((r.comparison.threshold for r in rows), default=base.min_effect)
    return Thresholds(base.alpha, max(base.min_effect, floor), 0.0, 0.0,
                      base.deterministic_min_effect)


def row_thresholds(base: Thresholds, row: Row) -> Thresholds:
    """The thresholds one flagged row's paired comparison is judged at: the one it crossed."""
    return confirm_thresholds(base, [row])


def judge(row: Row, paired: Comparison | None, same_build: bool, ab_id: str = "",
          why: str = "") -> Confirmation:
    """The confirmation of one flagged row by its paired comparison (None: not re-measured).
    With one build and one config on both sides the code cannot have changed: not confirmed,
    whatever a paired job would find."""
    if same_build:
        verdict = NOT_CONFIRMED
    elif paired is None:
        verdict = PROVISIONAL
    elif paired.verdict == row.comparison.verdict:
        verdict = CONFIRMED
    elif paired.verdict in (NO_CHANGE, *FLAGGED):
        verdict = NOT_CONFIRMED
    else:  # cannot tell (the budget ran out), not enough rounds
        verdict = CANNOT_CONFIRM
    return Confirmation(row.series_key, row.metric, row.label, row.comparison, paired, verdict,
                        same_build, ab_id, why)


def confirmed_result(result: GateResult, confirmations: Sequence[Confirmation]) -> GateResult:
    """The gate's result once its flagged rows are confirmed: a row confirmed keeps its
    verdict, a row not confirmed counts as no change, and a flagged regression that could not be
    told or re-measured makes the gate 'cannot tell' (a confirmed regression elsewhere still
    makes it a regression). Every confirmation is one of the reasons."""
    by_key = {(c.series_key, c.metric): c for c in confirmations}
    rows = []
    for row in result.report.rows:
        done = by_key.get((row.series_key, row.metric))
        if done is not None and done.verdict != CONFIRMED:
            row = dataclasses.replace(row, comparison=dataclasses.replace(
                row.comparison, verdict=NO_CHANGE))
        rows.append(row)
    decision = decide(dataclasses.replace(result.report, rows=tuple(rows)), result.targets)
    unchecked = any(c.verdict in (PROVISIONAL, CANNOT_CONFIRM) and c.between.verdict == SLOWER
                    for c in confirmations)
    code = CANNOT_TELL if decision.code == PASS and unchecked else decision.code
    return dataclasses.replace(result, decision=Decision(
        code, (*decision.reasons, *(c.text() for c in confirmations))))
