"""Interference arithmetic on /proc/stat text and the flag / rerun policy through the one run loop
with a fake step runner whose measurements are scripted (pure logic: no engine, no process)."""
from __future__ import annotations

import dataclasses

import pytest

from orchestrator.plan.runplan import PHASE_MEASURED, PHASE_SETUP
from orchestrator.record import STATUS_CONDITION_NOT_MET, STATUS_FAILED, STATUS_OK
from orchestrator.runners.base import StepOutcome
from orchestrator.runners.context import step_identity
from orchestrator.machine.interference import (CpuSample, InterferencePolicy, interference,
                                               judge_attempt, parse_proc_stat)
from orchestrator.runners.records import invocation_record
from tests.orchestrator.runners.test_run_loop import context, run, step

# Captured from this 2-core KVM guest; the second sample is the first plus a known delta on cpu1.
STAT_BEFORE = """cpu  506675 9336 68162 202933 2488 0 1154 4556 0 0
cpu0 236514 4637 31563 121545 545 0 472 2281 0 0
cpu1 270161 4698 36599 81387 1942 0 681 2274 0 0
intr 3306673 0 0 0
"""
# cpu1: user +60, system +20, softirq +5, idle +15, steal +3 ticks; cpu0 +100 user (not ours).
STAT_AFTER = """cpu  506835 9336 68182 202948 2488 0 1159 4559 0 0
cpu0 236614 4637 31563 121545 545 0 472 2281 0 0
cpu1 270221 4698 36619 81402 1942 0 686 2277 0 0
intr 3306673 0 0 0
"""


def test_proc_stat_per_cpu_lines():
    cpus = parse_proc_stat(STAT_BEFORE)
    assert sorted(cpus) == [0, 1]
    assert cpus[1][:8] == (270161, 4698, 36599, 81387, 1942, 0, 681, 2274)


def test_other_tasks_time_is_busy_minus_the_engines_own():
    before = CpuSample(10.0, parse_proc_stat(STAT_BEFORE), 0.5)
    after = CpuSample(11.0, parse_proc_stat(STAT_AFTER), 0.75)
    got = interference(before, after, (1,), engine_cpu_s=0.6, involuntary_switches=7, hz=100)
    assert got["busy_cpu_s"] == pytest.approx(0.85)  # 60 + 20 + 5 ticks on cpu1 only
    assert got["other_cpu_s"] == pytest.approx(0.25)
    assert got["other_pct"] == pytest.approx(25.0)  # of one CPU over one second
    assert got["steal_s"] == pytest.approx(0.03) and got["steal_pct"] == pytest.approx(3.0)
    assert (got["involuntary_switches"], got["load1_before"], got["load1_after"]) == (7, 0.5, 0.75)
    # The engine's rusage is finer than ticks: never a negative share for other tasks.
    assert interference(before, after, (1,), 0.9, 0, hz=100)["other_cpu_s"] == 0.0
    # Unpinned: all CPUs, so cpu0's 100 ticks count too.
    assert interference(before, after, (), 0.6, 0, hz=100)["other_cpu_s"] == pytest.approx(1.25)


class ScriptedRunner:
    """Each call returns the next scripted other_pct (None: a failed process)."""

    def __init__(self, pcts):
        self.pcts = list(pcts)
        self.calls = 0

    def run(self, ctx, step):
        pct = self.pcts[self.calls]
        self.calls += 1
        status = STATUS_FAILED if pct is None else STATUS_OK
        conditions = {} if pct is None else {"interference": {"other_pct": pct}}
        inv = invocation_record(ctx, step, status, "", None, [], conditions, "")
        return StepOutcome(((inv, step_identity(ctx, step)),))


def _ctx(tmp_path, steps, **policy):
    return dataclasses.replace(context(tmp_path, "r1", steps), interference=InterferencePolicy(**policy))


def test_rerun_policy_keeps_every_attempt_and_marks_the_kept_one(tmp_path):
    steps = (step(1, 1), step(2, 1))
    ctx = _ctx(tmp_path, steps, max_pct=10.0, action="rerun", reruns=2)
    runner = ScriptedRunner([50.0, 40.0, 1.0, 2.0])
    done, store = run([(ctx, s) for s in steps], runner)
    assert runner.calls == 4
    assert [i.status for i in done] == [STATUS_CONDITION_NOT_MET, STATUS_CONDITION_NOT_MET,
                                        STATUS_OK, STATUS_OK]
    assert [i.seq for i in done] == [1, 2, 3, 4]  # every attempt is its own record
    marks = [i.conditions["interference"] for i in done]
    assert [(m["attempt"], m["kept"]) for m in marks] == [(1, False), (2, False), (3, True), (1, True)]
    assert "interference 50.0% > 10%" in done[0].error and "re-run 1/2" in done[0].error
    assert store.invocations == done


def test_rerun_budget_spent_keeps_the_last_attempt_flagged(tmp_path):
    steps = (step(1, 1),)
    ctx = _ctx(tmp_path, steps, max_pct=10.0, action="rerun", reruns=2)
    done, _ = run([(ctx, steps[0])], ScriptedRunner([50.0, 60.0, 70.0]))
    assert [i.status for i in done] == [STATUS_CONDITION_NOT_MET] * 2 + [STATUS_OK]
    kept = done[-1]
    assert kept.conditions["interference"] == {"other_pct": 70.0, "attempt": 3, "kept": True,
                                               "flagged": True}
    assert any("kept after 2 re-run(s)" in n for n in kept.notes)


def test_flag_policy_runs_once_and_notes_it(tmp_path):
    steps = (step(1, 1), step(2, 1))
    ctx = _ctx(tmp_path, steps, max_pct=10.0, action="flag")
    runner = ScriptedRunner([50.0, 5.0])
    done, _ = run([(ctx, s) for s in steps], runner)
    assert runner.calls == 2 and [i.status for i in done] == [STATUS_OK, STATUS_OK]
    assert done[0].conditions["interference"]["flagged"] is True
    assert done[0].notes and "interference 50.0% > 10%" in done[0].notes[0]
    assert "flagged" not in done[1].conditions["interference"] and not done[1].notes


def test_unjudged_setups_failures_and_no_bound(tmp_path):
    setup = step(1, 1, PHASE_SETUP, "fillseq")
    ctx = _ctx(tmp_path, (setup,), max_pct=10.0, action="rerun", reruns=3)
    done, _ = run([(ctx, setup)], ScriptedRunner([90.0]))  # a setup is never re-run
    assert [i.status for i in done] == [STATUS_OK]
    measured = step(2, 1, PHASE_MEASURED)
    done, _ = run([(ctx, measured)], ScriptedRunner([None]))  # a failure is not interference
    assert [i.status for i in done] == [STATUS_FAILED]
    records = (invocation_record(ctx, measured, STATUS_OK, "", None, [],
                                 {"interference": {"other_pct": 99.0}}, ""),)
    assert judge_attempt(records, InterferencePolicy(), 1, True) == (records, False)
