"""`tidemark gate --confirm`: each gated run's config composed again, for run/confirm.py.

A stored run keeps the Hydra overrides it ran with. Its config for the paired job is those
overrides with the engine pinned to the commit the run measured (a branch has moved since),
only the re-measured series' workloads of a suite, the round budget as repetitions of every
point (an adaptive job stops earlier; a suite item's own repetitions, e.g. a sustained run's 4,
are replaced, since an adaptive job gives every point the same budget), and the results DB the
gate reads; where it ran and what it was called are the job's.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Sequence

import duckdb

from ..analysis.compare import Row
from ..errors import UserError
from ..run.ab import Side
from .compose import compose_conf, is_hydra_option, override_key

# Keys of a stored run's overrides the paired job sets itself (or must not inherit).
_REPLACED = ("db", "results_dir", "data_dir", "label", "note", "bundle_dir", "repetitions",
             "only", "engine.source.ref", "keep_data")


def stored_run(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, Any]:
    row = con.execute(
        """SELECT r.run_id, coalesce(r.source, 'run'), r.machine_fingerprint, r.build_id,
                  r.overrides::VARCHAR, r.suite, b.commit_sha, b.source_kind
           FROM runs r LEFT JOIN builds b USING (build_id) WHERE r.run_id = ?""",
        [run_id]).fetchone()
    keys = ("run_id", "source", "machine_fingerprint", "build_id", "overrides", "suite",
            "commit_sha", "source_kind")
    run = dict(zip(keys, row)) if row else {"run_id": run_id}
    run["overrides"] = json.loads(run["overrides"]) if run.get("overrides") else None
    return run


def side_overrides(run: dict[str, Any], workloads: Sequence[str], db: Path,
                   max_rounds: int) -> list[str]:
    """The paired job's overrides of one stored run (see the module docstring)."""
    kept = [o for o in run["overrides"] if "=" in o and override_key(o) not in _REPLACED
            and not is_hydra_option(o)]
    out = [*kept, f"db={db}", f"results_dir={db.parent}", f"repetitions={max_rounds}"]
    if run.get("source_kind") == "git" and run.get("commit_sha"):
        out.append(f"engine.source.ref={run['commit_sha']}")
    if run.get("suite"):
        out.append(f"only=[{','.join(dict.fromkeys(workloads))}]")
    return out


def _budget_for_every_point(conf: Any, config: dict) -> tuple[Any, dict]:
    """The composed config and its dict with no suite item's own repetitions."""
    if conf.suite is None or not any(i.repetitions for i in conf.suite.items):
        return conf, config
    items = [dataclasses.replace(i, repetitions=None) for i in conf.suite.items]
    suite = {**config["suite"], "items": [{**i, "repetitions": None}
                                           for i in config["suite"]["items"]]}
    return dataclasses.replace(conf, suite=dataclasses.replace(conf.suite, items=items)), \
        {**config, "suite": suite}


def compose_sides(runs: tuple[dict[str, Any], dict[str, Any]], rows: Sequence[Row], db: Path,
                  max_rounds: int) -> tuple[Side | None, Side | None]:
    """Side a (the baseline) and b (the candidate); None for a run without overrides (an
    import): run/confirm.py names why it stays provisional."""
    workloads = [r.label.split(" ")[0] for r in rows]
    sides: list[Side | None] = []
    for name, run in zip("ab", runs):
        if run.get("overrides") is None or run.get("source") == "import":
            sides.append(None)
            continue
        overrides = side_overrides(run, workloads, db, max_rounds)
        try:
            conf, config = compose_conf(overrides)
        except UserError as error:
            raise UserError(f"run {run['run_id']}'s stored overrides no longer compose "
                            f"({error}); gate without --confirm") from None
        conf, config = _budget_for_every_point(conf, config)
        sides.append(Side(name, conf, overrides, config))
    return sides[0], sides[1]
