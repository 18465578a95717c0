"""`tidemark ab` (side effects): two configs run interleaved A B A B … on one machine in one job.

Each round of repetitions runs both sides back to back in a seeded random order (recorded), so a
slow drift of the machine (another tenant, heat, a background job) hits both sides alike instead
of whichever side happened to run second. Each side is a normal run in the store (its own run id,
build, data directory); the ab_pairs table links them. cli.py composes both configs with Hydra and
hands the dataclasses here.
"""
from __future__ import annotations

import dataclasses
import random
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from . import machine
from .build import Build
from .cgroup import Cgroup, remove_cgroup
from .engine_versions import resolve_engine_version
from .errors import ConfigError
from .jobsetup import (build_engine_with_progress, build_harness_if_needed, check_machine,
                       check_machine_controls, check_pin_cpus, create_run_cgroup, machine_shield,
                       new_run_id, pin_orchestrator, remove_run_data, run_context, run_record)
from .shield import Shield
from .plan import PHASE_MEASURED, PHASE_SETUP, PHASE_WARMUP, RunPlan, Step, make_plan
from .progress import RunProgress
from .record import STATUS_OK
from .runners.context import RunContext
from .runners.interference import rejected_attempt
from .runners.loop import run_steps
from .schema import TidemarkConf
from .store import Store

PREPARING = (PHASE_SETUP, PHASE_WARMUP)  # run for both sides before a point's measured rounds


@dataclass(frozen=True)
class Side:
    name: str  # "a" | "b"
    conf: TidemarkConf
    overrides: list[str]
    config: dict[str, Any]


def schedule(plan_a: RunPlan, plan_b: RunPlan, seed: int) -> list[tuple[str, Step]]:
    """The interleaved order (pure): per point, both sides' setups and warm-ups, then each round
    of measured repetitions in a seeded random order, then anything else (callgrind)."""
    check_same_shape(plan_a, plan_b)
    rng = random.Random(seed)
    order: list[tuple[str, Step]] = []
    points = sorted({s.point for s in plan_a.steps})
    for point in points:
        a = [s for s in plan_a.steps if s.point == point]
        b = [s for s in plan_b.steps if s.point == point]
        order += [("a", s) for s in a if s.phase in PREPARING]
        order += [("b", s) for s in b if s.phase in PREPARING]
        measured_a = [s for s in a if s.phase == PHASE_MEASURED]
        measured_b = [s for s in b if s.phase == PHASE_MEASURED]
        for step_a, step_b in zip(measured_a, measured_b):
            pair = [("a", step_a), ("b", step_b)]
            rng.shuffle(pair)
            order += pair
        done = {id(s) for _, s in order}
        order += [("a", s) for s in a if id(s) not in done] + [("b", s) for s in b if id(s) not in done]
    return order


def check_same_shape(plan_a: RunPlan, plan_b: RunPlan) -> None:
    """Both sides must run the same workloads and repetitions, or rounds cannot pair up."""
    shape = lambda plan: [(s.point, s.workload, s.phase, s.repetition) for s in plan.steps]
    if shape(plan_a) != shape(plan_b):
        raise ConfigError("the two sides plan different steps; give workload, suite and "
                          "repetitions after '--' so both sides share them")
    if plan_a.engine != plan_b.engine:
        raise ConfigError(f"side a runs {plan_a.engine} and side b {plan_b.engine}; ab compares "
                          f"two builds of one engine")


def rounds_record(order: list[tuple[str, Step]]) -> list[dict[str, Any]]:
    """The measured order as stored: one entry per round, e.g. {"point": 1, "rep": 2, "order": "ba"}."""
    rounds: dict[tuple[int, int], str] = {}
    for side, step in order:
        if step.phase == PHASE_MEASURED:
            rounds[(step.point, step.repetition)] = rounds.get((step.point, step.repetition), "") + side
    return [{"point": p, "rep": r, "order": o} for (p, r), o in rounds.items()]


def _start_run(store: Store, side: Side, run_id: str, plan: RunPlan, build: Build,
               facts: dict[str, Any], notes: list[str], ab_id: str,
               shielded: Shield | None) -> dict[str, Any]:
    """Store one side's build and run record; returns its machine state before the run."""
    store.record_build(build)
    record = run_record(run_id, side.conf, plan, build, facts, side.overrides, side.config, notes,
                        shielded)
    record["label"] = side.conf.label or f"{ab_id} side {side.name}"
    store.start_run(record)
    return record["machine_state"]


def _run_interleaved(order: list[tuple[str, Step]], ctxs: dict[str, RunContext], store: Store,
                     console: Console) -> str:
    """Both sides through the one run loop in the scheduled order; the run status."""
    items = [(ctxs[side], step) for side, step in order]
    with RunProgress(console, len(items)) as progress:
        done = run_steps(items, store, progress)
    return "ok" if all(i.status == STATUS_OK or rejected_attempt(i) for i in done) else "partial"


def run_ab(a: Side, b: Side, console: Console, seed: int | None = None) -> dict[str, Any]:
    """Build both sides, run them interleaved, store two linked runs; returns the ab record."""
    if (a.conf.db, a.conf.results_dir) != (b.conf.db, b.conf.results_dir):
        raise ConfigError("both sides must write one results DB; give db= and results_dir= after '--'")
    sides = [dataclasses.replace(s, conf=dataclasses.replace(
        s.conf, engine=resolve_engine_version(s.conf.engine))) for s in (a, b)]
    plans = {s.name: make_plan(s.conf) for s in sides}
    seed = secrets.randbits(32) if seed is None else seed
    order = schedule(plans["a"], plans["b"], seed)
    facts = machine.capture_facts(Path(a.conf.data_dir).expanduser())
    notes = check_machine(a.conf, facts)
    pin = check_pin_cpus(a.conf.machine.pin_cpus)
    for side in sides:
        check_machine_controls(side.conf, pin)
    pin_orchestrator(a.conf.machine.orchestrator_cpus)
    builds = {s.name: build_engine_with_progress(s.conf, console) for s in sides}
    harnesses = {s.name: build_harness_if_needed(s.conf, plans[s.name], builds[s.name], console)
                 for s in sides}
    base_id = new_run_id()
    run_ids = {"a": base_id + "-a", "b": base_id + "-b"}
    ab = {"ab_id": "ab-" + base_id, "run_a": run_ids["a"], "run_b": run_ids["b"], "seed": seed,
          # The ab_pairs.same_build column marks an A/A pair: one build AND one config on both
          # sides; only such pairs feed the noise model (a planted change is not noise).
          "same_build": builds["a"].build_id == builds["b"].build_id and a.config == b.config,
          "overrides_a": a.overrides, "overrides_b": b.overrides, "schedule": rounds_record(order)}
    with machine_shield(a.conf, pin, console) as shielded:  # one machine: side a's profile
        status = _run_sides(sides, plans, builds, harnesses, run_ids, ab, order, facts, notes,
                            pin, shielded, console)
    console.print(f"ab {ab['ab_id']}: {status}; a = {run_ids['a']}, b = {run_ids['b']}, seed {seed}")
    return ab


def _run_sides(sides: list[Side], plans: dict[str, RunPlan], builds: dict[str, Build],
               harnesses: dict[str, str], run_ids: dict[str, str], ab: dict[str, Any],
               order: list[tuple[str, Step]], facts: dict[str, Any], notes: list[str],
               pin: tuple[int, ...], shielded: Shield | None, console: Console) -> str:
    """Both sides' cgroups, run records and contexts, the interleaved run; the run status."""
    a = sides[0]
    groups: dict[str, Cgroup | None] = {}
    ctxs: dict[str, RunContext] = {}
    before: dict[str, Any] = {}
    status = "interrupted"
    store = Store(Path(a.conf.db))
    try:
        store.record_machine(facts)
        for s in sides:
            groups[s.name] = create_run_cgroup(s.conf, run_ids[s.name], pin, shielded)
            before[s.name] = _start_run(store, s, run_ids[s.name], plans[s.name], builds[s.name],
                                        facts, notes, ab["ab_id"], shielded)
            ctxs[s.name] = run_context(s.conf, run_ids[s.name], plans[s.name], builds[s.name],
                                       facts["fingerprint"], pin, groups[s.name],
                                       harnesses[s.name], shielded)
        store.record_ab(ab)
        try:
            status = _run_interleaved(order, ctxs, store, console)
        finally:
            after = machine.capture_state()
            for name, ctx in ctxs.items():
                store.finish_run(ctx.run_id, status, {**before[name], "after": after})
                if not a.conf.keep_data:
                    remove_run_data(ctx)
    finally:
        store.close()
        for group in groups.values():
            if group:
                remove_cgroup(group)
    return status
