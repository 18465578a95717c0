"""Run one step of a Google Benchmark binary (side effects) under the same control as db_bench:
any binary a recipe lists (snappy_benchmark) or Tidemark's harness over RocksDB's API.

The process is pinned, joins the run's cgroup, runs under the timeout and (where perf exists)
`perf stat`, exactly as a db_bench process does (process.py); the workload's declared data
files are evicted or read back and their residency verified as a database's (cache.py).

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
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from ..adapters.registry import parse_output
from ..adapters.results import ROW_FAILED, ROW_OK, ParseRequest, ResultRow, StoredAggregate, ToolReport
from ..analysis.identity import series_key
from ..errors import ConfigError, EngineOutputError
from ..plan.kinds import renamed
from ..plan.runplan import Step
from ..plan.templates import render
from ..record import (LOWER, STATUS_CONDITION_NOT_MET, STATUS_FAILED, STATUS_OK,
                      STATUS_PARSE_ERROR, STATUS_SKIPPED, Metric, ProcessResult)
from .base import StepOutcome
from .cache import missing_data, prepare_cache, verify_cache
from .context import RunContext, render_all, step_identity, step_values, template_values
from .gbench_command import gbench_command, list_command
from .process import Execute, process_conditions, read_counters, run_wrapped_process
from .records import invocation_record, process_failure

_STATUS = {ROW_OK: STATUS_OK, ROW_FAILED: STATUS_FAILED}
_BENCHMARK_NAME = re.compile(r"^\S+$")  # Google Benchmark's names hold no spaces


def _row_step(ctx: RunContext, step: Step, row: ResultRow) -> Step:
    name = renamed(ctx.plan.workloads[step.workload], row.name) \
        if step.workload in ctx.plan.workloads else row.name
    return dataclasses.replace(step, benchmark=name, threads=row.threads,
                               repetition=row.repetition)


def _harness_conditions(ctx: RunContext, result: ProcessResult, stem: Path, rows: int,
                        cache: dict[str, Any]) -> dict[str, Any]:
    """The process's conditions, shared by its rows; its perf counters are process-wide."""
    conditions = {**cache, **process_conditions(ctx, result)}
    conditions["binary"] = result.argv[0] if result.argv else ""
    counters, counter_conditions = read_counters(ctx, stem)
    conditions.update(counter_conditions)
    process: dict[str, Any] = {"records": rows, "wall_s": round(result.wall_s, 4)}
    if counters:
        process["counters"] = {m.name: m.value for m in counters}
    conditions["process"] = process
    return conditions


def _whole_process(ctx: RunContext, step: Step, status: str, error: str,
                   result: ProcessResult, stem: Path, cache: dict[str, Any]) -> StepOutcome:
    conditions = _harness_conditions(ctx, result, stem, 1, cache)
    inv = invocation_record(ctx, step, status, error, result, [], conditions,
                            str(stem.with_suffix(".stdout")))
    return StepOutcome(((inv, step_identity(ctx, step)),))


def _read_report(out_json: Path, step: Step, binary: str) -> ToolReport:
    if not out_json.exists():
        raise EngineOutputError(f"{Path(binary).name} wrote no {out_json.name}; see its log")
    report = parse_output("gbench_json", out_json.read_text(errors="replace"),
                          ParseRequest(source=out_json.name, threads=step.threads))
    if not report.rows:
        raise EngineOutputError(f"benchmark filter {step.benchmark!r} matched no benchmark of "
                                f"{Path(binary).name}; list them with {binary} "
                                f"--benchmark_list_tests")
    return report


def _rows_outcome(ctx: RunContext, step: Step, report: ToolReport, result: ProcessResult,
                  stem: Path, cache: dict[str, Any]) -> StepOutcome:
    conditions = _harness_conditions(ctx, result, stem, len(report.rows), cache)
    conditions["gbench_context"] = report.context
    violation = verify_cache(ctx, step, conditions)
    metrics = [Metric("page_cache_residency_pct", cache["residency_pct"], "%", LOWER)] \
        if "residency_pct" in cache else []
    log = str(stem.with_suffix(".stdout"))
    records = []
    for row in report.rows:
        row_step = _row_step(ctx, step, row)
        status, error = _STATUS.get(row.status, STATUS_SKIPPED), row.error
        if status == STATUS_OK and violation:
            status, error = STATUS_CONDITION_NOT_MET, violation
        inv = invocation_record(ctx, row_step, status, error, result, [*row.metrics, *metrics],
                                conditions, log, notes=row.notes)
        records.append((inv, step_identity(ctx, row_step)))
    aggregates = []
    for agg in report.aggregates:
        identity = step_identity(ctx, dataclasses.replace(step, benchmark=_row_step(
            ctx, step, ResultRow(agg.name, 1, agg.threads, ROW_OK)).benchmark,
                                                          threads=agg.threads))
        aggregates.append(StoredAggregate(ctx.run_id, series_key(identity), step.workload, agg))
    return StepOutcome(tuple(records), tuple(aggregates))


def gbench_outcome(ctx: RunContext, step: Step, result: ProcessResult, stem: Path,
                   cache: dict[str, Any] | None = None) -> StepOutcome:
    """The invocations of a finished Google Benchmark process, from its result and the files at
    `stem`; `cache`: the conditions its data files were prepared under."""
    cache = cache or {}
    failure = process_failure(result, ctx.plan.timeout_s)
    if failure:
        return _whole_process(ctx, step, failure[0], failure[1], result, stem, cache)
    try:
        report = _read_report(stem.with_suffix(".gbench.json"), step, result.argv[0])
    except EngineOutputError as exc:
        return _whole_process(ctx, step, STATUS_PARSE_ERROR, str(exc), result, stem, cache)
    return _rows_outcome(ctx, step, report, result, stem, cache)


def gbench_binary(ctx: RunContext, step: Step) -> str:
    """The path of the binary a gbench step runs: the workload's, or the recipe's only one."""
    wl = ctx.plan.workloads[step.workload]
    return ctx.binaries[wl.binary] if wl.binary else next(iter(ctx.binaries.values()))


class GbenchRunner:
    """A StepRunner for gbench steps: the binary runs every repetition of its filter;
    `execute` says where the process runs, as for db_bench."""

    def __init__(self, execute: Execute = run_wrapped_process):
        self.execute = execute

    def run(self, ctx: RunContext, step: Step) -> StepOutcome:
        wl = ctx.plan.workloads[step.workload]
        stem = ctx.logs_dir / f"{step.seq:04d}-{step.phase}-{step.workload}"
        values = template_values(ctx, step, stem)
        where = f"workload {wl.name!r}"
        argv = gbench_command(Path(gbench_binary(ctx, step)), step,
                              stem.with_suffix(".gbench.json"), render_all(wl.args, values, where))
        data = [Path(p) for p in render_all(wl.data, values, where)]
        if missing_data(data):
            inv = invocation_record(ctx, step, STATUS_FAILED, missing_data(data), None, [], {}, "")
            return StepOutcome(((inv, step_identity(ctx, step)),))
        cache = prepare_cache(ctx, step, data) if data else {}
        env = {k: render(v, values, where) for k, v in wl.env.items()}
        run_ctx = dataclasses.replace(ctx, run_env={**ctx.run_env, **env}) if env else ctx
        result = self.execute(run_ctx, step, argv, stem)
        return gbench_outcome(ctx, step, result, stem, cache)


def check_gbench_binary(binary: str, wl: Any, step: Step, binaries: dict[str, str],
                        source_dir: str) -> None:
    """Refuse, before a run starts, a gbench workload whose binary is not a Google Benchmark
    binary or whose filter selects none of its benchmarks (Google Benchmark's own listing,
    with the workload's arguments: a harness may require its own flags)."""
    where = f"workload {wl.name!r}"
    with tempfile.TemporaryDirectory(prefix="tidemark-list-") as tmp:
        values = step_values(step, tmp, f"{tmp}/out", source_dir, binaries)
        argv = [*list_command(Path(binary), wl.benchmark or "."),
                *(render(a, values, where) for a in wl.args)]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp,
                                  stdin=subprocess.DEVNULL, errors="replace")
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ConfigError(f"{where}: {binary} does not run ({exc}); check engine.binaries") \
                from None
    names = [line for line in proc.stdout.splitlines() if line.strip()]
    if proc.returncode != 0 or not all(_BENCHMARK_NAME.match(n) for n in names):
        said = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
        raise ConfigError(f"{where}: {binary} is not a Google Benchmark binary "
                          f"(--benchmark_list_tests exited {proc.returncode}"
                          f"{': ' + said[-1][:120] if said else ''}); run it as kind: command")
    if not names:
        raise ConfigError(f"{where}: benchmark filter {wl.benchmark!r} selects no benchmark of "
                          f"{binary}; list them with {binary} --benchmark_list_tests")
