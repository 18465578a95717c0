"""A gate's report as JUnit XML (compare_format.junit_xml), validated against the JUnit schema
CI systems read (tests/data/junit/junit-10.xsd, vendored: its header names source and licence)."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
import xmlschema

from orchestrator.analysis.compare import build_report
from orchestrator.analysis.confirm import judge
from orchestrator.analysis.noise import History
from orchestrator.analysis.stats import NO_CHANGE, UNDECIDED, Comparison, Thresholds
from orchestrator.analysis.stats import SLOWER as STATS_SLOWER
from orchestrator.compare_format import junit_xml
from tests.conftest import DATA
from tests.orchestrator.analysis.test_analysis import BASE, _samples

SCHEMA = xmlschema.XMLSchema(str(DATA / "junit" / "junit-10.xsd"))
SLOWER = [90.0, 91, 89, 90, 92]


def _series(values, workload):
    return _samples(values, workload=workload, benchmark=workload)


def _report(cand_status: str = "ok"):
    """Four series of the baseline: one 10 % slower, one unchanged, one with two repetitions
    in the candidate (cannot tell), one missing from the candidate."""
    base = [_series(BASE, "readrandom"), _series(BASE, "fillseq"), _series(BASE, "seekrandom"),
            _series(BASE, "overwrite")]
    cand = [_series(SLOWER, "readrandom"), _series(BASE, "fillseq"),
            _series([100.0, 101], "seekrandom")]
    return build_report({"run_id": "A"}, {"run_id": "B", "status": cand_status}, base, cand,
                        ("ops_per_sec",), Thresholds(unmeasured_noise=0.0), History())


def _identities(report) -> dict:
    return {r.series_key: {"workload": r.label.split(" ")[0], "params": {"num": 1000}}
            for r in report.rows}


def _cases(text: str) -> dict[str, tuple[str, str]]:
    """name → (outcome, classname)."""
    out = {}
    for case in ET.fromstring(text).iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "skipped")]
        out[case.get("name")] = (kinds[0] if kinds else "passed", case.get("classname"))
    return out


def test_each_series_is_a_test_case_a_regression_fails_and_cannot_tell_skips():
    report = _report()
    text = junit_xml(report, _identities(report), decision="regression")
    SCHEMA.validate(text)  # raises naming the element when it does not hold
    assert _cases(text) == {
        "readrandom num=1000": ("failure", "readrandom"),
        "fillseq num=1000": ("passed", "fillseq"),
        "seekrandom num=1000": ("skipped", "seekrandom"),
        "overwrite [warm]": ("skipped", "tidemark.gate")}
    suite = ET.fromstring(text)
    assert {k: suite.get(k) for k in ("tests", "failures", "errors", "skipped")} == \
        {"tests": "4", "failures": "1", "errors": "0", "skipped": "2"}
    failure = suite.find("testcase/failure")
    assert failure.get("message") == "ops_per_sec -10.0% (threshold 1.0%)"
    assert "ops_per_sec: 100 → 90 (-10.0%" in failure.text
    assert "not enough repetitions (n=5/2)" in suite.find("testcase/skipped").get("message")
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props == {"baseline": "A", "candidate": "B", "decision": "regression"}


def test_a_regression_gate_confirm_could_not_re_measure_is_skipped_not_failed():
    report = _report()
    (row,) = [r for r in report.rows if r.label == "readrandom"]
    provisional = judge(row, None, False, why="run A was imported")
    text = junit_xml(report, _identities(report), [provisional], "cannot tell")
    SCHEMA.validate(text)
    outcome = _cases(text)["readrandom num=1000"][0]
    skipped = ET.fromstring(text).find("testcase/skipped")
    assert outcome == "skipped" and "provisional: run A was imported" in skipped.get("message")


def _paired(verdict: str, ratio: float) -> Comparison:
    return Comparison(30, 30, 100.0, 100.0 * ratio, ratio, ratio - 0.01, ratio + 0.01, 0.01,
                      0.02, verdict, "sequential")


@pytest.mark.parametrize("series, paired, outcome", [
    ("readrandom", _paired(NO_CHANGE, 1.0), "passed"),  # flagged, not confirmed: exit 0
    ("fillseq", _paired(STATS_SLOWER, 0.95), "failure"),  # unflagged, found by re-measuring
    ("fillseq", _paired(UNDECIDED, 0.97), "skipped"),  # re-measured, could not tell: exit 2
])
def test_each_case_is_what_the_confirmed_gate_exits_on(series, paired, outcome):
    report = _report()
    (row,) = [r for r in report.rows if r.label == series]
    done = judge(row, paired, False, ab_id="ab-1")
    text = junit_xml(report, _identities(report), [done])
    SCHEMA.validate(text)
    assert _cases(text)[f"{series} num=1000"][0] == outcome
    if outcome == "failure":  # what the pairs measured
        assert "ops_per_sec -5.0% (threshold 2.0%)" in text


def test_a_name_xml_cannot_hold_is_replaced_not_a_broken_document():
    report = _report()
    ids = {key: {"workload": "bad\x00name\x1b", "params": {}} for key in _identities(report)}
    text = junit_xml(report, ids)
    SCHEMA.validate(text)
    assert {c for _, c in _cases(text).values()} == {"bad\ufffdname\ufffd", "tidemark.gate"}


def test_the_schema_refuses_what_ci_systems_refuse():
    """The check can fail: a test case without a name is not JUnit."""
    with pytest.raises(xmlschema.XMLSchemaValidationError):
        SCHEMA.validate('<testsuite name="x" tests="1" failures="0" errors="0">'
                        '<testcase classname="c"/></testsuite>')
