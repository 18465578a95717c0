"""One engine or harness process in its own container (side effects: docker-py), for every step
runner: the executor runner=docker puts where process.py runs a process on the host.

The container gets the machine profile's CPUs as its cpuset, the runner's memory limit (no
swap), no network, the run's environment, and the run's log and data folders bind-mounted at
their host paths with the host's working directory, so the command line is the host's. Its PID 1
is Tidemark's exec helper (docker/tidemark-exec.c): it reads the limits back inside the
container, runs the engine with stdout/stderr straight to the log files, and reports the
engine's wall time and rusage in `<stem>.exec.json`. The container is removed whatever happens
(crash, OOM kill, timeout, Ctrl-C or SIGTERM unwinding through here); a run killed outright
leaves it labelled for the next run or `tidemark machine reset` (machine/docker_client.py).

The page cache is the host's: cache.py evicts and measures residency on the host's data files
before the container starts, exactly as for the host runner, and the record says so.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from ..build.container_image import EXEC_PATH, VALGRIND_ENV
from ..machine.docker_client import ContainerSpec, ImageRef, container_labels, daemon_lost
from ..machine.execute import parse_cpu_list, utc_now
from ..machine.interference import CpuSample, interference, parse_proc_stat, sample_cpus
from ..plan.runplan import PHASE_CALLGRIND, Step
from ..record import ProcessResult
from .commands import exit_code_from_status
from .context import RunContext
from .process import wrapped_command

PAGE_CACHE = "host: the data folder is bind-mounted; eviction and residency on the host's files"
COUNTERS = "off: perf stat does not run inside the container (no perf_event_open under seccomp)"
LOG_TAIL_LINES = 10


def container_command(ctx: RunContext, step: Step, argv: list[str], stem: Path) -> list[str]:
    """The container's command: the exec helper around the step's (wrapped) argv (pure)."""
    return [EXEC_PATH, str(stem.with_suffix(".exec.json")), str(stem.with_suffix(".stdout")),
            str(stem.with_suffix(".stderr")), f"{ctx.plan.timeout_s:g}", "--",
            *wrapped_command(ctx, step, argv, stem)]


def container_options(ctx: RunContext, step: Step, spec: ContainerSpec, cwd: Path) -> dict[str, Any]:
    """docker-py `containers.create` keyword arguments of one step (pure)."""
    from docker.types import Mount

    # Mounts field by field: docker's "HOST:TARGET:MODE" volume strings split a path on ':'.
    folders = sorted({str((cwd / ctx.logs_dir).resolve()), str((cwd / ctx.data_dir).resolve())})
    mounts = [Mount(target=folder, source=folder, type="bind") for folder in folders]
    source = ctx.build.source_dir  # read-only: a workload may read the source's test data
    if source and Path(source).is_dir() and not any(source.startswith(f) for f in folders):
        mounts.append(Mount(target=source, source=source, type="bind", read_only=True))
    env = {**ctx.run_env, **(VALGRIND_ENV if step.phase == PHASE_CALLGRIND else {})}
    options: dict[str, Any] = {"labels": container_labels(ctx.run_id), "network_mode": "none",
                               "environment": env, "mounts": mounts, "working_dir": str(cwd)}
    if ctx.pin_cpus:
        options["cpuset_cpus"] = ",".join(str(c) for c in ctx.pin_cpus)
    if spec.memory_bytes:
        options["mem_limit"] = options["memswap_limit"] = spec.memory_bytes
    return options


def read_exec_report(path: Path) -> dict[str, Any]:
    """The exec helper's report; {} when it wrote none (the container was killed first)."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _memory_limit(text: Any) -> int | None:
    return int(text) if isinstance(text, str) and text.isdigit() else None


def container_facts(spec: ContainerSpec, image: ImageRef, options: dict[str, Any],
                    report: dict[str, Any], state: dict[str, Any], wall_s: float) -> dict[str, Any]:
    """What the invocation records about its container: requested and read back (pure)."""
    return {"image": image.tag, "image_id": image.image_id, "base": image.base,
            "cpuset_cpus": options.get("cpuset_cpus"),
            "cpus_allowed_list": report.get("cpus_allowed_list"),
            "memory_limit_requested": spec.memory_bytes,
            "memory_limit_bytes": _memory_limit(report.get("memory_limit")),
            "cgroup": next((line for line in report.get("cgroup", []) if ":memory:" in line), None),
            "oom_killed": bool(state.get("OOMKilled")), "exit_code": state.get("ExitCode"),
            "container_wall_s": round(wall_s, 4), "page_cache": PAGE_CACHE, "counters": COUNTERS}


def _wait(container: Any, limit_s: float) -> bool:
    """Wait for the container to exit; kill it after limit_s. True when it had to be killed."""
    from requests.exceptions import RequestException

    try:
        container.wait(timeout=limit_s)
        return False
    except RequestException:  # the wait's read timed out: the container still runs
        container.kill()
        container.wait(timeout=60)
        return True


def _remove(container: Any) -> None:
    from docker.errors import NotFound
    from requests.exceptions import ConnectionError as Disconnected

    try:
        container.remove(force=True)  # running (Ctrl-C, SIGTERM): killed, then removed
    except NotFound:
        pass
    except Disconnected:
        pass  # the daemon went away: its label lets the next run remove it; keep what ran


def _run(spec: ContainerSpec, image: ImageRef, command: list[str], options: dict[str, Any],
         limit_s: float) -> tuple[bool, dict[str, Any], str]:
    """Create, start, wait for and remove one container: (killed, its State, its own log)."""
    container = spec.client.containers.create(image.image_id, command, **options)
    try:
        container.start()
        killed = _wait(container, limit_s)
        container.reload()
        log = container.logs().decode(errors="replace")  # the helper's own messages only
        return killed, container.attrs.get("State", {}), log
    finally:
        _remove(container)


def engine_samples(report: dict[str, Any]) -> tuple[CpuSample, CpuSample] | None:
    """The helper's /proc/stat samples right around the engine (pure); None without them."""
    if not report.get("stat_before") or not report.get("stat_after"):
        return None
    return (CpuSample(0.0, parse_proc_stat(report["stat_before"]), report.get("load1_before", 0.0)),
            CpuSample(float(report.get("wall_s", 0.0)), parse_proc_stat(report["stat_after"]),
                      report.get("load1_after", 0.0)))


def _tail(text: str) -> list[str]:
    return [line[-300:] for line in text.splitlines() if line.strip()][-LOG_TAIL_LINES:]


def run_in_container(ctx: RunContext, step: Step, argv: list[str], stem: Path) -> ProcessResult:
    """Run argv in a container under the run's limits; the result reads like a host process's
    (engine argv, exit status, wall/rusage from inside), with the container's facts added."""
    spec = ctx.container
    assert spec is not None, "run_in_container needs a context with a ContainerSpec"
    image = spec.image_for(argv[0])
    command = container_command(ctx, step, argv, stem)
    options = container_options(ctx, step, spec, Path(os.getcwd()))
    report_file = stem.with_suffix(".exec.json")
    report_file.unlink(missing_ok=True)
    before, started_at, start = sample_cpus(), utc_now(), time.monotonic()
    try:
        killed, state, log = _run(spec, image, command, options, ctx.plan.timeout_s + spec.grace_s)
    except Exception as exc:  # noqa: BLE001 - the daemon's end stops the run; else the step's
        lost = daemon_lost(spec.client, exc, f"step {step.seq} ({step.benchmark} {step.phase})")
        if lost is not None:
            raise lost from None
        raise
    wall = time.monotonic() - start
    report = read_exec_report(report_file)
    timed_out = killed or bool(report.get("timed_out"))
    code = report.get("exit_code") if report else exit_code_from_status(str(state.get("ExitCode", "")))
    user_s, sys_s = float(report.get("user_s", 0.0)), float(report.get("sys_s", 0.0))
    # Around the engine itself when the helper sampled it; else around the whole container.
    before, after = engine_samples(report) or (before, sample_cpus())
    measured = interference(before, after, ctx.pin_cpus, user_s + sys_s, report.get("nivcsw"))
    facts = container_facts(spec, image, options, report, state, wall)
    stdout, stderr = (_read(stem.with_suffix(s)) for s in (".stdout", ".stderr"))
    if log.strip():
        facts["helper_log"] = _tail(log)
    if code or timed_out or facts["oom_killed"]:
        facts["log_tail"] = _tail(stderr) or _tail(stdout)
    return ProcessResult(
        argv=tuple(argv), exit_code=None if timed_out else code, timed_out=timed_out,
        wall_s=float(report.get("wall_s", wall)), user_s=user_s, sys_s=sys_s,
        max_rss_kb=int(report.get("max_rss_kb", 0)), stdout=stdout, stderr=stderr,
        started_at=started_at, ended_at=utc_now(),
        cpus_allowed=parse_cpu_list(report.get("cpus_allowed_list") or ""),
        cgroups=tuple(report.get("cgroup", ())), wrapped_argv=tuple(command),
        involuntary_switches=report.get("nivcsw"), interference=measured,
        oom_killed=facts["oom_killed"], container=facts)


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""
