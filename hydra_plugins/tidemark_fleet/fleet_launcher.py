"""`-m hydra/launcher=fleet`: hydra-submitit-launcher's Slurm launcher, with one Slurm job per
sweep job on a node of the job's machine profile, and the jobs' bundles merged into the history
by this process as the jobs end (orchestrator/run/fleet.py says how, and how builds reach nodes).

Hydra code stays here (Hydra requires a launcher to live in the hydra_plugins package): what
each job asks for and the collecting loop are in orchestrator/run/fleet.py, without Hydra.
"""
# No `from __future__ import annotations`: Hydra's plugin scan runs this module outside
# sys.modules, where dataclasses cannot resolve string annotations.
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from hydra.core.config_store import ConfigStore
from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, JobStatus
from omegaconf import OmegaConf, open_dict, read_write

from hydra_plugins.hydra_submitit_launcher.config import BaseQueueConf, SlurmQueueConf
from hydra_plugins.hydra_submitit_launcher.submitit_launcher import SlurmLauncher

FLEET_KEYS = ("shared_dir", "time_limit_min", "build_allowance_min", "poll_s")


@dataclass
class FleetSlurmConf(SlurmQueueConf):
    _target_: str = "hydra_plugins.tidemark_fleet.fleet_launcher.FleetSlurmLauncher"
    # A folder every node mounts at the same path: the jobs' bundles and submitit's files.
    shared_dir: str = "${results_dir}/fleet"
    submitit_folder: str = "${hydra.launcher.shared_dir}/submitit/%j"
    # Minutes a job may run; None: from the plan (every process at its timeout, plus the build).
    time_limit_min: Optional[int] = None
    build_allowance_min: int = 30  # minutes a first build of the engine may take on a node
    poll_s: float = 2.0  # how often the submitter looks for ended jobs
    name: str = "tidemark"


ConfigStore.instance().store(group="hydra/launcher", name="tidemark_fleet_schema",
                             node=FleetSlurmConf, provider="tidemark")


class FleetSlurmLauncher(SlurmLauncher):
    def __init__(self, **params: Any) -> None:
        self.fleet = {key: params.pop(key) for key in FLEET_KEYS}
        super().__init__(**params)
        self.sweep: Dict[str, Any] = {}  # carried to the nodes with the pickled launcher

    def __call__(self, *args: Any, **kwargs: Any) -> JobReturn:
        """On the node: the job knows its sweep, then runs as Hydra runs any job."""
        from orchestrator.run import sweep_state

        sweep_state.restore(self.sweep)
        return super().__call__(*args, **kwargs)

    def launch(self, job_overrides: Sequence[Sequence[str]],
               initial_job_idx: int) -> Sequence[JobReturn]:
        from orchestrator.run import sweep_state
        from orchestrator.errors import UserError

        try:
            self._submit_and_collect(job_overrides, initial_job_idx)
        except UserError as exc:  # the CLI says it, once, after Hydra returns
            sweep_state.JOB_ERRORS.append(exc)
        return [JobReturn(overrides=list(o), status=JobStatus.COMPLETED) for o in job_overrides]

    def _job_conf(self, overrides: List[str]) -> Any:
        """The TidemarkConf one job will run, composed as the node will compose it."""
        assert self.hydra_context is not None and self.config is not None
        cfg = self.hydra_context.config_loader.load_sweep_config(self.config, overrides)
        with read_write(cfg), open_dict(cfg):
            del cfg["hydra"]
        return OmegaConf.to_object(cfg)

    def _executor(self) -> Any:
        import submitit

        params = dict(self.params)
        executor = submitit.AutoExecutor(cluster="slurm", folder=params.pop("submitit_folder"),
                                         slurm_max_num_timeout=params.pop("max_num_timeout"))
        base = set(OmegaConf.structured(BaseQueueConf).keys())
        executor.update_parameters(**{k if k in base else f"slurm_{k}": v
                                      for k, v in params.items()})
        return executor

    def _submit_and_collect(self, job_overrides: Sequence[Sequence[str]], first: int) -> None:
        from orchestrator.run import fleet, sweep_state
        from orchestrator.errors import FleetError
        from orchestrator.history.ingest import Ingestor

        assert self.config is not None
        self.sweep = sweep_state.snapshot()
        shared = Path(str(self.fleet["shared_dir"])).absolute()
        bundles = shared / "bundles" / self.sweep["id"]
        try:  # here, not as a job "Slurm refused" later
            bundles.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise FleetError(f"hydra.launcher.shared_dir={shared}: cannot create {bundles} "
                             f"({exc.strerror}); give a folder every node mounts at the same "
                             f"path") from None
        planned = [(first + i, list(o), fleet.placement(
            self._job_conf(list(o)), int(self.fleet["build_allowance_min"]),
            self.fleet["time_limit_min"])) for i, o in enumerate(job_overrides)
            if not _complete(first + i, self.sweep)]
        fleet.check_features({p.constraint for _, _, p in planned})
        ingestor = Ingestor(Path(str(self.config.db)))
        try:
            jobs, refused = self._submit_all(planned, bundles)
            failed = fleet.collect(jobs, ingestor, bundles, self.sweep["id"], _say,
                                   float(self.fleet["poll_s"]))
        finally:
            ingestor.close()
        sweep_state.RUN_OUTCOMES.extend((r.run_id, r.status, r.failed, r.invocations)
                                        for job in jobs for r in job.runs if r.status != "ok")
        if refused is not None:
            raise refused
        lost = [job for job in failed if job.lost]
        if lost:
            raise fleet.lost_error(lost, jobs, self.sweep, Path(str(self.config.db)))
        if failed:
            raise FleetError(f"{len(failed)} of {len(jobs)} fleet jobs ended without a bundle; "
                             f"first {failed[0].describe()}: {failed[0].error_line()} (its log: "
                             f"{failed[0].job.paths.stderr})")

    def _submit_all(self, planned: List[Any], bundles: Path) -> Tuple[List[Any], Any]:
        """The submitted jobs, and the error of the first job Slurm refused (None): the jobs
        submitted before it go on, so they are collected all the same."""
        from orchestrator.errors import FleetError

        jobs: List[Any] = []
        for num, overrides, place in planned:
            try:
                jobs.append(self._submit(num, overrides, place, bundles))
            except Exception as exc:  # submitit's FailedSubmissionError carries sbatch's words
                said = str(exc).strip().splitlines()
                return jobs, FleetError(f"Slurm refused job {num} ({' '.join(overrides)}): "
                                        f"{said[-1] if said else repr(exc)}; the {len(jobs)} "
                                        f"job(s) submitted before it were collected")
        return jobs, None

    def _submit(self, num: int, overrides: List[str], place: Any, bundles: Path) -> Any:
        from orchestrator.run import fleet

        executor = self._executor()
        extra = dict(self.params.get("additional_parameters") or {})
        executor.update_parameters(  # a benchmark owns its node, whatever the config says
            slurm_constraint=place.constraint, timeout_min=place.time_limit_min,
            slurm_additional_parameters={**extra, "exclusive": True},
            name=f"tidemark-{self.sweep['id']}-{num}")
        # Each job's own folder: a requeued or resubmitted attempt finds its earlier one there
        # (orchestrator/run/attempts.py), and the submitter merges a job's only once it ended.
        job = executor.submit(self, [*overrides, f"bundle_dir={fleet.job_folder(bundles, num)}"],
                              "hydra.sweep.dir", num,
                              f"job_id_for_{num}", Singleton.get_state())
        _say(f"submitted job {num} ({' '.join(overrides)}) as Slurm job {job.job_id}: "
             f"constraint {place.constraint}, exclusive, time limit {place.time_limit_min} min")
        return fleet.FleetJob(num, overrides, job, place)


def _complete(num: int, sweep: Dict[str, Any]) -> bool:
    """A job of a resumed sweep whose run is complete: not submitted again (it would take a
    node only to be skipped there, and wait for ever when that node is down)."""
    run_id, status = sweep.get("done", {}).get(num, ("", ""))
    if status == "ok":
        _say(f"sweep {sweep['id']} job {num}: run {run_id} is complete; skipped")
    return status == "ok"


def _say(text: str) -> None:
    print(text, flush=True)
