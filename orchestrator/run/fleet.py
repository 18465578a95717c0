"""Fleet sweeps on Slurm (side effects: sinfo, squeue, the shared folder): what each job asks
the scheduler for, and the submitting process's loop that merges bundles as jobs end.

The launcher (hydra_plugins/tidemark_fleet) submits one Slurm job per sweep job through
submitit, with the job's machine profile as the node constraint (a node's `Features=` names
the profiles it serves), `--exclusive` (a benchmark owns its node) and a time limit from the
plan. Each job writes a bundle into the shared folder; only this process writes the history
(one writer), merging each bundle as its job ends. If this process dies, the jobs go on, and
`tidemark ingest <shared folder>/bundles` merges every bundle that was sealed.

Engine builds reach the nodes by being built on each node, into that node's own build cache
(`cache_dir`, node-local by default), keyed and locked as on one machine, and checked by the
binary's sha256: every run records it, and `ingest` names a build whose binary differs from
the one the history has under the same build key. Why not one build on the shared folder:
the build cache's lock is flock, which network filesystems do not reliably honour, so
concurrent builders on several nodes could corrupt one tree; and a binary built on one host
may not load on another (libraries, CPU flags). A homogeneous fleet can still point
`cache_dir` at the shared folder and build once.
"""
from __future__ import annotations

import dataclasses
import math
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..errors import ConfigError, FleetError, Interrupted
from ..history.ingest import Ingestor, RunOutcome
from ..plan.engine_versions import resolve_engine_version
from ..plan.runplan import make_plan
from ..plan.schema import TidemarkConf

# Slurm job states of a job that has not ended yet; any other state, or a job the controller
# no longer lists, has ended.
ACTIVE_STATES = {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED",
                 "RESIZING", "SIGNALING", "STAGE_OUT", "REQUEUE_HOLD", "REQUEUE_FED"}


@dataclass(frozen=True)
class Placement:
    """What one job asks Slurm for."""

    constraint: str  # the machine profile: a node feature
    time_limit_min: int


def placement(conf: TidemarkConf, build_allowance_min: int,
              time_limit_min: int | None = None) -> Placement:
    """The job's constraint and time limit (pure). The limit is the most the plan can take:
    every process at its timeout, plus the build; a fixed `time_limit_min` replaces it.
    Refused when it would not bound the job: Slurm reads 0 as no limit, and wraps a negative."""
    if time_limit_min is not None and time_limit_min < 1:
        raise ConfigError(f"hydra.launcher.time_limit_min={time_limit_min} would not bound the "
                          f"job (Slurm reads 0 as no limit); give minutes >= 1, or null to take "
                          f"it from the plan")
    if build_allowance_min < 0:
        raise ConfigError(f"hydra.launcher.build_allowance_min={build_allowance_min}; give the "
                          f"minutes a first build may take on a node (0 or more)")
    conf = dataclasses.replace(conf, engine=resolve_engine_version(conf.engine))
    if time_limit_min is None:
        steps = len(make_plan(conf).steps)
        time_limit_min = build_allowance_min + math.ceil(steps * conf.timeout_s / 60)
    return Placement(conf.machine.name, int(time_limit_min))


def check_features(constraints: set[str], sinfo: Callable[[], str] | None = None) -> None:
    """Refuse, before anything is submitted, a profile that no node serves."""
    listed = (sinfo or _sinfo_features)()
    features = {f for line in listed.split() for f in line.split(",")}
    missing = sorted(constraints - features)
    if missing:
        raise FleetError(f"no Slurm node has feature {missing[0]!r} (machine profile "
                         f"{missing[0]}); add Features={missing[0]} to its nodes in slurm.conf, "
                         f"or drop machine={missing[0]} (features: {', '.join(sorted(features))})")


def _slurm(argv: list[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, check=True,
                              timeout=60).stdout
    except FileNotFoundError:
        raise FleetError(f"{argv[0]} not found: install slurm-client on this host (or run "
                         f"scripts/slurm-local.sh start for a local cluster)") from None
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        err = (getattr(exc, "stderr", "") or str(exc)).strip().splitlines()
        raise FleetError(f"{' '.join(argv)} failed: {err[-1] if err else exc}; is slurmctld "
                         f"reachable (SLURM_CONF, scontrol ping)?") from None


def _sinfo_features() -> str:
    return _slurm(["sinfo", "-h", "-o", "%f"])


def job_states(job_ids: list[str]) -> dict[str, tuple[str, str]]:
    """(state, node) of each job the controller still lists (finished ones stay listed for
    MinJobAge); a job it does not list has ended."""
    listed = _slurm(["squeue", "-h", "--states=all", "-o", "%i|%T|%N"])
    states = {fields[0]: (fields[1], fields[2]) for fields in
              (line.split("|") for line in listed.splitlines()) if len(fields) == 3}
    return {job_id: states[job_id] for job_id in job_ids if job_id in states}


# Node states in which Slurm will start no job on the node until someone acts: only Slurm's
# own verdicts. A node "not responding" (a `*` flag) still serves until Slurm calls it down
# (SlurmdTimeout: a busy node may answer late), and so do nodes powered down or booting
# (`~`, `#`) or not yet registered (unknown): they will take jobs without anyone's help.
NOT_SERVING = {"down", "drained", "draining", "drain", "fail", "failing", "inval", "future"}


def serving_nodes(sinfo: Callable[[], str] | None = None) -> dict[str, set[str]]:
    """{feature: names of the nodes that serve it and are up}, and each node's state under ""."""
    listed = (sinfo or (lambda: _slurm(["sinfo", "-h", "-N", "-o", "%N|%T|%f"])))()
    serving: dict[str, set[str]] = {"": set()}
    for line in listed.splitlines():
        node, state, features = (line.split("|") + ["", ""])[:3]
        serving[""].add(f"{node} {state}")
        if state.rstrip("*~#$@+!%^-") not in NOT_SERVING:
            for feature in features.split(","):
                serving.setdefault(feature, set()).add(node)
    return serving


def job_folder(bundles: Path, num: int) -> Path:
    """Where every attempt of sweep job `num` writes its bundle."""
    return bundles / f"job-{num}"


ERROR_PREFIX = "tidemark: error: "  # how the CLI prints a UserError, on the node too


@dataclass
class FleetJob:
    """One submitted sweep job."""

    num: int
    overrides: list[str]
    job: Any  # submitit.Job
    placement: Placement
    state: str = "PENDING"
    runs: tuple[RunOutcome, ...] = ()
    node: str = ""  # where Slurm last ran it
    lost: str = ""  # why no node will run it, when its nodes went down

    def describe(self) -> str:
        return f"job {self.num} ({' '.join(self.overrides)})"

    def ended(self, states: dict[str, tuple[str, str]]) -> bool:
        state, node = states.get(self.job.job_id, ("", ""))
        self.node = node or self.node
        if self.job.paths.result_pickle.exists():
            self.state = state or "COMPLETED"
            return True
        self.state = state or "ENDED"
        if self.state == "NODE_FAIL":
            self.lost = f"node {self.node or '?'} failed while it ran (Slurm NODE_FAIL)"
        return self.state.split()[0] not in ACTIVE_STATES

    def stranded(self, serving: dict[str, set[str]]) -> bool:
        """Waiting (never started, or requeued after its node failed) while no node that
        serves its profile is up: no node will run it until one comes back."""
        if self.state not in WAITING_STATES or serving.get(self.placement.constraint):
            return False
        nodes = ", ".join(sorted(n for n in serving[""] if n.split()[0] == self.node)) or \
            f"every node of profile {self.placement.constraint} is down"
        self.lost = (f"its node went down while it ran ({nodes})" if self.node else
                     f"not run: no node of profile {self.placement.constraint} is up "
                     f"({', '.join(sorted(serving['']))})")
        return True

    def error_line(self) -> str:
        """Why a job ended without a run: its own one-line error, else its last line."""
        if self.lost:
            return f"lost: {self.lost}"
        text = self.job.stderr() or ""
        lines = [line for line in text.splitlines() if line.strip()]
        said = [line.removeprefix(ERROR_PREFIX) for line in lines if line.startswith(ERROR_PREFIX)]
        return (said or lines or [f"no output (Slurm state {self.state})"])[-1]


WAITING_STATES = {"PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED"}


def collect(jobs: list[FleetJob], ingestor: Ingestor, bundles: Path, sweep_id: str,
            say: Callable[[str], None], poll_s: float) -> list[FleetJob]:
    """Wait for every job, merging the bundle of each as it ends; the jobs that ended
    without a run in the history (lost ones among them, cancelled: see `_strand`)."""
    pending = list(jobs)
    failed: list[FleetJob] = []
    try:
        while pending:
            states = job_states([j.job.job_id for j in pending])
            ended = [j for j in pending if j.ended(states)]
            ended += _strand([j for j in pending if j not in ended])
            folders = [job_folder(bundles, j.num) for j in ended]
            merged = ingestor.ingest([f for f in folders if f.is_dir()], say) if ended else None
            for job in ended:
                pending.remove(job)
                run = ingestor.sweep_run(sweep_id, job.num)
                if run is None:
                    failed.append(job)
                    say(f"{job.describe()} lost: {job.lost} (Slurm job {job.job.job_id})"
                        if job.lost else f"{job.describe()} ended ({job.state}) without a "
                                         f"bundle: {job.error_line()}")
                else:
                    job.runs = (run,)
            for refused in merged.refused if merged else []:
                say(f"refused: {refused}")
            if pending:
                time.sleep(poll_s)
    except KeyboardInterrupt:
        raise Interrupted(f"interrupted; {_recover(pending, bundles)}") from None
    except FleetError as exc:  # the controller went away: the jobs run on without it
        raise FleetError(f"{exc}; {_recover(pending, bundles)}") from None
    return failed


def _strand(waiting: list[FleetJob]) -> list[FleetJob]:
    """The waiting jobs no node is up to run, cancelled: left queued, each would run when a
    node came back, unwatched, beside the `--resume` that finishes the sweep."""
    if not any(j.state in WAITING_STATES for j in waiting):
        return []
    serving = serving_nodes()
    stranded = [j for j in waiting if j.stranded(serving)]
    if stranded:
        _slurm(["scancel", *(j.job.job_id for j in stranded)])
    return stranded


def lost_error(lost: list[FleetJob], jobs: list[FleetJob], sweep: dict[str, Any],
               db: Path) -> FleetError:
    """The sweep's one line when nodes went down: which jobs, and the command that finishes it."""
    done = [r.run_id for j in jobs for r in j.runs] + [r for r, _ in sweep.get("done", {}).values()]
    then = (f"once a node of their profile is up, 'tidemark run --resume {done[0]} db={db}' "
            f"runs only them" if done else "run the sweep again once a node of their profile "
                                           "is up")
    return FleetError(f"{len(lost)} of {len(jobs)} fleet jobs lost with their nodes "
                      f"({'; '.join(f'{j.describe()}: {j.lost}' for j in lost)}); what they "
                      f"measured stays in their bundles and is continued, not measured again: "
                      f"{then}")


def _recover(pending: list[FleetJob], bundles: Path) -> str:
    return (f"the {len(pending)} Slurm job(s) not yet ended are still Slurm's: once they have "
            f"ended, merge their bundles with 'tidemark ingest {bundles}'")
