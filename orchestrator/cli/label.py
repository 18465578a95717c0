"""`tidemark label` and `tidemark note`: words a person adds to a stored run (thin wiring).

A label names a run for selectors (`label=baseline` is the configured baseline); a note says what
changed and why, and the site shows it beside the run's numbers.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable, TypeVar

from rich.console import Console

from ..errors import ConfigError
from ..store import Store, connect
from ..store.reads import resolve_run


def _selected_run(db: Path, selector: str) -> str:
    """The run id a RUN argument (an id or selector) names, read without holding the file."""
    con = connect(db, read_only=True)
    try:
        return resolve_run(con, selector)
    finally:
        con.close()


_RUN_HELP = "a run id or selector: latest, latest~N, engine.version=7.8.3, label=X"
Changed = TypeVar("Changed")


def _parser(prog: str, description: str, what: str, what_help: str) -> argparse.ArgumentParser:
    """RUN, then the words to add to it, then --db: the same for every command of this module."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("run", help=_RUN_HELP)
    parser.add_argument(what, help=what_help)
    parser.add_argument("--db", default="results/tidemark.duckdb", help="results database")
    return parser


def _change_run(db: Path, selector: str,
                change: Callable[[Store, str], Changed]) -> tuple[str, Changed]:
    """The run RUN names, and what `change` (through the one writer, the Store) returned."""
    run_id = _selected_run(db, selector)
    store = Store(db)
    try:
        return run_id, change(store, run_id)
    finally:
        store.close()


def label_command(argv: list[str], console: Console) -> None:
    args = _parser("tidemark label", (
        "Label an existing run, e.g. `tidemark label latest baseline` makes the newest run the "
        "configured baseline (label=baseline in conf/gate/default.yaml)."),
        "label", "the new label; '' removes it").parse_args(argv)
    run_id, previous = _change_run(Path(args.db), args.run,
                                   lambda store, run: store.set_label(run, args.label))
    console.print(f"run {run_id}: label {args.label!r} (was {previous!r})", soft_wrap=True,
                  markup=False)


def note_command(argv: list[str], console: Console) -> None:
    args = _parser("tidemark note", (
        "Add a note to a run: what changed and why, a known issue, a caveat. The site shows it "
        "on the run's page and beside its numbers (`note=TEXT` does the same at run time)."),
        "text", "the note, in plain words").parse_args(argv)
    if not args.text.strip():
        raise ConfigError("the note is empty; write it in quotes: tidemark note latest "
                          "\"why this run differs\"")
    run_id, count = _change_run(Path(args.db), args.run,
                                lambda store, run: store.add_note(run, args.text.strip()))
    console.print(f"run {run_id}: note added ({count} note{'s' if count != 1 else ''})",
                  soft_wrap=True, markup=False)
