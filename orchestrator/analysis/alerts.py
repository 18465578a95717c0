"""Alerts (pure): a confirmed change kept in the history, with the state people give it.

A flagged change that `tidemark gate --confirm` confirms (analysis.confirm) becomes an alert
(store: alerts). Its state starts `new`; `tidemark alert` sets `acknowledged`, `false alarm`
(the change was not the code's: a later look found it noise, the data, the machine) or `fixed`
(a later commit or run undid it, named in `fixed_by`). Each series' share of alerts later marked
false is shown beside the threshold it was flagged at (Perfherder's triage keeps it; it is how a
threshold's real false-alarm rate is learned).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from .confirm import CONFIRMED, Confirmation
from .stats import FASTER, SLOWER

NEW, ACKNOWLEDGED, FALSE_ALARM, FIXED = "new", "acknowledged", "false alarm", "fixed"
STATES = (NEW, ACKNOWLEDGED, FALSE_ALARM, FIXED)
REGRESSION, IMPROVEMENT = "regression", "improvement"


def alert_id(cand_run: str, series_key: str, metric: str) -> str:
    """One alert per candidate run, series and metric: confirming it again adds none."""
    digest = hashlib.sha256(f"{cand_run}\0{series_key}\0{metric}".encode()).hexdigest()
    return f"alert-{digest[:10]}"


@dataclass(frozen=True)
class NewAlert:
    alert_id: str
    series_key: str
    metric: str
    label: str
    direction: str  # REGRESSION | IMPROVEMENT
    ab_id: str
    between_change: float  # the flagged change between the runs (ratio − 1)
    paired_change: float  # what the paired job measured (ratio − 1)
    threshold: float  # the threshold it was found at: the flag's, else the paired job's


def alerts_of(cand_run: str, confirmations: Iterable[Confirmation]) -> list[NewAlert]:
    """The alerts a gate's confirmations make: one per confirmed change."""
    out = []
    for c in confirmations:
        if c.verdict != CONFIRMED or c.paired is None:
            continue
        out.append(NewAlert(alert_id(cand_run, c.series_key, c.metric), c.series_key, c.metric,
                            c.label, REGRESSION if c.paired.verdict == SLOWER else IMPROVEMENT,
                            c.ab_id, c.between.ratio - 1.0, c.paired.ratio - 1.0,
                            c.between.threshold if c.between.verdict in (SLOWER, FASTER)
                            else c.paired.threshold))
    return out


def check_state(state: str) -> str:
    """A state `tidemark alert` may set; ValueError naming the valid ones otherwise."""
    if state not in STATES[1:]:
        raise ValueError(f"alert state {state!r}; set one of: {', '.join(STATES[1:])}")
    return state


@dataclass(frozen=True)
class Triage:
    """One series' alerts and how many were later marked false."""

    alerts: int
    false_alarms: int

    @property
    def false_share(self) -> float:
        return self.false_alarms / self.alerts if self.alerts else float("nan")


def triage(alerts: Sequence[Mapping[str, str]]) -> dict[tuple[str, str], Triage]:
    """(series_key, metric) → its alerts and false alarms."""
    counts: dict[tuple[str, str], list[int]] = {}
    for alert in alerts:
        count = counts.setdefault((alert["series_key"], alert["metric"]), [0, 0])
        count[0] += 1
        count[1] += alert["state"] == FALSE_ALARM
    return {key: Triage(n, false) for key, (n, false) in counts.items()}
