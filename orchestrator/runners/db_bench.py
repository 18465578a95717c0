"""The db_bench step runner (side effects): one db_bench process is one invocation.

The cache state is prepared and verified around the process (cache.py), the process runs
under the run's controls (process.py), and its stdout goes through the engine's adapter
(adapters/registry.py); a callgrind step records the instruction count instead of timings.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..adapters.registry import parse_db_bench_step, parse_output
from ..adapters.results import ParseRequest, ResultRow
from ..errors import EngineOutputError
from ..plan.runplan import PHASE_CALLGRIND, Step
from ..record import (LOWER, STATUS_CONDITION_NOT_MET, STATUS_OK, STATUS_PARSE_ERROR, Metric,
                      ProcessResult)
from .base import StepOutcome
from .cache import prepare_cache, verify_cache, written_data
from .commands import engine_command
from .context import RunContext, step_identity
from .process import Execute, process_conditions, read_counters, run_wrapped_process
from .records import invocation_record, process_failure


def _parse_stdout(ctx: RunContext, step: Step, result: ProcessResult,
                  stem: Path) -> tuple[str, str, ResultRow | None]:
    failure = process_failure(result, ctx.plan.timeout_s)
    if failure:
        return failure[0], failure[1], None
    report_file = stem.with_suffix(".report.csv")
    report_csv = report_file.read_text(errors="replace") if report_file.exists() else ""
    try:
        row = parse_db_bench_step(ctx.plan.db_bench, result.stdout, step.benchmark, step.threads,
                                  report_csv, stem.with_suffix(".stdout").name)
    except EngineOutputError as exc:
        return STATUS_PARSE_ERROR, str(exc), None
    return STATUS_OK, "", row


def planned_operations(step: Step) -> float:
    """Operations a db_bench step performs: per thread, num for a writer into a fresh
    database, else reads (num when unset); times the threads."""
    params = step.params_dict
    per_thread = params["num"] if step.fresh_db else (params.get("reads") or params["num"])
    return float(per_thread * step.threads)


def _instruction_metrics(ctx: RunContext, step: Step, result: ProcessResult,
                         row: ResultRow) -> list[Metric]:
    """callgrind's totals; raises EngineOutputError when valgrind printed none."""
    # RocksDB prints its operations; LevelDB only in the histogram, which callgrind steps turn
    # off (commands.py): there the planned count is what ran.
    operations = row.metric("operations") or row.metric("hist_count") or planned_operations(step)
    report = parse_output("callgrind", result.stderr,
                          ParseRequest(threads=step.threads, operations=operations))
    return list(report.rows[0].metrics)


def db_bench_outcome(ctx: RunContext, step: Step, result: ProcessResult, stem: Path,
                     conditions: dict[str, Any]) -> StepOutcome:
    """The invocation of a finished db_bench process, from its result and the files at `stem`."""
    conditions.update(process_conditions(ctx, result))
    status, error, row = _parse_stdout(ctx, step, result, stem)
    metrics: list[Metric] = list(row.metrics) if row else []
    if row and step.phase == PHASE_CALLGRIND:
        try:
            metrics = _instruction_metrics(ctx, step, result, row)
        except EngineOutputError as exc:
            status, error, metrics = STATUS_PARSE_ERROR, str(exc), []
    elif row:
        counters, counter_conditions = read_counters(ctx, stem)
        metrics += counters
        conditions.update(counter_conditions)
    violation = verify_cache(ctx, step, conditions)
    if status == STATUS_OK and violation:
        status, error = STATUS_CONDITION_NOT_MET, violation
    if "residency_pct" in conditions:
        metrics.append(Metric("page_cache_residency_pct", conditions["residency_pct"], "%", LOWER))
    inv = invocation_record(ctx, step, status, error, result, metrics, conditions,
                            str(stem.with_suffix(".stdout")),
                            histograms=row.histograms if row else (),
                            series=row.series if row else (), notes=row.notes if row else ())
    return StepOutcome(((inv, step_identity(ctx, step)),))


class DbBenchRunner:
    """A StepRunner for db_bench steps of either engine; `execute` says where the process runs
    (on this host, or in a container: runners/container.py)."""

    def __init__(self, execute: Execute = run_wrapped_process):
        self.execute = execute

    def run(self, ctx: RunContext, step: Step) -> StepOutcome:
        db_dir = ctx.data_dir / step.db_key
        stem = ctx.logs_dir / f"{step.seq:04d}-{step.phase}-{step.benchmark}"
        conditions = prepare_cache(ctx, step, db_dir)
        binary = Path(ctx.binaries.get("db_bench") or ctx.build.binary_path)
        argv = engine_command(ctx.plan.db_bench, binary, step, db_dir,
                              stem.with_suffix(".report.csv"), conditions.get("block_cache_bytes"))
        result = self.execute(ctx, step, argv, stem)
        conditions.update(written_data(step, db_dir))
        return db_bench_outcome(ctx, step, result, stem, conditions)
