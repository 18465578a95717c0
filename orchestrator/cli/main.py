"""The `tidemark` command: which subcommand runs (each lives in a module of its own here, imported
when it runs, so `tidemark site` never imports Hydra); a UserError (or a damaged results DB) a
command raises is printed here, once, as one line, by output.print_error_and_exit."""
from __future__ import annotations

import contextlib
import gc
import importlib
import os
import sys
from pathlib import Path

import duckdb

from ..errors import UserError
from ..store.connection import OPENED, damage_error, is_damage
from .output import console, print_error_and_exit


def _delegate(module: str, name: str, with_console: bool = True):  # type: ignore[no-untyped-def]
    """The command `name` of the module `module` here, imported when it runs (so Hydra is
    imported only by the commands that compose a config), given argv and the console."""
    def command(argv: list[str]) -> None:
        run = getattr(importlib.import_module(f".{module}", __package__), name)
        run(argv, *([console] if with_console else []))
    return command


COMMANDS = {"run": _delegate("run", "run_command", with_console=False),
            "site": _delegate("site", "site_command", with_console=False),
            "import": _delegate("imports", "import_command"),
            "export": _delegate("export", "export_command"),
            "label": _delegate("label", "label_command"),
            "note": _delegate("label", "note_command"),
            "db": _delegate("db", "db_command"), "ingest": _delegate("ingest", "ingest_command"),
            "machine": _delegate("machine", "machine_command"),
            "compare": _delegate("stats", "compare_command"),
            "gate": _delegate("stats", "gate_command"),
            "ab": _delegate("stats", "ab_command"),
            "bisect": _delegate("bisect", "bisect_command"),
            "alert": _delegate("alert", "alert_command"),
            "backfill": _delegate("backfill", "backfill_command", with_console=False)}


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
              f"  tidemark export RUN --format bmf|csv|parquet [--out FILE]   a run for Bencher, a table\n"
              f"  tidemark ingest BUNDLE_OR_FOLDER... [--db PATH]   merge run bundles (bundle_dir=...)\n"
              f"  tidemark db check|backup|backups|restore|remove [RUN] [--db PATH]\n"
              f"  tidemark compare BASE CAND | gate [--baseline RUN] [--confirm] | ab --a ... "
              f"--b ... -- OVERRIDES   (--help on each)\n"
              f"  tidemark bisect --good REF --bad REF -- OVERRIDES   the commit that made it slower\n"
              f"  tidemark backfill --refs A..B [--every K] -- OVERRIDES   a range of commits, each built once\n"
              f"  tidemark alert [list] | ack|false-alarm|fixed ALERT [--note T] [--by REF]",
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
        print_error_and_exit(exc)
    except duckdb.Error as exc:
        if not is_damage(exc):
            raise
        print_error_and_exit(damage_error(OPENED[-1] if OPENED else Path("(results database)"), exc))
