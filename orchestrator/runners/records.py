"""Invocation records of a step (pure): a finished process, a skipped step, a failure's status."""
from __future__ import annotations

import signal
from typing import Any

from ..analysis.identity import series_key
from ..plan.runplan import Step
from ..record import (STATUS_FAILED, STATUS_SKIPPED, STATUS_TIMEOUT, Histogram, Invocation,
                      Metric, ProcessResult, TimeSeries)
from .context import RunContext, step_identity


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def process_failure(result: ProcessResult, timeout_s: float) -> tuple[str, str] | None:
    """(status, error) for a process that did not finish cleanly; None when it did."""
    last = next((ln.strip() for ln in reversed(result.stderr.splitlines()) if ln.strip()), "")
    last = last.split("\r")[-1][:200]
    if result.oom_killed:
        limit = result.container.get("memory_limit_bytes")
        at = f" of {limit / 2**20:,.0f} MiB" if isinstance(limit, int) else ""
        return STATUS_FAILED, (f"killed by the container's memory limit{at} (OOM); raise "
                               f"runner.memory_mb or lower workload.params.num: {last}").rstrip(": ")
    if result.timed_out:
        return STATUS_TIMEOUT, (f"killed after {timeout_s:g} s (timeout_s={timeout_s:g}); raise "
                                f"timeout_s or lower workload.params.num")
    if result.exit_code and result.exit_code < 0:
        return STATUS_FAILED, f"killed by {_signal_name(result.exit_code)}: {last}".rstrip(": ")
    if result.exit_code:
        return STATUS_FAILED, f"exit code {result.exit_code}: {last}".rstrip(": ")
    return None


def invocation_record(ctx: RunContext, step: Step, status: str, error: str,
                      result: ProcessResult | None, metrics: list[Metric] | tuple[Metric, ...],
                      conditions: dict[str, Any], log_path: str,
                      histograms: tuple[Histogram, ...] = (), series: tuple[TimeSeries, ...] = (),
                      notes: tuple[str, ...] = ()) -> Invocation:
    """One step's (or one result row's) invocation; `result` None: no process ran."""
    return Invocation(
        run_id=ctx.run_id, seq=step.seq, workload=step.workload, benchmark=step.benchmark,
        phase=step.phase, repetition=step.repetition, threads=step.threads,
        params=step.params_dict, cache_state=step.cache_state,
        series_key=series_key(step_identity(ctx, step)), status=status, error=error,
        exit_code=result.exit_code if result else None, wall_s=result.wall_s if result else 0.0,
        user_s=result.user_s if result else 0.0, sys_s=result.sys_s if result else 0.0,
        max_rss_kb=result.max_rss_kb if result else 0,
        started_at=result.started_at if result else None,
        ended_at=result.ended_at if result else None,
        command=result.argv if result else (), log_path=log_path,
        metrics=tuple(metrics), histograms=histograms, series=series, notes=notes,
        conditions=conditions)


def skipped_invocation(ctx: RunContext, step: Step, reason: str) -> Invocation:
    return invocation_record(ctx, step, STATUS_SKIPPED, reason, None, [], {}, "")
