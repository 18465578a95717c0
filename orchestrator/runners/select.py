"""Which StepRunner runs a step: by the step's workload kind, on the host or in a container.

A step runner decides what to run and how to read it; its executor decides where the process
runs (process.py on this host, container.py in a container), so both runners share the command
lines, cache states, adapters and invocation records.
"""
from __future__ import annotations

from ..plan.kinds import KIND_COMMAND, KIND_DB_BENCH, KIND_GBENCH
from ..plan.runplan import Step
from .base import StepRunner
from .command import CommandRunner
from .container import run_in_container
from .context import RunContext
from .db_bench import DbBenchRunner
from .gbench import GbenchRunner

_HOST_RUNNERS: dict[str, StepRunner] = {KIND_DB_BENCH: DbBenchRunner(),
                                        KIND_GBENCH: GbenchRunner(), KIND_COMMAND: CommandRunner()}
_CONTAINER_RUNNERS: dict[str, StepRunner] = {KIND_DB_BENCH: DbBenchRunner(run_in_container),
                                             KIND_GBENCH: GbenchRunner(run_in_container),
                                             KIND_COMMAND: CommandRunner(run_in_container)}


def step_runner(ctx: RunContext, step: Step) -> StepRunner:
    """The runner of a step: in a container when the run's context has one (runner=docker)."""
    return (_CONTAINER_RUNNERS if ctx.container is not None else _HOST_RUNNERS)[step.kind]
