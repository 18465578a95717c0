"""hyperfine --export-json adapter on real files from Debian's hyperfine 1.15."""
from __future__ import annotations

import json

import pytest

from tests.conftest import read_data
from orchestrator.errors import EngineOutputError
from orchestrator.adapters.hyperfine_json import parse_hyperfine_json
from orchestrator.adapters.results import ROW_FAILED, ROW_OK


def test_times_are_repetitions_and_statistics_are_aggregates():
    raw = json.loads(read_data("hyperfine/sleep_runs5.json"))
    report = parse_hyperfine_json(read_data("hyperfine/sleep_runs5.json"))
    first = [r for r in report.rows if r.name == "sleep 0.01"]
    assert [r.repetition for r in first] == [1, 2, 3, 4, 5]
    assert [r.metrics[0].value for r in first] == raw["results"][0]["times"]
    assert all(r.status == ROW_OK for r in report.rows)
    stats = {a.aggregate: a.metrics for a in report.aggregates if a.name == "sleep 0.01"}
    assert set(stats) == {"mean", "median", "min", "max", "stddev", "mean_cpu"}
    assert stats["median"][0].value == raw["results"][0]["median"]
    assert {m.name for m in stats["mean_cpu"]} == {"user_s", "system_s"}


def test_parameter_scan_parameters_become_params():
    report = parse_hyperfine_json(read_data("hyperfine/parameter_scan_delay.json"))
    assert sorted({r.params for r in report.rows}) == [(("delay", "0.01"),), (("delay", "0.02"),),
                                                      (("delay", "0.03"),)]


def test_non_zero_exit_codes_are_failed_rows():
    report = parse_hyperfine_json(read_data("hyperfine/exit3_ignore_failure.json"))
    assert {(r.status, r.error) for r in report.rows} == {(ROW_FAILED, "exit code 3")}


def test_memory_usage_of_newer_hyperfine():
    doc = json.loads(read_data("hyperfine/sleep_runs5.json"))
    doc["results"][0]["memory_usage_byte"] = [1048576, 2097152, 1048576, 1048576, 1048576]
    doc["results"][0]["exit_codes"][1] = None
    report = parse_hyperfine_json(json.dumps(doc))
    second = report.rows[1]
    assert ("max_rss_bytes", 2097152.0) in [(m.name, m.value) for m in second.metrics]
    assert second.status == ROW_FAILED and second.error == "killed by a signal"


def test_truncated_and_malformed():
    text = read_data("hyperfine/sleep_runs5.json")
    with pytest.raises(EngineOutputError, match=r"h.json: line \d+ column \d+"):
        parse_hyperfine_json(text[:300], "h.json")
    doc = json.loads(text)
    doc["results"][1]["times"][2] = "slow"
    with pytest.raises(EngineOutputError, match=r"results\[1\] times\[2\] is 'slow'"):
        parse_hyperfine_json(json.dumps(doc))
    doc = json.loads(text)
    doc["results"][0]["exit_codes"] = [0]
    with pytest.raises(EngineOutputError, match=r"results\[0\]: field 'exit_codes' must be a list of 5"):
        parse_hyperfine_json(json.dumps(doc))
    del doc["results"][0]["mean"]
    with pytest.raises(EngineOutputError, match=r"field 'mean' is missing"):
        parse_hyperfine_json(json.dumps({"results": [doc["results"][0] | {"exit_codes": [0] * 5}]}))
