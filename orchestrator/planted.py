"""The planted point-read cost: config → spin count → the engine's environment.

The engine's planted patch (engine/patches/<engine>/planted-get-spin.patch) spins a volatile
loop of `TIDEMARK_PLANTED_SPINS` iterations in every DB::Get, a count read once at start-up
(unset or 0: off). One binary thus serves both sides of an A/B, and the planted cost is chosen
per invocation:

* `planted_spins=N` plants exactly N iterations per read: under callgrind the cost per read is
  N × (instructions per iteration), exactly, whatever the machine does.
* `planted_ns=T` plants about T nanoseconds per read: spins = round(T × r / 1000), where r is
  the median spins per µs of the engine binary's own loop, timed on this host outside valgrind
  (`TIDEMARK_PLANTED_CALIBRATE=1` makes the binary time the loop 7 times at start-up, print
  the best and median rate and exit before main). One calibration per job and binary, recorded
  with the run and with every invocation.

Planting on a build without the planted patch is refused (the variable would do nothing).
"""
from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from typing import Any, Callable

from .build import Build
from .errors import ConfigError, EngineOutputError
from .patches import has_planted_patch

SPINS_ENV = "TIDEMARK_PLANTED_SPINS"
CALIBRATE_ENV = "TIDEMARK_PLANTED_CALIBRATE"
CALIBRATION_LINE = re.compile(r"tidemark_planted_spins_per_us best=([0-9.]+) median=([0-9.]+) "
                              r"spins=(\d+) rounds=(\d+)")
CALIBRATION_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Calibration:
    """How fast the engine's planted loop spins on this host (outside valgrind)."""

    spins_per_us: float  # the median of the timed rounds: what ns are converted with
    best_spins_per_us: float  # the fastest round
    loop_spins: int  # iterations per timed round
    rounds: int


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
            out.update(spins_per_us=c.spins_per_us, best_spins_per_us=c.best_spins_per_us,
                       calibration_loop_spins=c.loop_spins, calibration_rounds=c.rounds)
        return out


def parse_calibration(stdout: str) -> Calibration:
    """The calibration line the patched engine prints (pure)."""
    match = CALIBRATION_LINE.search(stdout)
    if not match:
        raise EngineOutputError(f"no 'tidemark_planted_spins_per_us ...' line from the engine's "
                                f"calibration (got {stdout.strip()[:120]!r}); is the planted "
                                f"patch applied to this build?")
    best, med, spins, rounds = match.groups()
    return Calibration(float(med), float(best), int(spins), int(rounds))


def spins_for_ns(ns: float, spins_per_us: float) -> int:
    """Iterations of the planted loop that take about `ns` nanoseconds (pure)."""
    return int(round(ns * spins_per_us / 1000.0))


def calibrate(binary: str, cpus: tuple[int, ...] = ()) -> Calibration:
    """Time the planted loop of `binary` on this host, on the engine's CPUs when it is pinned
    (the process exits before main)."""
    env = {**os.environ, CALIBRATE_ENV: "1"}
    pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    try:
        proc = subprocess.run([binary], env=env, capture_output=True, text=True,
                              timeout=CALIBRATION_TIMEOUT_S, preexec_fn=pin)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EngineOutputError(f"planted-cost calibration of {binary} failed: {exc}") from exc
    return parse_calibration(proc.stdout)


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
