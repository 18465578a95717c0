"""The `tidemark` command. The only module that touches Hydra objects; prints UserErrors once."""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
from rich.console import Console

from .errors import ConfigError, Interrupted, RunIncomplete, UserError
from .store.connection import OPENED, damage_error, is_damage
from .sweep_state import JOB_ERRORS, RUN_OUTCOMES, SWEEP

if TYPE_CHECKING:  # imported where a command composes a config: `tidemark site` never does
    from .schema import TidemarkConf

CONF_DIR = Path(__file__).resolve().parents[1] / "conf"
GROUPS = ("machine", "engine", "build", "workload", "cache", "suite", "runner")
# Logs and CI output are not terminals: give tables room instead of rich's 80-column default.
console = Console(highlight=False, width=None if sys.stdout.isatty() else 140)


def _group_options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))


def explain_hydra_error(exc: Exception) -> str:
    """Hydra's multi-line composition errors → one line naming the bad value and the fix."""
    text = str(exc)
    missing = re.search(r"Could not find '(\w+)/([^']+)'", text)
    if missing and missing.group(1) in GROUPS:
        group, option = missing.groups()
        return f"unknown {group} {option!r}; valid {group}s: {', '.join(_group_options(group))}"
    override = re.search(r"Could not override '([^']+)'", text)
    if override:
        return f"unknown config key {override.group(1)!r}; {_valid_keys_hint(override.group(1))}"
    cause = exc.__cause__ or exc.__context__
    detail = str(cause).splitlines()[0] if cause else text.splitlines()[-1]
    merging = re.search(r"Error merging override (\S+)", text)
    if merging:
        return f"bad override {merging.group(1)!r}: {detail}"
    return " ".join(line.strip() for line in text.splitlines() if line.strip())[:400]


def _valid_keys_hint(key: str) -> str:
    import dataclasses
    from . import schema
    from .schema import TidemarkConf

    node: type = TidemarkConf
    parts = key.split(".")
    for part in parts[:-1]:
        fields = {f.name: f.type for f in dataclasses.fields(node)}
        type_name = str(fields.get(part, "")).replace("Optional[", "").rstrip("]")
        node = getattr(schema, type_name, None)
        if node is None or not dataclasses.is_dataclass(node):
            return "run 'tidemark run --cfg job' to see the keys"
    where = ".".join(parts[:-1]) or "top level"
    names = ", ".join(f.name for f in dataclasses.fields(node))
    return f"valid keys at {where}: {names}"


def _first_values(overrides: list[str]) -> list[list[str]]:
    """Each sweep value checked once, the other overrides at their first value."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import OverrideParseException

    parser = OverridesParser.create()
    for override in overrides:  # one at a time, so a syntax error names its override
        try:
            parser.parse_overrides([override])
        except OverrideParseException as exc:
            key = override.split("=", 1)[0]
            raise ConfigError(f"bad override {override!r}: {str(exc).splitlines()[0]}; write "
                              f"KEY=VALUE, a list as {key}=[1,2] (quoted in the shell), a sweep "
                              f"as -m {key}=1,2") from None
    parsed = parser.parse_overrides(overrides)
    firsts = [f"{o.get_key_element()}={next(o.sweep_string_iterator())}" if o.is_sweep_override()
              else o.input_line for o in parsed]
    variants = [firsts]
    for index, o in enumerate(parsed):
        if o.is_sweep_override():
            for value in list(o.sweep_string_iterator())[1:]:
                variant = list(firsts)
                variant[index] = f"{o.get_key_element()}={value}"
                variants.append(variant)
    return variants


def validate_overrides(overrides: list[str]) -> None:
    """Compose the config for every sweep value before Hydra runs anything."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    from .schema import register_schemas

    register_schemas()  # what the YAML files' defaults name (again: it only replaces them)
    user = [o for o in overrides if not o.startswith(("hydra.", "hydra/", "-", "--"))]
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
            for variant in _first_values(user):
                try:
                    OmegaConf.to_object(compose("tidemark", overrides=variant))
                except AssertionError:  # OmegaConf's, for a key under a value that is null
                    raise ConfigError(_key_under_nothing(variant)) from None
    except (HydraException, OmegaConfBaseException) as exc:
        raise ConfigError(explain_hydra_error(exc)) from None
    finally:
        GlobalHydra.instance().clear()


def _key_under_nothing(overrides: list[str]) -> str:
    """An override set a key inside a group no default selects (workload.params.num=5 with
    no workload=...): name it and the choice to make first."""
    keys = [o.split("=", 1)[0].lstrip("+~") for o in overrides if "=" in o]
    nested = [k for k in keys if "." in k and k.split(".", 1)[0] not in keys]
    key = nested[0] if nested else (keys[0] if keys else "?")
    group = key.split(".", 1)[0]
    choices = (f"; valid {group}s: {', '.join(_group_options(group))}" if group in GROUPS
               else "")
    return f"cannot set {key!r}: no {group} is chosen to set it in; choose one first " \
           f"({group}=NAME {key}=...){choices}"


def _run_task(cfg) -> None:  # type: ignore[no-untyped-def]
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import OmegaConf

    from .job import outcome_status, run_job
    from .signals import signals_interrupt

    hydra_conf = HydraConfig.get()
    overrides = list(hydra_conf.overrides.task)
    conf: TidemarkConf = OmegaConf.to_object(cfg)  # type: ignore[assignment]
    config = OmegaConf.to_container(cfg, resolve=True)
    from hydra.types import RunMode

    target = _job_target(hydra_conf.job.num if hydra_conf.mode == RunMode.MULTIRUN else None)
    if target is None:
        return
    try:
        with signals_interrupt():
            run_id, invocations = run_job(conf, overrides, config, console, target)  # type: ignore[arg-type]
    except KeyboardInterrupt:  # e.g. during the build, before a run exists
        _fail(Interrupted("interrupted by Ctrl-C before the run started; nothing was stored"))
    except UserError as exc:
        _fail(exc)
    status = outcome_status(invocations)
    if status != "ok":  # a sweep goes on; run_command exits non-zero at its end
        RUN_OUTCOMES.append((run_id, status, sum(i.status != "ok" for i in invocations),
                             len(invocations)))


def _job_target(job_num: int | None):  # type: ignore[no-untyped-def]
    """Where this Hydra job's run goes (job.RunTarget); None when a resumed sweep's job is
    already complete."""
    from .job import RunTarget

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


def _fail(exc: UserError) -> None:
    console.file.flush()
    print(f"tidemark: error: {exc}", file=sys.stderr)
    raise SystemExit(exc.exit_code)


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
    validate_overrides([a for a in argv if "=" in a and not a.startswith("-")])
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
    from .store import connect
    from .store.resume_reads import stored_run, sweep_runs

    from .where_keys import WHERE_KEYS

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


def site_command(argv: list[str]) -> None:
    from concurrent.futures import ThreadPoolExecutor

    # Before numpy loads OpenBLAS (.gate imports it): its matrices here are tiny, and after
    # each call its second thread spun, waiting for more, on the core the build's other
    # processes need (0.1 CPU-s of a build).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from .gate import DEFAULT_GATE, load_gate_conf

    parser = argparse.ArgumentParser(prog="tidemark site",
                                     description="Render the report site from the results DB.")
    parser.add_argument("--db", default="results/tidemark.duckdb", help="results database")
    parser.add_argument("--out", default="build", help="folder for docs/ and site/")
    parser.add_argument("--baseline", help="run selector the summary and Gate page compare with "
                        "(default: `baseline` in conf/gate/default.yaml)")
    args = parser.parse_args(argv)
    gate = load_gate_conf(DEFAULT_GATE)
    if args.baseline is not None:
        gate = dataclasses.replace(gate, baseline=args.baseline)
    # The DB's copy is a kernel copy (no GIL): taken in a thread while the site's modules
    # import (0.7 s). The thread has ended before the build forks its processes. MkDocs' child
    # imports meanwhile too (0.5 CPU-s), on the core the copy leaves idle, not later beside
    # the build's first reads.
    from reports import mkdocs_child, site_snapshot
    db, out = Path(args.db), Path(args.out)
    pool, mkdocs = ThreadPoolExecutor(1), None
    try:
        try:
            copy = pool.submit(site_snapshot.take_snapshot, db, out)
            if db.exists():  # else the build says so, leaving no folder behind
                with contextlib.suppress(OSError):  # --out not a folder: the build says so
                    mkdocs = mkdocs_child.start_mkdocs(out / "mkdocs.log")
            from reports.site import BuildTimes, build_site
        finally:
            pool.shutdown()  # waits for the copy
        times = BuildTimes()
        index = build_site(db, out, gate, times, copy.result, mkdocs)  # it ends the child
    except BaseException:
        if mkdocs is not None:  # stopped before the build took it
            mkdocs_child.stop_mkdocs(mkdocs)
        raise
    console.print(f"site: {index} ({times.summary()})", soft_wrap=True, markup=False)


def compose_conf(overrides: list[str]) -> tuple[TidemarkConf, dict]:
    """One side of `tidemark ab`: the composed config as a dataclass and as a resolved dict."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    validate_overrides(overrides)
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
            cfg = compose("tidemark", overrides=overrides)
            return OmegaConf.to_object(cfg), OmegaConf.to_container(cfg, resolve=True)  # type: ignore[return-value]
    except (HydraException, OmegaConfBaseException) as exc:
        raise ConfigError(explain_hydra_error(exc)) from None
    finally:
        GlobalHydra.instance().clear()


def _delegate(module: str, name: str):  # type: ignore[no-untyped-def]
    """A command whose body lives in a module of its own (imported when it runs)."""
    def command(argv: list[str]) -> None:
        import importlib

        getattr(importlib.import_module(f".{module}", __package__), name)(argv, console)
    return command


def _machine_command(argv: list[str]) -> None:
    from .machine_cli import machine_command

    machine_command(argv, compose_conf, console)


def _stats_command(name: str):  # type: ignore[no-untyped-def]
    def command(argv: list[str]) -> None:
        from . import stats_cli

        if name == "ab":
            stats_cli.ab_command(argv, compose_conf, console)
        else:
            getattr(stats_cli, f"{name}_command")(argv, console)
    return command


COMMANDS = {"run": run_command, "site": site_command,
            "import": _delegate("import_cli", "import_command"),
            "label": _delegate("label_cli", "label_command"),
            "note": _delegate("label_cli", "note_command"),
            "db": _delegate("db_cli", "db_command"), "ingest": _delegate("ingest", "ingest_command"),
            "machine": _machine_command,
            "compare": _stats_command("compare"), "gate": _stats_command("gate"),
            "ab": _stats_command("ab")}


def _exit_without_teardown() -> None:
    """End a finished `tidemark site` without Python's teardown: its children have ended and its
    files are closed, and freeing what a long history's build made, object by object, took
    0.1-0.15 s on one core after the build was done (the kernel frees the memory at once)."""
    with contextlib.suppress(OSError):  # a reader gone (a closed pipe): nothing to tell it
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(0)


def main(argv: list[str] | None = None) -> None:
    as_program = argv is None  # the console script, not a caller in this process
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: tidemark {{{','.join(COMMANDS)}}} ...\n"
              f"  tidemark run [hydra overrides]   e.g. tidemark run engine=leveldb workload=readrandom\n"
              f"  tidemark run --resume RUN [db=PATH]   finish an interrupted run (or its sweep)\n"
              f"  tidemark site [--db PATH] [--out DIR] [--baseline SELECTOR]\n"
              f"  tidemark label RUN LABEL          e.g. tidemark label latest baseline\n"
              f"  tidemark note RUN TEXT            e.g. tidemark note latest \"new allocator\"\n"
              f"  tidemark machine check|tune|reset [machine=PROFILE]\n"
              f"  tidemark import FILE --format FORMAT [--machine M --engine-version V --date ISO]\n"
              f"  tidemark ingest BUNDLE_OR_FOLDER... [--db PATH]   merge run bundles (bundle_dir=...)\n"
              f"  tidemark db check|backup|backups|restore|remove [RUN] [--db PATH]",
              file=sys.stderr)
        raise SystemExit(2)
    fast_exit = as_program and argv[0] == "site"
    if fast_exit:
        # It ends in os._exit, so its cycles need never be collected: the collections during
        # its imports and the one its build's end set off took 0.1-0.15 s of every build.
        gc.disable()
    try:
        COMMANDS[argv[0]](argv[1:])
        if fast_exit:
            _exit_without_teardown()
    except UserError as exc:
        _fail(exc)
    except duckdb.Error as exc:
        if not is_damage(exc):
            raise
        _fail(damage_error(OPENED[-1] if OPENED else Path("(results database)"), exc))
