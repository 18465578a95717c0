"""The gate's decision (pure): pass, regression or cannot tell, with its reasons.

Exit 0: every gated series passed. 1: at least one is significantly slower, or misses a target
when targets are enforced. 2: the gate cannot tell — nothing in common, too few repetitions, a
series of the baseline missing from the candidate, failed invocations in the candidate, or a
candidate run that did not end ok. A gate that cannot check must not pass.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .compare import Report
from .deterministic import MIN_REPETITIONS as DETERMINISTIC_MIN
from .deterministic import REPETITIONS_KEY, is_deterministic
from .partner import Partner
from .stats import NOT_ENOUGH, SLOWER, U_TEST, UNDECIDED
from .targets import MEETS, NO_DATA, TargetResult

PASS, REGRESSION, CANNOT_TELL = 0, 1, 2
WORDS = {PASS: "pass", REGRESSION: "regression", CANNOT_TELL: "cannot tell"}
MIN_REPETITIONS = 4  # with 3 against 3 the U test cannot reach p < 0.05
MIN_PAIRED_ROUNDS = 6  # the signed-rank test's smallest p with n pairs is 2 / 2^n (paired.min_pairs)


@dataclass(frozen=True)
class Decision:
    code: int
    reasons: tuple[str, ...]

    @property
    def word(self) -> str:
        return WORDS[self.code]


@dataclass(frozen=True)
class GateResult:
    """A gate's decision with the comparison, targets and partner run it rests on."""

    decision: Decision
    report: Report
    targets: tuple[TargetResult, ...] = ()
    partner: Partner | None = None


def _num(value: float) -> str:
    return f"{value:.3g}" if value == value else "–"


def _regressions(report: Report, targets: Sequence[TargetResult]) -> list[str]:
    slower = [r for r in report.rows if r.comparison.verdict == SLOWER]
    reasons = [f"{r.label} {r.metric}: {r.comparison.change_pct:+.1f}% "
               f"(p={_num(r.comparison.p_value)}, threshold {r.comparison.threshold * 100:.1f}%)"
               for r in slower]
    reasons += [f"{t.series}: {t.target}, observed {_num(t.observed or float('nan'))} → {t.status}"
                for t in targets if t.status not in (MEETS, NO_DATA)]
    return reasons


def _unknowns(report: Report) -> list[str]:
    reasons = []
    status = report.cand.get("status")
    if status not in (None, "ok"):
        reasons.append(f"candidate run {report.cand.get('run_id')} is {status}, not ok; "
                       f"re-run it before gating on it")
    if not report.rows:
        reasons.append("no common measurements")
    short = [r for r in report.rows if r.comparison.verdict == NOT_ENOUGH]
    for deterministic in (False, True):
        rows = [r for r in short if is_deterministic(r.metric) == deterministic]
        if not rows:
            continue
        names = ", ".join(f"{r.label}{' ' + r.metric if deterministic else ''} "
                          f"(n={r.comparison.base_n}/{r.comparison.cand_n})" for r in rows)
        paired = any(r.comparison.test != U_TEST for r in rows)
        fix = (f"{DETERMINISTIC_MIN} callgrind repetitions ({REPETITIONS_KEY})" if deterministic
               else f"{MIN_REPETITIONS} measured repetitions" +
               (f" ({MIN_PAIRED_ROUNDS} rounds for a paired A/B design)" if paired else ""))
        reasons.append(f"not enough repetitions to tell: {names}; run at least {fix} per side")
    undecided = [r for r in report.rows if r.comparison.verdict == UNDECIDED]
    if undecided:
        reasons.append("the adaptive A/B spent its budget before its interval was clear of or "
                       "inside the threshold: " + ", ".join(
                           f"{r.label} {r.metric} ({r.comparison.test})" for r in undecided))
    failed = dict.fromkeys(f"{r.label} ({r.failed[1]} failed)" for r in report.rows if r.failed[1])
    if failed:
        reasons.append("failed invocations in the candidate: " + ", ".join(failed))
    if report.only_base:
        reasons.append(f"missing from the candidate: {', '.join(report.only_base)}")
    return reasons


def decide(report: Report, targets: Sequence[TargetResult] = ()) -> Decision:
    """The exit code and its reasons; a regression outranks what could not be checked."""
    regressions = _regressions(report, targets)
    if regressions:
        return Decision(REGRESSION, tuple(regressions + _unknowns(report)))
    unknowns = _unknowns(report)
    return Decision(CANNOT_TELL if unknowns else PASS, tuple(unknowns))
