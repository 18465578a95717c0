"""`tidemark db`: check, back up, restore the results database, or remove a run (thin wiring)."""
from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from ..errors import StoreError
from ..store import Store, connect
from ..store.connection import backup, check_database, list_backups, restore
from ..store.reads import resolve_run

DEFAULT_DB = "results/tidemark.duckdb"


def db_command(argv: list[str], console: Console) -> None:
    parser = argparse.ArgumentParser(prog="tidemark db", description=(
        "check: read every block of the DB (checksums); backup / backups / restore: copies kept "
        "beside the DB (one is made at the start of every run); remove RUN: delete a run and "
        "everything measured in it."))
    parser.add_argument("action", choices=("check", "backup", "backups", "restore", "remove"))
    parser.add_argument("run", nargs="?", help="remove: a run id or selector")
    parser.add_argument("--db", type=Path, default=Path(DEFAULT_DB))
    parser.add_argument("--from", dest="source", type=Path,
                        help="restore: this backup (default: the newest)")
    args = parser.parse_args(argv)
    say = lambda text: console.print(text, markup=False, soft_wrap=True)  # noqa: E731
    if args.action == "check":
        con = connect(args.db, read_only=True)
        try:
            tables = check_database(con, args.db)
        finally:
            con.close()
        say(f"{args.db}: ok ({tables} tables read, every block's checksum verified)")
    elif args.action == "backup":
        say(f"backup of {args.db}: {backup(args.db)}")
    elif args.action == "backups":
        for path in list_backups(args.db):
            say(str(path))
    elif args.action == "restore":
        source = args.source or next(iter(list_backups(args.db)), None)
        if source is None:
            raise StoreError(f"no backup of {args.db} (they are kept in "
                             f"{args.db.name}.backups beside it); pass --from FILE")
        restore(args.db, source)
        say(f"{args.db}: restored from {source} (the replaced file is {args.db.name}.replaced)")
    else:
        _remove(args, say)


def _remove(args: argparse.Namespace, say) -> None:  # type: ignore[no-untyped-def]
    if not args.run:
        raise StoreError("tidemark db remove needs RUN, e.g. tidemark db remove import-0123abcd")
    con = connect(args.db, read_only=True)
    try:
        run_id = resolve_run(con, args.run)
    finally:
        con.close()
    backup(args.db)
    removed = Store(args.db).remove_run(run_id)
    say(f"removed run {run_id} ({removed} invocations) from {args.db}; a backup was made first "
        f"(tidemark db backups)")
