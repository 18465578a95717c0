"""The planted point-read cost: config → spin count → the engine's environment.

The engine's planted patch (engine/patches/<engine>/planted-get-spin.patch) spins a volatile
loop of `TIDEMARK_PLANTED_SPINS` iterations in every DB::Get, a count read once at start-up
(unset or 0: off). One binary thus serves both sides of an A/B, and the planted cost is chosen
per invocation:

* `planted_spins=N` plants exactly N iterations per read: under callgrind the cost per read is
  N × (instructions per iteration), exactly, whatever the machine does.
* `planted_ns=T` plants about T nanoseconds of CPU per read: spins = round(T × r / 1000), where
  r is the spins per µs of CPU time of the engine binary's own loop on this host, outside
  valgrind (`TIDEMARK_PLANTED_CALIBRATE=1` makes the binary spin 7 timed rounds at start-up,
  print their best and median wall-clock rate and exit before main; r = its spins ÷ its CPU
  time, so a busy machine's preemption does not shrink the planted cost). The start-up before
  the loop counts as loop time, which makes r a few % low at most (a whole LevelDB db_bench
  with no benchmark took 5–6 ms of CPU here, the calibration's spinning 60–80 ms).
  One calibration per job and binary, recorded with the run and with every invocation.

Planting on a build without the planted patch is refused (the variable would do nothing).
"""
from __future__ import annotations

import os
import re
import resource
import subprocess
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import ConfigError, EngineOutputError
from .engine import Build
from .patches import has_planted_patch

SPINS_ENV = "TIDEMARK_PLANTED_SPINS"
CALIBRATE_ENV = "TIDEMARK_PLANTED_CALIBRATE"
CALIBRATION_LINE = re.compile(r"tidemark_planted_spins_per_us best=([0-9.]+) median=([0-9.]+) "
                              r"spins=(\d+) rounds=(\d+)")
CALIBRATION_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Calibration:
    """How fast the engine's planted loop spins on this host (outside valgrind)."""

    spins_per_us: float  # per µs of CPU time, preemption excluded: what ns are converted with
    wall_median_spins_per_us: float  # the binary's own wall-clock rounds: median and fastest
    wall_best_spins_per_us: float
    loop_spins: int  # iterations per timed round
    rounds: int
    cpu_seconds: float = 0.0  # CPU time of the calibration process (0: not measured)


@dataclass(frozen=True)
class Planted:
    """The planted cost of one run: what was asked, the spins it became, the calibration used."""

    ns: float = 0.0
    spins: int = 0
    calibration: Calibration | None = None
    available: bool = False  # the build carries the planted patch

    def env(self) -> dict[str, str]:
        """The engine's environment: the count, also when 0, so both sides differ in value only."""
        return {SPINS_ENV: str(self.spins)} if self.available else {}

    def record(self) -> dict[str, Any]:
        """What the run record and each invocation's conditions keep ({} without the patch)."""
        if not self.available:
            return {}
        out: dict[str, Any] = {"ns": self.ns, "spins": self.spins, "env": SPINS_ENV}
        if self.calibration is not None:
            c = self.calibration
            out.update(spins_per_us=c.spins_per_us, calibration_cpu_seconds=c.cpu_seconds,
                       wall_median_spins_per_us=c.wall_median_spins_per_us,
                       wall_best_spins_per_us=c.wall_best_spins_per_us,
                       calibration_loop_spins=c.loop_spins, calibration_rounds=c.rounds)
        return out


def parse_calibration(stdout: str, cpu_seconds: float = 0.0) -> Calibration:
    """The calibration line the patched engine prints, and the rate per µs of CPU time when
    the process's CPU time is known (pure): rounds × spins ÷ CPU time. The process does
    nothing but spin after its start-up, so preemption by other tasks, which slows the
    wall-clock rounds on a busy machine, does not lower it."""
    match = CALIBRATION_LINE.search(stdout)
    if not match:
        raise EngineOutputError(f"no 'tidemark_planted_spins_per_us ...' line from the engine's "
                                f"calibration (got {stdout.strip()[:120]!r}); is the planted "
                                f"patch applied to this build?")
    best, med = float(match.group(1)), float(match.group(2))
    spins, rounds = int(match.group(3)), int(match.group(4))
    per_cpu_us = spins * rounds / (cpu_seconds * 1e6) if cpu_seconds > 0 else med
    return Calibration(per_cpu_us, med, best, spins, rounds, cpu_seconds)


def spins_for_ns(ns: float, spins_per_us: float) -> int:
    """Iterations of the planted loop that take about `ns` nanoseconds (pure)."""
    return int(round(ns * spins_per_us / 1000.0))


def calibrate(binary: str, cpus: tuple[int, ...] = ()) -> Calibration:
    """Time the planted loop of `binary` on this host, on the engine's CPUs when it is pinned
    (the process exits before main); its CPU time comes from this process's child usage."""
    env = {**os.environ, CALIBRATE_ENV: "1"}
    pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        proc = subprocess.run([binary], env=env, capture_output=True, text=True,
                              timeout=CALIBRATION_TIMEOUT_S, preexec_fn=pin)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EngineOutputError(f"planted-cost calibration of {binary} failed: {exc}") from exc
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return parse_calibration(proc.stdout, cpu)


def planted_setting(ns: float, spins: int, build: Build,
                    calibrate_fn: Callable[[str], Calibration] = calibrate) -> Planted:
    """The planted cost a run asks for, as spins of this build's loop; ConfigError when it
    cannot be planted."""
    if ns < 0 or spins < 0:
        raise ConfigError(f"planted_ns={ns}, planted_spins={spins}: use 0 (off) or more")
    if ns and spins:
        raise ConfigError(f"planted_ns={ns} and planted_spins={spins} both set; give one "
                          f"(planted_spins for exact instruction counts, planted_ns for time)")
    available = has_planted_patch(build.patches)
    if (ns or spins) and not available:
        raise ConfigError(f"planted_ns={ns} / planted_spins={spins}, but the {build.engine} "
                          f"{build.version} build carries no planted patch (engine.patches); "
                          f"use a recipe with planted-get-spin.patch or set both to 0")
    if ns:
        calibration = calibrate_fn(build.binary_path)
        return Planted(ns, spins_for_ns(ns, calibration.spins_per_us), calibration, available)
    return Planted(0.0, spins, None, available)
