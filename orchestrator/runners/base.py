"""The one step-runner interface: the loop runs every step through it and never knows which.

Like hyperfine's Executor trait: db_bench.py and gbench.py implement it, each with an executor
that runs its process on this host (process.py) or in a container (container.py); the loop's
tests use a fake one.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ..adapters.results import StoredAggregate
from ..plan.runplan import Step
from ..record import Invocation
from .context import RunContext


@dataclass(frozen=True)
class StepOutcome:
    """Invocations of one step, each with its series identity, and the tool's aggregates.

    A db_bench step is one invocation; a harness step is one per result row. Sequence numbers
    are the step's; the loop renumbers rows so they stay unique within the run.
    """

    records: tuple[tuple[Invocation, dict[str, Any]], ...]
    aggregates: tuple[StoredAggregate, ...] = ()


class StepRunner(Protocol):
    def run(self, ctx: RunContext, step: Step) -> StepOutcome:
        """Run one step to the end; a failed process is a record with its status, not a raise."""
        ...
