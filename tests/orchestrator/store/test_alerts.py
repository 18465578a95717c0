"""Alerts: a confirmed change is kept once, `tidemark alert` sets its state, the site's Alerts
page shows each series' share marked false (a real DuckDB file, the real CLI)."""
import subprocess

import pytest

from orchestrator.analysis.alerts import FALSE_ALARM, NEW, alerts_of, check_state, triage
from orchestrator.analysis.confirm import CONFIRMED, NOT_CONFIRMED, Confirmation
from orchestrator.analysis.stats import Comparison
from orchestrator.store import Store, connect
from reports.data.stats_data import read_stats
from reports.pages.regression_pages import alerts_page
from orchestrator.gate import GateConf
from tests.e2e.fixtures import TIDEMARK

BETWEEN = Comparison(6, 6, 100.0, 88.0, 0.88, 0.84, 0.92, 0.002, 0.06, "slower")
PAIRED = Comparison(14, 14, 100.0, 90.0, 0.90, 0.88, 0.92, 0.001, 0.06, "slower", "sequential")


def _confirmation(series: str, verdict: str = CONFIRMED) -> Confirmation:
    return Confirmation(series, "ops_per_sec", "readrandom", BETWEEN, PAIRED, verdict, False,
                        "ab-J1")


def test_only_confirmed_changes_are_alerts_and_states_are_checked():
    made = alerts_of("R2", [_confirmation("s1"), _confirmation("s2", NOT_CONFIRMED)])
    assert [(a.series_key, a.direction) for a in made] == [("s1", "regression")]
    assert made[0].paired_change == pytest.approx(-0.10)
    with pytest.raises(ValueError, match="set one of: acknowledged, false alarm, fixed"):
        check_state(NEW)
    share = triage([{"series_key": "s", "metric": "m", "state": FALSE_ALARM},
                    {"series_key": "s", "metric": "m", "state": NEW}])
    assert share[("s", "m")].false_share == 0.5


def test_alert_lifecycle_through_the_cli(tmp_path):
    db = tmp_path / "tidemark.duckdb"
    store = Store(db)
    try:
        for _ in range(2):  # confirming the same run twice keeps one alert
            store.record_confirmations("R1", "R2", [_confirmation("s1")])
    finally:
        store.close()
    con = connect(db, read_only=True)
    ((alert, state),) = con.execute("SELECT alert_id, state FROM alerts").fetchall()
    con.close()
    assert state == NEW
    listed = subprocess.run([TIDEMARK, "alert", "--db", str(db)], capture_output=True, text=True)
    assert alert in listed.stdout and "-12.0%" in listed.stdout
    marked = subprocess.run([TIDEMARK, "alert", "false-alarm", alert, "--note", "a noisy night",
                             "--db", str(db)], capture_output=True, text=True)
    assert marked.returncode == 0 and f"{alert}: false alarm" in marked.stdout
    bad = subprocess.run([TIDEMARK, "alert", "ack", "alert-nope", "--db", str(db)],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "no alert 'alert-nope'" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    page = alerts_page(read_stats(db, GateConf()))
    (row,) = page.sections[0].tables[0].rows
    assert row[1] == "false alarm" and "a noisy night" in row[-1]
    (series,) = page.sections[1].tables[0].rows
    assert series[2:] == ["6.0%", "1", "1", "100%"]
