"""Execute a RunPlan (side effects): prepare, run, parse, record, store — one invocation at a time.

Each invocation is committed as soon as it ends, so a crash, a hang or Ctrl-C later in the run
loses nothing already measured.
"""
from __future__ import annotations

import dataclasses
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from . import cachestate
from .build import Build
from .commands import engine_command, exit_code_from_status, record_exit_status
from .errors import EngineOutputError
from .execute import run_process
from .parse import parse_engine_output
from .parse_callgrind import callgrind_command, parse_callgrind_total
from .parse_perf import parse_perf_csv, perf_command
from .plan import (FORMAT_GBENCH, PHASE_CALLGRIND, PHASE_SETUP, RunPlan, Step, hot_block_cache_bytes,
                   residency_violation, series_identity, series_key)
from .record import (LOWER, STATUS_CONDITION_NOT_MET, STATUS_FAILED, STATUS_OK,
                     STATUS_PARSE_ERROR, STATUS_SKIPPED, STATUS_TIMEOUT, Invocation, Metric,
                     ParsedOutput, ProcessResult)
from .store import Store
from .tool_results import StoredAggregate


class Reporter(Protocol):
    def step_started(self, step: Step, index: int, total: int) -> None: ...
    def step_finished(self, inv: Invocation) -> None: ...


@dataclass(frozen=True)
class RunContext:
    run_id: str
    plan: RunPlan
    build: Build
    machine_fingerprint: str
    pin_cpus: tuple[int, ...]
    run_env: dict[str, str]
    allow_drop_caches: bool  # the machine profile allows dropping all caches
    logs_dir: Path
    data_dir: Path
    counters: bool = False  # perf stat around each invocation
    cgroup_procs: tuple[Path, ...] = ()
    harness_binary: str = ""  # the Google Benchmark harness, for gbench_json steps


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def _failure(result: ProcessResult, timeout_s: float) -> tuple[str, str] | None:
    """(status, error) for a process that did not finish cleanly; None when it did."""
    last = next((ln.strip() for ln in reversed(result.stderr.splitlines()) if ln.strip()), "")
    last = last.split("\r")[-1][:200]
    if result.timed_out:
        return STATUS_TIMEOUT, (f"killed after {timeout_s:g} s (timeout_s={timeout_s:g}); raise "
                                f"timeout_s or lower workload.params.num")
    if result.exit_code and result.exit_code < 0:
        return STATUS_FAILED, f"killed by {_signal_name(result.exit_code)}: {last}".rstrip(": ")
    if result.exit_code:
        return STATUS_FAILED, f"exit code {result.exit_code}: {last}".rstrip(": ")
    return None


def _parse(ctx: RunContext, step: Step, result: ProcessResult,
           report_csv: str) -> tuple[str, str, ParsedOutput | None]:
    failure = _failure(result, ctx.plan.timeout_s)
    if failure:
        return failure[0], failure[1], None
    try:
        parsed = parse_engine_output(ctx.plan.engine, result.stdout, step.benchmark, step.threads,
                                     report_csv)
    except EngineOutputError as exc:
        return STATUS_PARSE_ERROR, str(exc), None
    return STATUS_OK, "", parsed


def _prepare_cache(ctx: RunContext, step: Step, db_dir: Path) -> dict[str, Any]:
    """Cold eviction before measured steps; residency measured right before the process."""
    conditions: dict[str, Any] = {}
    cache = ctx.plan.caches[step.cache_state]
    if cache.evict_page_cache and step.is_measured and not step.fresh_db:
        drop = cache.drop_caches and ctx.allow_drop_caches
        conditions["cache_procedure"] = cachestate.evict_page_cache(db_dir, drop)
    if not step.fresh_db:
        residency = cachestate.measure_residency(db_dir)
        conditions["residency_pct"] = round(residency.percent, 2)
        conditions["data_bytes"] = residency.total_bytes
        if step.prelude:
            conditions["block_cache_bytes"] = hot_block_cache_bytes(
                residency.total_bytes, step.params_dict["cache_size"])
    return conditions


def _condition_failure(ctx: RunContext, step: Step, conditions: dict[str, Any]) -> str:
    if not step.is_measured or "residency_pct" not in conditions:
        return ""
    cache = ctx.plan.caches[step.cache_state]
    return residency_violation(conditions["residency_pct"], cache.min_residency_pct,
                               cache.max_residency_pct)


def _wrap(ctx: RunContext, step: Step, argv: list[str], stem: Path) -> list[str]:
    if step.phase == PHASE_CALLGRIND:
        return callgrind_command(argv, str(stem.with_suffix(".callgrind.out")))
    if ctx.counters:
        inner = record_exit_status(argv, stem.with_suffix(".exit"))
        return perf_command(inner, str(stem.with_suffix(".perf.csv")))
    return argv


def run_engine(ctx: RunContext, step: Step, argv: list[str], stem: Path) -> ProcessResult:
    """Run argv under the step's wrapper (perf or callgrind), pinned and timed out.

    The result carries the engine's own argv and exit status; the wrapper is in `wrapped_argv`.
    """
    wrapped = _wrap(ctx, step, argv, stem)
    result = run_process(wrapped, stem.with_suffix(".stdout"), stem.with_suffix(".stderr"),
                         ctx.plan.timeout_s, ctx.run_env, ctx.pin_cpus, ctx.cgroup_procs)
    status_file = stem.with_suffix(".exit")
    code = result.exit_code
    if not result.timed_out and status_file.exists():
        recorded = exit_code_from_status(status_file.read_text())
        code = code if recorded is None else recorded
    return dataclasses.replace(result, argv=tuple(argv), exit_code=code,
                               wrapped_argv=tuple(wrapped) if wrapped != argv else ())


def _extra_metrics(ctx: RunContext, step: Step, stem: Path, result: ProcessResult,
                   parsed: ParsedOutput | None, conditions: dict[str, Any]) -> list[Metric]:
    """Counters (perf) or instruction counts (callgrind) of a process that ran to the end."""
    if parsed is None:
        return []
    if step.phase == PHASE_CALLGRIND:
        ops = parsed.metric("operations") or parsed.metric("hist_count")
        return parse_callgrind_total(result.stderr, ops)
    perf_file = stem.with_suffix(".perf.csv")
    if not ctx.counters or not perf_file.exists():
        return []
    metrics, unavailable = parse_perf_csv(perf_file.read_text())
    conditions["counters_unavailable"] = unavailable
    return metrics


def run_step(ctx: RunContext, step: Step) -> Invocation:
    db_dir = ctx.data_dir / step.db_key
    stem = ctx.logs_dir / f"{step.seq:04d}-{step.phase}-{step.benchmark}"
    report = stem.with_suffix(".report.csv")
    conditions = _prepare_cache(ctx, step, db_dir)
    argv = engine_command(ctx.plan.engine, Path(ctx.build.binary_path), step, db_dir, report,
                          conditions.get("block_cache_bytes"))
    result = run_engine(ctx, step, argv, stem)
    conditions["cpus_allowed"] = list(result.cpus_allowed)
    if result.wrapped_argv:
        conditions["wrapped_command"] = list(result.wrapped_argv)
    if result.cgroups and ctx.cgroup_procs:
        conditions["cgroups"] = [line for line in result.cgroups if "tidemark-" in line]
    report_csv = report.read_text(errors="replace") if report.exists() else ""
    status, error, parsed = _parse(ctx, step, result, report_csv)
    try:
        extra = _extra_metrics(ctx, step, stem, result, parsed, conditions)
    except EngineOutputError as exc:
        status, error, extra = STATUS_PARSE_ERROR, str(exc), []
    violation = _condition_failure(ctx, step, conditions)
    if status == STATUS_OK and violation:
        status, error = STATUS_CONDITION_NOT_MET, violation
    metrics = extra if step.phase == PHASE_CALLGRIND else [*(parsed.metrics if parsed else ()), *extra]
    if "residency_pct" in conditions:
        metrics.append(Metric("page_cache_residency_pct", conditions["residency_pct"], "%", LOWER))
    return _invocation(ctx, step, status, error, result, parsed, metrics, conditions,
                       str(stem.with_suffix(".stdout")))


def step_identity(ctx: RunContext, step: Step) -> dict[str, Any]:
    return series_identity(ctx.plan.engine, step, ctx.plan.build_variant, ctx.machine_fingerprint)


def _invocation(ctx: RunContext, step: Step, status: str, error: str,
                result: ProcessResult | None, parsed: ParsedOutput | None,
                metrics: list[Metric], conditions: dict[str, Any], log_path: str) -> Invocation:
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
        metrics=tuple(metrics), histograms=parsed.histograms if parsed else (),
        series=parsed.series if parsed else (), notes=parsed.notes if parsed else (),
        conditions=conditions)


def skipped(ctx: RunContext, step: Step, reason: str) -> Invocation:
    return _invocation(ctx, step, STATUS_SKIPPED, reason, None, None, [], {}, "")


StepRecords = tuple[list[tuple[Invocation, dict[str, Any]]], list[StoredAggregate]]


def _run_any_step(ctx: RunContext, step: Step, failed_points: dict[int, str]) -> StepRecords:
    """(invocation, series identity) pairs and tool aggregates of one step, by its format."""
    if step.point in failed_points:
        return [(skipped(ctx, step, failed_points[step.point]), step_identity(ctx, step))], []
    if step.format == FORMAT_GBENCH:
        from .gbench_runner import run_gbench_step  # builds on this module's helpers

        outcome = run_gbench_step(ctx, step)
        return list(outcome.records), list(outcome.aggregates)
    inv = run_step(ctx, step)
    if inv.status != STATUS_OK and step.phase == PHASE_SETUP:
        failed_points[step.point] = f"setup step {step.seq} ({step.benchmark}) {inv.status}"
    return [(inv, step_identity(ctx, step))], []


def execute_plan(ctx: RunContext, store: Store, reporter: Reporter) -> list[Invocation]:
    """Run every step in order; a failed setup skips the rest of its point (recorded as such).

    A db_bench step is one invocation with the step's sequence number; a harness step is one
    invocation per result row, so the sequence numbers after it move up to stay unique.
    """
    ctx.logs_dir.mkdir(parents=True, exist_ok=True)
    ctx.data_dir.mkdir(parents=True, exist_ok=True)
    failed_points: dict[int, str] = {}
    done: list[Invocation] = []
    total = len(ctx.plan.steps)
    shift = 0
    for index, step in enumerate(ctx.plan.steps, start=1):
        reporter.step_started(step, index, total)
        records, aggregates = _run_any_step(ctx, step, failed_points)
        for offset, (inv, identity) in enumerate(records):
            if shift or offset:
                inv = dataclasses.replace(inv, seq=step.seq + shift + offset)
            store.record_series(inv.series_key, identity)
            store.add_invocation(inv)
            done.append(inv)
        shift += len(records) - 1
        if aggregates:
            store.add_aggregates(aggregates)
        step_invs = done[len(done) - len(records):]
        reporter.step_finished(next((i for i in step_invs if i.status != STATUS_OK), step_invs[-1]))
    return done


def remove_data(data_dir: Path) -> None:
    shutil.rmtree(data_dir, ignore_errors=True)
