"""What every step of one run shares (frozen): the plan, the build, the machine's controls."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..build.engine import Build
from ..machine.docker_client import ContainerSpec
from ..machine.interference import InterferencePolicy
from ..machine.shield import ShieldCpusets
from ..plan.runplan import RunPlan, Step, series_identity
from ..plan.templates import render


@dataclass(frozen=True)
class RunContext:
    """One run's controls; `tidemark ab` has one per side, each with its own run id."""

    run_id: str
    plan: RunPlan
    build: Build
    machine_fingerprint: str
    pin_cpus: tuple[int, ...]
    run_env: dict[str, str]
    allow_drop_caches: bool  # the machine profile allows dropping all caches
    logs_dir: Path
    data_dir: Path
    counters: bool = False  # perf stat around each process
    cgroup_procs: tuple[Path, ...] = ()  # the engine joins these before exec
    # The recipe's binaries by name (engine.binaries), and the harness under its name when the
    # run uses it: what gbench and command steps run ({binary:NAME}).
    binaries: dict[str, str] = field(default_factory=dict)
    # The planted point-read cost (orchestrator/build/planted.py), recorded in every invocation's
    # conditions; {} when the build has no planted patch.
    planted: dict[str, Any] = field(default_factory=dict)
    shield: ShieldCpusets | None = None  # the applied shield, read back after each process
    shield_requested: str = "none"  # machine.shield, recorded also where it could not be applied
    interference: InterferencePolicy = InterferencePolicy()
    # runner=docker: every process of the run in its own container (runners/container.py)
    container: ContainerSpec | None = None


def step_identity(ctx: RunContext, step: Step) -> dict[str, Any]:
    """The step's series identity on this run's build and machine."""
    return series_identity(ctx.plan.engine, step, ctx.plan.build_variant, ctx.machine_fingerprint)


def template_values(ctx: RunContext, step: Step, stem: Path) -> dict[str, Any]:
    """The values of a gbench or command step's placeholders (plan/templates.py)."""
    return step_values(step, ctx.data_dir / step.db_key, stem.with_suffix(".out"),
                       ctx.build.source_dir, ctx.binaries)


def step_values(step: Step, data_dir: Any, out: Any, source: str,
                binaries: dict[str, str]) -> dict[str, Any]:
    """The placeholders' values of a step, given where its data, result file, source and
    binaries are (a run's, or a throwaway folder's for a check before the run)."""
    values: dict[str, Any] = {"threads": step.threads, "data_dir": data_dir, "out": out,
                              "source": source, "repetition": step.repetition}
    values.update({f"binary:{name}": path for name, path in binaries.items()})
    for key, value in step.params:
        values[f"param:{key.removeprefix('extra.')}"] = value
    return values


def render_all(templates: list[str], values: dict[str, Any], where: str) -> list[str]:
    return [render(template, values, where) for template in templates]
