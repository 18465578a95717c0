"""Workload kinds (pure): which step runner runs a workload's steps, and what of a workload is
a template (plan/templates.py) for the kinds that are not db_bench."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .templates import referenced

if TYPE_CHECKING:
    from .schema import WorkloadConf

KIND_DB_BENCH = "db_bench"  # one db_bench process per repetition
KIND_GBENCH = "gbench"  # one Google Benchmark process per point runs every repetition
KIND_COMMAND = "command"  # any command line, one process per repetition, timed by Tidemark
KINDS = (KIND_DB_BENCH, KIND_GBENCH, KIND_COMMAND)


def workload_templates(wl: WorkloadConf) -> list[str]:
    """Every template of a gbench or command workload, for checks and param lookups."""
    return [*wl.args, *wl.command, *wl.env.values(), *wl.setup, *wl.data,
            *(d.bytes_of for d in wl.derived)]


def template_params(wl: WorkloadConf) -> list[str]:
    """The `{param:NAME}` names of a workload's templates."""
    return referenced(workload_templates(wl), "param", f"workload {wl.name!r}")


def workload_binaries(wl: WorkloadConf, known: list[str]) -> list[str]:
    """The recipe binaries a workload's processes run (`known`: the recipe's names, the
    harness's included): db_bench's; a gbench workload's binary (the recipe's only one when
    it names none); every {binary:NAME} of a command workload's command and setup lines."""
    if wl.kind == KIND_DB_BENCH:
        return ["db_bench"]  # the recipe binary a db_bench flavour runs
    names = referenced([*wl.command, *wl.setup, *wl.args], "binary", f"workload {wl.name!r}")
    if wl.kind == KIND_GBENCH:
        names = [wl.binary or (known[0] if len(known) == 1 else "")] + names
    return list(dict.fromkeys(n for n in names if n))


def renamed(wl: WorkloadConf, name: str) -> str:
    """A benchmark name as the workload's series call it (`rename`: the first pattern that
    matches is applied)."""
    for pattern, replacement in wl.rename.items():
        if re.search(pattern, name):
            return re.sub(pattern, replacement, name)
    return name
