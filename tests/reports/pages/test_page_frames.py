"""The frame helpers the page builders share (pure): each gives what the plain pandas it
replaced gave, on points with shared and distinct params, ties, and missing keys."""
from __future__ import annotations

import pandas as pd

from reports.pages.tables import latest_per_group, newest_positions, per_params, with_identity

SHARED = {"num": 1000, "value_size": 100}


def _points() -> pd.DataFrame:
    """Two runs started at the same instant (a tie broken by run id), one series with a
    missing cache state, params shared by object and equal but distinct, one missing."""
    started = pd.to_datetime(["2026-01-02", "2026-01-01", "2026-01-02", "2026-01-01",
                              "2026-01-03", "2026-01-02"], utc=True)
    return pd.DataFrame({
        "run_id": ["r2", "r1", "r3", "r1", "r4", "r2"],
        "started_at": started,
        "workload": ["fill", "fill", "fill", "read", "read", "read"],
        "cache_state": ["cold", "cold", "cold", None, None, "warm"],
        "params": [SHARED, SHARED, {"num": 1000, "value_size": 100}, None,
                   {"num": 5, "compression": "lz4"}, SHARED],
        "ops_median": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    }, index=[10, 11, 12, 13, 14, 15])


def test_per_params_is_map_with_its_dtype() -> None:
    params = _points()["params"]
    for value in (lambda p: "num" in (p or {}), lambda p: float((p or {}).get("num", 0)),
                  lambda p: str(sorted((p or {}).items()))):
        assert per_params(params, value).equals(params.map(value))
    assert per_params(params.iloc[:0], str).equals(params.iloc[:0].map(str))


def test_with_identity_leaves_the_points_alone() -> None:
    points = _points()
    before = points.copy()
    frame = with_identity(points, ("value_size",))
    frame["ops_median"] = 0.0  # a builder replacing a column
    pd.testing.assert_frame_equal(points, before)
    assert frame["params_json"].tolist()[:3] == ['{"num": 1000}'] * 3


def test_newest_point_per_group_as_a_full_sort_gives_it() -> None:
    points = _points()
    for keys in (["workload"], ["workload", "cache_state"], ["cache_state"]):
        expected = points.sort_values(["started_at", "run_id"]).groupby(
            keys, sort=False, dropna=False).tail(1)
        pd.testing.assert_frame_equal(latest_per_group(points, keys), expected)
        assert list(points.index[newest_positions(points, keys)]) == list(expected.index)
