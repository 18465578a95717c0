"""Which StepRunner runs a step on this host: by the step's output format."""
from __future__ import annotations

from ..plan import FORMAT_GBENCH, Step
from .base import StepRunner
from .context import RunContext
from .db_bench import DbBenchRunner
from .gbench import GbenchRunner

_HOST_RUNNERS: dict[str, StepRunner] = {"db_bench": DbBenchRunner(), FORMAT_GBENCH: GbenchRunner()}


def host_step_runner(ctx: RunContext, step: Step) -> StepRunner:
    """The runner of a step on this host; a container runner would be chosen here from ctx."""
    del ctx  # every context runs on the host today
    return _HOST_RUNNERS[step.format]
