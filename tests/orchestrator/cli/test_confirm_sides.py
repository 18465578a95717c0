"""`gate --confirm`'s paired job config (cli/confirm.py): a suite item's own repetitions give
way to the round budget, which an adaptive job needs at every point (run/ab.check_design)."""
from pathlib import Path

from orchestrator.cli.confirm import compose_sides
from orchestrator.plan.runplan import make_plan


def test_a_suite_item_with_its_own_repetitions_gets_the_round_budget(tmp_path: Path):
    """The nightly suite runs readwhilewriting 4 times; re-measured, it gets the budget."""
    run = {"run_id": "R1", "source": "run", "suite": "nightly", "overrides": [
        "engine=rocksdb", "suite=nightly", "label=nightly", "repetitions=6"]}
    rows = [type("Row", (), {"label": "readwhilewriting ×1"})()]
    side, _ = compose_sides((run, run), rows, tmp_path / "t.duckdb", 60)
    assert side is not None and side.conf.only == ["readwhilewriting"]
    measured = [s for s in make_plan(side.conf).steps if s.phase == "measured"]
    assert max(s.repetition for s in measured) == 60 and len(measured) == 60
    assert all(i["repetitions"] is None for i in side.config["suite"]["items"])
