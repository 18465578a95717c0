"""`tidemark gate --confirm` (side effects): a gate's series re-measured paired.

The CLI (cli/confirm.py) composes both runs' configs again from their stored overrides, the
engine pinned to the commit each run measured, only the re-measured series' workloads (which
series: analysis.confirm.rows_to_confirm); here both are checked to be re-measurable (a run of
this tool, on this machine, whose recipe still builds the very build it measured), then run as
one interleaved adaptive `tidemark ab` job (run/ab.py) judged at the gate's `min_effect`, and
each row gets its confirmation (analysis.confirm), stored beside the runs. A flagged regression
that cannot be re-measured stays provisional.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from rich.console import Console

from .. import verdicts
from ..analysis.compare import Row
from ..analysis.confirm import Confirmation, confirm_thresholds, judge
from ..analysis.paired import INTERLEAVED
from ..analysis.stats import SLOWER, Thresholds
from ..build.engine import plan_build
from ..errors import BuildError, UserError
from ..machine import probe as machine
from ..plan.engine_versions import resolve_engine_version
from ..store import Store
from ..store.connection import connect
from .ab import AbOptions, Side, run_ab


@dataclass(frozen=True)
class ConfirmOptions:
    max_rounds: int = 30  # the paired job's round budget (analysis.sequential)
    max_minutes: float = 0.0  # its time budget; 0 = none
    metrics: tuple[str, ...] = ("ops_per_sec",)
    thresholds: Thresholds = Thresholds()


def why_not_remeasurable(run: dict[str, Any], side: Side | None, here: str) -> str:
    """Why a stored run cannot be measured again here ('' when it can)."""
    if run.get("source") == "import":
        return f"run {run['run_id']} was imported: there is no build to measure again"
    if side is None:
        return f"run {run['run_id']} has no stored overrides to compose its config from"
    if run.get("machine_fingerprint") != here:
        return (f"run {run['run_id']} was measured on machine {run.get('machine_fingerprint')}, "
                f"this is {here}; confirm on that machine")
    engine = resolve_engine_version(side.conf.engine)
    try:
        planned = plan_build(engine, side.conf.build, Path(side.conf.cache_dir).expanduser())
    except BuildError as error:  # e.g. the commit is gone after a force-push
        return f"run {run['run_id']}'s recipe cannot be built again here: {error}"
    if planned.key != run.get("build_id"):
        return (f"run {run['run_id']}'s build {run.get('build_id')} no longer rebuilds from its "
                f"recipe (it would now build {planned.key}: the checkout, compiler or patches "
                f"changed)")
    return ""


def _paired_rows(db: Path, ab: dict[str, Any], metrics: Sequence[str],
                 thresholds: Thresholds) -> dict[tuple[str, str], Any]:
    con = connect(db, read_only=True)
    try:
        report = verdicts.compare_runs(con, ab["run_a"], ab["run_b"], metrics, thresholds,
                                       allow_different=True)
    except UserError:
        return {}  # nothing comparable measured (every round failed): cannot tell
    finally:
        con.close()
    return {(r.series_key, r.metric): r.comparison for r in report.rows}


def confirm(runs: tuple[dict[str, Any], dict[str, Any]], rows: Sequence[Row],
            sides: tuple[Side | None, Side | None], db: Path, console: Console,
            options: ConfirmOptions) -> list[Confirmation]:
    """Re-measure `rows` of the gated runs (the baseline's run first: side a, the candidate's:
    side b) and judge each; every confirmation is stored with the gated runs. `runs` are the
    runs' stored rows (run_id, source, machine_fingerprint, build_id). Runs that are not
    re-measured (one build: drift; or they cannot be) confirm only their flagged rows."""
    base, cand = runs
    here = machine.capture_facts(db.parent)["fingerprint"]
    why = why_not_remeasurable(base, sides[0], here) or why_not_remeasurable(cand, sides[1], here)
    # One build and one config on both sides (as ab_pairs.same_build): whatever moved between
    # the runs was the machine. A planted cost on one side is the same build, not a drift.
    same_build = base.get("build_id") is not None and \
        base.get("build_id") == cand.get("build_id") and None not in sides and \
        sorted(sides[0].overrides) == sorted(sides[1].overrides)  # type: ignore[union-attr]
    if why or same_build:
        done = [judge(r, None, same_build, why=why) for r in rows
                if r.comparison.verdict == SLOWER]
        if len(done) < len(rows):
            console.print(f"confirm: {len(rows) - len(done)} unflagged series not re-measured ("
                          f"{why or 'one build and one config on both sides'}); they keep "
                          f"their between-run verdicts", markup=False, soft_wrap=True)
    else:
        a, b = sides
        assert a is not None and b is not None
        thresholds = confirm_thresholds(options.thresholds)
        flagged = sum(r.comparison.verdict == SLOWER for r in rows)
        console.print(f"confirming {len(rows)} series ({flagged} flagged between the runs): "
                      f"{base['run_id']} and {cand['run_id']} re-measured paired, up to "
                      f"{options.max_rounds} rounds, judged at {thresholds.min_effect:.1%}",
                      markup=False, soft_wrap=True)
        ab = run_ab(a, b, console, AbOptions(
            design=INTERLEAVED, adaptive=True, max_rounds=options.max_rounds,
            max_minutes=options.max_minutes, metrics=options.metrics, thresholds=thresholds))
        paired = _paired_rows(db, ab, options.metrics, thresholds)
        done = []
        for row in rows:
            key = (row.series_key, row.metric)
            done.append(judge(row, paired.get(key), same_build, ab["ab_id"], "" if key in paired
                              else f"ab {ab['ab_id']} measured no comparable rounds of it"))
    store = Store(db)
    try:
        store.record_confirmations(base["run_id"], cand["run_id"], done)
    finally:
        store.close()
    return done
