"""`tidemark run`: one run composed once and run (orchestrator/run/job.py); a sweep, or a run
given a Hydra option, through Hydra's app, one job per sweep value; and `--resume RUN`, which
re-plans a stored run (or its sweep) from its own overrides."""
from __future__ import annotations

import logging.config
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError, Interrupted, RunIncomplete, UserError
from ..run.sweep_state import JOB_ERRORS, RUN_OUTCOMES, SWEEP
from .compose import CONF_DIR, is_hydra_option, override_key, validate_overrides
from .output import console, print_error_and_exit

if TYPE_CHECKING:
    from ..plan.schema import TidemarkConf


def _run_task(cfg) -> None:  # type: ignore[no-untyped-def]
    """Hydra's task: one job of a sweep (or a run given Hydra options)."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    hydra_conf = HydraConfig.get()
    _run_composed(cfg, _kept_overrides([*hydra_conf.overrides.task, *hydra_conf.overrides.hydra]),
                  hydra_conf.job.num if hydra_conf.mode == RunMode.MULTIRUN else None)


def _kept_overrides(overrides: list[str]) -> list[str]:
    """The overrides a run keeps, so --resume, gate --confirm and bisect compose its config
    again: the config's own, then a user's own config folder (hydra.searchpath, where Hydra's
    app lists it); not Hydra's options."""
    def searchpath(o: str) -> bool:
        return override_key(o) == "hydra.searchpath"
    return [*(o for o in overrides if not is_hydra_option(o) and not searchpath(o)),
            *(o for o in overrides if searchpath(o))]


def _run_composed(cfg, overrides: list[str], job_num: int | None) -> None:  # type: ignore[no-untyped-def]
    from omegaconf import OmegaConf

    from ..run.job import outcome_status, run_job
    from ..signals import signals_interrupt

    conf: TidemarkConf = OmegaConf.to_object(cfg)  # type: ignore[assignment]
    config = OmegaConf.to_container(cfg, resolve=True)
    target = _job_target(job_num)
    if target is None:
        return
    try:
        with signals_interrupt():
            run_id, invocations = run_job(conf, overrides, config, console, target)  # type: ignore[arg-type]
    except KeyboardInterrupt:  # e.g. during the build, before a run exists
        print_error_and_exit(Interrupted("interrupted by Ctrl-C before the run started; nothing was stored"))
    except UserError as exc:
        print_error_and_exit(exc)
    status = outcome_status(invocations)
    if status != "ok":  # a sweep goes on; run_command exits non-zero at its end
        RUN_OUTCOMES.append((run_id, status, sum(i.status != "ok" for i in invocations),
                             len(invocations)))


def _job_target(job_num: int | None):  # type: ignore[no-untyped-def]
    """Where this Hydra job's run goes (job.RunTarget); None when a resumed sweep's job is
    already complete."""
    from ..run.job import RunTarget

    if SWEEP.get("resume_run"):  # one run, resumed
        return RunTarget(resume=SWEEP["resume_run"])
    if not SWEEP.get("id") or job_num is None:
        return RunTarget()
    sweep = {"id": SWEEP["id"], "argv": SWEEP["argv"], "job": int(job_num)}
    run_id, status = SWEEP.get("done", {}).get(int(job_num), ("", ""))
    if status == "ok":
        console.print(f"sweep {SWEEP['id']} job {job_num}: run {run_id} is complete; skipped",
                      markup=False)
        return None
    return RunTarget(resume=run_id, sweep=sweep)


def run_command(argv: list[str]) -> None:
    import hydra
    import secrets

    argv, resume = _split_resume(argv)
    multirun = "-m" in argv or "--multirun" in argv
    launcher = next((a for a in argv if a.startswith("hydra/launcher=")), "")
    if launcher and not multirun and not resume:
        raise ConfigError(f"{launcher} launches the jobs of a sweep; add -m (e.g. tidemark run "
                          f"-m {launcher} machine=A,B ...), or drop it to run here")
    if resume:
        argv = _resume_argv(resume, argv)
    elif multirun:
        SWEEP.update(id=secrets.token_hex(4), argv=[a for a in argv if not a.startswith("-")])
    overrides = [a for a in argv if "=" in a and not a.startswith("-")]
    cfg = validate_overrides(overrides)
    if cfg is not None and overrides == argv and not multirun:
        # One run and no Hydra option: composed once, above; Hydra's app would compose it twice
        # more (to learn the mode, then to run), ~0.5 s of every run's start. Logging as Hydra's
        # app sets it for conf/tidemark.yaml (hydra/job_logging: disabled): errors only.
        logging.config.dictConfig({"version": 1, "root": {"level": "ERROR"},
                                   "disable_existing_loggers": True})
        _run_composed(cfg, _kept_overrides(overrides), None)
    else:
        sys.argv = ["tidemark run", *argv]
        hydra.main(config_path=str(CONF_DIR), config_name="tidemark", version_base=None)(_run_task)()
    if JOB_ERRORS:
        raise JOB_ERRORS[0]
    if RUN_OUTCOMES:
        text = "; ".join(f"run {r} {s}: {f} of {n} invocations failed"
                         for r, s, f, n in RUN_OUTCOMES)
        raise RunIncomplete(f"{text} (see their errors on the run pages or in the logs)",
                            all(s == "failed" for _, s, _, _ in RUN_OUTCOMES))


def _split_resume(argv: list[str]) -> tuple[list[str], str]:
    """(argv without --resume RUN, RUN or "")."""
    rest, resume, args = [], "", iter(argv)
    for arg in args:
        if arg == "--resume":
            resume = next(args, "")
            if not resume or "=" in resume:
                raise ConfigError("--resume needs a run id, e.g. tidemark run --resume "
                                  "20261124T010203-a1b2c3 (add db=PATH for another database)")
        elif arg.startswith("--resume="):
            resume = arg.split("=", 1)[1]
        else:
            rest.append(arg)
    return rest, resume


def _resume_argv(run_id: str, argv: list[str]) -> list[str]:
    """The argv that re-plans a stored run (or the whole sweep it belongs to): its own
    overrides; the user may add only where the database is."""
    from ..store import connect
    from ..store.resume_reads import stored_run, sweep_runs

    from ..where_keys import WHERE_KEYS

    extra = [a for a in argv if a.split("=", 1)[0] not in WHERE_KEYS]
    if extra:
        raise ConfigError(f"--resume re-plans the run from its own overrides; {extra[0]!r} would "
                          f"change it (only where things are may be given: "
                          f"{', '.join(sorted(WHERE_KEYS))})")
    where = dict(a.split("=", 1) for a in argv)
    db = Path(where.get("db") or f"{where.get('results_dir', 'results')}/tidemark.duckdb")
    con = connect(db, read_only=True)
    try:
        run = stored_run(con, run_id)
        done = sweep_runs(con, run.sweep["id"]) if run.sweep else {}
    finally:
        con.close()
    if not run.sweep:
        SWEEP["resume_run"] = run.run_id
        return _with_db(run.overrides, argv)
    SWEEP.update(id=run.sweep["id"], argv=run.sweep["argv"], done=done)
    return ["-m", *_with_db(run.sweep["argv"], argv)]


def _with_db(stored: list[str], given: list[str]) -> list[str]:
    """The stored overrides, with the database location the user gave replacing its own."""
    keys = {a.split("=", 1)[0] for a in given}
    return [a for a in stored if a.split("=", 1)[0] not in keys] + given
