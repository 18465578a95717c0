"""`tidemark ab` (side effects): two configs measured in rounds on one machine in one job.

Each round runs one repetition of both sides: back to back in a seeded random order
(interleaved, unpaired) or at the same time on two CPUs (duet); the order lives in
ab_schedule.py, the analysis of each design in analysis.paired, so a slow drift of the machine
(another tenant, heat, a background job) hits both sides of a round alike. With --adaptive the
job runs one round at a time and asks the analysis core (analysis.sequential) whether another
is needed. Each side is a normal run in the store (its own run id, build, data directory); the
ab_pairs table links them and records the design. the CLI (cli/compose.py) composes both configs with
Hydra and hands the dataclasses here.
"""
from __future__ import annotations

import dataclasses
import functools
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from .. import verdicts
from ..analysis.deterministic import is_deterministic
from ..analysis.identity import series_key
from ..analysis.paired import DUET, INTERLEAVED
from ..analysis.sequential import another_round, undecided
from ..analysis.stats import UNDECIDED, Comparison, Thresholds
from ..build.engine import Build
from ..build.planted import Planted, calibrate
from ..errors import ConfigError, UserError
from ..machine import probe as machine
from ..machine.cgroup import Cgroup, remove_cgroup
from ..machine.docker_client import ContainerSpec
from ..machine.shield import Shield
from ..plan.engine_versions import resolve_engine_version
from ..plan.runplan import RunPlan
from ..plan.schema import TidemarkConf
from ..record import STATUS_OK
from ..runners.context import RunContext, step_identity
from ..runners.loop import RunLoop
from ..store import Store
from ..store.reads import rejected_attempt_sql
from .ab_schedule import Block, Round, flatten, schedule_blocks
from .binaries import checked_plan, run_binaries
from .jobsetup import (build_engine_with_progress, check_machine,
                       check_machine_controls, check_pin_cpus, connect_runner, container_runner,
                       create_run_cgroup, machine_shield, new_run_id, open_results_store,
                       pin_orchestrator, planted_for, remove_run_data, run_context, run_record)
from .progress import RunProgress



@dataclass(frozen=True)
class Side:
    name: str  # "a" | "b"
    conf: TidemarkConf
    overrides: list[str]
    config: dict[str, Any]


@dataclass(frozen=True)
class AbOptions:
    """How the job is measured (the design) and, adaptive, when it stops (analysis.sequential)."""

    design: str = INTERLEAVED
    seed: int | None = None
    adaptive: bool = False
    max_rounds: int = 0  # adaptive: the round budget per point (the plan's repetitions)
    max_minutes: float = 0.0  # adaptive: the time budget of the measured rounds; 0 = none
    duet_cpus: tuple[int, ...] = ()  # duet: the two CPUs (default: the profile's, else 0 and 1)
    metrics: tuple[str, ...] = ("ops_per_sec",)
    thresholds: Thresholds = Thresholds()


def _start_run(store: Store, side: Side, run_id: str, plan: RunPlan, build: Build,
               facts: dict[str, Any], notes: list[str], ab_id: str,
               planted: Planted, shielded: Shield | None,
               container: ContainerSpec | None) -> dict[str, Any]:
    """Store one side's build and run record; returns its machine state before the run."""
    store.record_build(build)
    record = run_record(run_id, side.conf, plan, build, facts, side.overrides, side.config, notes,
                        planted, shielded, container=container)
    record["label"] = side.conf.label or f"{ab_id} side {side.name}"
    store.start_run(record)
    return record["machine_state"]


# Stands for a point whose rounds compare to nothing yet (e.g. its first rounds failed).
UNDECIDED_YET = Comparison(0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, UNDECIDED)


class _Job:
    """One job's measured part: blocks of rounds through the one run loop, stopping early
    (adaptive) when the analysis core needs no further round."""

    def __init__(self, ab: dict[str, Any], ctxs: dict[str, RunContext], store: Store,
                 options: AbOptions, loop: RunLoop):
        self.ab, self.ctxs, self.store, self.options, self.loop = ab, ctxs, store, options, loop
        self.ran: list[dict[str, Any]] = []
        self.started = time.monotonic()

    def _groups(self, rnd: Round) -> list[tuple[tuple[RunContext, Any], ...]]:
        if not rnd.together:
            return [((self.ctxs[side], step),) for side, step in rnd.steps]
        cpus = dict(rnd.cpus)  # duet: each side pinned to its own CPU for this round
        return [tuple((dataclasses.replace(self.ctxs[side], pin_cpus=(cpus[side],)), step)
                      for side, step in rnd.steps)]

    def _comparisons(self, block: Block) -> list[Comparison]:
        """This point's comparisons so far, as the analysis core makes them from the store."""
        keys = {series_key(step_identity(self.ctxs["a"], step))
                for side, step in block.rounds[0].steps if side == "a"}
        try:
            with self.store.reading() as con:
                report = verdicts.compare_runs(con, self.ab["run_a"], self.ab["run_b"],
                                               self.options.metrics, self.options.thresholds, True)
        except UserError:  # nothing comparable yet (e.g. the first rounds failed)
            return [UNDECIDED_YET]
        return [r.comparison for r in report.rows if r.series_key in keys] or [UNDECIDED_YET]

    def _out_of_time(self) -> bool:
        limit = self.options.max_minutes
        return bool(limit) and time.monotonic() - self.started >= limit * 60.0

    def run_block(self, block: Block) -> None:
        o = self.options
        self.loop.run([((self.ctxs[side], step),) for side, step in block.prepare])
        done, stopped = 0, "max_rounds"
        # Judged on instruction counts alone, which the callgrind repetitions after the rounds
        # (block.after) measure: no timed round can decide them, so one is enough. (A bisect by
        # instruction counts ran 20 rounds per job before, its e2e test 4 minutes.)
        counted_only = o.adaptive and all(is_deterministic(m) for m in o.metrics)
        for rnd in block.rounds:
            if counted_only and done:
                stopped = "instruction counts"
                break
            if o.adaptive and done and not another_round(self._comparisons(block), done,
                                                         o.max_rounds):
                stopped = "decided"
                break
            # Every point gets one round (a point without any would compare to nothing), so
            # the time budget can overrun by one round per point.
            if o.adaptive and done and self._out_of_time():
                stopped = "max_minutes"
                break
            self.loop.run(self._groups(rnd))
            done += 1
            self.ran.append(rnd.record())
            if o.adaptive:
                self.store.update_ab(self.ab["ab_id"], self.ran, self.ab["adaptive"])
        if o.adaptive:
            if stopped == "max_rounds" and not undecided(self._comparisons(block)):
                stopped = "decided"  # the last round decided it
            self._note(block.point, done, stopped)
        self.loop.run([((self.ctxs[side], step),) for side, step in block.after])

    def _note(self, point: int, rounds: int, stopped: str) -> None:
        adaptive = self.ab["adaptive"]
        adaptive["rounds_used"][str(point)] = rounds
        adaptive["stopped"][str(point)] = stopped
        self.store.update_ab(self.ab["ab_id"], self.ran, adaptive)


def _run_blocks(blocks: list[Block], ab: dict[str, Any], ctxs: dict[str, RunContext],
                store: Store, console: Console, options: AbOptions) -> str:
    """Both sides through the one run loop, block by block; the run status."""
    total = len(flatten(blocks))
    with RunProgress(console, total) as progress:
        job = _Job(ab, ctxs, store, options, RunLoop(store, progress, total))
        for block in blocks:
            job.run_block(block)
    with store.reading() as con:
        statuses = con.execute("SELECT DISTINCT status FROM invocations WHERE run_id IN (?, ?) "
                               f"AND NOT {rejected_attempt_sql()}",
                               [ab["run_a"], ab["run_b"]]).fetchall()
    return "ok" if {s for (s,) in statuses} <= {STATUS_OK} else "partial"


def duet_cpus(conf: TidemarkConf, given: tuple[int, ...]) -> tuple[int, ...]:
    """The two CPUs of a duet: given, else the profile's first two pinned CPUs, else 0 and 1."""
    cpus = given or (tuple(conf.machine.pin_cpus[:2]) if len(conf.machine.pin_cpus) >= 2 else (0, 1))
    if len(cpus) != 2 or cpus[0] == cpus[1]:
        raise ConfigError(f"--duet-cpus {','.join(map(str, cpus))}: a duet needs two different "
                          f"CPUs, e.g. --duet-cpus 0,1")
    try:
        return check_pin_cpus(list(cpus))
    except ConfigError:
        raise ConfigError(f"--duet-cpus {','.join(map(str, cpus))} names a CPU that does not "
                          f"exist or is not allowed here; give two online CPUs, e.g. "
                          f"--duet-cpus 0,1") from None


def check_design(conf: TidemarkConf, plan: RunPlan, blocks: list[Block], options: AbOptions) -> None:
    """Refuse, before building anything, a design this plan cannot run as designed."""
    if options.design == DUET and conf.machine.allow_drop_caches and \
            any(c.drop_caches for c in plan.caches.values()):
        raise ConfigError("--design duet runs both sides at once, and this cache state drops "
                          "every page cache (the other side's too); use cache=warm or cache=hot, "
                          "or machine.allow_drop_caches=false")
    if options.adaptive:
        short = [b.point for b in blocks if len(b.rounds) != options.max_rounds]
        if short:
            raise ConfigError(f"--adaptive: point {short[0]} plans its own number of repetitions "
                              f"(a suite item's repetitions); remove it so --max-rounds "
                              f"{options.max_rounds} applies to every point")


def run_ab(a: Side, b: Side, console: Console, options: AbOptions = AbOptions()) -> dict[str, Any]:
    """Build both sides, run them as designed, store two linked runs; returns the ab record."""
    if (a.conf.db, a.conf.results_dir) != (b.conf.db, b.conf.results_dir):
        raise ConfigError("both sides must write one results DB; give db= and results_dir= after '--'")
    given = next((s.conf.bundle_dir for s in (a, b) if s.conf.bundle_dir), "")
    if given:  # else ignored: the runs would land in a DB no ingest ever merges
        raise ConfigError(f"bundle_dir={given}: tidemark ab writes both sides into db= and makes "
                          f"no bundle; drop bundle_dir, or run each side with tidemark run "
                          f"bundle_dir=...")
    sides = [dataclasses.replace(s, conf=dataclasses.replace(
        s.conf, engine=resolve_engine_version(s.conf.engine))) for s in (a, b)]
    plans = {s.name: checked_plan(s.conf) for s in sides}
    seed = secrets.randbits(32) if options.seed is None else options.seed
    cpus = duet_cpus(a.conf, options.duet_cpus) if options.design == DUET else ()
    blocks = schedule_blocks(plans["a"], plans["b"], seed, options.design, cpus)
    check_design(a.conf, plans["a"], blocks, options)
    facts = machine.capture_facts(Path(a.conf.data_dir).expanduser())
    notes = check_machine(a.conf, facts)
    # A duet pins each side to one of its two CPUs per round: the run's cgroup allows both.
    pin = cpus or check_pin_cpus(a.conf.machine.pin_cpus)
    for side in sides:
        check_machine_controls(side.conf, pin)
    dockers = {s.name: connect_runner(s.conf, console) for s in sides}  # either may be docker
    pin_orchestrator(a.conf.machine.orchestrator_cpus)
    store = open_results_store(Path(a.conf.db), Path(a.conf.data_dir).expanduser(),
                               a.conf.db_lock_wait_s)
    builds = {s.name: build_engine_with_progress(s.conf, console) for s in sides}
    binaries = {s.name: run_binaries(s.conf, plans[s.name], builds[s.name], console)
                 for s in sides}
    containers: dict[str, ContainerSpec | None] = {}
    for s in sides:
        builds[s.name], containers[s.name] = container_runner(
            s.conf, dockers[s.name], plans[s.name], builds[s.name], binaries[s.name], console)
    # One calibration per binary: both sides of one build plant with the same spins per µs.
    calibrate_once = functools.cache(lambda binary: calibrate(binary, pin))
    planted = {s.name: planted_for(s.conf, builds[s.name], pin, calibrate_once, console)
               for s in sides}
    base_id = new_run_id()
    run_ids = {"a": base_id + "-a", "b": base_id + "-b"}
    ab = {"ab_id": "ab-" + base_id, "run_a": run_ids["a"], "run_b": run_ids["b"], "seed": seed,
          # The ab_pairs.same_build column marks an A/A pair: one build AND one config on both
          # sides; only such pairs feed the noise model (a planted change is not noise).
          "same_build": builds["a"].build_id == builds["b"].build_id and a.config == b.config,
          "overrides_a": a.overrides, "overrides_b": b.overrides, "design": options.design,
          "schedule": [] if options.adaptive else
          [r.record() for block in blocks for r in block.rounds],
          "adaptive": {"max_rounds": options.max_rounds, "max_minutes": options.max_minutes,
                       "rounds_used": {}, "stopped": {}} if options.adaptive else None}
    with machine_shield(a.conf, pin, console) as shielded:  # one machine: side a's profile
        groups: dict[str, Cgroup | None] = {}
        ctxs: dict[str, RunContext] = {}
        before: dict[str, Any] = {}
        try:
            store.record_machine(facts)
            for s in sides:
                groups[s.name] = create_run_cgroup(s.conf, run_ids[s.name], pin, shielded)
                before[s.name] = _start_run(store, s, run_ids[s.name], plans[s.name], builds[s.name],
                                            facts, notes, ab["ab_id"], planted[s.name], shielded,
                                            containers[s.name])
                ctxs[s.name] = run_context(s.conf, run_ids[s.name], plans[s.name], builds[s.name],
                                           facts["fingerprint"], pin, groups[s.name],
                                           binaries[s.name], planted[s.name], shielded,
                                           containers[s.name])
            store.record_ab(ab)
            status = "interrupted"
            try:
                status = _run_blocks(blocks, ab, ctxs, store, console, options)
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
    used = ""
    if options.adaptive:
        used = "; rounds used " + ", ".join(
            f"point {p}: {n} of {options.max_rounds} ({ab['adaptive']['stopped'][p]})"
            for p, n in ab["adaptive"]["rounds_used"].items())
    console.print(f"ab {ab['ab_id']} ({options.design}): {status}; a = {run_ids['a']}, "
                  f"b = {run_ids['b']}, seed {seed}{used}", soft_wrap=True, markup=False)
    return ab
