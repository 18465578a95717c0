"""json_map adapter: a config maps fields of JSON/JSONL records to results."""
from __future__ import annotations

import json

import pytest
import yaml

from tests.conftest import read_data
from orchestrator.errors import ConfigError, EngineOutputError
from orchestrator.adapters.json_map import parse_json_map, parse_map_config

ISSUE_LINE = '{"name": "Ingestion_SmallDocument", "duration_ms_median": 0.20, "ops_per_sec": 5068}'
SCALAR_MAP = {"name": "name", "values": {"duration_ms_median": {"unit": "ms", "better": "lower"},
                                         "ops_per_sec": {"unit": "ops/s", "better": "higher"}}}


def test_the_issue_line_is_one_repetition_per_record():
    text = "\n".join([ISSUE_LINE, ISSUE_LINE.replace("5068", "5100")]) + "\n"
    report = parse_json_map(text, parse_map_config(SCALAR_MAP))
    assert [r.repetition for r in report.rows] == [1, 2]
    first = {m.name: (m.value, m.unit, m.better) for m in report.rows[0].metrics}
    assert first == {"duration_ms_median": (0.20, "ms", "lower"), "ops_per_sec": (5068, "ops/s", "higher")}


def test_captured_jsonl_samples_are_repetitions_statistics_are_aggregates():
    cfg = parse_map_config(yaml.safe_load(read_data("jsonmap/ingestion_map.yaml")))
    report = parse_json_map(read_data("jsonmap/ingestion.jsonl"), cfg)
    small = [r for r in report.rows if r.name == "Ingestion_SmallDocument"]
    assert [r.repetition for r in small] == [1, 2, 3, 4, 5]
    assert small[0].params == (("doc_bytes", 1000),)
    median = next(a for a in report.aggregates if a.name == "Ingestion_SmallDocument")
    assert median.aggregate == "median"
    assert {m.name for m in median.metrics} == {"duration_ms", "ops_per_sec"}


def test_json_layout_with_a_records_path():
    doc = {"meta": {}, "out": {"cases": [json.loads(ISSUE_LINE)]}}
    cfg = parse_map_config({**SCALAR_MAP, "layout": "json", "records": "out.cases"})
    assert len(parse_json_map(json.dumps(doc), cfg).rows) == 1


@pytest.mark.parametrize("raw, message", [
    ({"values": {"x": {}}}, "needs 'name'"),
    ({"name": "name"}, "needs 'values'"),
    ({**SCALAR_MAP, "layot": "json"}, "unknown key 'layot'"),
    ({"name": "n", "values": {"x": {"better": "faster"}}}, "better is 'faster'; use higher or lower"),
    ({"name": "n", "values": {"x": {"units": "s"}}}, "values.x: unknown key 'units'"),
])
def test_bad_maps(raw, message):
    with pytest.raises(ConfigError, match=message):
        parse_map_config(raw)


@pytest.mark.parametrize("text, message", [
    (ISSUE_LINE + "\n" + ISSUE_LINE[:30] + "\n", r"f.jsonl: line 2 column \d+"),
    ('{"duration_ms_median": 1}\n', r"line 1: field 'name' \(the benchmark name\) is missing"),
    ('{"name": "a", "ops_per_sec": "many"}\n', r"line 1: field 'ops_per_sec' is 'many'"),
    ('{"name": "a", "other": 1}\n', r"line 1: none of the mapped value fields"),
    ("\n\n", "no records"),
])
def test_malformed_and_truncated_name_the_line(text, message):
    with pytest.raises(EngineOutputError, match=message):
        parse_json_map(text, parse_map_config(SCALAR_MAP), "f.jsonl")
