"""The copy of the results DB a site build reads (side effects: out/snapshot.duckdb). A module
of its own, light to import: the CLI starts the copy before it imports the site's modules."""
from __future__ import annotations

from pathlib import Path
from typing import Collection

import duckdb

from orchestrator.errors import UserError
from orchestrator.store.connection import (check_database, connect, damage_error, is_damage,
                                           snapshot)


def take_snapshot(db: Path, out: Path) -> Path:
    """A consistent copy, taken under a read lock in a moment: a run may go on writing the DB
    while the site is built from it (its later reads use the copy, never the DB)."""
    if not db.exists():
        raise UserError(f"no results database at {db}; run 'tidemark run' first or pass --db")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:  # a file on the way, no permission: the user's --out
        raise UserError(f"cannot make the site's folder {out} ({error.strerror}); pass --out "
                        f"a folder that can be written") from None
    return snapshot(db, out / "snapshot.duckdb")


def check_snapshot(copy: Path, original: Path, read_elsewhere: Collection[str] = ()) -> None:
    """Every block of the copy read once (1 s for 600,000 invocations) but those of the tables
    in `read_elsewhere`, which the build reads in full itself: a damaged DB stops the site in
    one line naming the original file (`damage_to_user`), never a page half built from bad
    blocks."""
    try:
        con = connect(copy, read_only=True)
    except UserError as error:
        raise damage_error(original, error) from None
    try:
        check_database(con, original, read_elsewhere)  # its error names the user's file
    finally:
        con.close()


def damage_to_user(error: Exception, original: Path) -> Exception:
    """A build's error as the user should read it: a damaged block of the copy, found by any
    read, names the original file and the way to restore it (as the check's error does)."""
    if isinstance(error, duckdb.Error) and is_damage(error):
        return damage_error(original, error)
    return error
