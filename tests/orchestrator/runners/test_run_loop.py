"""The one run loop with a fake step runner (pure logic: no engine, no process, a fake store).

The loop is what `tidemark run` and `tidemark ab` share; these tests pin its rules: order as
given (ab's interleaving included), a failed setup skips only its own side's point, a raising
runner or adapter is a record, and multi-row steps keep sequence numbers unique per run.
"""
from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import pytest

from orchestrator.adapters.registry import parse_db_bench_step
from orchestrator.build.engine import Build
from orchestrator.errors import ConfigError, EngineOutputError
from orchestrator.plan.runplan import PHASE_MEASURED, PHASE_SETUP, RunPlan, Step
from orchestrator.record import STATUS_FAILED, STATUS_OK, STATUS_PARSE_ERROR, STATUS_SKIPPED, Metric
from orchestrator.runners.base import StepOutcome
from orchestrator.runners.context import RunContext, step_identity
from orchestrator.runners.loop import RunLoop, run_steps
from orchestrator.runners.records import invocation_record

BUILD = Build("b1", "leveldb", "1.23", "release", "test", "", "", "", "c++", "12", "3.25", (), 0.0,
              "/bin/true", "", (), "2024-01-01")


def step(seq: int, point: int, phase: str = PHASE_MEASURED, benchmark: str = "readrandom") -> Step:
    return Step(seq, point, "readrandom", benchmark, phase, 0 if phase == PHASE_SETUP else seq, 1,
                (("num", 10),), "db", phase == PHASE_SETUP)


def context(tmp_path: Path, run_id: str, steps: tuple[Step, ...]) -> RunContext:
    plan = RunPlan("leveldb", "1.23", "release", "warm", "", 60.0, steps)
    return RunContext(run_id, plan, BUILD, "fp", (), {}, False, tmp_path / run_id / "logs",
                      tmp_path / run_id / "data")


class FakeStore:
    def __init__(self) -> None:
        self.invocations: list = []
        self.series: dict = {}
        self.aggregates: list = []

    def record_series(self, key, identity):
        self.series[key] = identity

    def add_invocation(self, inv):
        self.invocations.append(inv)

    def add_aggregates(self, aggregates):
        self.aggregates += aggregates


class Reporter:
    def __init__(self) -> None:
        self.started: list[tuple[int, int]] = []
        self.finished: list[str] = []

    def step_started(self, step, index, total):
        self.started.append((index, total))

    def step_finished(self, inv):
        self.finished.append(inv.status)


class FakeRunner:
    """A StepRunner whose behaviour per (run_id, seq) is scripted: ok, a status, N rows, raise."""

    def __init__(self, script: dict | None = None) -> None:
        self.script = script or {}
        self.calls: list[tuple[str, int]] = []

    def run(self, ctx: RunContext, step: Step) -> StepOutcome:
        self.calls.append((ctx.run_id, step.seq))
        action = self.script.get((ctx.run_id, step.seq), STATUS_OK)
        if isinstance(action, BaseException):
            raise action
        if action == "adapter":  # the real db_bench adapter on output that lacks the line
            parse_db_bench_step("leveldb", "Segmentation fault\n", step.benchmark, 1)
        rows = action if isinstance(action, int) else 1
        status = action if isinstance(action, str) else STATUS_OK
        records = []
        for row in range(rows):
            row_step = dataclasses.replace(step, benchmark=f"{step.benchmark}/{row}") if rows > 1 else step
            inv = invocation_record(ctx, row_step, status, "", None,
                                    [Metric("ops_per_sec", 1.0, "ops/s", "higher")], {}, "")
            records.append((inv, step_identity(ctx, row_step)))
        return StepOutcome(tuple(records))


def run(items, runner, store=None, reporter=None):
    store = store or FakeStore()
    return run_steps(items, store, reporter or Reporter(), lambda ctx, step: runner), store


def test_plan_order_is_kept_and_every_invocation_stored_as_it_ends(tmp_path):
    steps = (step(1, 1, PHASE_SETUP, "fillseq"), step(2, 1), step(3, 1), step(4, 2))
    ctx = context(tmp_path, "r1", steps)
    runner, reporter = FakeRunner(), Reporter()
    done, store = run([(ctx, s) for s in steps], runner, reporter=reporter)
    assert runner.calls == [("r1", 1), ("r1", 2), ("r1", 3), ("r1", 4)]
    assert [i.seq for i in done] == [1, 2, 3, 4]
    assert store.invocations == done
    assert reporter.started == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert set(store.series) == {i.series_key for i in done}
    assert ctx.logs_dir.is_dir() and ctx.data_dir.is_dir()


def test_interleaved_ab_order_runs_each_step_in_its_own_context(tmp_path):
    steps = (step(1, 1), step(2, 1))
    a, b = context(tmp_path, "x-a", steps), context(tmp_path, "x-b", steps)
    order = [(a, steps[0]), (b, steps[0]), (b, steps[1]), (a, steps[1])]
    runner = FakeRunner()
    done, _ = run(order, runner)
    assert runner.calls == [("x-a", 1), ("x-b", 1), ("x-b", 2), ("x-a", 2)]
    assert [(i.run_id, i.seq) for i in done] == runner.calls


def test_failed_setup_skips_only_that_sides_point(tmp_path):
    steps = (step(1, 1, PHASE_SETUP, "fillseq"), step(2, 1), step(3, 2, PHASE_SETUP, "fillseq"),
             step(4, 2))
    a, b = context(tmp_path, "x-a", steps), context(tmp_path, "x-b", steps)
    order = [(a, steps[0]), (b, steps[0]), (a, steps[1]), (b, steps[1]),
             (a, steps[2]), (b, steps[2]), (b, steps[3]), (a, steps[3])]
    runner = FakeRunner({("x-a", 1): STATUS_FAILED})
    done, _ = run(order, runner)
    status = {(i.run_id, i.seq): (i.status, i.error) for i in done}
    assert ("x-a", 2) not in runner.calls  # never started
    assert status[("x-a", 2)] == (STATUS_SKIPPED, "setup step 1 (fillseq) failed")
    assert status[("x-b", 2)][0] == STATUS_OK  # the other side's point runs
    assert status[("x-a", 4)][0] == STATUS_OK  # the same side's next point runs
    assert len(done) == len(order)


@pytest.mark.parametrize("action, status, reason", [
    (EngineOutputError("no 'readrandom : ... micros/op' line"), STATUS_PARSE_ERROR,
     "no 'readrandom : ... micros/op' line"),
    ("adapter", STATUS_PARSE_ERROR, "no 'readrandom : ... micros/op' line"),
    (KeyError("cache_size"), STATUS_FAILED, "KeyError: 'cache_size'"),
])
def test_a_raising_runner_or_adapter_is_a_record_and_the_loop_goes_on(tmp_path, action, status,
                                                                       reason):
    steps = (step(1, 1), step(2, 1))
    ctx = context(tmp_path, "r1", steps)
    runner = FakeRunner({("r1", 1): action})
    done, store = run([(ctx, s) for s in steps], runner)
    assert [i.status for i in done] == [status, STATUS_OK]
    assert reason in done[0].error and done[0].conditions["runner_error"] == done[0].error
    assert store.invocations == done


def test_a_config_error_stops_the_loop_with_its_message(tmp_path):
    # A wrong plan (e.g. LevelDB with compression=zstd) would fail every step alike.
    steps = (step(1, 1), step(2, 1))
    ctx = context(tmp_path, "r1", steps)
    with pytest.raises(ConfigError, match="snappy"):
        run([(ctx, s) for s in steps], FakeRunner({("r1", 1): ConfigError("use snappy")}))


def test_multi_row_steps_take_consecutive_seqs_per_run(tmp_path):
    steps = (step(1, 1), step(2, 2), step(3, 3))
    a, b = context(tmp_path, "x-a", steps), context(tmp_path, "x-b", steps)
    order = [(a, steps[0]), (b, steps[0]), (a, steps[1]), (b, steps[1]), (a, steps[2]), (b, steps[2])]
    runner = FakeRunner({("x-a", 1): 3, ("x-b", 2): 2})
    done, reporter_store = run(order, runner)
    seqs = {run_id: [i.seq for i in done if i.run_id == run_id] for run_id in ("x-a", "x-b")}
    assert seqs == {"x-a": [1, 2, 3, 4, 5], "x-b": [1, 2, 3, 4]}
    assert [i.benchmark for i in done if i.run_id == "x-a"][:3] == [f"readrandom/{n}" for n in range(3)]


class BarrierRunner(FakeRunner):
    """Both steps of a duet group must be inside run() at once, or the barrier times out."""

    def __init__(self) -> None:
        super().__init__()
        self.barrier = threading.Barrier(2, timeout=10)

    def run(self, ctx: RunContext, step: Step) -> StepOutcome:
        if step.phase == PHASE_MEASURED:
            self.barrier.wait()  # raises BrokenBarrierError (a failed record) when run alone
        return super().run(ctx, step)


def test_a_group_runs_its_steps_at_the_same_time_and_stores_them_in_group_order(tmp_path):
    steps = (step(1, 1, PHASE_SETUP, "fillseq"), step(2, 1), step(3, 1))
    a, b = context(tmp_path, "d-a", steps), context(tmp_path, "d-b", steps)
    runner, store, reporter = BarrierRunner(), FakeStore(), Reporter()
    loop = RunLoop(store, reporter, 6, lambda ctx, s: runner)
    done = loop.run([((a, steps[0]),), ((b, steps[0]),)])  # setups one at a time
    for rnd in steps[1:]:  # an adaptive job feeds the same loop one round at a time
        done += loop.run([((a, rnd), (b, rnd))])
    assert [i.status for i in done] == [STATUS_OK] * 6
    assert [(i.run_id, i.seq) for i in done] == [("d-a", 1), ("d-b", 1), ("d-a", 2), ("d-b", 2),
                                                 ("d-a", 3), ("d-b", 3)]
    assert store.invocations == done and reporter.started[-1] == (6, 6)
