"""The command step runner (side effects): any command line, one process per repetition, timed
by Tidemark as hyperfine times a command (wall, user and system time, max RSS), and optionally
parsed: its stdout or the file it writes at `{out}` through any registered format, or through a
`regex` map (adapters/regex_map.py). Setup commands run the same way, untimed, always on
the host.

Mapping: a measured process is one invocation with the timing metrics, the parsed metrics of a
one-row output and the workload's derived metrics (MB/s = bytes of a file / wall_s). An output
with several rows (a pytest-benchmark suite, hyperfine over several commands) gives one
invocation per row, named by the row; the process's timing is then in `conditions.process`,
since it is no row's own. The declared data files are evicted or read back and their residency
verified before the process, as a database's are for db_bench (cache.py).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ..adapters.json_map import parse_map_config
from ..adapters.regex_map import RegexMap
from ..adapters.registry import ADAPTERS, parse_output
from ..adapters.results import ROW_FAILED, ROW_OK, ParseRequest, ResultRow
from ..errors import ConfigError, EngineOutputError
from ..plan.kinds import renamed
from ..plan.runplan import PHASE_SETUP, Step
from ..plan.schema import DerivedMetric, WorkloadConf
from ..plan.templates import render, words
from ..record import (HIGHER, LOWER, STATUS_CONDITION_NOT_MET, STATUS_FAILED, STATUS_OK,
                      STATUS_PARSE_ERROR, STATUS_SKIPPED, Metric, ProcessResult)
from .base import StepOutcome
from .cache import data_files, missing_data, prepare_cache, verify_cache
from .context import RunContext, render_all, step_identity, template_values
from .process import Execute, process_conditions, read_counters, run_wrapped_process
from .records import invocation_record, process_failure


def check_output_format(wl: WorkloadConf, in_container: bool = False) -> None:
    """What the plan's checks cannot ask the adapters: the output format is one the registry
    has, a json_map's map parses; and (runner=docker) the command starts with a recipe binary,
    the only programs a container image holds."""
    fmt = wl.output.format
    if fmt and fmt not in ADAPTERS:
        raise ConfigError(f"workload {wl.name!r}: output.format={fmt!r}; use regex or one of "
                          f"{', '.join(f for f in ADAPTERS if f != 'regex')}")
    if fmt == "json_map":
        try:
            parse_map_config(dict(wl.output.map))
        except ConfigError as exc:
            raise ConfigError(f"workload {wl.name!r}: output.map: {exc}") from None
    if in_container and wl.command and not str(wl.command[0]).startswith("{binary:"):
        raise ConfigError(f"workload {wl.name!r} starts {wl.command[0]!r}, and runner=docker "
                          f"runs only the engine recipe's binaries; start it with "
                          f"{{binary:NAME}} or use runner=host")


def timing_metrics(result: ProcessResult) -> list[Metric]:
    """What Tidemark measured of the process, named as hyperfine's export names them."""
    return [Metric("wall_s", result.wall_s, "s", LOWER), Metric("user_s", result.user_s, "s", LOWER),
            Metric("system_s", result.sys_s, "s", LOWER),
            Metric("max_rss_bytes", float(result.max_rss_kb) * 1024, "B", LOWER)]


def derived_metrics(derived: list[DerivedMetric], metrics: list[Metric],
                    values: dict[str, Any], where: str) -> tuple[list[Metric], list[str]]:
    """The workload's derived metrics, and a note for each that cannot be computed."""
    by_name = {m.name: m.value for m in metrics}
    out, notes = [], []
    for d in derived:
        per = by_name.get(d.per)
        size = sum(p.stat().st_size for p in data_files([Path(render(d.bytes_of, values, where))]))
        if not per or not size:
            notes.append(f"{d.name} not derived: {d.per}={per}, {d.bytes_of} holds {size} bytes")
            continue
        out.append(Metric(d.name, size / per * d.scale, d.unit,
                          HIGHER if d.better == "higher" else LOWER))
    return out, notes


def _request(wl: WorkloadConf, step: Step, source: str) -> ParseRequest:
    out = wl.output
    specs = {group: {"metric": spec.metric, "unit": spec.unit, "better": spec.better}
             for group, spec in out.metrics.items()}
    regex_map = RegexMap.of(out.regex, specs) if out.format == "regex" else None
    json_map = parse_map_config(dict(out.map)) if out.format == "json_map" else None
    return ParseRequest(source=source, benchmark=step.benchmark, threads=step.threads,
                        regex_map=regex_map, json_map=json_map)


def parse_command_output(wl: WorkloadConf, step: Step, result: ProcessResult,
                         stem: Path) -> tuple[ResultRow, ...]:
    """The rows of the process's output ((): timing only); EngineOutputError when it does not
    parse."""
    if not wl.output.format:
        return ()
    if wl.output.source == "out":
        out = stem.with_suffix(".out")
        if not out.exists():
            raise EngineOutputError(f"the command wrote no {{out}} file ({out.name}); see its log")
        text, source = out.read_text(errors="replace"), out.name
    else:
        text, source = result.stdout, stem.with_suffix(".stdout").name
    report = parse_output(wl.output.format, text, _request(wl, step, source))
    if not report.rows:
        raise EngineOutputError(f"{source}: the {wl.output.format} output holds no result")
    return report.rows


class CommandRunner:
    """A StepRunner for command steps; `execute` says where the process runs."""

    def __init__(self, execute: Execute = run_wrapped_process):
        self.execute = execute

    def run(self, ctx: RunContext, step: Step) -> StepOutcome:
        wl = ctx.plan.workloads[step.workload]
        where = f"workload {wl.name!r}"
        stem = ctx.logs_dir / f"{step.seq:04d}-{step.phase}-{step.workload}"
        values = template_values(ctx, step, stem)
        if step.phase == PHASE_SETUP:
            argv = render_all(words(wl.setup[int(step.benchmark.split("-")[1]) - 1]), values, where)
        else:
            argv = render_all(list(wl.command), values, where)
        data = [Path(p) for p in render_all(wl.data, values, where)]
        if step.phase != PHASE_SETUP and missing_data(data):
            return _failed(ctx, step, missing_data(data))
        conditions = prepare_cache(ctx, step, data) if data and step.phase != PHASE_SETUP else {}
        env = {k: render(v, values, where) for k, v in wl.env.items()}
        stem.with_suffix(".out").unlink(missing_ok=True)
        Path(values["data_dir"]).mkdir(parents=True, exist_ok=True)
        run_ctx = dataclasses.replace(ctx, run_env={**ctx.run_env, **env}) if env else ctx
        # Setup lines prepare data with the host's tools (a shell, cat), which a container of
        # the recipe's binaries does not have; only what is measured runs where the runner says.
        execute = run_wrapped_process if step.phase == PHASE_SETUP else self.execute
        result = execute(run_ctx, step, argv, stem)
        conditions.update(process_conditions(ctx, result))
        return self._outcome(ctx, step, wl, result, stem, conditions, values)

    def _outcome(self, ctx: RunContext, step: Step, wl: WorkloadConf, result: ProcessResult,
                 stem: Path, conditions: dict[str, Any], values: dict[str, Any]) -> StepOutcome:
        log = str(stem.with_suffix(".stdout"))
        failure = process_failure(result, ctx.plan.timeout_s)
        if failure or step.phase == PHASE_SETUP:
            status, error = failure or (STATUS_OK, "")
            inv = invocation_record(ctx, step, status, error, result, [], conditions, log)
            return StepOutcome(((inv, step_identity(ctx, step)),))
        timing = timing_metrics(result)
        try:
            rows = parse_command_output(wl, step, result, stem)
        except EngineOutputError as exc:
            inv = invocation_record(ctx, step, STATUS_PARSE_ERROR, str(exc), result, timing,
                                    conditions, log)
            return StepOutcome(((inv, step_identity(ctx, step)),))
        counters, counter_conditions = read_counters(ctx, stem)
        conditions.update(counter_conditions)
        status, error = STATUS_OK, verify_cache(ctx, step, conditions)
        if error:
            status = STATUS_CONDITION_NOT_MET
        shared = [Metric("page_cache_residency_pct", conditions["residency_pct"], "%", LOWER)] \
            if "residency_pct" in conditions else []
        if len(rows) <= 1:
            metrics = [*timing, *(rows[0].metrics if rows else ()), *counters]
            derived, notes = derived_metrics(wl.derived, metrics, values, f"workload {wl.name!r}")
            inv = invocation_record(ctx, step, status, error, result,
                                    [*metrics, *derived, *shared], conditions, log,
                                    notes=(*(rows[0].notes if rows else ()), *notes))
            return StepOutcome(((inv, step_identity(ctx, step)),))
        conditions["process"] = {"records": len(rows), "wall_s": round(result.wall_s, 4),
                                 "counters": {m.name: m.value for m in counters},
                                 "step_repetition": step.repetition}  # what a resume counts
        per_process = max(row.repetition for row in rows)
        return StepOutcome(tuple(_row_record(ctx, step, row, (status, error), result, conditions,
                                             shared, (per_process, log)) for row in rows))


def _failed(ctx: RunContext, step: Step, reason: str) -> StepOutcome:
    """A step that could not start: its record, with the reason (no process ran)."""
    inv = invocation_record(ctx, step, STATUS_FAILED, reason, None, [], {}, "")
    return StepOutcome(((inv, step_identity(ctx, step)),))


def _row_record(ctx: RunContext, step: Step, row: ResultRow, judged: tuple[str, str],
                result: ProcessResult, conditions: dict[str, Any], shared: list[Metric],
                place: tuple[int, str]) -> tuple[Any, dict[str, Any]]:
    """One row of a multi-row output: its own series (the row's name) and repetition (the
    repetitions within one process count on from the step's)."""
    per_process, log = place
    row_step = dataclasses.replace(step, benchmark=renamed(ctx.plan.workloads[step.workload],
                                                           row.name),
                                   repetition=(step.repetition - 1) * per_process + row.repetition)
    status, error = judged
    if row.status != ROW_OK:
        status = STATUS_FAILED if row.status == ROW_FAILED else STATUS_SKIPPED
        error = row.error or f"the output marks it {row.status}"
    inv = invocation_record(ctx, row_step, status, error, result, [*row.metrics, *shared],
                            conditions, log, notes=row.notes)
    return inv, step_identity(ctx, row_step)
