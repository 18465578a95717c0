"""Confirmation of a between-run verdict by paired re-measurement (pure).

Two runs of one binary on this shared machine move ±10 % between separate processes (smoke
runs up to ±40 % on a bad day), so a change that the gate (or the summary, or a change point)
finds between two runs is only *flagged*, and a series the runs call "no change" was only
checked at its between-run threshold, which can be far above the smallest change the gate is
asked about (`min_effect`). `tidemark gate --confirm` re-measures the baseline's build and the
candidate's build in one interleaved, paired, adaptive `tidemark ab` job (orchestrator/run/
confirm.py), and the gate then exits on what that job finds. Which series it re-measures is the
gate's `confirm_scope`:

* ``flagged``: the regressions the between-run comparison flagged;
* ``unresolved`` (the default): those, and every series whose between-run threshold is above
  `min_effect` and that was not flagged faster — a series the runs could not have seen regress
  by `min_effect`. Only this scope catches a small regression on a noisy machine: the first
  study (benchmarks/confirm_study.py, smoke runs moving ±40 %) flagged 1 of 10 planted 5 %
  regressions, so confirming flags alone caught none.

Each re-measured series is judged at `min_effect`, with no noise term: pairing by round already
removes the whole-run shifts that the between-run noise and tail stand for, and the gate's
question is whether the code regressed by `min_effect`, not whether the change exceeds a
threshold widened for between-run noise (judged at the crossed threshold, a paired interval
of −30 % … +10 % "confirmed no change larger than 37 %", which says nothing about 5 %):

* the paired interval is clear of `min_effect` on the slower side → **confirmed**;
* it lies inside it, or clear on the faster side → **not confirmed** (no regression);
* the round budget ran out → **cannot tell**;
* the runs could not be re-measured (an import, a build that no longer rebuilds to the same
  binary, another machine) → **provisional**: a flagged regression stands, marked so, and one
  that could not be checked never passes. Unflagged series of such runs stay between-run
  verdicts (there is nothing to re-measure them with).

When both runs used one build and one config, whatever the between-run comparison saw was the
machine's drift: nothing is re-measured, and each flag's confirmation says so.
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
FLAGGED_SCOPE, UNRESOLVED_SCOPE = "flagged", "unresolved"
SCOPES = (FLAGGED_SCOPE, UNRESOLVED_SCOPE)
DRIFT = ("one build and one config on both sides, so what moved between the runs was the "
         "machine (not re-measured)")


@dataclass(frozen=True)
class Confirmation:
    """One re-measured series and metric: what the runs showed and what the paired job found."""

    series_key: str
    metric: str
    label: str
    between: Comparison  # the between-run comparison (flagged slower, or unresolved)
    paired: Comparison | None  # None: not re-measured (provisional)
    verdict: str  # CONFIRMED | NOT_CONFIRMED | CANNOT_CONFIRM | PROVISIONAL
    same_build: bool = False  # one build on both sides: the flag was the machine's drift
    ab_id: str = ""
    why: str = ""  # provisional: why it was not re-measured

    def text(self) -> str:
        """e.g. "readrandom ops_per_sec: flagged between runs −10.8 %; not confirmed: no change
        (paired, 24 rounds, −0.3 % … +0.4 %)"."""
        between = self.between
        head = (f"{self.label} {self.metric}: flagged between runs {between.change_pct:+.1f}%"
                if between.verdict == SLOWER else
                f"{self.label} {self.metric}: between runs {between.change_pct:+.1f}%, not "
                f"flagged (threshold {between.threshold * 100:.1f}%)")
        if self.paired is None and self.verdict == NOT_CONFIRMED:
            return f"{head}; not confirmed: {DRIFT}"
        if self.paired is None:
            return f"{head}; provisional: {self.why}"
        p = self.paired
        found = {CONFIRMED: f"confirmed {p.verdict}",
                 NOT_CONFIRMED: f"not confirmed: no regression of {p.threshold * 100:g}%",
                 CANNOT_CONFIRM: "cannot tell"}[self.verdict]
        drift = "; one build on both sides: the machine drifted" if self.same_build else ""
        return (f"{head}; {found} (paired, {p.cand_n} rounds, {(p.ci_low - 1) * 100:+.1f}% … "
                f"{(p.ci_high - 1) * 100:+.1f}%){drift}")


def rows_to_confirm(report: Report, min_effect: float, scope: str) -> list[Row]:
    """The rows a gate re-measures (see the module docstring for the scopes). A flagged
    improvement cannot fail the gate, so it is not worth machine time here: it stays a
    between-run verdict (the first study re-measured improvements too, and they took 5 of its
    first 6 machine-minutes of confirmation)."""
    if scope not in SCOPES:
        raise ValueError(f"confirm scope {scope!r}; use one of: {', '.join(SCOPES)}")
    return [r for r in report.rows if r.comparison.verdict == SLOWER or (
        scope == UNRESOLVED_SCOPE and r.comparison.verdict != FASTER
        and not r.comparison.threshold <= min_effect)]  # a NaN threshold is unresolved too


def confirm_thresholds(base: Thresholds) -> Thresholds:
    """What the paired job stops at and judges every re-measured row at: `min_effect`, with no
    noise term (see the module docstring)."""
    return Thresholds(base.alpha, base.min_effect, 0.0, 0.0, base.deterministic_min_effect)


def judge(row: Row, paired: Comparison | None, same_build: bool, ab_id: str = "",
          why: str = "") -> Confirmation:
    """The confirmation of one re-measured row by its paired comparison (None: not
    re-measured). The question is always whether the candidate regressed. With one build and
    one config on both sides the code cannot have changed: not confirmed, whatever a paired
    job would find."""
    if same_build:
        verdict = NOT_CONFIRMED
    elif paired is None:
        verdict = PROVISIONAL
    elif paired.verdict == SLOWER:
        verdict = CONFIRMED
    elif paired.verdict in (NO_CHANGE, FASTER):
        verdict = NOT_CONFIRMED
    else:  # cannot tell (the budget ran out), not enough rounds
        verdict = CANNOT_CONFIRM
    return Confirmation(row.series_key, row.metric, row.label, row.comparison, paired, verdict,
                        same_build, ab_id, why)


def judged_row(row: Row, done: Confirmation | None) -> Row:
    """The row as the gate judges it once confirmed: confirmed → its paired comparison (a
    regression, its numbers what the pairs measured); anything else → no regression (a row left
    `unchecked` then makes the gate unable to tell). The gate's decision and its JUnit cases
    both ask this."""
    if done is None:
        return row
    if done.verdict == CONFIRMED and done.paired is not None:
        return dataclasses.replace(row, comparison=done.paired)
    return dataclasses.replace(row, comparison=dataclasses.replace(
        row.comparison, verdict=NO_CHANGE))


def unchecked(done: Confirmation) -> bool:
    """A re-measured row the paired job could not tell, or a flagged regression that could not
    be re-measured: never a pass."""
    return done.verdict == CANNOT_CONFIRM or (done.verdict == PROVISIONAL
                                              and done.between.verdict == SLOWER)


def confirmed_result(result: GateResult, confirmations: Sequence[Confirmation]) -> GateResult:
    """The gate's result once its re-measured rows are judged (`judged_row`): a row left
    `unchecked` makes the gate 'cannot tell' (a confirmed regression elsewhere still makes it a
    regression). The report stays what the runs showed between them; every confirmation is
    one of the reasons."""
    by_key = {(c.series_key, c.metric): c for c in confirmations}
    rows = tuple(judged_row(r, by_key.get((r.series_key, r.metric))) for r in result.report.rows)
    decision = decide(dataclasses.replace(result.report, rows=rows), result.targets)
    code = CANNOT_TELL if decision.code == PASS and any(map(unchecked, confirmations)) \
        else decision.code
    return dataclasses.replace(result, decision=Decision(
        code, (*decision.reasons, *(c.text() for c in confirmations))))
