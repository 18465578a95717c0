"""Setting a job up (side effects), shared by `tidemark run` (job.py) and `tidemark ab` (ab.py):
check the machine and the pinning, pin Tidemark itself, build the engine and (when the plan
runs it) the Google Benchmark harness, shield the benchmark CPUs, create the run's cgroup,
write the run record and build the RunContext every step runs under.
"""
from __future__ import annotations

import dataclasses
import os
import secrets
import shutil
import subprocess
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

from rich.console import Console

from ..build.container_image import VALGRIND_BIN, ensure_image
from ..build.engine import Build, build_engine
from ..build.planted import Calibration, Planted, calibrate, planted_setting
from ..errors import ConfigError
from ..liveness import this_process
from ..machine import probe as machine, facts as machine_facts, shield, system_check
from ..machine.cgroup import Cgroup, create_cgroup
from ..machine.docker_client import (ContainerSpec, ImageRef, check_runner_conf, connect_docker,
                                     daemon_facts, remove_leftover_containers, reset_containers)
from ..machine.execute import parse_cpu_list
from ..machine.interference import POLICIES, InterferencePolicy
from ..plan.runplan import RunPlan
from ..plan.schema import TidemarkConf
from ..runners.context import RunContext
from ..signals import signals_interrupt
from ..store import Store, open_checked
from .binaries import plan_binaries
from .progress import BuildProgress

REPO_ROOT = Path(__file__).resolve().parents[2]


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


def online_cpus() -> tuple[int, ...]:
    online = Path("/sys/devices/system/cpu/online")
    return parse_cpu_list(online.read_text()) if online.exists() else tuple(range(os.cpu_count() or 1))


def check_machine_controls(conf: TidemarkConf, pin: tuple[int, ...]) -> InterferencePolicy:
    """Refuse a bad shield or interference setting before anything runs; the policy."""
    m = conf.machine
    shield.check_shield_conf(m.shield, pin, online_cpus())
    if m.interference_policy not in POLICIES:
        raise ConfigError(f"machine.interference_policy={m.interference_policy!r} is not one of "
                          f"{', '.join(POLICIES)}; use flag (a note) or rerun")
    if m.interference_reruns < 0 or (m.interference_max_pct is not None and m.interference_max_pct < 0):
        raise ConfigError("machine.interference_reruns and machine.interference_max_pct must not "
                          "be negative; use e.g. interference_max_pct=5 interference_reruns=2")
    return InterferencePolicy(m.interference_max_pct, m.interference_policy, m.interference_reruns)


@contextmanager
def machine_shield(conf: TidemarkConf, pin: tuple[int, ...],
                   console: Console) -> Iterator[shield.Shield | None]:
    """The benchmark CPUs shielded for the block (machine.shield), undone when it ends, also on
    Ctrl-C or SIGTERM; a leftover shield of a killed run is removed first. Where the shield
    cannot be applied, says so once; the Shield's report says why and goes into the run record."""
    mode = conf.machine.shield
    with signals_interrupt():  # SIGTERM/SIGHUP unwind through the undo, as Ctrl-C does
        if mode == "none":
            try:
                shield.remove_leftover_shields()
            except OSError:
                pass  # not root: there can be no shield of ours to remove either
            yield None
            return
        applied = shield.apply_shield(mode, pin, tuple(conf.machine.orchestrator_cpus),
                                      conf.machine.shield_irqs)
        report = applied.report
        if applied.cpusets is None:
            console.print(f"shield {mode}: NOT applied: {report['reason']}", markup=False)
        else:
            console.print(f"shield {mode}: CPUs {report['bench_cpus']} for the engine, "
                          f"{report['rest_cpus']} for {report['tasks_moved']} other task(s); "
                          f"{len(report['irqs_moved'])} IRQs moved off, "
                          f"{len(report['irqs_not_moved'])} not movable", markup=False)
        try:
            yield applied
        finally:
            for problem in shield.undo_shield(applied):
                console.print(f"shield: {problem}", markup=False)


def connect_runner(conf: TidemarkConf, console: Console) -> Any | None:
    """runner=docker's daemon client (None for the host runner), refused in one line before
    anything is built; the containers of runs killed outright are removed first, whatever the
    runner (one would run on beside this run's measurements)."""
    r, m = conf.runner, conf.machine
    limits = {"cgroup_memory_mb": m.cgroup_memory_mb, "cgroup_cpu_quota_pct": m.cgroup_cpu_quota_pct}
    check_runner_conf(r.name, r.base, r.memory_mb, m.shield,
                      {k: v for k, v in limits.items() if v and m.cgroup}, r.grace_s)
    if r.name == "host":
        for line in reset_containers(timeout_s=5):  # best effort: no daemon, no container
            console.print(f"docker: {line}", markup=False)
        return None
    if conf.callgrind and not VALGRIND_BIN.exists():
        raise ConfigError("callgrind=true with runner=docker copies valgrind into the image, and "
                          f"this host has no {VALGRIND_BIN}; run 'make setup'")
    client = connect_docker()
    for name in remove_leftover_containers(client):
        console.print(f"docker: removed leftover container {name}", markup=False)
    return client


def _image_text(ref: ImageRef) -> str:
    state = "cached, not rebuilt" if ref.built_s is None else f"built in {ref.built_s:.1f} s"
    return (f"image {ref.tag}: {state} ({ref.image_id[7:19]}, {ref.size_bytes / 2**20:.1f} MB, "
            f"FROM {ref.base})")


def container_runner(conf: TidemarkConf, client: Any | None, plan: RunPlan, build: Build,
                     binaries: dict[str, str], console: Console) -> tuple[Build, ContainerSpec | None]:
    """The images of this run's binaries (built unless their tags exist) and its container
    settings; the build gains the images in its provenance. (build, None) on the host runner."""
    if client is None:
        return build, None
    cache = Path(conf.cache_dir).expanduser()
    say = lambda text: console.print(text, markup=False)  # noqa: E731
    images = {}
    for name in plan_binaries(conf, plan):
        path = Path(binaries[name])
        # Keyed like its build: the engine build, or (the harness) engine build + its sources.
        key = path.parents[1].name if name == conf.engine.harness else build.build_id
        images[name] = ensure_image(client, build.engine, name, key, path, conf.runner.base,
                                    cache, say)
    for ref in images.values():
        say(_image_text(ref))
    build = dataclasses.replace(build, images={**build.images,
                                               **{r.kind: r.record() for r in images.values()}})
    memory = conf.runner.memory_mb << 20 if conf.runner.memory_mb else None
    return build, ContainerSpec(images, memory, conf.runner.grace_s, daemon_facts(client), client,
                                {binaries[name]: name for name in images})


def pin_orchestrator(cpus: list[int]) -> None:
    """Keep Tidemark itself off the engine's CPUs where the profile says so."""
    if cpus:
        os.sched_setaffinity(0, check_pin_cpus(cpus))


def build_engine_with_progress(conf: TidemarkConf, console: Console) -> Build:
    """The engine build of this config (cached when it exists), with a progress bar."""
    what = f"{conf.engine.name} {conf.engine.version} ({conf.build.name})"
    with BuildProgress(console, what) as progress:
        build = build_engine(conf.engine, conf.build, Path(conf.cache_dir).expanduser(),
                             conf.build_jobs, progress,
                             lambda text: console.print(text, markup=False, soft_wrap=True))
    state = "cached, no compile" if build.cached else f"built in {build.build_seconds:.0f} s"
    console.print(f"engine {what}: {state} → {build.binary_path}")
    return build


def planted_for(conf: TidemarkConf, build: Build, pin: tuple[int, ...],
                calibrate_fn: Callable[[str], Calibration] | None = None,
                console: Console | None = None) -> Planted:
    """The run's planted point-read cost (orchestrator/build/planted.py), calibrated on the engine's
    CPUs when given in ns (`calibrate_fn` lets both sides of an A/B share one calibration)."""
    calibrate_fn = calibrate_fn or (lambda binary: calibrate(binary, pin))
    planted = planted_setting(conf.planted_ns, conf.planted_spins, build, calibrate_fn)
    if console is not None and planted.spins:
        rate = (f" ({planted.ns:g} ns at {planted.calibration.spins_per_us:.1f} spins/µs measured "
                f"here)" if planted.calibration else "")
        console.print(f"planted: {planted.spins} spins per point read{rate}")
    return planted


def create_run_cgroup(conf: TidemarkConf, run_id: str, pin: tuple[int, ...],
                      shielded: shield.Shield | None = None) -> Cgroup | None:
    """The run's cgroup when the machine profile asks for one (remove it with remove_cgroup);
    inside the shield's benchmark cpuset when there is one."""
    m = conf.machine
    if not m.cgroup:
        return None
    parent = shielded.cpusets.bench_dir if shielded and shielded.cpusets else None
    return create_cgroup(f"tidemark-{run_id}", pin, m.cgroup_memory_mb, m.cgroup_cpu_quota_pct,
                         parent)


def machine_state_before(conf: TidemarkConf, shielded: shield.Shield | None) -> dict[str, Any]:
    """The machine state recorded when the run starts: memory and load, `tidemark machine
    check`'s items, and the shield achieved (or why there is none)."""
    state: dict[str, Any] = {"before": machine.capture_state(), "process": this_process(),
                             "check": system_check.check_state(tuple(conf.machine.pin_cpus))}
    if shielded is not None:
        state["shield"] = shielded.report
    placement = machine.scheduler_placement()
    if placement is not None:
        state["scheduler"] = placement
    return state


def run_record(run_id: str, conf: TidemarkConf, plan: RunPlan, build: Build, facts: dict,
               overrides: list[str], config: dict[str, Any], notes: list[str],
               planted: Planted | None = None, shielded: shield.Shield | None = None,
               sweep: dict[str, Any] | None = None,
               container: ContainerSpec | None = None) -> dict[str, Any]:
    """The runs row written when the run starts (machine state before, the planted cost, the
    shield and the container runner's settings included; the sweep it is a job of)."""
    state = machine_state_before(conf, shielded)
    if container is not None:
        state["container"] = container.record()
    if planted is not None and planted.record():
        state["planted"] = planted.record()
    # A shield that could not be applied is said (the run is still what the hardware check says)
    said = [f"shield {shielded.report['mode']} not applied: {shielded.report['reason']}"] \
        if shielded is not None and shielded.cpusets is None else []
    # Microseconds, like finished_at: runs on one fleet node are checked for overlap in time.
    return {"run_id": run_id, "started_at": datetime.now(timezone.utc).isoformat(),
            "status": "running", "engine": plan.engine, "engine_version": plan.engine_version,
            "build_variant": plan.build_variant, "build_id": build.build_id,
            "build_cached": build.cached, "machine_fingerprint": facts["fingerprint"],
            "suite": plan.suite, "label": conf.label, "cache_state": plan.cache_state,
            "config": config, "overrides": overrides, "tidemark_sha": tidemark_sha(),
            "machine_state": state,
            "planned_invocations": len(plan.steps), "verified": not notes, "notes": notes + said,
            "sweep": sweep, "runner": conf.runner.name, "note": conf.note.strip()}


def run_context(conf: TidemarkConf, run_id: str, plan: RunPlan, build: Build, fingerprint: str,
                pin: tuple[int, ...], group: Cgroup | None, binaries: dict[str, str],
                planted: Planted | None = None, shielded: shield.Shield | None = None,
                container: ContainerSpec | None = None) -> RunContext:
    """The controls every step of this run runs under; in containers when `container` is set
    (perf stat then stays off: it cannot open counters inside one)."""
    planted = planted or Planted()
    cpusets = shielded.cpusets if shielded else None
    procs = group.procs_files if group else \
        ((cpusets.bench_dir / "cgroup.procs",) if cpusets else ())
    return RunContext(run_id=run_id, plan=plan, build=build, machine_fingerprint=fingerprint,
                      pin_cpus=pin, run_env={**conf.build.run_env, **planted.env()},
                      allow_drop_caches=conf.machine.allow_drop_caches,
                      logs_dir=Path(conf.results_dir) / "logs" / run_id,
                      data_dir=Path(conf.data_dir).expanduser() / run_id,
                      counters=conf.counters and shutil.which("perf") is not None
                      and container is None,
                      cgroup_procs=procs, binaries=binaries, planted=planted.record(),
                      shield=cpusets, shield_requested=conf.machine.shield,
                      interference=check_machine_controls(conf, pin), container=container)


def remove_run_data(ctx: RunContext) -> None:
    shutil.rmtree(ctx.data_dir, ignore_errors=True)


def open_results_store(db: Path, data_dir: Path, lock_wait_s: float | None = None) -> Store:
    """The run's store, opened before anything is built or measured: a locked DB is waited
    for or refused now (not after a 15-minute compile), a damaged one is refused before
    anything is written, and a copy of the good file is kept (tidemark db backups)."""
    store = open_checked(db, lock_wait_s)
    for run_id in store.killed_runs:  # a killed run could not remove its data set
        shutil.rmtree(data_dir / run_id, ignore_errors=True)
    return store
