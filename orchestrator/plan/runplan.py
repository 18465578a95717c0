"""Planning (pure): a validated config becomes a RunPlan, the exact list of processes to run.

No clock, environment, files or subprocesses here: the CLI hands in the config object.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from ..errors import ConfigError
from .kinds import (KIND_COMMAND, KIND_DB_BENCH, KIND_GBENCH, template_params,
                    workload_templates)
from .param_checks import check_counts, check_params
from .recipe_checks import check_recipe, check_workload

if TYPE_CHECKING:  # annotations only: readers of plans (the site) need not import OmegaConf
    from .schema import CacheConf, TidemarkConf, WorkloadConf, WorkloadParams

PHASE_SETUP = "setup"
PHASE_WARMUP = "warmup"
PHASE_MEASURED = "measured"
PHASE_CALLGRIND = "callgrind"  # instruction count under valgrind; never in timing statistics
# The untimed pass that reads every key once, to bring the data set into the page cache.
WARM_PASS_BENCHMARK = "readseq"


@dataclass(frozen=True)
class Step:
    """One engine process to run (an invocation once it has run)."""

    seq: int
    point: int  # steps of one parameter point share a data set; a failed setup skips them
    workload: str
    benchmark: str
    phase: str
    repetition: int  # 1-based for warm-ups and measured steps; 0 for setup
    threads: int
    params: tuple[tuple[str, Any], ...]  # sorted (name, value) pairs, hashable
    db_key: str  # which database directory the step uses
    fresh_db: bool  # True: the engine starts from an empty database
    cache_state: str = ""  # a key of RunPlan.caches
    # Untimed benchmarks run first in the same process (cache=hot fills the block cache).
    prelude: tuple[str, ...] = ()
    kind: str = KIND_DB_BENCH  # which step runner runs it (KINDS)
    repetitions: int = 1  # repetitions inside the process (gbench); the others run one

    @property
    def params_dict(self) -> dict[str, Any]:
        return dict(self.params)

    @property
    def is_measured(self) -> bool:
        return self.phase == PHASE_MEASURED


@dataclass(frozen=True)
class RunPlan:
    engine: str
    engine_version: str
    build_variant: str
    cache_state: str  # the run's cache state; suite items may name others (Step.cache_state)
    suite: str
    timeout_s: float
    steps: tuple[Step, ...]
    caches: Mapping[str, CacheConf] = dataclasses.field(default_factory=dict)
    db_bench: str = ""  # the engine's db_bench flavour (engine.db_bench): its command line, parser
    # The workloads of the steps, by name: a gbench or command step's templates (its command,
    # setup commands, data, output and derived metrics) are read from here when it runs.
    workloads: Mapping[str, WorkloadConf] = dataclasses.field(default_factory=dict)

    @property
    def measured_count(self) -> int:
        return sum(1 for s in self.steps if s.is_measured)


@dataclass(frozen=True)
class _Point:
    workload: WorkloadConf
    params: WorkloadParams
    threads: int
    repetitions: int
    cache: CacheConf


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: equal values give equal text (and hashes)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def short_hash(value: Any, length: int = 12) -> str:
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()[:length]


def params_items(params: WorkloadParams) -> tuple[tuple[str, Any], ...]:
    """Params as sorted pairs, dropping unset optionals so they do not split series."""
    flat = dataclasses.asdict(params)
    extra = flat.pop("extra") or {}
    items = {k: v for k, v in flat.items() if v is not None}
    items.update({f"extra.{k}": str(v) for k, v in extra.items()})
    return tuple(sorted(items.items()))


def series_params(wl: WorkloadConf, params: WorkloadParams) -> tuple[tuple[str, Any], ...]:
    """The params that name a workload's series: every param for db_bench; for the other
    kinds the ones `series_params` lists or, by default, those its templates use, and every
    `params.extra` (so a snappy series is not labelled with db_bench's num or value_size)."""
    items = params_items(params)
    if wl.kind == KIND_DB_BENCH:
        return items
    used = wl.series_params if wl.series_params is not None else template_params(wl)
    return tuple((k, v) for k, v in items if k in used or k.startswith("extra."))


def templated_data_key(wl: WorkloadConf, params: WorkloadParams) -> str:
    """A gbench or command point's data folder: shared by the points whose setup and params
    are the same (its threads and cache state do not change what setup writes)."""
    return short_hash({"workload": wl.name, "setup": list(wl.setup),
                       "params": series_params(wl, params)}, 10)


def data_set_key(params: WorkloadParams) -> str:
    """Steps that would build the same data set share one database directory."""
    shaping = {"num": params.num, "value_size": params.value_size,
               "key_size": params.key_size, "compression": params.compression}
    return short_hash(shaping, 10)


def apply_param_overrides(params: WorkloadParams, overrides: Mapping[str, Any]) -> WorkloadParams:
    known = {f.name for f in dataclasses.fields(params)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise ConfigError(f"unknown workload param {unknown[0]!r}; valid params: {', '.join(sorted(known))}")
    return dataclasses.replace(params, **dict(overrides))


def _points(cfg: TidemarkConf) -> list[_Point]:
    if cfg.workload is not None:
        return [_Point(cfg.workload, cfg.workload.params, cfg.threads, cfg.repetitions, cfg.cache)]
    if cfg.suite is None:
        raise ConfigError("no workload and no suite selected; pass workload=NAME or suite=NAME")
    items = cfg.suite.items
    if cfg.only:
        names = [item.workload for item in items]
        unknown = [name for name in cfg.only if name not in names]
        if unknown:
            raise ConfigError(f"only={unknown[0]!r} is not a workload of suite "
                              f"{cfg.suite.name!r}; its workloads: {', '.join(dict.fromkeys(names))}")
        items = [item for item in items if item.workload in cfg.only]
    points = []
    for item in items:
        workload = cfg.suite.workloads.get(item.workload)
        if workload is None:
            raise ConfigError(f"suite {cfg.suite.name!r} item names workload {item.workload!r}, "
                              f"which it does not load; loaded: {', '.join(sorted(cfg.suite.workloads))}")
        params = apply_param_overrides(workload.params, item.params)
        for cache in _item_caches(cfg, item.caches):
            for threads in item.threads or [cfg.threads]:
                points.append(_Point(workload, params, threads, item.repetitions or cfg.repetitions,
                                     cache))
    return points


def _item_caches(cfg: TidemarkConf, names: list[str]) -> list[CacheConf]:
    if not names:
        return [cfg.cache]
    assert cfg.suite is not None
    unknown = [n for n in names if n not in cfg.suite.caches]
    if unknown:
        raise ConfigError(f"suite {cfg.suite.name!r} item names cache state {unknown[0]!r}, which "
                          f"it does not load; loaded: {', '.join(sorted(cfg.suite.caches)) or 'none'}")
    return [cfg.suite.caches[n] for n in names]


def _check_point(point: _Point, cfg: TidemarkConf) -> None:
    engine = cfg.engine.name
    if point.workload.engines and engine not in point.workload.engines:
        raise ConfigError(f"workload {point.workload.name!r} does not run on engine {engine!r}; "
                          f"it supports: {', '.join(point.workload.engines)}")
    check_counts(point.threads, point.repetitions, cfg.warmups, cfg.timeout_s)
    check_workload(cfg.engine, point.workload)
    check_params(cfg.engine, point.workload, dataclasses.asdict(point.params))
    wl = point.workload
    if wl.kind != KIND_DB_BENCH and point.threads > 1 and \
            not any("{threads}" in t for t in workload_templates(wl)):
        # the program would never hear of the threads: two series of one measurement
        raise ConfigError(f"workload {wl.name!r} runs threads={point.threads}, and its "
                          f"templates never pass {{threads}} to the program; add it (e.g. "
                          f"-T{{threads}}) or run threads=1")
    if cfg.callgrind and wl.kind != KIND_DB_BENCH:
        raise ConfigError(f"callgrind=true counts db_bench's instructions, and workload "
                          f"{wl.name!r} is a {wl.kind} workload; run it with callgrind=false")


def _callgrind_params(wl: WorkloadConf, params: WorkloadParams, ops: int) -> WorkloadParams:
    """Fewer operations for the slow callgrind pass: a writer writes fewer keys, a reader reads
    fewer from the same data set."""
    if wl.fresh_db:
        return dataclasses.replace(params, num=min(params.num, ops))
    return dataclasses.replace(params, reads=min(params.reads or params.num, ops))


def _gbench_step(point: _Point, index: int, seq: int) -> Step:
    """One Google Benchmark process per point: its filter is the workload's benchmark, and
    Google Benchmark runs the repetitions; no warm-up or callgrind steps."""
    wl = point.workload
    return Step(seq, index, wl.name, wl.benchmark, PHASE_MEASURED, 1, point.threads,
                series_params(wl, point.params), templated_data_key(wl, point.params),
                wl.fresh_db, point.cache.name, kind=KIND_GBENCH, repetitions=point.repetitions)


def _templated_steps(point: _Point, index: int, warmups: int, first_seq: int) -> list[Step]:
    """A gbench or command point: its setup commands (untimed, once), then a gbench process,
    or the command's warm-ups and repetitions."""
    wl = point.workload
    items, db_key = series_params(wl, point.params), templated_data_key(wl, point.params)
    steps = [Step(first_seq + i, index, wl.name, f"setup-{i + 1}", PHASE_SETUP, 0, 1, items,
                  db_key, False, point.cache.name, kind=KIND_COMMAND)
             for i in range(len(wl.setup))]
    if wl.kind == KIND_GBENCH:
        return steps + [_gbench_step(point, index, first_seq + len(steps))]
    benchmark = wl.benchmark or wl.name
    phases = [(PHASE_WARMUP, rep) for rep in range(1, warmups + 1)] + \
        [(PHASE_MEASURED, rep) for rep in range(1, point.repetitions + 1)]
    for phase, rep in phases:
        steps.append(Step(first_seq + len(steps), index, wl.name, benchmark, phase, rep,
                          point.threads, items, db_key, False, point.cache.name,
                          kind=KIND_COMMAND))
    return steps


def _steps_for_point(point: _Point, index: int, warmups: int, first_seq: int,
                     callgrind_ops: int = 0, callgrind_repetitions: int = 1) -> list[Step]:
    wl = point.workload
    if wl.kind != KIND_DB_BENCH:
        return _templated_steps(point, index, warmups, first_seq)
    cache = point.cache
    warm_passes = cache.warm_passes
    in_process_warm = cache.block_cache_fits_data and not wl.fresh_db
    items = params_items(point.params)
    db_key = data_set_key(point.params)
    steps: list[Step] = []

    def add(benchmark: str, phase: str, rep: int, threads: int, fresh: bool) -> None:
        prelude = (WARM_PASS_BENCHMARK,) if in_process_warm and phase != PHASE_SETUP else ()
        steps.append(Step(first_seq + len(steps), index, wl.name, benchmark, phase, rep, threads,
                          items, db_key, fresh, cache.name, prelude))

    # A setup builds the data set once per point, single-threaded, before its repetitions.
    for i, setup_benchmark in enumerate(wl.setup):
        add(setup_benchmark, PHASE_SETUP, 0, 1, i == 0)
    # Warming the page cache reads the existing data set untimed; a fresh-DB writer has none.
    if not wl.fresh_db:
        for rep in range(1, warm_passes + 1):
            add(WARM_PASS_BENCHMARK, PHASE_WARMUP, rep, 1, False)
    for rep in range(1, warmups + 1):
        add(wl.benchmark, PHASE_WARMUP, rep, point.threads, wl.fresh_db)
    for rep in range(1, point.repetitions + 1):
        add(wl.benchmark, PHASE_MEASURED, rep, point.threads, wl.fresh_db)
    if callgrind_ops:
        reduced = params_items(_callgrind_params(wl, point.params, callgrind_ops))
        for rep in range(1, callgrind_repetitions + 1):
            steps.append(Step(first_seq + len(steps), index, wl.name, wl.benchmark,
                              PHASE_CALLGRIND, rep, point.threads, reduced, db_key, wl.fresh_db,
                              cache.name))
    return steps


def make_plan(cfg: TidemarkConf) -> RunPlan:
    """The full, ordered list of processes for one run; raises ConfigError on a bad combination."""
    engine = cfg.engine.name
    check_recipe(cfg.engine)
    if cfg.callgrind and (cfg.callgrind_repetitions < 1 or cfg.callgrind_ops < 1):
        raise ConfigError(f"callgrind_repetitions={cfg.callgrind_repetitions}, callgrind_ops="
                          f"{cfg.callgrind_ops}; use 1 or more of each (2+ repetitions for an "
                          f"instruction-count verdict)")
    steps: list[Step] = []
    caches: dict[str, CacheConf] = {}
    workloads: dict[str, WorkloadConf] = {}
    for index, point in enumerate(_points(cfg), start=1):
        _check_point(point, cfg)
        steps.extend(_steps_for_point(point, index, cfg.warmups, len(steps) + 1,
                                      cfg.callgrind_ops if cfg.callgrind else 0,
                                      cfg.callgrind_repetitions))
        caches[point.cache.name] = point.cache
        workloads[point.workload.name] = point.workload
    suite = "" if cfg.workload is not None or cfg.suite is None else cfg.suite.name
    return RunPlan(engine=engine, engine_version=cfg.engine.version, build_variant=cfg.build.name,
                   cache_state=cfg.cache.name, suite=suite, timeout_s=cfg.timeout_s,
                   steps=tuple(steps), caches=caches, db_bench=cfg.engine.db_bench,
                   workloads=workloads)


def series_identity(engine: str, step: Step, build_variant: str,
                    machine_fingerprint: str) -> dict[str, Any]:
    """What must match for two invocations to be one series (analysis.identity.SERIES_KEYS);
    the engine version, compiler and flags are named on comparisons, never part of it."""
    return {"engine": engine, "workload": step.workload, "benchmark": step.benchmark,
            "params": step.params_dict, "threads": step.threads, "cache_state": step.cache_state,
            "build_variant": build_variant, "machine_fingerprint": machine_fingerprint}
