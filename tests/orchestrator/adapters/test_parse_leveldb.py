"""LevelDB db_bench output, captured from the real binary (tests/data/leveldb)."""
import pytest

from orchestrator.errors import EngineOutputError
from orchestrator.adapters.registry import parse_db_bench_step
from tests.conftest import read_data


def metric(parsed, name):
    value = parsed.metric(name)
    assert value is not None, f"missing metric {name}"
    return value


def test_single_thread_fillseq_reads_micros_and_mb():
    out = parse_db_bench_step("leveldb", read_data("leveldb/fillseq_t1.stdout"), "fillseq", 1)
    assert metric(out, "micros_per_op") == 2.850
    assert metric(out, "mb_per_sec") == 38.8
    assert metric(out, "ops_per_sec") == pytest.approx(1e6 / 2.850)
    assert metric(out, "hist_count") == 50000


def test_two_threads_aggregate_is_threads_times_per_thread():
    # LevelDB's micros/op with 2 threads is summed thread time / total ops.
    out = parse_db_bench_step("leveldb", read_data("leveldb/readrandom_t2.stdout"), "readrandom", 2)
    assert metric(out, "per_thread_ops_per_sec") == pytest.approx(1e6 / 3.224)
    assert metric(out, "ops_per_sec") == pytest.approx(2 * 1e6 / 3.224)
    assert out.notes == ("(50000 of 50000 found)",)
    assert metric(out, "found_pct") == 100.0
    assert metric(out, "hist_count") == 100000  # both threads' operations


def test_percentiles_interpolated_from_buckets_match_printed_median():
    out = parse_db_bench_step("leveldb", read_data("leveldb/readrandom_t2.stdout"), "readrandom", 2)
    assert metric(out, "p50_us") == pytest.approx(1.6433, abs=1e-3)  # "Median: 1.6433"
    p50, p95, p99, p999 = (metric(out, n) for n in ("p50_us", "p95_us", "p99_us", "p99_9_us"))
    assert p50 < p95 < p99 < p999 <= metric(out, "max_us")
    assert out.histograms[0].name == "op"
    assert sum(c for *_, c in out.histograms[0].buckets) == 100000


def test_two_benchmarks_without_histogram_pick_the_named_one():
    text = read_data("leveldb/readseq_seekrandom_nohist.stdout")
    seek = parse_db_bench_step("leveldb", text, "seekrandom", 1)
    assert metric(seek, "micros_per_op") == 4.103
    assert seek.metric("p50_us") is None
    scan = parse_db_bench_step("leveldb", text, "readseq", 1)
    assert metric(scan, "mb_per_sec") == 214.0


def test_truncated_histogram_is_a_parse_error():
    lines = read_data("leveldb/readrandom_t2.stdout").splitlines()
    truncated = "\n".join(lines[:15])  # cut in the middle of the bucket table
    with pytest.raises(EngineOutputError, match="buckets sum to .* but Count is 100000"):
        parse_db_bench_step("leveldb", truncated, "readrandom", 2)


@pytest.mark.parametrize("text", ["", "Segmentation fault\n", "readrandom : n/a micros/op\n",
                                  "Keys: 16 bytes each\n-----\n"])
def test_garbled_output_names_the_missing_line(text):
    with pytest.raises(EngineOutputError, match="no 'readrandom : ... micros/op' line"):
        parse_db_bench_step("leveldb", text, "readrandom", 1)


def test_histogram_is_the_named_benchmarks_when_a_warmup_ran_first_in_process():
    # As for cache=hot: --benchmarks=readseq,readrandom, only readrandom is measured.
    warm = read_data("leveldb/fillseq_t1.stdout").replace("fillseq      :", "readseq      :")
    text = warm + read_data("leveldb/readrandom_t2.stdout")
    out = parse_db_bench_step("leveldb", text, "readrandom", 2)
    assert out.metric("hist_count") == 100000  # readrandom's block, not the 50000 of the first
    assert out.metric("micros_per_op") == 3.224
