"""One `tidemark run` job (side effects): plan → build → machine → run loop → store."""
from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from ..build.engine import Build
from ..errors import ConfigError, DiskFull, Interrupted
from ..history.bundle import MANIFEST, BundleLayout, discard_bundle, new_bundle, seal_bundle
from ..history.ingest import seal_unfinished
from ..liveness import this_process
from ..machine import probe as machine
from ..machine.cgroup import remove_cgroup
from ..machine.interference import rejected_attempt
from ..plan.engine_versions import resolve_engine_version
from ..plan.resume import (check_resumable, check_same_measurement, config_differences,
                           resume_entry, resume_plan, resume_text)
from ..plan.runplan import RunPlan
from ..plan.schema import TidemarkConf
from ..record import STATUS_OK, Invocation
from ..runners.context import RunContext
from ..runners.loop import run_steps
from ..store import Store
from ..store.resume_reads import StoredRun, stored_invocations, stored_run
from ..store.schema import LATEST_VERSION
from .attempts import earlier_attempt, reopen
from .binaries import checked_plan, run_binaries
from .jobsetup import (build_engine_with_progress, check_machine,
                       check_machine_controls, check_pin_cpus, connect_runner, container_runner,
                       create_run_cgroup, machine_shield, new_run_id, open_results_store,
                       pin_orchestrator, planted_for, remove_run_data, run_context, run_record,
                       tidemark_sha)
from .progress import RunProgress, summary_table


@dataclass(frozen=True)
class RunTarget:
    """Where a job's invocations go: a new run (of a sweep, when `sweep` is set) or, with
    `resume`, the rest of an earlier run that did not finish."""

    resume: str = ""  # the run id to finish
    sweep: dict[str, Any] | None = None  # {id, argv, job} of a `tidemark run -m` job


def _prior_run(store: Store, run_id: str, config: dict[str, Any]) -> tuple[StoredRun, list]:
    """The run to resume and its invocations; refuses what cannot be resumed, before building."""
    with store.reading() as con:
        prior = stored_run(con, run_id)
        check_resumable(run_id, prior.status, prior.source, prior.in_ab)
        stored_config = con.execute("SELECT config FROM runs WHERE run_id = ?", [run_id]).fetchone()[0]
        invocations = stored_invocations(con, run_id)
    changed = config_differences(json.loads(stored_config) if stored_config else {}, config)
    if changed:
        raise ConfigError(f"run {run_id}'s config differs from what its overrides give now "
                          f"({'; '.join(changed[:3])}): conf/ changed since it ran, so its rest "
                          f"would be another measurement; start a new run")
    return prior, invocations


def _resumed(plan: RunPlan, prior: StoredRun, invocations: list, build_id: str,
             fingerprint: str) -> tuple[RunPlan, dict[str, Any]]:
    """The plan of what is left of `prior`, and the entry its resume adds to the run."""
    check_same_measurement(prior.run_id, prior.build_id, build_id, prior.machine_fingerprint,
                           fingerprint)
    left = resume_plan(plan.steps, invocations, prior.max_seq + 1)
    entry = resume_entry(time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), left,
                         prior.status, this_process())
    return dataclasses.replace(plan, steps=left.steps), entry


def run_job(conf: TidemarkConf, overrides: list[str], config: dict[str, Any],
            console: Console, target: RunTarget = RunTarget()) -> tuple[str, list[Invocation]]:
    """Run one job; every invocation is in the store (or the bundle) when this returns or raises."""
    run_id = new_run_id()
    if not conf.bundle_dir:
        return _run_job(conf, overrides, config, console, target, run_id, None)
    if target.resume:
        raise ConfigError("--resume finishes a run in the history; a run written as a bundle "
                          "(bundle_dir=...) cannot be resumed: run it again")
    bundle, run_id, target = _job_bundle(Path(conf.bundle_dir).expanduser(), run_id, target,
                                         console)
    if bundle is None:
        return run_id, []
    conf = dataclasses.replace(conf, results_dir=str(bundle.layout.root),
                               db=str(bundle.layout.db))
    try:
        return _run_job(conf, overrides, config, console, target, run_id, bundle)
    finally:
        bundle.close(run_id, console)


def _job_bundle(bundle_dir: Path, run_id: str, target: RunTarget,
                console: Console) -> tuple[BundleSeal | None, str, RunTarget]:
    """The bundle a job writes: a new one, or an earlier attempt's of the same sweep job,
    continued (run/attempts.py); None when that attempt's run is complete already."""
    earlier = earlier_attempt(bundle_dir, target.sweep) if target.sweep else None
    if earlier is None:
        return BundleSeal(new_bundle(bundle_dir, run_id)), run_id, target
    if earlier.status == "ok":  # it ended just before Slurm requeued it
        if not earlier.sealed:
            seal_unfinished(earlier.layout.root)
        console.print(f"bundle {earlier.layout.root}: run {earlier.run_id} of this job is "
                      f"complete already (an earlier attempt); nothing run", markup=False)
        return None, earlier.run_id, target
    reopen(earlier)
    console.print(f"bundle {earlier.layout.root}: an earlier attempt of this job left run "
                  f"{earlier.run_id} {earlier.status}; continuing it", markup=False,
                  soft_wrap=True)
    return (BundleSeal(earlier.layout, reopened=True), earlier.run_id,
            dataclasses.replace(target, resume=earlier.run_id))


class BundleSeal:
    """A bundle run's folder: sealed when the run ends however it ends, once it has started
    (its rows are in the bundle's database); removed when it never started."""

    def __init__(self, layout: BundleLayout, reopened: bool = False):
        self.layout = layout
        self.reopened = reopened  # an earlier attempt's: what it holds was measured
        self.started: tuple[Build, dict[str, Any]] | None = None

    def close(self, run_id: str, console: Console) -> None:
        if self.started is None and self.reopened:
            seal_unfinished(self.layout.root)  # sealed again as the earlier attempt left it
            return
        if self.started is None:
            discard_bundle(self.layout)
            return
        build, facts = self.started
        try:
            seal_bundle(self.layout, [run_id], dataclasses.asdict(build), facts, LATEST_VERSION,
                        tidemark_sha())
        except OSError as exc:
            DiskFull.raise_if(exc, self.layout.root / MANIFEST,
                              _bundle_fix(run_id, self.layout.root))
            raise
        console.print(f"bundle {self.layout.root}: sealed; merge it with tidemark ingest "
                      f"{self.layout.root}", markup=False, soft_wrap=True)


def _run_job(conf: TidemarkConf, overrides: list[str], config: dict[str, Any], console: Console,
             target: RunTarget, run_id: str, bundle: BundleSeal | None) -> tuple[str, list[Invocation]]:
    conf = dataclasses.replace(conf, engine=resolve_engine_version(conf.engine))
    plan = checked_plan(conf)
    facts = machine.capture_facts(Path(conf.data_dir).expanduser())
    notes = check_machine(conf, facts)
    pin = check_pin_cpus(conf.machine.pin_cpus)
    check_machine_controls(conf, pin)
    docker = connect_runner(conf, console)
    pin_orchestrator(conf.machine.orchestrator_cpus)
    store = open_results_store(Path(conf.db), Path(conf.data_dir).expanduser(),
                               conf.db_lock_wait_s)
    prior = _prior_run(store, target.resume, config) if target.resume else None
    build = build_engine_with_progress(conf, console)
    binaries = run_binaries(conf, plan, build, console)
    build, container = container_runner(conf, docker, plan, build, binaries, console)
    planted = planted_for(conf, build, pin, console=console)
    resumed = None
    if prior is not None:
        plan, resumed = _resumed(plan, prior[0], prior[1], build.build_id, facts["fingerprint"])
        run_id = prior[0].run_id
    with machine_shield(conf, pin, console) as shielded:
        group = create_run_cgroup(conf, run_id, pin, shielded)
        try:
            store.record_machine(facts)
            store.record_build(build)
            if resumed is None:
                record = run_record(run_id, conf, plan, build, facts, overrides, config, notes,
                                    planted, shielded, target.sweep, container)
                store.start_run(record)
            else:
                record = {"machine_state": store.resume_run(run_id, this_process(), resumed)}
                console.print(resume_text(resumed), markup=False, soft_wrap=True)
            if bundle is not None:
                bundle.started = (build, facts)
            ctx = run_context(conf, run_id, plan, build, facts["fingerprint"], pin, group, binaries,
                              planted, shielded, container)
            status, invocations = _measure(conf, ctx, plan, store, record, console)
        finally:
            store.close()
            if group:
                remove_cgroup(group)
    console.print(summary_table(invocations))
    console.print(f"run {run_id}: {status}; {len(invocations)} invocations in {conf.db}")
    return run_id, invocations


def _measure(conf: TidemarkConf, ctx: RunContext, plan: RunPlan, store: Store,
             record: dict[str, Any], console: Console) -> tuple[str, list[Invocation]]:
    """The run loop over the plan's steps, and the run's end recorded however it ends."""
    status, ended = "interrupted", False
    try:
        with RunProgress(console, len(plan.steps)) as progress:
            invocations = run_steps([(ctx, step) for step in plan.steps], store, progress)
        status, ended = outcome_status(invocations), True
    except (KeyboardInterrupt, Interrupted) as exc:
        why = exc if isinstance(exc, Interrupted) else "interrupted by Ctrl-C"
        raise Interrupted(f"{why}; run {ctx.run_id} is marked interrupted and the invocations "
                          f"finished so far are stored in {conf.db}") from None
    except DiskFull as exc:
        raise _stopped_by_full_disk(exc, conf, ctx.run_id) from None
    except BaseException:
        status = "failed"  # Tidemark itself crashed: said as such, never left `running`
        raise
    finally:
        try:
            store.finish_run(ctx.run_id, status, {**record["machine_state"],
                                                  "after": machine.capture_state()})
        except DiskFull as exc:
            # Left `running`: the next command that opens the DB marks it killed (its process
            # is gone), which --resume takes. Said here only when nothing else stopped the run.
            if ended:
                raise _stopped_by_full_disk(exc, conf, ctx.run_id) from None
        finally:
            if not conf.keep_data:
                remove_run_data(ctx)
    return status, invocations


def _stopped_by_full_disk(exc: DiskFull, conf: TidemarkConf, run_id: str) -> DiskFull:
    if conf.bundle_dir:  # a bundle's run is not resumed: what it committed is merged
        return DiskFull(exc.where, _bundle_fix(run_id, Path(conf.results_dir)))
    return DiskFull(exc.where, f"run {run_id} stopped, the invocations it finished are stored "
                               f"in {conf.db}; free space there, then finish it with 'tidemark "
                               f"run --resume {run_id} db={conf.db}'")


def _bundle_fix(run_id: str, root: Path) -> str:
    return (f"run {run_id} stopped, the invocations it finished are in its bundle {root}; free "
            f"space there, then merge them with 'tidemark ingest --unfinished {root}'")


def outcome_status(invocations: list[Invocation]) -> str:
    """ok, partial (some invocations did not end ok) or failed (none did). An attempt the
    interference policy rejected and re-ran is a record, not a failure."""
    judged = [i for i in invocations if not rejected_attempt(i)]
    failed = sum(1 for i in judged if i.status != STATUS_OK)
    if not failed:
        return "ok"
    return "failed" if failed == len(judged) else "partial"
