"""The one run loop: `tidemark run` and `tidemark ab` both run their steps through it.

The caller decides only the order: run passes its plan's steps, ab its schedule of two
contexts (one per side), as groups: a duet round is a group of two steps run at the same time
(each in a thread that waits on its own process). The loop reports progress, skips the rest of
a point after its setup failed (per context), renumbers the rows of a multi-row step so sequence numbers stay
unique within each run, and stores every invocation as soon as its step ends, so a crash, a
hang or Ctrl-C later loses nothing already measured. A step runner that raises is a failed
record with the reason, never the end of the loop. The interference policy (machine/interference.py)
may run a measured step again; every attempt is a record.
"""
from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, Callable, Protocol, Sequence

from ..adapters.results import StoredAggregate
from ..errors import ConfigError, DiskFull, EngineOutputError, Interrupted
from ..machine.execute import kill_running_engines
from ..machine.interference import judge_attempt
from ..plan.runplan import PHASE_SETUP, Step
from ..record import STATUS_FAILED, STATUS_OK, STATUS_PARSE_ERROR, Invocation
from .base import StepOutcome, StepRunner
from .context import RunContext, step_identity
from .records import invocation_record, skipped_invocation
from .select import step_runner


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
    except (ConfigError, Interrupted):
        # The plan itself is wrong (every later step would fail alike), or the user stopped
        # the run: stop, never record it as this step's failure.
        raise
    except Exception as exc:  # noqa: BLE001 - any other failure is this step's record
        full = DiskFull.of(exc, ctx.logs_dir)
        if full is not None:  # the logs' disk: every later step would fail alike
            raise full from None
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


Item = tuple[RunContext, Step]


def _run_at_once(outcome: Callable[[RunContext, Step], tuple[StepOutcome, str]],
                 group: Sequence[Item]) -> list[tuple[StepOutcome, str]]:
    """A group's steps at once, one thread each. A stop (Ctrl-C, SIGTERM) is raised in this
    thread only: the workers' engines, and any a worker starts before its step ends, are
    killed until every worker is done, rather than run on to their end."""
    with ThreadPoolExecutor(max_workers=len(group)) as pool:
        futures = [pool.submit(outcome, *item) for item in group]
        try:
            return [future.result() for future in futures]
        except BaseException:
            while not all(future.done() for future in futures):
                kill_running_engines()
                wait(futures, timeout=0.1)
            raise


def run_steps(items: Sequence[Item], store: InvocationStore, reporter: Reporter,
              runner_for: RunnerFor | None = None) -> list[Invocation]:
    """Run (context, step) items in the given order; returns the invocations in that order.

    A failed setup skips the rest of its point in its context (recorded as skipped). A step
    with several result rows takes several sequence numbers; the later steps of that run move
    up to keep them unique.
    """
    loop = RunLoop(store, reporter, len(items), runner_for)
    return loop.run([(item,) for item in items])


class RunLoop:
    """The loop's state across calls: `tidemark ab --adaptive` feeds it one round at a time.

    `run` takes groups of items: a group of one runs alone; the items of a larger group run at
    the same time (a duet round: both sides at once, each pinned to its own CPU), and are
    stored in the group's order once all of them ended.
    """

    def __init__(self, store: InvocationStore, reporter: Reporter, total: int,
                 runner_for: RunnerFor | None = None):
        self.store, self.reporter, self.total = store, reporter, total
        self.runner_for = runner_for or step_runner
        self.failed_points: dict[tuple[str, int], str] = {}
        self.shift: dict[str, int] = {}
        self.index = 0
        self.prepared: set[int] = set()

    def _prepare(self, ctx: RunContext) -> None:
        if id(ctx) not in self.prepared:  # a context holds a dict: unhashable
            ctx.logs_dir.mkdir(parents=True, exist_ok=True)
            ctx.data_dir.mkdir(parents=True, exist_ok=True)
            self.prepared.add(id(ctx))

    def _outcome(self, ctx: RunContext, step: Step) -> tuple[StepOutcome, str]:
        reason = self.failed_points.get((ctx.run_id, step.point), "")
        if reason:
            return StepOutcome(((skipped_invocation(ctx, step, reason),
                                 step_identity(ctx, step)),)), reason
        return _run_under_policy(self.runner_for(ctx, step), ctx, step), ""

    def run(self, groups: Sequence[Sequence[Item]]) -> list[Invocation]:
        done: list[Invocation] = []
        for group in groups:
            for ctx, step in group:
                self._prepare(ctx)
                self.index += 1
                self.reporter.step_started(step, self.index, self.total)
            if len(group) == 1:
                outcomes = [self._outcome(*group[0])]
            else:
                outcomes = _run_at_once(self._outcome, group)
            for (ctx, step), (outcome, skipped) in zip(group, outcomes):
                done += self._record(ctx, step, outcome, skipped)
        return done

    def _record(self, ctx: RunContext, step: Step, outcome: StepOutcome,
                skipped: str) -> list[Invocation]:
        step_invs = _store_outcome(self.store, outcome, step.seq + self.shift.get(ctx.run_id, 0))
        self.shift[ctx.run_id] = self.shift.get(ctx.run_id, 0) + len(step_invs) - 1
        worst = next((i for i in step_invs if i.status != STATUS_OK), step_invs[-1])
        if worst.status != STATUS_OK and step.phase == PHASE_SETUP and not skipped:
            self.failed_points[(ctx.run_id, step.point)] = (
                f"setup step {step.seq} ({step.benchmark}) {worst.status}")
        self.reporter.step_finished(worst)
        return step_invs


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
