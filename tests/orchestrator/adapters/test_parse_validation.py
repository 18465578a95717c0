"""Bad numbers in real outputs are parse errors naming the field (issue 13: every parse failure is
a record, nothing nonsensical is stored). Each case is one captured output with one value made
hostile; the cases the fuzz campaign found are marked `found by make fuzz`."""
from __future__ import annotations

import json
import re

import pytest

from tests.conftest import DATA, read_data
from tests.e2e.fixtures import query, tidemark
from orchestrator.adapters import registry
from orchestrator.adapters.json_map import parse_map_config
from orchestrator.adapters.registry import parse_output
from orchestrator.adapters.results import ParseRequest
from orchestrator.errors import ConfigError, EngineOutputError

ROCKSDB = read_data("rocksdb/readrandom_t2.stdout")
LEVELDB = read_data("leveldb/readrandom_t2.stdout")


def parse_rocksdb(text: str, csv: str = ""):
    return parse_output("db_bench_rocksdb", text,
                        ParseRequest("r.stdout", "readrandom", 2, report_csv=csv))


def parse_leveldb(text: str):
    return parse_output("db_bench_leveldb", text, ParseRequest("l.stdout", "readrandom", 2))


def one_line_error(call, *args, error=EngineOutputError) -> str:
    with pytest.raises(error) as caught:
        call(*args)
    message = str(caught.value)
    assert "\n" not in message and message.encode("utf-8")
    return message


@pytest.mark.parametrize("old, new, message", [
    ("2.538 micros/op", "1.2.3 micros/op", "micros/op is '1.2.3'"),
    ("2.538 micros/op", ". micros/op", "micros/op is '.'"),
    ("635247 ops/sec", "9" * 5000 + " ops/sec", "ops/sec is '999"),
    ("P50: 1.24", "P50: 2.00", r"p50_us is 2.0 > p75_us 1.69"),
    ("P99.99: 3581.82", "P99.99: 99999.00", r"p99_99_us is 99999.0 > max_us 8868.0"),
    ("Min: 0 ", "Min: 2 ", r"min_us is 2.0 > p50_us 1.24"),
    ("Count: 100000", "Count: " + "9" * 30, "Count is '9999"),
    ("P75: 1.69", "P75: 1.6.9", "P75 is '1.6.9'"),
    ("(50000 of 50000 found)", "(60000 of 50000 found)", "found_pct is 120.0; expected a percentage"),
])
def test_rocksdb_hostile_numbers_are_parse_errors(old, new, message):
    assert old in ROCKSDB
    assert re.search(message, one_line_error(parse_rocksdb, ROCKSDB.replace(old, new, 1)))


@pytest.mark.parametrize("old, new, message", [
    ("3.224 micros/op", "0.000 micros/op", r"micros_per_op is 0.0; expected a number > 0"),
    ("3.224 micros/op", "3..224 micros/op", "micros/op is '3..224'"),
    ("[       1,       2 )", "[       2,       1 )", r"histogram 'op' bucket 2 is \(2.0, 1.0\)"),
    ("[       0,       1 )    5212", "[       0,       1 )    " + "9" * 25, "a bucket count is"),
    ("Max: 12091.0000", "Max: 1.0000", r"avg_us is 3.2234; expected a value within min_us 0.0 "
                                       r"and max_us 1.0"),
])
def test_leveldb_hostile_numbers_are_parse_errors(old, new, message):
    assert old in LEVELDB
    assert re.search(message, one_line_error(parse_leveldb, LEVELDB.replace(old, new, 1)))


def test_leveldb_buckets_out_of_order_are_a_parse_error():
    lines = LEVELDB.splitlines()
    first = next(i for i, ln in enumerate(lines) if ln.startswith("[       1,"))
    lines[first], lines[first + 1] = lines[first + 1], lines[first]
    message = one_line_error(parse_leveldb, "\n".join(lines))
    assert "histogram 'op' bucket 3 is (1.0, 2.0)" in message and "ascending" in message


@pytest.mark.parametrize("csv, message", [
    ("secs_elapsed,interval_qps\n1,367378\n2,nan\n", r"time series 'interval_qps' point 2"),
    ("secs_elapsed,interval_qps\n2,367378\n1,361153\n", r"point 2 is \(1.0, 361153.0\)"),
    ("secs_elapsed,interval_qps\n1,-5\n", r"point 1 is \(1.0, -5.0\)"),
])
def test_rocksdb_report_csv_nonsense_is_a_parse_error(csv, message):
    assert re.search(message, one_line_error(parse_rocksdb, ROCKSDB, csv))


def test_db_bench_thread_count_outside_1_to_int32_is_a_config_error():
    for threads in (0, -1, 2**31):
        request = ParseRequest("r.stdout", "", threads)
        message = one_line_error(parse_output, "db_bench_rocksdb", ROCKSDB, request, error=ConfigError)
        assert f"threads is {threads}" in message


GBENCH = json.loads(read_data("gbench/harness_rocksdb7.8.3_t2_reps2.json"))


def gbench(mutate) -> str:
    doc = json.loads(json.dumps(GBENCH))
    mutate(doc)
    return json.dumps(doc)


def first_iteration(doc: dict) -> dict:
    return next(b for b in doc["benchmarks"] if b["run_type"] == "iteration")


@pytest.mark.parametrize("mutate, message", [
    (lambda d: first_iteration(d).update(real_time=-5), r"benchmarks\[0\].*real_time_ns is -5"),
    (lambda d: first_iteration(d).update(items_per_second=-1e9),
     r"items_per_second is -1000000000.0; expected a number > 0"),
    (lambda d: first_iteration(d).update(threads=2**31), r"field 'threads' is 2147483648"),
    (lambda d: first_iteration(d).update(repetition_index=2**40), r"repetition is 1099511627777"),
    (lambda d: first_iteration(d).update(real_time=1e308, time_unit="s"),
     r"field 'real_time' is 1e\+308; expected a finite number"),
    (lambda d: first_iteration(d).update(real_time=10**400), r"field 'real_time' is 1000"),
    (lambda d: d["context"].update(num_cpus=2**40), r"context num_cpus is 1099511627776"),
    (lambda d: first_iteration(d).update(run_name="BM/threads:" + "9" * 30),
     r"the threads: segment is '9999"),
    (lambda d: first_iteration(d).update(threads=10**400),  # found by make fuzz: OverflowError
     r"field 'threads' is 1000"),
    (lambda d: next(b for b in d["benchmarks"] if b["run_type"] == "aggregate").update(
        aggregate_name="\ud800"),  # found by make fuzz
     r"the aggregate name is '\\ud800'"),
    (lambda d: first_iteration(d).update(run_name="Get\ud800"), r"benchmark name is 'Get\\ud800'"),
])
def test_gbench_nonsense_is_a_parse_error(mutate, message):
    text = gbench(mutate)
    error = one_line_error(parse_output, "gbench_json", text, ParseRequest("h.json"))
    assert re.search(message, error), error


def test_gbench_nan_and_infinite_user_counters_stay_notes():
    report = parse_output("gbench_json", read_data("gbench/demo_reps3_libbenchmark1.7.1.json"),
                          ParseRequest("demo.json"))
    weird = next(r for r in report.rows if r.name == "BM_Weird")
    assert any("nan_counter is nan" in note for note in weird.notes)


def test_gbench_integer_of_5000_digits_names_the_problem():
    text = read_data("gbench/harness_rocksdb7.8.3_t2_reps2.json").replace(
        '"iterations": ', '"iterations": ' + "9" * 5000 + ", \"x\": ", 1)
    assert "the file is not JSON" in one_line_error(parse_output, "gbench_json", text,
                                                    ParseRequest("h.json"))


HYPERFINE = json.loads(read_data("hyperfine/sleep_runs5.json"))


@pytest.mark.parametrize("change, message", [
    ({"mean": float("inf")}, r"results\[0\]: field 'mean': wall_s is inf; expected a finite"),
    ({"stddev": -5}, r"results\[0\]: field 'stddev': wall_s is -5.0; expected a number ≥ 0"),
    ({"times": [0.01, float("nan"), 0.01, 0.01, 0.01]}, r"results\[0\] times\[1\]: wall_s is nan"),
    ({"times": [0.01, -0.01, 0.01, 0.01, 0.01]}, r"times\[1\]: wall_s is -0.01"),
    ({"memory_usage_byte": [1, 1, -1, 1, 1]}, r"times\[2\]: max_rss_bytes is -1.0"),
    ({"parameters": {"delay": {"a": 1}}}, r"parameter 'delay' is \{'a': 1\}"),
    ({"user": 10**400}, r"field 'user': user_s is inf"),
])
def test_hyperfine_nonsense_is_a_parse_error(change, message):
    doc = json.loads(json.dumps(HYPERFINE))
    doc["results"][0].update(change)
    error = one_line_error(parse_output, "hyperfine_json", json.dumps(doc), ParseRequest("h.json"))
    assert re.search(message, error), error


JSON_MAP = parse_map_config({"name": "name", "threads": "threads", "repetition": "rep",
                             "params": ["doc_bytes"],
                             "values": {"samples": {"metric": "duration_ms", "unit": "ms",
                                                    "better": "lower"},
                                        "ops_per_sec": {"unit": "ops/s", "better": "higher",
                                                        "aggregate": "median"}}})


@pytest.mark.parametrize("record, message", [
    ({"samples": [0.1, float("nan")]}, r"line 1: field 'samples': duration_ms is nan"),
    ({"samples": [float("inf")]}, r"line 1: field 'samples': duration_ms is inf"),
    ({"samples": [0.1, -1]}, r"line 1: field 'samples': duration_ms is -1.0; expected a number ≥ 0"),
    ({"ops_per_sec": -1}, r"line 1: field 'ops_per_sec': ops_per_sec is -1.0"),
    ({"doc_bytes": {"a": 1}}, r"line 1: field 'doc_bytes' \(a param\) is \{'a': 1\}"),
    ({"doc_bytes": [1, 2]}, r"line 1: field 'doc_bytes' \(a param\) is \[1, 2\]"),
    ({"rep": float("inf")}, r"line 1: field 'rep' is inf; expected a whole number"),
    ({"rep": 1.5}, r"line 1: field 'rep' is 1.5"),
    ({"rep": 2**40}, r"line 1: field 'rep' is 1099511627776"),
    ({"threads": 2**31}, r"threads is 2147483648; expected an integer in 1..2147483647"),
    ({"name": "Get\ud800"}, r"benchmark name is 'Get\\ud800'"),
])
def test_json_map_nonsense_is_a_parse_error(record, message):
    base = {"name": "Ingestion", "threads": 1, "doc_bytes": 1000, "samples": [0.1, 0.2],
            "ops_per_sec": 65716}
    text = json.dumps(base | record) + "\n"
    error = one_line_error(parse_output, "json_map", text, ParseRequest("m.jsonl", json_map=JSON_MAP))
    assert re.search(message, error), error


@pytest.mark.parametrize("value, message", [
    ("nan", "perf_page_faults is nan"), ("1e999", "perf_page_faults is inf"),
    ("-1", "perf_page_faults is -1.0; expected a number ≥ 0"),
])
def test_perf_csv_nonsense_is_a_parse_error(value, message):
    text = read_data("perf/kvm_software_only.csv").replace("103,,page-faults", f"{value},,page-faults")
    assert value + ",,page-faults" in text
    assert message in one_line_error(parse_output, "perf_csv", text, ParseRequest("p.csv"))


def test_callgrind_total_too_large_for_a_float_is_a_parse_error():
    text = read_data("callgrind/leveldb_fillseq_2000.stderr").replace("31238873", "9" * 400)
    assert "instructions is inf" in one_line_error(parse_output, "callgrind", text,
                                                   ParseRequest("c.stderr", operations=2000.0))


def test_a_parser_bug_is_a_parse_error_not_a_crash(monkeypatch):
    """The registry's safety net: an adapter raising anything else costs one record."""
    class Broken:
        fmt, importable = "broken", False

        def parse(self, text, request):
            return {}["missing"]

    monkeypatch.setitem(registry.ADAPTERS, "broken", Broken())
    message = one_line_error(parse_output, "broken", "", ParseRequest("x.out"))
    assert "x.out: the broken parser failed on this input (KeyError" in message


def test_a_db_bench_step_with_a_malformed_number_is_a_parse_error_record(tmp_path):
    """The step's record says why; no exception reaches the run loop (issue 13: `1.2.3`)."""
    from orchestrator.plan.runplan import PHASE_MEASURED, RunPlan, Step
    from orchestrator.record import STATUS_PARSE_ERROR, ProcessResult
    from orchestrator.runners.context import RunContext
    from orchestrator.runners.db_bench import db_bench_outcome
    from tests.orchestrator.runners.test_run_loop import BUILD

    step = Step(2, 1, "readrandom", "readrandom", PHASE_MEASURED, 1, 2, (("num", 10),), "db", False)
    ctx = RunContext("r1", RunPlan("rocksdb", "7.8.3", "release", "warm", "", 60.0, (step,), db_bench="rocksdb"),
                     BUILD, "fp", (), {}, False, tmp_path / "logs", tmp_path / "data")
    result = ProcessResult(("db_bench",), 0, False, 0.2, 0.1, 0.0, 1000,
                           ROCKSDB.replace("2.538 micros/op", "1.2.3 micros/op"), "", "t0", "t1")
    outcome = db_bench_outcome(ctx, step, result, tmp_path / "logs" / "0002-measured", {})
    inv = outcome.records[0][0]
    assert inv.status == STATUS_PARSE_ERROR and "micros/op is '1.2.3'" in inv.error
    assert inv.metrics == ()


@pytest.mark.parametrize("name, fmt, text, extra, field", [
    ("inf_mean.json", "hyperfine_json",
     json.dumps({"results": [HYPERFINE["results"][0] | {"mean": float("inf")}]}), (),
     "results[0]: field 'mean': wall_s is inf"),
    ("nan_sample.jsonl", "json_map",
     read_data("jsonmap/ingestion.jsonl").replace("0.0126", "NaN"),
     ("--map", str(DATA / "jsonmap" / "ingestion_map.yaml")),
     "line 1: field 'duration_ms_samples': duration_ms is nan"),
    ("threads.json", "gbench_json", gbench(lambda d: first_iteration(d).update(threads=2**31)), (),
     "field 'threads' is 2147483648"),
])
def test_import_of_a_nonsense_file_writes_nothing_and_names_the_field(tmp_path, name, fmt, text,
                                                                       extra, field):
    tidemark(tmp_path, "import", str(DATA / "hyperfine" / "sleep_runs5.json"), "--format",
             "hyperfine_json", "--db", str(tmp_path / "tidemark.duckdb"))
    before = query(tmp_path, "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM metrics)")
    bad = tmp_path / name
    bad.write_text(text)
    proc = tidemark(tmp_path, "import", str(bad), "--format", fmt, "--db",
                    str(tmp_path / "tidemark.duckdb"), *extra, check=False)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and field in lines[0], proc.stderr
    assert query(tmp_path, "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM metrics)") == before
