"""Bencher Metric Format (orchestrator/adapters/bmf_json.py) on the shape Bencher's reference
documents (tests/data/bmf/bencher_reference.json, written by hand from it): a summary, so
aggregates only; units and directions of known measures; an assumed direction said in a note;
a wrong shape is one line naming the benchmark, the measure and the field."""
from __future__ import annotations

import pytest

from orchestrator.adapters.bmf_json import parse_bmf_json
from orchestrator.adapters.registry import parse_result_file
from orchestrator.adapters.results import ParseRequest
from orchestrator.errors import EngineOutputError
from orchestrator.record import HIGHER, LOWER
from tests.conftest import read_data

REFERENCE = read_data("bmf/bencher_reference.json")


def _by_key(report):
    return {(a.name, a.threads, a.metrics[0].name, a.aggregate): a for a in report.aggregates}


def test_a_summary_has_aggregates_and_no_repetitions():
    report = parse_result_file("bmf_json", REFERENCE, ParseRequest(source="ref.json"))
    assert report.rows == () and report.context == {"summary_only": True}
    rows = _by_key(report)
    assert len(rows) == 10  # 2 measures × 3 values, 2 single values, 2 of BM_Get
    latency = rows[("benchmark_name", 1, "latency", "lower_value")].metrics[0]
    assert (latency.value, latency.unit, latency.better) == (87.42, "ns", LOWER)
    throughput = rows[("benchmark_name", 1, "throughput", "upper_value")].metrics[0]
    assert (throughput.value, throughput.unit, throughput.better) == (6.30, "ops/s", HIGHER)
    assert rows[("my_binary", 1, "file-size", "value")].metrics[0].unit == "B"


@pytest.mark.parametrize("measure, better, note", [
    ("cache-misses", LOWER, "read as lower is better"),
    ("requests_per_second", HIGHER, "read as higher is better"),
])
def test_an_unknown_measure_says_which_direction_was_assumed(measure, better, note):
    row = _by_key(parse_bmf_json(REFERENCE))[("BM_Get/1024", 4, measure, "value")]
    assert row.metrics[0].better == better and note in row.notes[0]


def test_known_measures_carry_no_note():
    assert all(not a.notes for a in parse_bmf_json(REFERENCE).aggregates
               if a.name == "benchmark_name")


@pytest.mark.parametrize("text, message", [
    ('{"a": {"latency": {"value": 1.0', "line 1 column"),
    ("[]", "expected an object of benchmarks"),
    ("{}", "expected an object of benchmarks"),
    ('{"a": 5}', "benchmark 'a': is 5; expected an object of measures"),
    ('{"a": {"latency": 5}}', "measure 'latency': is 5; expected an object with 'value'"),
    ('{"a": {"latency": {"lower_value": 1}}}', "field 'value' is missing"),
    ('{"a": {"latency": {"value": "fast"}}}', "field 'value' is 'fast'"),
    ('{"a": {"latency": {"value": 1, "upper_value": null}}}', "field 'upper_value' is None"),
    ('{"a": {"latency": {"value": -3}}}', "latency"),
])
def test_a_wrong_shape_is_one_line_naming_the_field(text, message):
    with pytest.raises(EngineOutputError) as err:
        parse_result_file("bmf_json", text, ParseRequest(source="bad.json"))
    assert message in str(err.value) and "\n" not in str(err.value)
    assert str(err.value).startswith("bad.json")
