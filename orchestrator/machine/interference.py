"""Interference measured per invocation, as cache residency is (runners/cache.py): how much of the
benchmark CPUs' time other tasks got while the engine ran, and what the policy does about it.

Two samples of /proc/stat bracket the process (per-CPU times in USER_HZ ticks); wait4 gives the
process's own rusage (engine plus its wrapper, all pinned to the same CPUs):

    busy       = Δ(user + nice + system + irq + softirq) summed over the benchmark CPUs
    engine     = ru_utime + ru_stime
    other      = max(0, busy − engine)             (ticks: ±1/USER_HZ per CPU and sample)
    other_pct  = 100 · other / (interval · CPUs)   the share of those CPUs' capacity
    steal      = Δsteal over those CPUs            (the hypervisor ran another guest)

plus the engine's involuntary context switches (ru_nivcsw: the scheduler took its CPU away) and
the 1-minute load average before and after. Unpinned, "the benchmark CPUs" are all online CPUs.

Policy (machine.interference_*): an invocation whose other_pct exceeds `max_pct` is flagged (a
note and `flagged` in its conditions), or re-run up to `reruns` times; a rejected attempt is
kept as a condition_not_met record, the kept attempt says which attempt it was.
"""
from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..record import STATUS_CONDITION_NOT_MET, STATUS_OK, Invocation

PROC_STAT = Path("/proc/stat")
USER_HZ = os.sysconf("SC_CLK_TCK")
BUSY_FIELDS = (0, 1, 2, 5, 6)  # user nice system irq softirq (idle=3, iowait=4 are not busy)
STEAL_FIELD = 7
POLICIES = ("flag", "rerun")


@dataclass(frozen=True)
class CpuSample:
    monotonic: float
    ticks: dict[int, tuple[int, ...]]  # cpu → its /proc/stat fields
    load1: float


@dataclass(frozen=True)
class InterferencePolicy:
    max_pct: float | None = None  # None: measured and recorded, never acted on
    action: str = "flag"  # flag | rerun
    reruns: int = 0


def parse_proc_stat(text: str) -> dict[int, tuple[int, ...]]:
    """The per-CPU lines of /proc/stat ('cpu3 1 2 3 …') → cpu → fields (pure)."""
    cpus = {}
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if name.startswith("cpu") and name[3:].isdigit():
            cpus[int(name[3:])] = tuple(int(v) for v in rest.split())
    return cpus


def sample_cpus() -> CpuSample:
    return CpuSample(time.monotonic(), parse_proc_stat(PROC_STAT.read_text()), os.getloadavg()[0])


def _delta(before: CpuSample, after: CpuSample, cpus: tuple[int, ...], fields: tuple[int, ...]) -> int:
    return sum(after.ticks[c][f] - before.ticks[c][f] for c in cpus for f in fields
               if c in before.ticks and c in after.ticks and f < len(after.ticks[c]))


def interference(before: CpuSample, after: CpuSample, cpus: tuple[int, ...], engine_cpu_s: float,
                 involuntary_switches: int | None, hz: int = USER_HZ) -> dict[str, Any]:
    """What other tasks took from the benchmark CPUs between two samples (pure)."""
    cpus = cpus or tuple(sorted(after.ticks))
    interval = max(after.monotonic - before.monotonic, 1e-9)
    busy = _delta(before, after, cpus, BUSY_FIELDS) / hz
    steal = _delta(before, after, cpus, (STEAL_FIELD,)) / hz
    other = max(0.0, busy - engine_cpu_s)
    capacity = interval * len(cpus)
    return {"cpus": list(cpus), "interval_s": round(interval, 4), "busy_cpu_s": round(busy, 3),
            "engine_cpu_s": round(engine_cpu_s, 3), "other_cpu_s": round(other, 3),
            "other_pct": round(100 * other / capacity, 2), "steal_s": round(steal, 3),
            "steal_pct": round(100 * steal / capacity, 2), "tick_s": round(1 / hz, 4),
            "involuntary_switches": involuntary_switches,
            "load1_before": round(before.load1, 2), "load1_after": round(after.load1, 2)}


def rejected_attempt(inv: Invocation) -> bool:
    """An attempt the policy rejected and ran again: a record, not a failure of the run."""
    return inv.conditions.get("interference", {}).get("kept") is False


def _worst_pct(records: tuple[Invocation, ...]) -> float | None:
    values = [r.conditions["interference"]["other_pct"] for r in records
              if r.status == STATUS_OK and "other_pct" in r.conditions.get("interference", {})]
    return max(values) if values else None


def _marked(inv: Invocation, extra: dict[str, Any], **changes: Any) -> Invocation:
    conditions = {**inv.conditions, "interference": {**inv.conditions["interference"], **extra}} \
        if "interference" in inv.conditions else inv.conditions
    return dataclasses.replace(inv, conditions=conditions, **changes)


def judge_attempt(records: tuple[Invocation, ...], policy: InterferencePolicy, attempt: int,
                  measured: bool) -> tuple[tuple[Invocation, ...], bool]:
    """The records of one attempt marked by the policy, and whether to run the step again (pure).

    Only measured steps are judged; a failed process is never re-run for interference.
    """
    pct = _worst_pct(records)
    if not measured or policy.max_pct is None or pct is None:
        return records, False
    counted = {"attempt": attempt} if policy.action == "rerun" else {}
    if pct <= policy.max_pct:
        return tuple(_marked(r, {**counted, "kept": True} if counted else {}) for r in records), False
    why = f"interference {pct:.1f}% > {policy.max_pct:g}% (machine.interference_max_pct)"
    if policy.action == "rerun" and attempt <= policy.reruns:
        rejected = tuple(_marked(r, {**counted, "kept": False}, status=STATUS_CONDITION_NOT_MET,
                                 error=f"{why}; re-run {attempt}/{policy.reruns}")
                         if r.status == STATUS_OK else r for r in records)
        return rejected, True
    note = why + (f"; kept after {policy.reruns} re-run(s)" if policy.action == "rerun" else "")
    return tuple(_marked(r, {**counted, "kept": True, "flagged": True}, notes=(*r.notes, note))
                 for r in records), False
