"""What `tidemark run --resume` runs again (orchestrator/plan/resume.py, pure)."""
from __future__ import annotations

import pytest

from orchestrator.errors import ConfigError
from orchestrator.plan.kinds import KIND_COMMAND, KIND_GBENCH
from orchestrator.plan.runplan import Step
from orchestrator.plan.resume import (StoredInvocation, check_resumable, check_same_measurement,
                                 config_differences, resume_plan)

PARAMS = (("num", 1000),)


def _point(point: int, reps: int, seq: int, threads: int = 1) -> list[Step]:
    def step(benchmark: str, phase: str, rep: int, offset: int) -> Step:
        return Step(seq + offset, point, "readrandom", benchmark, phase, rep, threads, PARAMS,
                    "k", phase == "setup", "warm")
    return [step("fillseq", "setup", 0, 0), step("readseq", "warmup", 1, 1),
            *[step("readrandom", "measured", r, 1 + r) for r in range(1, reps + 1)]]


def _stored(rep: int, ok: bool = True, threads: int = 1, phase: str = "measured") -> StoredInvocation:
    return StoredInvocation(phase, "readrandom", "readrandom", rep, threads, dict(PARAMS), "warm", ok)


def test_nothing_stored_runs_every_step_numbered_after_the_run():
    steps = _point(1, 3, 1)
    plan = resume_plan(steps, [], first_seq=11)
    assert [s.seq for s in plan.steps] == [11, 12, 13, 14, 15]
    assert [(s.phase, s.repetition) for s in plan.steps] == [(s.phase, s.repetition) for s in steps]
    assert plan.kept == 0 and plan.skipped_points == 0


def test_a_complete_point_is_skipped_and_a_partial_one_reruns_setup_and_only_its_missing_reps():
    steps = _point(1, 2, 1) + _point(2, 4, 5, threads=2)
    stored = [_stored(1), _stored(2), _stored(1, threads=2), _stored(2, threads=2),
              _stored(3, ok=False, threads=2)]  # failed: measured again
    plan = resume_plan(steps, stored, first_seq=20)
    assert [(s.point, s.phase, s.repetition) for s in plan.steps] == [
        (2, "setup", 0), (2, "warmup", 1), (2, "measured", 3), (2, "measured", 4)]
    assert plan.kept == 4 and plan.skipped_points == 1


def test_a_rejected_attempt_is_not_a_measurement():
    plan = resume_plan(_point(1, 1, 1), [_stored(1, ok=False)], first_seq=5)
    assert [s.phase for s in plan.steps] == ["setup", "warmup", "measured"]


def test_a_google_benchmark_step_is_done_only_when_every_repetition_is_stored():
    step = Step(1, 1, "micro_get", "BM_Get", "measured", 1, 1, PARAMS, "k", True, "warm",
                kind=KIND_GBENCH, repetitions=3)
    rows = [StoredInvocation("measured", "micro_get", f"BM_Get/{r}", r, 1, dict(PARAMS), "warm", True)
            for r in (1, 2)]
    assert len(resume_plan([step], rows, 9).steps) == 1
    rows.append(StoredInvocation("measured", "micro_get", "BM_Get/3", 3, 1, dict(PARAMS), "warm", True))
    assert resume_plan([step], rows, 9).steps == ()


def test_a_google_benchmark_point_of_two_threads_is_not_done_by_the_one_thread_rows():
    steps = [Step(i, i, "micro_get", "^Get/", "measured", 1, threads, PARAMS, "k", True, "warm",
                  kind=KIND_GBENCH, repetitions=2) for i, threads in ((1, 1), (2, 2))]
    rows = [StoredInvocation("measured", "micro_get", "Get/hit", r, 1, dict(PARAMS), "warm", True)
            for r in (1, 2)]
    assert [s.threads for s in resume_plan(steps, rows, 9).steps] == [2]


def test_a_command_step_is_done_by_its_process_whatever_its_rows_are_named():
    """A pytest-benchmark suite run as a command: its rows are named by their tests and
    numbered on from the step's repetition; each row records the step's repetition."""
    steps = [Step(r, 1, "py_perf", "py_perf", "measured", r, 1, PARAMS, "k", False, "warm",
                  kind=KIND_COMMAND) for r in (1, 2, 3)]
    rows = [StoredInvocation("measured", "py_perf", f"test_{name}", (step - 1) * 5 + rnd, 1,
                             dict(PARAMS), "warm", True, step)
            for step in (1, 2) for name in ("sum", "sorted") for rnd in range(1, 6)]
    assert [s.repetition for s in resume_plan(steps, rows, 40).steps] == [3]


@pytest.mark.parametrize("status, source, in_ab, words", [
    ("ok", "run", False, "nothing to resume"),
    ("running", "run", False, "still running"),
    ("interrupted", "import", False, "imported"),
    ("killed", "run", True, "tidemark ab"),
])
def test_what_cannot_be_resumed_is_refused_with_the_reason(status, source, in_ab, words):
    with pytest.raises(ConfigError, match=words):
        check_resumable("R1", status, source, in_ab)


@pytest.mark.parametrize("status", ["interrupted", "killed", "partial", "failed"])
def test_unfinished_runs_can_be_resumed(status):
    check_resumable("R1", status, "run", False)


def test_another_build_or_machine_is_another_measurement():
    with pytest.raises(ConfigError, match="build b1"):
        check_same_measurement("R1", "b1", "b2", "m", "m")
    with pytest.raises(ConfigError, match="machine"):
        check_same_measurement("R1", "b1", "b1", "m1", "m2")


def test_config_differences_name_the_changed_keys():
    assert config_differences({"a": {"b": 1, "c": 2}}, {"a": {"b": 1, "c": 3}}) == ["a.c: 2 → 3"]
    assert config_differences({"x": [1]}, {"x": [1]}) == []
