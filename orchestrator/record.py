"""Frozen records: what was asked, what was achieved, what was measured (one per invocation)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

STATUS_OK = "ok"
STATUS_FAILED = "failed"  # non-zero exit, crash or signal
STATUS_TIMEOUT = "timeout"  # killed after the configured timeout
STATUS_PARSE_ERROR = "parse_error"  # exited 0 but its output did not parse
STATUS_CONDITION_NOT_MET = "condition_not_met"  # measured, but not under the declared cache state
STATUS_SKIPPED = "skipped"  # never started: its setup failed

HIGHER = "higher"
LOWER = "lower"


@dataclass(frozen=True)
class Metric:
    name: str  # e.g. ops_per_sec, p99_us
    value: float
    unit: str  # ops/s, us, MB/s, ...
    better: str  # higher | lower


@dataclass(frozen=True)
class Histogram:
    """Latency buckets as the engine printed them: [lo, hi) in microseconds with a count."""

    name: str  # e.g. "read", "write", "op"
    buckets: tuple[tuple[float, float, int], ...]


@dataclass(frozen=True)
class TimeSeries:
    name: str  # e.g. interval_qps
    points: tuple[tuple[float, float], ...]  # (seconds since start, value)


@dataclass(frozen=True)
class ProcessResult:
    """Raw facts of one finished process (side-effect module `execute` makes these)."""

    argv: tuple[str, ...]
    exit_code: int | None  # None when killed on timeout
    timed_out: bool
    wall_s: float
    user_s: float
    sys_s: float
    max_rss_kb: int
    stdout: str
    stderr: str
    started_at: str | None  # None: never started (skipped)
    ended_at: str | None
    cpus_allowed: tuple[int, ...] = ()  # affinity read back from /proc/<pid>/status
    cgroups: tuple[str, ...] = ()  # membership read back from /proc/<pid>/cgroup
    wrapped_argv: tuple[str, ...] = ()  # what actually ran when a wrapper (perf, valgrind) was used
    involuntary_switches: int | None = None  # rusage ru_nivcsw: the scheduler took the CPU away
    interference: dict[str, Any] = field(default_factory=dict)  # machine/interference.py
    oom_killed: bool = False  # the container's memory limit killed it (docker State.OOMKilled)
    container: dict[str, Any] = field(default_factory=dict)  # runners/container.py: achieved


@dataclass(frozen=True)
class Invocation:
    """One engine process measured once: the unit the store keeps and reports count."""

    run_id: str
    seq: int
    workload: str
    benchmark: str
    phase: str
    repetition: int
    threads: int
    params: dict[str, Any]
    cache_state: str
    series_key: str
    status: str
    error: str
    exit_code: int | None
    wall_s: float
    user_s: float
    sys_s: float
    max_rss_kb: int
    started_at: str | None  # None: never started (skipped)
    ended_at: str | None
    command: tuple[str, ...]
    log_path: str
    metrics: tuple[Metric, ...] = ()
    histograms: tuple[Histogram, ...] = ()
    series: tuple[TimeSeries, ...] = ()
    notes: tuple[str, ...] = ()
    conditions: dict[str, Any] = field(default_factory=dict)  # achieved: cpus, residency, ...

    @property
    def invocation_id(self) -> str:
        return f"{self.run_id}-{self.seq:04d}"
