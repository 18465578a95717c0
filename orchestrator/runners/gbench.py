"""Run one Google Benchmark harness step (side effects) under the same control as db_bench.

The process is pinned, joins the run's cgroup, runs under the timeout and (where perf exists)
`perf stat`, exactly as a db_bench process does (process.py).

Mapping (one process, many results): every iteration row of its JSON — one Google Benchmark
benchmark (name without the thread segment) × thread count × repetition — is one measured
invocation with that row's metrics (real/cpu time in ns, items/s = ops_per_sec, bytes/s,
per-thread ops/s, user counters), its own series key and status (an `error_occurred` row is
failed, a skipped row skipped). The rows of one process share its command, log, exit code and
resource usage (wall/user/sys/max RSS are the process's, not the row's);
`conditions.process` says how many rows share them and holds the process-wide perf counters
(`counters_unavailable` / `counters_error` sit where a db_bench invocation has them).
Google Benchmark's own statistics (mean, median, stddev, cv, BigO, RMS) go to the aggregates
table, never counted as repetitions. A process that crashed, timed out or wrote no parsable
JSON is one invocation with the step's filter as its benchmark and the reason.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ..adapters.registry import parse_output
from ..adapters.results import ROW_FAILED, ROW_OK, ParseRequest, ResultRow, StoredAggregate, ToolReport
from ..analysis.identity import series_key
from ..errors import EngineOutputError
from ..plan.runplan import Step
from ..record import STATUS_FAILED, STATUS_OK, STATUS_PARSE_ERROR, STATUS_SKIPPED, ProcessResult
from .base import StepOutcome
from .context import RunContext, step_identity
from .gbench_command import gbench_command
from .process import Execute, process_conditions, read_counters, run_wrapped_process
from .records import invocation_record, process_failure

_STATUS = {ROW_OK: STATUS_OK, ROW_FAILED: STATUS_FAILED}


def _row_step(step: Step, row: ResultRow) -> Step:
    return dataclasses.replace(step, benchmark=row.name, threads=row.threads,
                               repetition=row.repetition)


def _harness_conditions(ctx: RunContext, result: ProcessResult, stem: Path,
                        rows: int) -> dict[str, Any]:
    """The process's conditions, shared by its rows; its perf counters are process-wide."""
    conditions = process_conditions(ctx, result)
    conditions["harness_binary"] = ctx.harness_binary
    counters, counter_conditions = read_counters(ctx, stem)
    conditions.update(counter_conditions)
    process: dict[str, Any] = {"records": rows, "wall_s": round(result.wall_s, 4)}
    if counters:
        process["counters"] = {m.name: m.value for m in counters}
    conditions["process"] = process
    return conditions


def _whole_process(ctx: RunContext, step: Step, status: str, error: str,
                   result: ProcessResult, stem: Path) -> StepOutcome:
    conditions = _harness_conditions(ctx, result, stem, 1)
    inv = invocation_record(ctx, step, status, error, result, [], conditions,
                            str(stem.with_suffix(".stdout")))
    return StepOutcome(((inv, step_identity(ctx, step)),))


def _read_report(out_json: Path, step: Step) -> ToolReport:
    if not out_json.exists():
        raise EngineOutputError(f"the harness wrote no {out_json.name}; see its log")
    report = parse_output("gbench_json", out_json.read_text(errors="replace"),
                          ParseRequest(source=out_json.name, threads=step.threads))
    if not report.rows:
        raise EngineOutputError(f"benchmark filter {step.benchmark!r} matched no harness "
                                f"benchmark; list them with rocksdb_harness --benchmark_list_tests")
    return report


def _rows_outcome(ctx: RunContext, step: Step, report: ToolReport, result: ProcessResult,
                  stem: Path) -> StepOutcome:
    conditions = _harness_conditions(ctx, result, stem, len(report.rows))
    conditions["gbench_context"] = report.context
    log = str(stem.with_suffix(".stdout"))
    records = []
    for row in report.rows:
        row_step = _row_step(step, row)
        inv = invocation_record(ctx, row_step, _STATUS.get(row.status, STATUS_SKIPPED), row.error,
                                result, row.metrics, conditions, log, notes=row.notes)
        records.append((inv, step_identity(ctx, row_step)))
    aggregates = []
    for agg in report.aggregates:
        identity = step_identity(ctx, dataclasses.replace(step, benchmark=agg.name,
                                                          threads=agg.threads))
        aggregates.append(StoredAggregate(ctx.run_id, series_key(identity), step.workload, agg))
    return StepOutcome(tuple(records), tuple(aggregates))


def gbench_outcome(ctx: RunContext, step: Step, result: ProcessResult, stem: Path) -> StepOutcome:
    """The invocations of a finished harness process, from its result and the files at `stem`."""
    failure = process_failure(result, ctx.plan.timeout_s)
    if failure:
        return _whole_process(ctx, step, failure[0], failure[1], result, stem)
    try:
        report = _read_report(stem.with_suffix(".gbench.json"), step)
    except EngineOutputError as exc:
        return _whole_process(ctx, step, STATUS_PARSE_ERROR, str(exc), result, stem)
    return _rows_outcome(ctx, step, report, result, stem)


class GbenchRunner:
    """A StepRunner for gbench_json steps: the harness runs every repetition of its filter;
    `execute` says where the process runs, as for db_bench."""

    def __init__(self, execute: Execute = run_wrapped_process):
        self.execute = execute

    def run(self, ctx: RunContext, step: Step) -> StepOutcome:
        stem = ctx.logs_dir / f"{step.seq:04d}-{step.phase}-{step.workload}"
        db_dir = ctx.data_dir / step.db_key
        argv = gbench_command(Path(ctx.harness_binary), step, db_dir, stem.with_suffix(".gbench.json"))
        result = self.execute(ctx, step, argv, stem)
        return gbench_outcome(ctx, step, result, stem)
