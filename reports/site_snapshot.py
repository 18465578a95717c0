"""The copy of the results DB a site build reads (side effects: out/snapshot.duckdb). A module
of its own, light to import: the CLI starts the copy before it imports the site's modules."""
from __future__ import annotations

from pathlib import Path

from orchestrator.errors import UserError
from orchestrator.store.connection import check_database, connect, damage_error, snapshot


def take_snapshot(db: Path, out: Path) -> Path:
    """A consistent copy, taken under a read lock in a moment: a run may go on writing the DB
    while the site is built from it (its later reads use the copy, never the DB)."""
    if not db.exists():
        raise UserError(f"no results database at {db}; run 'tidemark run' first or pass --db")
    return snapshot(db, out / "snapshot.duckdb")


def check_snapshot(copy: Path, original: Path) -> None:
    """Every block of the copy read once (1 s for 600,000 invocations): a damaged DB stops the
    site in one line naming the original file, never a page half built from bad blocks."""
    try:
        con = connect(copy, read_only=True)
    except UserError as error:
        raise damage_error(original, error) from None
    try:
        check_database(con, original)  # its error names the user's file, not our copy of it
    finally:
        con.close()
