"""A fleet job's earlier attempt, continued rather than run again (side effects: the bundle).

A Slurm job can run its script more than once: `scontrol requeue`, a preemption or a node
failure requeue it under the same job id, and `tidemark run --resume` submits a lost job of a
sweep again. Each attempt of sweep job N writes into the same folder (the launcher gives job N
its own `bundle_dir`), so an attempt that finds a bundle of the same sweep and job there is not
the first. It continues that bundle: the earlier run is resumed into it (only what has no ok
record runs, nothing finished is measured twice) and the bundle is sealed again, so the
history gets one run of the point, never two half runs. Why not start a clean bundle: what the
earlier attempt measured would be thrown away, or, kept, be a second run of the same point.

The earlier attempt has ended when this one runs (Slurm ends a job's processes before it
requeues it; a resubmitted job's earlier one was cancelled), so a run it left `running` is
marked killed, as `tidemark ingest --unfinished` does; unless its writer still runs on this host.
"""
from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import FleetError
from ..history.bundle import MANIFEST, BundleLayout, discard_bundle
from ..liveness import is_gone
from ..store import Store, connect


@dataclass(frozen=True)
class EarlierAttempt:
    """A bundle an earlier attempt of this sweep job wrote, and its run there."""

    layout: BundleLayout
    run_id: str
    status: str
    sealed: bool


def _runs(db: Path) -> list[tuple[str, str, Any, Any]]:
    con = connect(db, read_only=True)
    try:
        return con.execute("SELECT run_id, status, sweep, machine_state FROM runs").fetchall()
    finally:
        con.close()


def earlier_attempt(bundle_dir: Path, sweep: dict[str, Any]) -> EarlierAttempt | None:
    """The bundle of an earlier attempt of sweep job `sweep` in `bundle_dir`, if one started
    a run; a folder an attempt left before its run started is removed (nothing measured)."""
    if not bundle_dir.is_dir():
        return None
    for root in sorted(p for p in bundle_dir.iterdir() if p.is_dir()):
        layout = BundleLayout(root)
        if not layout.db.is_file():
            continue
        runs = _runs(layout.db)
        if not runs:
            discard_bundle(layout)
            continue
        for run_id, status, run_sweep, _ in runs:
            said = json.loads(run_sweep) if isinstance(run_sweep, str) else (run_sweep or {})
            if said.get("id") == sweep["id"] and int(said.get("job", -1)) == int(sweep["job"]):
                return EarlierAttempt(layout, run_id, status, (root / MANIFEST).is_file())
    return None


def reopen(attempt: EarlierAttempt) -> None:
    """Make the earlier attempt's bundle writable again: unsealed (the manifest is written
    anew when this attempt ends) and its run, if left `running`, marked killed."""
    if attempt.status == "running":
        state = next(s for r, _, _, s in _runs(attempt.layout.db) if r == attempt.run_id)
        process = (json.loads(state) if isinstance(state, str) else state or {}).get("process")
        if process and process.get("host") == socket.gethostname() and not is_gone(process):
            raise FleetError(f"bundle {attempt.layout.root}: run {attempt.run_id} of this sweep "
                             f"job is still being written by pid {process.get('pid')}; an "
                             f"attempt of a job runs once at a time: cancel the other one")
        store = Store(attempt.layout.db)
        try:
            store.mark_killed(attempt.run_id)
        finally:
            store.close()
    (attempt.layout.root / MANIFEST).unlink(missing_ok=True)
