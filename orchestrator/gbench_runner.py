"""Run one Google Benchmark harness step (side effects) under the same control as db_bench.

The process is pinned, joins the run's cgroup, runs under the timeout and (where perf exists)
`perf stat`, exactly as a db_bench process does (runner.run_engine).

Mapping (one process, many results): every iteration row of its JSON — one Google Benchmark
benchmark (name without the thread segment) × thread count × repetition — is one measured
invocation with that row's metrics (real/cpu time in ns, items/s = ops_per_sec, bytes/s,
per-thread ops/s, user counters), its own series key and status (an `error_occurred` row is
failed, a skipped row skipped). The rows of one process share its command, log, exit code and
resource usage (wall/user/sys/max RSS are the process's, not the row's);
`conditions.process` says how many rows share them and holds the process-wide perf counters.
Google Benchmark's own statistics (mean, median, stddev, cv, BigO, RMS) go to the aggregates
table, never counted as repetitions. A process that crashed, timed out or wrote no parsable
JSON is one invocation with the step's filter as its benchmark and the reason.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import EngineOutputError
from .gbench_command import gbench_command
from .parse_gbench import parse_gbench_json
from .parse_perf import parse_perf_csv
from .plan import Step, series_key
from .record import (STATUS_FAILED, STATUS_OK, STATUS_PARSE_ERROR, STATUS_SKIPPED, Invocation,
                     ProcessResult)
from .runner import RunContext, _failure, _invocation, run_engine, step_identity
from .tool_results import ROW_FAILED, ROW_OK, ResultRow, StoredAggregate, ToolReport

_STATUS = {ROW_OK: STATUS_OK, ROW_FAILED: STATUS_FAILED}


@dataclass(frozen=True)
class StepOutcome:
    """Invocations (each with its series identity) and tool aggregates of one step."""

    records: tuple[tuple[Invocation, dict[str, Any]], ...]
    aggregates: tuple[StoredAggregate, ...] = ()


def _row_step(step: Step, row: ResultRow) -> Step:
    return dataclasses.replace(step, benchmark=row.name, threads=row.threads,
                               repetition=row.repetition)


def _process_conditions(ctx: RunContext, step: Step, stem: Path, result: ProcessResult,
                        rows: int) -> dict[str, Any]:
    conditions: dict[str, Any] = {"cpus_allowed": list(result.cpus_allowed),
                                  "harness_binary": ctx.harness_binary}
    if result.cgroups and ctx.cgroup_procs:
        conditions["cgroups"] = [line for line in result.cgroups if "tidemark-" in line]
    process: dict[str, Any] = {"records": rows, "wall_s": round(result.wall_s, 4)}
    perf_file = stem.with_suffix(".perf.csv")
    if ctx.counters and perf_file.exists():
        try:
            metrics, unavailable = parse_perf_csv(perf_file.read_text())
            process["counters"] = {m.name: m.value for m in metrics}
            process["counters_unavailable"] = unavailable
        except EngineOutputError as exc:
            process["counters_error"] = str(exc)
    conditions["process"] = process
    return conditions


def _whole_process(ctx: RunContext, step: Step, status: str, error: str,
                   result: ProcessResult, stem: Path) -> StepOutcome:
    conditions = _process_conditions(ctx, step, stem, result, 1)
    inv = _invocation(ctx, step, status, error, result, None, [], conditions,
                      str(stem.with_suffix(".stdout")))
    return StepOutcome(((inv, step_identity(ctx, step)),))


def _read_report(out_json: Path, step: Step) -> ToolReport:
    if not out_json.exists():
        raise EngineOutputError(f"the harness wrote no {out_json.name}; see its log")
    report = parse_gbench_json(out_json.read_text(errors="replace"), out_json.name)
    if not report.rows:
        raise EngineOutputError(f"benchmark filter {step.benchmark!r} matched no harness "
                                f"benchmark; list them with rocksdb_harness --benchmark_list_tests")
    return report


def _outcome(ctx: RunContext, step: Step, report: ToolReport, result: ProcessResult,
             stem: Path) -> StepOutcome:
    conditions = _process_conditions(ctx, step, stem, result, len(report.rows))
    conditions["gbench_context"] = report.context
    log = str(stem.with_suffix(".stdout"))
    records = []
    for row in report.rows:
        row_step = _row_step(step, row)
        inv = _invocation(ctx, row_step, _STATUS.get(row.status, STATUS_SKIPPED), row.error,
                          result, None, list(row.metrics), conditions, log)
        records.append((dataclasses.replace(inv, notes=row.notes), step_identity(ctx, row_step)))
    aggregates = []
    for agg in report.aggregates:
        identity = step_identity(ctx, dataclasses.replace(step, benchmark=agg.name,
                                                          threads=agg.threads))
        aggregates.append(StoredAggregate(ctx.run_id, series_key(identity), step.workload, agg))
    return StepOutcome(tuple(records), tuple(aggregates))


def run_gbench_step(ctx: RunContext, step: Step) -> StepOutcome:
    """Run the harness once for this step; every row of its JSON becomes an invocation."""
    stem = ctx.logs_dir / f"{step.seq:04d}-{step.phase}-{step.workload}"
    out_json = stem.with_suffix(".gbench.json")
    db_dir = ctx.data_dir / step.db_key
    argv = gbench_command(Path(ctx.harness_binary), step, db_dir, out_json)
    result = run_engine(ctx, step, argv, stem)
    failure = _failure(result, ctx.plan.timeout_s)
    if failure:
        return _whole_process(ctx, step, failure[0], failure[1], result, stem)
    try:
        report = _read_report(out_json, step)
    except EngineOutputError as exc:
        return _whole_process(ctx, step, STATUS_PARSE_ERROR, str(exc), result, stem)
    return _outcome(ctx, step, report, result, stem)
