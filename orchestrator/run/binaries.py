"""What a run's plan runs (side effects: the harness build, Google Benchmark's listing):
the plan checked against the adapters, the recipe binaries its processes start, and the
harness built when a workload uses it. `tidemark run` and `tidemark ab` both ask here."""
from __future__ import annotations

from pathlib import Path

from rich.console import Console

from ..adapters.registry import db_bench_format
from ..build.engine import Build
from ..build.harness_build import HARNESS_BINARY, build_harness
from ..errors import ConfigError
from ..plan.kinds import KIND_COMMAND, KIND_DB_BENCH, KIND_GBENCH, workload_binaries
from ..plan.runplan import RunPlan, make_plan
from ..plan.schema import TidemarkConf
from ..runners.command import check_output_format
from ..runners.gbench import check_gbench_binary


def checked_plan(conf: TidemarkConf) -> RunPlan:
    """The run's plan, its output formats checked against the adapter registry too."""
    plan = make_plan(conf)
    for wl in plan.workloads.values():
        if wl.kind == KIND_DB_BENCH:
            db_bench_format(conf.engine.db_bench)  # a flavour the registry parses
        elif wl.kind == KIND_COMMAND:
            check_output_format(wl, conf.runner.name == "docker")
    return plan


def plan_binaries(conf: TidemarkConf, plan: RunPlan) -> list[str]:
    """The names of the recipe binaries (and harness) this plan's processes run."""
    known = [*conf.engine.binaries, *([conf.engine.harness] if conf.engine.harness else [])]
    return list(dict.fromkeys(name for wl in plan.workloads.values()
                              for name in workload_binaries(wl, known)))


def run_binaries(conf: TidemarkConf, plan: RunPlan, build: Build,
                 console: Console) -> dict[str, str]:
    """The recipe's binaries by name, and Tidemark's Google Benchmark harness built against
    this engine build when the plan runs it (under the recipe's `harness` name)."""
    binaries = {name: build.binary(name) for name in conf.engine.binaries}
    harness_name = conf.engine.harness
    if harness_name and harness_name in plan_binaries(conf, plan):
        binaries[harness_name] = _harness(conf, build, console)
    known = list(binaries)
    for wl in plan.workloads.values():
        if wl.kind == KIND_GBENCH:
            first = next(s for s in plan.steps if s.workload == wl.name and s.kind == KIND_GBENCH)
            check_gbench_binary(binaries[workload_binaries(wl, known)[0]], wl, first, binaries,
                                build.source_dir)
    return binaries


def _harness(conf: TidemarkConf, build: Build, console: Console) -> str:
    harness_name = conf.engine.harness
    if harness_name != HARNESS_BINARY:
        raise ConfigError(f"engine.harness={harness_name!r}; Tidemark's harness (engine/harness) "
                          f"is {HARNESS_BINARY}")
    harness = build_harness(build, conf.build, Path(conf.cache_dir).expanduser())
    state = "cached, no compile" if harness.cached else "built"
    console.print(f"harness ({harness.cmake_build_type}): {state} → {harness.binary_path}")
    return harness.binary_path
