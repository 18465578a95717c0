"""Input ranges and engine/option combinations (pure), checked when a run is planned, so a bad
value fails in one line before anything is built, stored or run."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from ..errors import ConfigError
from .kinds import KIND_DB_BENCH, template_params

if TYPE_CHECKING:
    from .schema import EngineConf, WorkloadConf

# At least 1: a count of keys, bytes or operations that db_bench needs to do anything.
POSITIVE_PARAMS = ("num", "value_size", "key_size", "reads", "duration", "report_interval_seconds")
INT32_MAX = 2**31 - 1  # db_bench's flags and the store's INTEGER columns


def check_params(engine: EngineConf, workload: WorkloadConf, params: Mapping[str, Any]) -> None:
    """Every param in range, and (db_bench) a compression the engine recipe lists."""
    where = f"workload {workload.name!r}"
    for name in POSITIVE_PARAMS:
        value = params.get(name)
        if value is not None and not 1 <= value <= 2**62:
            raise ConfigError(f"workload.params.{name}={value} for {where}; use a whole number "
                              f"of at least 1")
    if params.get("cache_size", 0) < 0:
        raise ConfigError(f"workload.params.cache_size={params['cache_size']} for {where}; use "
                          f"0 or more bytes")
    allowed = engine.compressions
    # db_bench always passes its compression; another kind only when a template uses it
    passes = workload.kind == KIND_DB_BENCH or "compression" in template_params(workload)
    if allowed and passes and params.get("compression") not in allowed:
        raise ConfigError(f"{engine.name} cannot use compression={params.get('compression')!r} "
                          f"({where}); set workload.params.compression to one of "
                          f"{', '.join(allowed)}")


def check_counts(threads: int, repetitions: int, warmups: int, timeout_s: float) -> None:
    """The run's counts: threads and repetitions at least 1, warm-ups 0 or more, a timeout."""
    if not 1 <= threads <= 4096:
        raise ConfigError(f"threads={threads}; use 1 to 4096")
    if not 1 <= repetitions <= 100_000:
        raise ConfigError(f"repetitions={repetitions}; use 1 or more")
    if not 0 <= warmups <= 100_000:
        raise ConfigError(f"warmups={warmups}; use 0 or more")
    if not timeout_s > 0:
        raise ConfigError(f"timeout_s={timeout_s:g}; use a positive number of seconds")


def check_thresholds(alpha: float, min_effect: float, noise_k: float,
                     unmeasured_noise: float, tail_quantile: float | None = None) -> None:
    """The gate's thresholds: a probability in (0, 1), a quantile in [0, 1] (None: not given
    here, as by the command-line overrides) and non-negative effects."""
    if not 0 < alpha < 1:
        raise ConfigError(f"alpha={alpha:g}; use a probability between 0 and 1, e.g. 0.05")
    # A YAML `nan` or `0.9x` is a string: refused here too, not as a TypeError later.
    number = isinstance(tail_quantile, (int, float)) and not isinstance(tail_quantile, bool)
    if tail_quantile is not None and not (number and 0 <= tail_quantile <= 1):
        raise ConfigError(f"tail_quantile={tail_quantile!r}; use a quantile from 0 to 1, e.g. "
                          f"0.9 (0 leaves the tail of run-to-run changes out)")
    for name, value in (("min_effect", min_effect), ("noise_k", noise_k),
                        ("unmeasured_noise", unmeasured_noise)):
        if not value >= 0:
            raise ConfigError(f"{name}={value:g}; use 0 or more (e.g. min_effect=0.02 for 2 %)")
