"""Google Benchmark JSON adapter on real captured files (libbenchmark 1.7.1, Debian bookworm)."""
from __future__ import annotations

import json

import pytest

from tests.conftest import read_data
from orchestrator.errors import EngineOutputError
from orchestrator.adapters.gbench_json import parse_gbench_json
from orchestrator.adapters.results import ROW_FAILED, ROW_OK, ROW_SKIPPED, strip_threads

DEMO = "gbench/demo_reps3_libbenchmark1.7.1.json"


def metric(row, name):
    return next(m.value for m in row.metrics if m.name == name)


@pytest.fixture(scope="module")
def demo():
    return parse_gbench_json(read_data(DEMO))


def test_iteration_rows_are_repetitions_and_aggregates_are_apart(demo):
    # 4 StringCopy instances + Fails + 3 Sort sizes + Weird + Millis + Secs = 11, × 3 repetitions.
    assert len(demo.rows) == 33
    assert {r.repetition for r in demo.rows} == {1, 2, 3}
    names = {a.aggregate for a in demo.aggregates}
    assert {"mean", "median", "stddev", "cv", "max", "BigO", "RMS"} <= names
    assert not any(r.name.endswith(("_mean", "_median", "_cv")) for r in demo.rows)


def test_threads_from_the_field_and_the_name_segment_removed(demo):
    two = [r for r in demo.rows if r.name == "BM_StringCopy/1024" and r.threads == 2]
    assert len(two) == 3
    assert "rates are per CPU-second summed over threads (CPU-time benchmark)" in two[0].notes
    assert strip_threads("BM_Get/64/threads:4/real_time") == ("BM_Get/64/real_time", 4)


@pytest.mark.parametrize("name, unit_factor", [("BM_Weird", 1e3), ("BM_Millis/iterations:1000", 1e6),
                                               ("BM_Secs/iterations:1000", 1e9)])
def test_time_units_normalized_to_ns(demo, name, unit_factor):
    raw = json.loads(read_data(DEMO).replace("-Infinity", "0").replace("Infinity", "0")
                     .replace("NaN", "0"))
    first = next(b for b in raw["benchmarks"] if b["name"] == name)
    row = next(r for r in demo.rows if r.name == name and r.repetition == 1)
    assert metric(row, "real_time_ns") == pytest.approx(first["real_time"] * unit_factor)


def test_counters_become_metrics_with_report_aliases(demo):
    row = next(r for r in demo.rows if r.name == "BM_StringCopy/1024" and r.threads == 1)
    assert metric(row, "ops_per_sec") == metric(row, "items_per_second") > 0
    assert metric(row, "mb_per_sec") == pytest.approx(metric(row, "bytes_per_second") / 1048576)
    assert metric(row, "docs") > 0  # a user counter


def test_error_rows_are_failed_with_the_message(demo):
    failed = [r for r in demo.rows if r.status == ROW_FAILED]
    assert [r.name for r in failed] == ["BM_Fails"] * 3
    assert failed[0].error == "db open failed: IO error: lock held"
    assert failed[0].metrics == ()


def test_nan_and_infinity_are_left_out_and_named(demo):
    row = next(r for r in demo.rows if r.name == "BM_Weird")
    assert {m.name for m in row.metrics} == {"real_time_ns", "cpu_time_ns", "iterations"}
    assert any("nan_counter is nan" in n for n in row.notes)
    assert any("neg_inf is -inf" in n for n in row.notes)
    assert "label: weird values" in row.notes


def test_big_o_and_rms_rows(demo):
    big_o = next(a for a in demo.aggregates if a.aggregate == "BigO")
    assert big_o.name == "BM_Sort" and "big_o: NlgN" in big_o.notes
    assert {m.name for m in big_o.metrics} == {"cpu_coefficient_ns", "real_coefficient_ns"}
    rms = next(a for a in demo.aggregates if a.aggregate == "RMS")
    assert rms.metrics[0].name == "rms" and rms.metrics[0].unit == "ratio"


def test_cv_is_a_ratio_and_aggregate_iterations_count_repetitions(demo):
    cv = next(a for a in demo.aggregates if a.aggregate == "cv")
    assert {m.unit for m in cv.metrics if m.name != "repetitions"} == {"ratio"}
    mean = next(a for a in demo.aggregates if a.aggregate == "mean")
    assert next(m.value for m in mean.metrics if m.name == "repetitions") == 3


def test_context_kept_with_the_debug_library_build_type(demo):
    assert demo.context["library_build_type"] == "debug"
    assert demo.context["num_cpus"] >= 1 and demo.context["caches"]


def test_skipped_row_of_google_benchmark_1_8():
    # Debian's 1.7.1 cannot skip with a message; 1.8+ writes `skipped`/`skip_message` instead of
    # `error_occurred` (src/json_reporter.cc). The real capture's error row, rewritten that way:
    doc = json.loads(read_data(DEMO).replace("-Infinity", "0").replace("Infinity", "0")
                     .replace("NaN", "0"))
    entry = next(b for b in doc["benchmarks"] if b.get("error_occurred"))
    del entry["error_occurred"], entry["error_message"]
    entry.update(skipped=True, skip_message="needs 4 CPUs")
    report = parse_gbench_json(json.dumps(doc))
    skipped = [r for r in report.rows if r.status == ROW_SKIPPED]
    assert len(skipped) == 1 and skipped[0].error == "needs 4 CPUs"


def test_truncated_file_names_the_line():
    text = read_data(DEMO)
    with pytest.raises(EngineOutputError, match=r"line \d+ column \d+.*truncated"):
        parse_gbench_json(text[: len(text) // 2], "run.json")


@pytest.mark.parametrize("mutate, message", [
    (lambda b: b.pop("real_time"), r"benchmarks\[0\] \(BM_StringCopy/1024/threads:1\): field 'real_time' is missing"),
    (lambda b: b.update(time_unit="fortnight"), r"field 'time_unit' is 'fortnight'"),
    (lambda b: b.update(threads=0), r"field 'threads' is 0"),
    (lambda b: b.update(cpu_time="fast"), r"field 'cpu_time' is 'fast'"),
])
def test_malformed_rows_name_the_row_and_field(mutate, message):
    doc = json.loads(read_data(DEMO).replace("-Infinity", "0").replace("Infinity", "0")
                     .replace("NaN", "0"))
    mutate(doc["benchmarks"][0])
    with pytest.raises(EngineOutputError, match=message):
        parse_gbench_json(json.dumps(doc))


def test_not_gbench_json():
    with pytest.raises(EngineOutputError, match="no 'benchmarks' list"):
        parse_gbench_json('{"results": []}')


def test_ok_rows_have_times():
    report = parse_gbench_json(read_data(DEMO))
    assert all(metric(r, "real_time_ns") > 0 for r in report.rows if r.status == ROW_OK)
