"""Confirmation of between-run verdicts by paired re-measurement (analysis.confirm): pure
logic."""
import dataclasses

import pytest

from orchestrator.analysis.compare import build_report
from orchestrator.analysis.confirm import (CANNOT_CONFIRM, CONFIRMED, NOT_CONFIRMED, PROVISIONAL,
                                           FLAGGED_SCOPE, UNRESOLVED_SCOPE,
                                           confirm_thresholds, confirmed_result, judge,
                                           rows_to_confirm)
from orchestrator.analysis.decide import CANNOT_TELL, PASS, REGRESSION, GateResult, decide
from orchestrator.analysis.noise import History
from orchestrator.analysis.stats import (FASTER, NO_CHANGE, SLOWER, UNDECIDED, Comparison,
                                         Thresholds)
from tests.orchestrator.analysis.test_analysis import BASE, _samples


def _result(cand=(90.0, 91, 89, 90, 92)) -> GateResult:
    report = build_report({"run_id": "A"}, {"run_id": "B", "status": "ok"}, [_samples(BASE)],
                          [_samples(list(cand))], ("ops_per_sec",),
                          Thresholds(unmeasured_noise=0.0), History())
    return GateResult(decide(report), report)


def _paired(verdict: str, ratio: float = 1.0) -> Comparison:
    return Comparison(24, 24, 100.0, 100.0 * ratio, ratio, ratio - 0.004, ratio + 0.004, 0.5,
                      0.02, verdict, "sequential")


def flagged_rows(report):
    return rows_to_confirm(report, 0.02, FLAGGED_SCOPE)


def _widened(result: GateResult, threshold: float) -> GateResult:
    """The result as if the series' between-run threshold were `threshold` (its tail)."""
    rows = tuple(dataclasses.replace(r, comparison=dataclasses.replace(
        r.comparison, threshold=threshold)) for r in result.report.rows)
    return dataclasses.replace(result, report=dataclasses.replace(result.report, rows=rows))


def test_only_regressions_are_re_measured():
    assert [r.comparison.verdict for r in flagged_rows(_result().report)] == [SLOWER]
    assert flagged_rows(_result(BASE).report) == []


@pytest.mark.parametrize("threshold, rows", [(0.37, 1), (0.02, 0), (float("nan"), 1)])
def test_unresolved_scope_also_re_measures_a_series_the_runs_could_not_resolve(threshold, rows):
    """No change between runs at a 37 % threshold says nothing about 2 %: re-measured; at a
    2 % threshold it did resolve 2 %."""
    report = _widened(_result(BASE), threshold).report
    assert report.rows[0].comparison.verdict == NO_CHANGE
    assert len(rows_to_confirm(report, 0.02, UNRESOLVED_SCOPE)) == rows
    assert rows_to_confirm(report, 0.02, FLAGGED_SCOPE) == []
    faster = _widened(_result((110.0, 111, 109, 110, 112)), 0.05).report
    assert rows_to_confirm(faster, 0.02, UNRESOLVED_SCOPE) == []
    with pytest.raises(ValueError, match="use one of: flagged, unresolved"):
        rows_to_confirm(report, 0.02, "all")


@pytest.mark.parametrize("paired, verdict, code", [
    (_paired(SLOWER, 0.95), CONFIRMED, REGRESSION),
    (_paired(NO_CHANGE), NOT_CONFIRMED, PASS),
    (_paired(FASTER, 1.05), NOT_CONFIRMED, PASS),
    (_paired(UNDECIDED), CANNOT_CONFIRM, CANNOT_TELL),  # never a pass it could not check
])
def test_an_unresolved_series_regresses_only_when_the_pairs_say_so(paired, verdict, code):
    result = _widened(_result(BASE), 0.37)
    (row,) = rows_to_confirm(result.report, 0.02, UNRESOLVED_SCOPE)
    done = judge(row, paired, same_build=False, ab_id="ab-1")
    assert done.verdict == verdict
    confirmed = confirmed_result(result, [done])
    assert confirmed.decision.code == code
    assert done.text().startswith("readrandom ops_per_sec: between runs +0.0%, not flagged "
                                  "(threshold 37.0%); ")
    if code == REGRESSION:  # decided on what the pairs measured
        assert any("-5.0%" in r for r in confirmed.decision.reasons)


@pytest.mark.parametrize("paired, verdict, code", [
    (_paired(SLOWER, 0.9), CONFIRMED, REGRESSION),
    (_paired(NO_CHANGE), NOT_CONFIRMED, PASS),
    (_paired(FASTER, 1.05), NOT_CONFIRMED, PASS),
    (_paired(UNDECIDED), CANNOT_CONFIRM, CANNOT_TELL),
    (None, PROVISIONAL, CANNOT_TELL),  # never a pass it could not check
])
def test_the_gate_exits_on_the_confirmed_verdict(paired, verdict, code):
    result = _result()
    (row,) = flagged_rows(result.report)
    done = judge(row, paired, same_build=False, ab_id="ab-1", why="run A was imported")
    assert done.verdict == verdict
    confirmed = confirmed_result(result, [done])
    assert confirmed.decision.code == code
    assert done.text() in confirmed.decision.reasons
    # The report stays what the runs showed between them; the decision is the confirmed one.
    assert confirmed.report.rows[0].comparison.verdict == SLOWER


def test_the_text_says_what_each_side_showed_and_a_drift():
    (row,) = flagged_rows(_result().report)
    text = judge(row, _paired(NO_CHANGE), same_build=True).text()
    assert text.startswith("readrandom ops_per_sec: flagged between runs -10.0%; not confirmed")
    assert "(paired, 24 rounds, -0.4% … +0.4%)" in text and "machine drifted" in text
    assert judge(row, None, False, why="run A was imported").text().endswith(
        "provisional: run A was imported")


def test_a_flagged_improvement_is_not_re_measured_and_does_not_block_the_gate():
    result = _result((110.0, 111, 109, 110, 112))
    assert result.report.rows[0].comparison.verdict == FASTER
    assert flagged_rows(result.report) == []
    assert confirmed_result(result, []).decision.code == PASS


def test_the_paired_job_is_judged_at_min_effect_without_noise():
    """Not at the (tail-widened) threshold a flag crossed: pairing removes what widened it."""
    got = confirm_thresholds(Thresholds(min_effect=0.02, noise_k=2.0, tail_quantile=0.9))
    assert (got.min_effect, got.noise_k, got.unmeasured_noise) == (0.02, 0.0, 0.0)


@pytest.mark.parametrize("paired", [None, _paired(SLOWER, 0.9), _paired(UNDECIDED)])
def test_one_build_and_config_on_both_sides_is_drift_whatever_a_job_finds(paired):
    result = _result()
    (row,) = flagged_rows(result.report)
    done = judge(row, paired, same_build=True)
    assert done.verdict == NOT_CONFIRMED
    assert confirmed_result(result, [done]).decision.code == PASS
    if paired is None:
        assert "not confirmed: one build and one config on both sides" in done.text()
