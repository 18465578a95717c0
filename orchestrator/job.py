"""One `tidemark run` job (side effects): plan → build → machine → execute → store."""
from __future__ import annotations

import dataclasses
import os
import secrets
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from . import machine, machine_facts
from .cgroup import Cgroup, create_cgroup, remove_cgroup
from .build import Build, build_engine
from .engine_versions import resolve_engine_version
from .errors import ConfigError, UserError
from .execute import parse_cpu_list
from .harness_build import build_harness
from .plan import FORMAT_GBENCH, RunPlan, make_plan
from .progress import BuildProgress, RunProgress, summary_table
from .record import STATUS_OK, Invocation
from .runner import RunContext, execute_plan, remove_data
from .schema import TidemarkConf
from .store import Store

REPO_ROOT = Path(__file__).resolve().parents[1]


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


def tidemark_sha() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(REPO_ROOT), *args], capture_output=True,
                              text=True).stdout.strip()
    sha = git("rev-parse", "HEAD") or "unknown"
    return sha + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def check_pin_cpus(cpus: list[int]) -> tuple[int, ...]:
    """Refuse, before anything runs, to pin to a CPU this process cannot use."""
    # The online CPUs, not this process's affinity: the orchestrator may have pinned itself.
    online = Path("/sys/devices/system/cpu/online")
    available = set(parse_cpu_list(online.read_text())) if online.exists() else \
        set(range(os.cpu_count() or 1))
    missing = [c for c in cpus if c not in available]
    if missing:
        raise ConfigError(f"machine.pin_cpus names CPU {missing[0]}, which does not exist or is "
                          f"not allowed here (available: {sorted(available)}); fix the profile")
    return tuple(cpus)


def check_machine(conf: TidemarkConf, facts: dict[str, Any]) -> list[str]:
    """Expected-hardware mismatches; a strict profile refuses to run on any of them."""
    m = conf.machine
    problems = machine_facts.expectation_mismatches(facts, m.expect_cpu_model,
                                                    m.expect_logical_cpus, m.expect_ram_gib)
    if problems and m.strict:
        raise ConfigError(f"machine profile {m.name!r} is strict and this host differs: "
                          f"{problems[0]}; use the right profile or set machine.strict=false")
    return [f"unverified: {p}" for p in problems]


def _pin_orchestrator(cpus: list[int]) -> None:
    """Keep Tidemark itself off the engine's CPUs where the profile says so."""
    if cpus:
        os.sched_setaffinity(0, check_pin_cpus(cpus))


def _build(conf: TidemarkConf, cache_dir: Path, console: Console) -> Build:
    what = f"{conf.engine.name} {conf.engine.version} ({conf.build.name})"
    with BuildProgress(console, what) as progress:
        build = build_engine(conf.engine, conf.build, cache_dir, conf.build_jobs, progress)
    state = "cached, no compile" if build.cached else f"built in {build.build_seconds:.0f} s"
    console.print(f"engine {what}: {state} → {build.binary_path}")
    return build


def _harness(conf: TidemarkConf, plan: RunPlan, build: Build, cache_dir: Path,
             console: Console) -> str:
    """The Google Benchmark harness built against this engine build, when the plan runs it."""
    if not any(step.format == FORMAT_GBENCH for step in plan.steps):
        return ""
    harness = build_harness(build, conf.build, cache_dir)
    state = "cached, no compile" if harness.cached else "built"
    console.print(f"harness ({harness.cmake_build_type}): {state} → {harness.binary_path}")
    return harness.binary_path


def _run_record(run_id: str, conf: TidemarkConf, plan: RunPlan, build: Build, facts: dict,
                overrides: list[str], config: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    return {"run_id": run_id, "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "status": "running", "engine": plan.engine, "engine_version": plan.engine_version,
            "build_variant": plan.build_variant, "build_id": build.build_id,
            "build_cached": build.cached, "machine_fingerprint": facts["fingerprint"],
            "suite": plan.suite, "label": conf.label, "cache_state": plan.cache_state,
            "config": config, "overrides": overrides, "tidemark_sha": tidemark_sha(),
            "machine_state": {"before": machine.capture_state()},
            "planned_invocations": len(plan.steps), "verified": not notes, "notes": notes}


def run_job(conf: TidemarkConf, overrides: list[str], config: dict[str, Any],
            console: Console) -> tuple[str, list[Invocation]]:
    """Run one job; every invocation is in the store when this returns or raises."""
    conf = dataclasses.replace(conf, engine=resolve_engine_version(conf.engine))
    plan = make_plan(conf)
    facts = machine.capture_facts(Path(conf.data_dir).expanduser())
    notes = check_machine(conf, facts)
    pin = check_pin_cpus(conf.machine.pin_cpus)
    _pin_orchestrator(conf.machine.orchestrator_cpus)
    cache_dir = Path(conf.cache_dir).expanduser()
    build = _build(conf, cache_dir, console)
    harness = _harness(conf, plan, build, cache_dir, console)
    run_id = new_run_id()
    group = _cgroup(conf, run_id, pin)
    counters = conf.counters and shutil.which("perf") is not None
    results = Path(conf.results_dir)
    store = Store(Path(conf.db))
    try:
        store.record_machine(facts)
        store.record_build(build)
        record = _run_record(run_id, conf, plan, build, facts, overrides, config, notes)
        store.start_run(record)
        ctx = RunContext(run_id=run_id, plan=plan, build=build,
                         machine_fingerprint=facts["fingerprint"], pin_cpus=pin,
                         run_env=dict(conf.build.run_env),
                         allow_drop_caches=conf.machine.allow_drop_caches,
                         logs_dir=results / "logs" / run_id,
                         data_dir=Path(conf.data_dir).expanduser() / run_id,
                         counters=counters, cgroup_procs=group.procs_files if group else (),
                         harness_binary=harness)
        status = "interrupted"
        try:
            with RunProgress(console, len(plan.steps)) as progress:
                invocations = execute_plan(ctx, store, progress)
            failed = sum(1 for i in invocations if i.status != STATUS_OK)
            status = "ok" if failed == 0 else "partial"
        except KeyboardInterrupt:
            raise UserError(f"interrupted; the invocations finished so far are stored in "
                            f"{conf.db} under run {run_id}") from None
        finally:
            store.finish_run(run_id, status, {**record["machine_state"],
                                              "after": machine.capture_state()})
            if not conf.keep_data:
                remove_data(ctx.data_dir)
    finally:
        store.close()
        if group:
            remove_cgroup(group)
    console.print(summary_table(invocations))
    console.print(f"run {run_id}: {status}; {len(invocations)} invocations in {conf.db}")
    return run_id, invocations


def _cgroup(conf: TidemarkConf, run_id: str, pin: tuple[int, ...]) -> Cgroup | None:
    m = conf.machine
    if not m.cgroup:
        return None
    return create_cgroup(f"tidemark-{run_id}", pin, m.cgroup_memory_mb, m.cgroup_cpu_quota_pct)
