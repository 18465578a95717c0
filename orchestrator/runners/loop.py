"""The one run loop: `tidemark run` and `tidemark ab` both run their steps through it.

The caller decides only the order: run passes its plan's steps, ab its interleaved schedule of
two contexts (one per side). The loop reports progress, skips the rest of a point after its
setup failed (per context), renumbers the rows of a multi-row step so sequence numbers stay
unique within each run, and stores every invocation as soon as its step ends, so a crash, a
hang or Ctrl-C later loses nothing already measured. A step runner that raises is a failed
record with the reason, never the end of the loop. The interference policy (interference.py)
may run a measured step again; every attempt is a record.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Protocol, Sequence

from ..adapters.results import StoredAggregate
from ..errors import ConfigError, EngineOutputError
from ..plan import PHASE_SETUP, Step
from ..record import STATUS_FAILED, STATUS_OK, STATUS_PARSE_ERROR, Invocation
from .base import StepOutcome, StepRunner
from .context import RunContext, step_identity
from .interference import judge_attempt
from .records import invocation_record, skipped_invocation
from .select import host_step_runner


class Reporter(Protocol):
    def step_started(self, step: Step, index: int, total: int) -> None: ...
    def step_finished(self, inv: Invocation) -> None: ...


class InvocationStore(Protocol):
    """The part of store.Store the loop writes through."""

    def record_series(self, key: str, identity: dict[str, Any]) -> None: ...
    def add_invocation(self, inv: Invocation) -> None: ...
    def add_aggregates(self, aggregates: list[StoredAggregate]) -> None: ...


RunnerFor = Callable[[RunContext, Step], StepRunner]


def _raised(ctx: RunContext, step: Step, exc: Exception) -> StepOutcome:
    """A step runner's exception as the step's record: the run goes on."""
    status = STATUS_PARSE_ERROR if isinstance(exc, EngineOutputError) else STATUS_FAILED
    reason = str(exc) if isinstance(exc, EngineOutputError) else f"{type(exc).__name__}: {exc}"
    inv = invocation_record(ctx, step, status, reason, None, [], {"runner_error": reason}, "")
    return StepOutcome(((inv, step_identity(ctx, step)),))


def _run_one(runner: StepRunner, ctx: RunContext, step: Step) -> StepOutcome:
    try:
        outcome = runner.run(ctx, step)
        if not outcome.records:  # every step leaves a record, or a failure would vanish
            raise RuntimeError(f"{type(runner).__name__} returned no invocation for step {step.seq}")
        return outcome
    except ConfigError:
        raise  # the plan itself is wrong (every later step would fail alike): stop, say the fix
    except Exception as exc:  # noqa: BLE001 - any other failure is this step's record
        return _raised(ctx, step, exc)


def _run_under_policy(runner: StepRunner, ctx: RunContext, step: Step) -> StepOutcome:
    """The step, run again while the interference policy rejects it; every attempt's records,
    the aggregates of the kept one."""
    records: list[tuple[Invocation, dict[str, Any]]] = []
    attempt = 1
    while True:
        outcome = _run_one(runner, ctx, step)
        judged, again = judge_attempt(tuple(inv for inv, _ in outcome.records), ctx.interference,
                                      attempt, step.is_measured)
        records += [(inv, identity) for inv, (_, identity) in zip(judged, outcome.records)]
        if not again:
            return StepOutcome(tuple(records), outcome.aggregates)
        attempt += 1


def run_steps(items: Sequence[tuple[RunContext, Step]], store: InvocationStore,
              reporter: Reporter, runner_for: RunnerFor | None = None) -> list[Invocation]:
    """Run (context, step) items in the given order; returns the invocations in that order.

    A failed setup skips the rest of its point in its context (recorded as skipped). A step
    with several result rows takes several sequence numbers; the later steps of that run move
    up to keep them unique.
    """
    runner_for = runner_for or host_step_runner
    for ctx in {id(ctx): ctx for ctx, _ in items}.values():  # a context holds a dict: unhashable
        ctx.logs_dir.mkdir(parents=True, exist_ok=True)
        ctx.data_dir.mkdir(parents=True, exist_ok=True)
    failed_points: dict[tuple[str, int], str] = {}
    shift: dict[str, int] = {}
    done: list[Invocation] = []
    for index, (ctx, step) in enumerate(items, start=1):
        reporter.step_started(step, index, len(items))
        reason = failed_points.get((ctx.run_id, step.point))
        if reason:
            outcome = StepOutcome(((skipped_invocation(ctx, step, reason), step_identity(ctx, step)),))
        else:
            outcome = _run_under_policy(runner_for(ctx, step), ctx, step)
        step_invs = _store_outcome(store, outcome, step.seq + shift.get(ctx.run_id, 0))
        shift[ctx.run_id] = shift.get(ctx.run_id, 0) + len(step_invs) - 1
        done += step_invs
        worst = next((i for i in step_invs if i.status != STATUS_OK), step_invs[-1])
        if worst.status != STATUS_OK and step.phase == PHASE_SETUP and not reason:
            failed_points[(ctx.run_id, step.point)] = (f"setup step {step.seq} ({step.benchmark}) "
                                                       f"{worst.status}")
        reporter.step_finished(worst)
    return done


def _store_outcome(store: InvocationStore, outcome: StepOutcome, first_seq: int) -> list[Invocation]:
    """Write one step's invocations (numbered from first_seq) and aggregates; returns them."""
    invocations = []
    for offset, (inv, identity) in enumerate(outcome.records):
        if inv.seq != first_seq + offset:
            inv = dataclasses.replace(inv, seq=first_seq + offset)
        store.record_series(inv.series_key, identity)
        store.add_invocation(inv)
        invocations.append(inv)
    if outcome.aggregates:
        store.add_aggregates(list(outcome.aggregates))
    return invocations
