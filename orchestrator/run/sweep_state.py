"""The `tidemark run` this process runs: state shared by the CLI and the fleet launcher.

Hydra calls the CLI's task function once per job, and a launcher may call it in another process
on another host (a Slurm node): the launcher carries `SWEEP` there (`snapshot`/`restore`) so a
job knows the sweep it belongs to, and reports back what the CLI turns into the command's exit.
"""
from __future__ import annotations

from typing import Any

from ..errors import UserError

# The sweep: its id and argv (recorded with each job's run), and when it is resumed, {job
# number: (run id, status)} of the jobs that have a run already; or {"resume_run": RUN} for one
# resumed run.
SWEEP: dict[str, Any] = {}

# (run id, status, failed invocations, invocations) of each run of this command that was not ok.
RUN_OUTCOMES: list[tuple[str, str, int, int]] = []

# Problems of jobs that ended without a run to show for it (a fleet job that failed on its
# node before measuring): the command ends with the first, after every job is collected.
JOB_ERRORS: list[UserError] = []


def snapshot() -> dict[str, Any]:
    return dict(SWEEP)


def restore(state: dict[str, Any]) -> None:
    SWEEP.clear()
    SWEEP.update(state)
