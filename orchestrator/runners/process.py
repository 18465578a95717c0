"""One engine or harness process under the run's controls (side effects), for every step runner:
pinned, in the run's cgroup, under the timeout, wrapped in perf stat or callgrind, and the
conditions achieved read back (affinity, cgroup, the wrapper's command line, counters).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Callable

from ..adapters.callgrind import callgrind_command
from ..adapters.perf_csv import perf_command
from ..adapters.registry import parse_output
from ..adapters.results import ParseRequest
from ..errors import EngineOutputError
from ..machine.execute import run_process
from ..machine.interference import interference, sample_cpus
from ..machine.shield import shield_conditions
from ..plan.runplan import PHASE_CALLGRIND, Step
from ..record import Metric, ProcessResult
from .commands import exit_code_from_status, record_exit_status
from .context import RunContext


# Where a step runner's process runs: run_wrapped_process here, run_in_container (container.py).
Execute = Callable[[RunContext, Step, list[str], Path], ProcessResult]


def wrapped_command(ctx: RunContext, step: Step, argv: list[str], stem: Path) -> list[str]:
    """argv under the step's wrapper: callgrind for a callgrind step, perf stat with counters."""
    if step.phase == PHASE_CALLGRIND:
        return callgrind_command(argv, str(stem.with_suffix(".callgrind.out")))
    if ctx.counters:
        inner = record_exit_status(argv, stem.with_suffix(".exit"))
        return perf_command(inner, str(stem.with_suffix(".perf.csv")))
    return argv


def run_wrapped_process(ctx: RunContext, step: Step, argv: list[str], stem: Path) -> ProcessResult:
    """Run argv under the step's wrapper (perf or callgrind), pinned and timed out.

    The result carries the engine's own argv and exit status; the wrapper is in `wrapped_argv`;
    the CPU time other tasks took from its CPUs meanwhile is in `interference`.
    """
    wrapped = wrapped_command(ctx, step, argv, stem)
    before = sample_cpus()
    result = run_process(wrapped, stem.with_suffix(".stdout"), stem.with_suffix(".stderr"),
                         ctx.plan.timeout_s, ctx.run_env, ctx.pin_cpus, ctx.cgroup_procs)
    measured = interference(before, sample_cpus(), ctx.pin_cpus, result.user_s + result.sys_s,
                            result.involuntary_switches)
    status_file = stem.with_suffix(".exit")
    code = result.exit_code
    if not result.timed_out and status_file.exists():
        recorded = exit_code_from_status(status_file.read_text())
        code = code if recorded is None else recorded
    return dataclasses.replace(result, argv=tuple(argv), exit_code=code,
                               wrapped_argv=tuple(wrapped) if wrapped != argv else (),
                               interference=measured)


def process_conditions(ctx: RunContext, result: ProcessResult) -> dict[str, Any]:
    """What the kernel applied to the process: CPUs, cgroup lines, the wrapper that ran it, the
    shield read back, and the interference measured around it."""
    conditions: dict[str, Any] = {"cpus_allowed": list(result.cpus_allowed)}
    if result.wrapped_argv:
        conditions["wrapped_command"] = list(result.wrapped_argv)
    if result.cgroups and ctx.cgroup_procs:
        conditions["cgroups"] = [line for line in result.cgroups if "tidemark-" in line]
    if ctx.planted:
        conditions["planted"] = dict(ctx.planted)
    if ctx.shield is not None:
        conditions["shield"] = shield_conditions(ctx.shield, result.cgroups)
    elif ctx.shield_requested != "none":
        conditions["shield"] = {"mode": ctx.shield_requested, "applied": False}
    if result.interference:
        conditions["interference"] = result.interference
    if result.container:  # the container runner: what was read back inside it, the image
        conditions["runner"] = "docker"
        conditions["container"] = dict(result.container)
    return conditions


def read_counters(ctx: RunContext, stem: Path) -> tuple[list[Metric], dict[str, Any]]:
    """perf counters of the process, and what to record about them in its conditions.

    One rule for every workload type: counters that cannot be read (no CSV, or a CSV that does
    not parse) cost the counters only. The invocation keeps its status and timing metrics and
    records `counters_error`: a broken perf wrapper does not make ops/s wrong, and the
    engine's own exit status comes from the wrapper shell's status file, not from perf.
    """
    if not ctx.counters:
        return [], {}
    perf_file = stem.with_suffix(".perf.csv")
    if not perf_file.exists():
        return [], {"counters_error": f"perf stat wrote no {perf_file.name}"}
    try:
        report = parse_output("perf_csv", perf_file.read_text(errors="replace"),
                              ParseRequest(source=perf_file.name))
    except EngineOutputError as exc:
        return [], {"counters_error": str(exc)}
    return list(report.rows[0].metrics), {"counters_unavailable": report.context["unavailable"]}
