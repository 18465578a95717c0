"""Percentiles from bucket tables (pure), table-driven."""
import pytest

from orchestrator.adapters.db_bench_histogram import bucket_percentile, percentile_label

BUCKETS = ((0.0, 1.0, 10), (1.0, 2.0, 80), (2.0, 4.0, 10))


@pytest.mark.parametrize("p, expected", [
    (5.0, 0.5),  # halfway through the first bucket
    (50.0, 1.5),  # 50 of 100: 40 into the 80-wide second bucket
    (95.0, 3.0),  # 5 of the 10 in [2, 4)
    (100.0, 4.0),
])
def test_linear_interpolation_inside_bucket(p, expected):
    assert bucket_percentile(BUCKETS, p, 0.0, 4.0) == pytest.approx(expected)


def test_clamped_to_observed_min_and_max():
    assert bucket_percentile(BUCKETS, 100.0, 0.0, 3.5) == 3.5
    assert bucket_percentile(BUCKETS, 1.0, 0.3, 4.0) == 0.3


def test_empty_histogram_is_zero():
    assert bucket_percentile((), 50.0, 0.0, 0.0) == 0.0


@pytest.mark.parametrize("p, label", [(50.0, "p50"), (99.9, "p99_9"), (99.99, "p99_99")])
def test_labels_have_no_dots(p, label):
    assert percentile_label(p) == label
