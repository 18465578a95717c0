"""Resuming a run that did not finish (pure): which steps of its re-made plan still run.

`tidemark run --resume RUN` re-plans the run from its stored overrides and runs the rest into
the same run. A point (one workload × params × threads × cache state) whose judged steps
(measured and callgrind) all have an ok record is done and skipped whole. Any other point runs
again from its setup and warm-ups — the interrupted run's data set is gone (removed on an
interrupt, or by the next command after a kill), and a measurement needs the same data and
cache state as its siblings had — and then only the judged steps without an ok record. So no
repetition is measured twice, and the new ones keep their planned repetition numbers (series
and A/B rounds stay as planned); sequence numbers continue after the run's last one.

A Google Benchmark step runs every repetition in one process: it is done when its ok rows (of
its thread count) cover all of its repetitions. A command step is done when its process left
an ok row, whatever the rows are named (a pytest-benchmark suite names each by its test).
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ..errors import ConfigError
from ..where_keys import WHERE_KEYS
from .kinds import KIND_COMMAND, KIND_GBENCH
from .runplan import PHASE_CALLGRIND, PHASE_MEASURED, Step, canonical_json

JUDGED_PHASES = (PHASE_MEASURED, PHASE_CALLGRIND)
RESUMABLE = ("interrupted", "killed", "partial", "failed")


@dataclass(frozen=True)
class StoredInvocation:
    """What resuming needs of one stored invocation of the run."""

    phase: str
    workload: str
    benchmark: str
    repetition: int
    threads: int
    params: dict[str, Any]
    cache_state: str
    ok: bool  # ended ok, and not an attempt the interference policy rejected
    # A row of a command's multi-row output: the repetition of the step (process) it came from
    step_repetition: int | None = None


@dataclass(frozen=True)
class ResumePlan:
    steps: tuple[Step, ...]  # what runs now, renumbered
    kept: int  # judged invocations already stored ok
    skipped_points: int  # points with nothing left to run


def _point_key(workload: str, params: dict[str, Any], cache_state: str) -> tuple[str, str, str]:
    return workload, canonical_json(params), cache_state


def _step_key(phase: str, workload: str, benchmark: str, repetition: int, threads: int,
              params: dict[str, Any], cache_state: str) -> tuple[Any, ...]:
    return phase, benchmark, repetition, threads, *_point_key(workload, params, cache_state)


def _process_key(phase: str, threads: int, workload: str, params: dict[str, Any],
                 cache_state: str) -> tuple[Any, ...]:
    return phase, threads, *_point_key(workload, params, cache_state)


def _is_done(step: Step, done: set[tuple[Any, ...]], gbench_reps: dict[tuple[Any, ...], set[int]]) -> bool:
    key = _process_key(step.phase, step.threads, step.workload, step.params_dict,
                       step.cache_state)
    if step.kind == KIND_GBENCH:
        return len(gbench_reps.get(key, ())) >= step.repetitions
    if step.kind == KIND_COMMAND:  # its rows may be named by its output: done per process
        return step.repetition in gbench_reps.get(key, ())
    return _step_key(step.phase, step.workload, step.benchmark, step.repetition, step.threads,
                     step.params_dict, step.cache_state) in done


def resume_plan(steps: Sequence[Step], stored: Iterable[StoredInvocation], first_seq: int) -> ResumePlan:
    """The steps still to run (points in plan order), numbered from first_seq."""
    ok = [s for s in stored if s.ok and s.phase in JUDGED_PHASES]
    done = {_step_key(s.phase, s.workload, s.benchmark, s.repetition, s.threads, s.params,
                      s.cache_state) for s in ok}
    # per process key (phase, threads, point): the repetitions stored ok; a multi-row command's
    # rows count as their step's repetition
    gbench_reps: dict[tuple[Any, ...], set[int]] = {}
    for s in ok:
        gbench_reps.setdefault(_process_key(s.phase, s.threads, s.workload, s.params,
                                            s.cache_state),
                               set()).add(s.step_repetition or s.repetition)
    points: dict[int, list[Step]] = {}
    for step in steps:
        points.setdefault(step.point, []).append(step)
    todo: list[Step] = []
    skipped = 0
    for point_steps in points.values():
        left = [s for s in point_steps if s.phase in JUDGED_PHASES and not _is_done(s, done, gbench_reps)]
        if not left:
            skipped += 1
            continue
        todo += [s for s in point_steps if s.phase not in JUDGED_PHASES or s in left]
    renumbered = tuple(dataclasses.replace(s, seq=first_seq + i) for i, s in enumerate(todo))
    return ResumePlan(renumbered, len(ok), skipped)


def check_resumable(run_id: str, status: str, source: str, in_ab: bool) -> None:
    """Refuse what cannot be resumed, naming why and what to do instead."""
    if source != "run":
        raise ConfigError(f"run {run_id} was imported (tidemark import), not measured; there is "
                          f"nothing to resume")
    if in_ab:
        raise ConfigError(f"run {run_id} is a side of a `tidemark ab` job, whose rounds pair the "
                          f"two sides; run the ab job again instead of resuming one side")
    if status == "ok":
        raise ConfigError(f"run {run_id} finished ok; there is nothing to resume")
    if status == "running":
        raise ConfigError(f"run {run_id} is still running (its process is alive); wait for it, "
                          f"or stop it and then resume")
    if status not in RESUMABLE:
        raise ConfigError(f"run {run_id} has status {status!r}; only {', '.join(RESUMABLE)} "
                          f"runs can be resumed")


def check_same_measurement(run_id: str, stored_build: str, build: str, stored_machine: str,
                           machine: str) -> None:
    """A resumed run must be measured with the same build on the same machine."""
    if stored_build != build:
        raise ConfigError(f"run {run_id} was measured with build {stored_build}; this checkout "
                          f"builds {build} for the same config (engine source, patches or flags "
                          f"changed), so its rest would be another measurement: start a new run")
    if stored_machine != machine:
        raise ConfigError(f"run {run_id} was measured on machine {stored_machine[:12]}, this is "
                          f"{machine[:12]}; resume it on the machine that started it")


def resume_entry(at: str, plan: ResumePlan, previous_status: str, process: dict[str, Any]) -> dict[str, Any]:
    """What the run keeps about one resume (runs.resumes) and says on its page."""
    return {"at": at, "previous_status": previous_status, "kept": plan.kept,
            "steps": len(plan.steps), "skipped_points": plan.skipped_points, "process": process}


def resume_text(entry: dict[str, Any]) -> str:
    """One resume of a run, as its page says it."""
    return (f"Resumed at {entry['at']} (`tidemark run --resume`): the run was "
            f"{entry['previous_status']}; {entry['kept']} measured invocations were kept and "
            f"{entry['steps']} steps ran to finish it ({entry['skipped_points']} points were "
            f"already complete).")


def config_differences(stored: dict[str, Any], now: dict[str, Any], prefix: str = "") -> list[str]:
    """The keys (dotted) whose values differ between the run's stored config and today's;
    where things are stored (WHERE_KEYS) may differ."""
    out = []
    for key in sorted((set(stored) | set(now)) - (WHERE_KEYS if not prefix else set())):
        old, new = stored.get(key), now.get(key)
        path = f"{prefix}{key}"
        if isinstance(old, dict) and isinstance(new, dict):
            out += config_differences(old, new, path + ".")
        elif canonical_json(old) != canonical_json(new):
            out.append(f"{path}: {json.dumps(old, default=str)[:40]} → {json.dumps(new, default=str)[:40]}")
    return out
