"""Engine recipes and workload kinds checked when a run is planned (pure): a recipe that builds
nothing, a workload that names a binary the recipe does not list, an unknown placeholder or a
regex without a named group fail in one line before anything is built, stored or run."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..errors import ConfigError
from .kinds import KIND_COMMAND, KIND_DB_BENCH, KIND_GBENCH, KINDS, workload_templates
from .templates import placeholders, referenced, words

if TYPE_CHECKING:
    from .schema import EngineConf, WorkloadConf

BUILD_SYSTEMS = ("cmake", "meson", "make", "commands")
SOURCE_KINDS = ("debian", "git", "local", "tarball")
OUTPUT_SOURCES = ("stdout", "out")
BETTER = ("lower", "higher")


def check_recipe(engine: EngineConf) -> None:
    """The engine recipe: a known source and build system, and the binaries it produces."""
    name = engine.name
    if engine.source.kind not in SOURCE_KINDS:
        raise ConfigError(f"engine.source.kind={engine.source.kind!r} ({name}); use one of "
                          f"{', '.join(SOURCE_KINDS)}")
    if engine.source.kind == "tarball" and not (engine.source.path and engine.source.sha256):
        raise ConfigError(f"engine {name!r}: a tarball source needs source.path (the .tar.* "
                          f"file) and source.sha256 (its digest: sha256sum FILE)")
    if engine.build_system not in BUILD_SYSTEMS:
        raise ConfigError(f"engine.build_system={engine.build_system!r} ({name}); use one of "
                          f"{', '.join(BUILD_SYSTEMS)}")
    if engine.build_system == "commands" and not engine.build_commands:
        raise ConfigError(f"engine {name!r} has build_system=commands and no build_commands; "
                          f"list the shell lines that build it")
    if not engine.binaries:
        raise ConfigError(f"engine {name!r} lists no binaries; name what its build produces, "
                          f"e.g. binaries: {{mybench: build/mybench}} (conf/engine/{name}.yaml)")


def check_workload(engine: EngineConf, wl: WorkloadConf) -> None:
    """A workload's kind against the engine recipe, and its templates."""
    where = f"workload {wl.name!r}"
    if wl.kind not in KINDS:
        raise ConfigError(f"{where}: kind={wl.kind!r}; use one of {', '.join(KINDS)}")
    if wl.kind == KIND_DB_BENCH:
        if not engine.db_bench:
            raise ConfigError(f"{where} runs db_bench, and engine {engine.name!r} has none "
                              f"(engine.db_bench is empty); pick one of its own workloads")
        if "db_bench" not in engine.binaries:
            raise ConfigError(f"{where} runs db_bench, and engine {engine.name!r} lists no "
                              f"binary named db_bench (engine.binaries)")
        if not wl.benchmark:
            raise ConfigError(f"{where}: a db_bench workload needs `benchmark` (e.g. readrandom)")
        return
    templates = workload_templates(wl)
    for template in templates:
        placeholders(template, where)
    known = [*engine.binaries, *([engine.harness] if engine.harness else [])]
    for binary in referenced(templates, "binary", where) + ([wl.binary] if wl.binary else []):
        if binary not in known:
            raise ConfigError(f"{where} names binary {binary!r}, which engine {engine.name!r} "
                              f"does not list; its binaries: {', '.join(known)}")
    _check_params_named(wl, templates, where)
    if wl.kind == KIND_GBENCH and not wl.binary and len(known) != 1:
        raise ConfigError(f"{where}: say which binary runs (binary: NAME); engine "
                          f"{engine.name!r} has {', '.join(known)}")
    if wl.kind == KIND_COMMAND:
        if not wl.command:
            raise ConfigError(f"{where}: a command workload needs `command` (its argv)")
        check_output(wl, where)
    for setup in wl.setup:
        words(setup)
    for pattern in wl.rename:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigError(f"{where}: rename pattern {pattern!r} is not a regular expression "
                              f"({exc})") from None


def _check_params_named(wl: WorkloadConf, templates: list[str], where: str) -> None:
    from .schema import WorkloadParams

    fields = set(WorkloadParams.__dataclass_fields__) - {"extra"}
    for name in referenced(templates, "param", where):
        if name not in fields and name not in wl.params.extra:
            raise ConfigError(f"{where}: {{param:{name}}} is not a param; set it under "
                              f"params.extra.{name} or use one of {', '.join(sorted(fields))}")
        if name in fields and getattr(wl.params, name) is None:
            raise ConfigError(f"{where}: {{param:{name}}} has no value; set "
                              f"params.{name}")
        if wl.series_params is not None and name in fields and name not in wl.series_params:
            # a param that changes the command must tell its series apart
            raise ConfigError(f"{where}: series_params leaves out {name}, which its command "
                              f"uses ({{param:{name}}}); add it to series_params")


def check_output(wl: WorkloadConf, where: str) -> None:
    """A command workload's output settings; the format's name is checked against the adapter
    registry by the runner (runners/command.py), which the plan does not import."""
    out = wl.output
    if out.source not in OUTPUT_SOURCES:
        raise ConfigError(f"{where}: output.source={out.source!r}; use stdout or out")
    if out.source == "out" and not any(p.name == "out" for t in wl.command
                                       for p in placeholders(t, where)):
        raise ConfigError(f"{where}: output.source=out, and the command has no {{out}} for the "
                          f"program to write its result to")
    for name, spec in out.metrics.items():
        if spec.better not in BETTER:
            raise ConfigError(f"{where}: output.metrics.{name}.better={spec.better!r}; use "
                              f"lower or higher")
    if out.format == "regex":
        groups = regex_groups(out.regex, where)
        stray = [name for name in out.metrics if name not in groups]
        if stray:  # a typo would leave its group lower-is-better without a unit, silently
            raise ConfigError(f"{where}: output.metrics.{stray[0]} names no group of "
                              f"output.regex; its groups: {', '.join(groups)}")
    for derived in wl.derived:
        if derived.better not in BETTER:
            raise ConfigError(f"{where}: derived {derived.name!r} better={derived.better!r}; "
                              f"use lower or higher")


def regex_groups(pattern: str, where: str) -> list[str]:
    """The named groups of a regex map, each a metric; ConfigError when there are none."""
    try:
        compiled = re.compile(pattern, re.MULTILINE)
    except re.error as exc:
        raise ConfigError(f"{where}: output.regex {pattern!r} is not a regular expression "
                          f"({exc})") from None
    if not compiled.groupindex:
        raise ConfigError(f"{where}: output.regex {pattern!r} has no named group; name each "
                          f"value, e.g. (?P<mb_per_s>[0-9.]+) MB/s")
    return list(compiled.groupindex)
