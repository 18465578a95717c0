"""RocksDB 7.8.3 db_bench output, captured from the real binary (tests/data/rocksdb)."""
import pytest

from orchestrator.errors import EngineOutputError
from orchestrator.adapters.registry import parse_db_bench_step
from orchestrator.adapters.rocksdb_db_bench import parse_report_csv
from tests.conftest import read_data


def parse(name, benchmark, threads, csv=""):
    return parse_db_bench_step("rocksdb", read_data(f"rocksdb/{name}.stdout"), benchmark, threads, csv)


def test_two_thread_readrandom_fields_and_printed_percentiles():
    out = parse("readrandom_t2", "readrandom", 2)
    assert out.metric("micros_per_op") == 2.538
    assert out.metric("ops_per_sec") == 635247  # wall based, all threads
    assert out.metric("per_thread_ops_per_sec") == pytest.approx(635247 / 2)
    assert out.metric("operations") == 100000
    assert out.metric("elapsed_s") == 0.157
    assert out.metric("mb_per_sec") == 70.3
    # Printed "Percentiles: P50: 1.24 P75: 1.69 P99: 7.80 P99.9: 33.59 P99.99: 3581.82"
    assert [out.metric(n) for n in ("p50_us", "p75_us", "p99_us", "p99_9_us", "p99_99_us")] == \
        [1.24, 1.69, 7.80, 33.59, 3581.82]
    assert 1.69 < out.metric("p95_us") < 7.80  # interpolated: not printed by RocksDB
    assert out.notes == ("(50000 of 50000 found)",)
    assert out.histograms[0].name == "read" and len(out.histograms[0].buckets) == 21


def test_report_csv_becomes_interval_series():
    csv = read_data("rocksdb/readrandom_t1_duration3.report.csv")
    out = parse("readrandom_t1_duration3", "readrandom", 1, csv)
    assert out.series[0].name == "interval_qps"
    assert out.series[0].points == ((1.0, 367378.0), (2.0, 361153.0))


def test_header_only_report_csv_is_no_series():
    assert parse_report_csv("secs_elapsed,interval_qps\n") is None
    assert parse_report_csv("") is None


def test_malformed_report_csv_names_the_line():
    with pytest.raises(EngineOutputError, match="line 3"):
        parse_report_csv("secs_elapsed,interval_qps\n1,5\nxx\n")
    with pytest.raises(EngineOutputError, match="report file header"):
        parse_report_csv("garbage\n1,5\n")


@pytest.mark.parametrize("name, benchmark, op", [
    ("seekrandom_t1", "seekrandom", "seek"), ("readseq_t1", "readseq", "read"),
    ("fillseq_t1", "fillseq", "write"), ("readwhilewriting_t2", "readwhilewriting", "read")])
def test_each_benchmark_parses_with_its_histogram(name, benchmark, op):
    out = parse(name, benchmark, 1)
    assert out.metric("ops_per_sec") > 0 and out.metric("p99_us") >= out.metric("p50_us")
    assert out.histograms[0].name == op


def test_result_line_without_ops_fields_is_a_parse_error():
    text = "readrandom   :       2.538 micros/op; (5 of 5 found)\n"
    with pytest.raises(EngineOutputError, match="lacks 'N ops/sec"):
        parse_db_bench_step("rocksdb", text, "readrandom", 1)


def test_output_cut_before_the_result_line_is_a_parse_error():
    text = read_data("rocksdb/readrandom_t2.stdout").split("readrandom   :")[0]
    with pytest.raises(EngineOutputError, match="no 'readrandom : ... micros/op' line"):
        parse_db_bench_step("rocksdb", text, "readrandom", 2)


def test_histogram_cut_after_count_line_is_a_parse_error():
    text = read_data("rocksdb/readrandom_t2.stdout")
    cut = text[: text.index("Min: 0")]
    with pytest.raises(EngineOutputError, match="lacks its Count/Min lines"):
        parse_db_bench_step("rocksdb", cut, "readrandom", 2)
