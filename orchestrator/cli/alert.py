"""`tidemark alert`: the confirmed changes kept in the history, and the state people give them.

    tidemark alert [list] [--state S] [--db DB]
    tidemark alert ack|false-alarm|fixed ALERT [--note TEXT] [--by RUN_OR_COMMIT] [--db DB]
"""
from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ..analysis.alerts import ACKNOWLEDGED, FALSE_ALARM, FIXED, STATES
from ..errors import ConfigError
from ..store import Store, connect
from ..store.reads import has_table

_SET = {"ack": ACKNOWLEDGED, "false-alarm": FALSE_ALARM, "fixed": FIXED}


def _list(db: Path, state: str | None, console: Console) -> None:
    if not db.exists():
        raise ConfigError(f"no results DB at {db}; give --db PATH")
    con = connect(db, read_only=True)
    try:
        rows = con.execute(
            "SELECT alert_id, created_at, state, direction, label, metric, between_change, "
            "paired_change, cand_run, coalesce(note, ''), coalesce(fixed_by, '') FROM alerts "
            "WHERE ? IS NULL OR state = ? ORDER BY created_at DESC", [state, state]).fetchall() \
            if has_table(con, "alerts") else []
    finally:
        con.close()
    table = Table(title=f"alerts in {db}")
    for column in ("alert", "when (UTC)", "state", "kind", "series", "between runs", "paired",
                   "candidate run", "note"):
        table.add_column(column)
    for (alert, when, st, kind, label, metric, between, paired, cand, note, by) in rows:
        table.add_row(alert, str(when)[:16], st, kind, f"{label} {metric}", f"{between * 100:+.1f}%",
                      f"{paired * 100:+.1f}%", cand, " ".join(x for x in (note, by and f"fixed by {by}") if x))
    console.print(table if rows else "no alerts" + (f" in state {state!r}" if state else ""))


def alert_command(argv: list[str], console: Console) -> None:
    parser = argparse.ArgumentParser(prog="tidemark alert", description=(
        "Confirmed changes (tidemark gate --confirm) kept as alerts. 'list' shows them; 'ack', "
        "'false-alarm' and 'fixed' set an alert's state (the site shows each series' share of "
        "alerts marked false beside its threshold)."))
    parser.add_argument("action", nargs="?", default="list", choices=("list", *_SET))
    parser.add_argument("alert", nargs="?", help="the alert's id (tidemark alert list)")
    parser.add_argument("--note", default="", help="why, in plain words")
    parser.add_argument("--by", default="", help="fixed: the run or commit that fixed it")
    parser.add_argument("--state", choices=STATES, help="list: only alerts in this state")
    parser.add_argument("--db", default="results/tidemark.duckdb", help="results database")
    args = parser.parse_args(argv)
    db = Path(args.db)
    if args.action == "list":
        _list(db, args.state, console)
        return
    if not args.alert:
        raise ConfigError(f"tidemark alert {args.action} needs an alert id, e.g. tidemark alert "
                          f"{args.action} alert-3f2a1c9d0b; see tidemark alert list")
    if args.by and args.action != "fixed":
        raise ConfigError("--by names what fixed an alert; use it with 'fixed'")
    store = Store(db)
    try:
        store.set_alert_state(args.alert, _SET[args.action], args.note, args.by)
    finally:
        store.close()
    console.print(f"{args.alert}: {_SET[args.action]}", markup=False)
