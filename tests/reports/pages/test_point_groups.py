"""PointGroups numbers points as pandas' groupby of with_identity's columns does (pure), and a
read's equal texts share one object without changing any value (queries.share_equal_texts), and
a read's columns are laid out so that appending rows keeps one block per dtype."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reports.data import frames, queries
from reports.pages.point_groups import PointGroups
from reports.pages.tables import group_key, with_identity


def _points() -> pd.DataFrame:
    """Missing values (None and NaN are one group), two params objects with equal contents,
    params that differ only in a dropped key, and rows out of any order."""
    shared = {"num": 10, "value_size": 100}
    rows = [("leveldb", "fill", "fillrandom", 1, "cold", shared, "release", "m1"),
            ("rocksdb", "fill", "fillrandom", 2, None, {"num": 10, "value_size": 100}, "release", "m1"),
            ("leveldb", "fill", "fillrandom", 1, "hot", {"num": 20, "value_size": 100}, "asan", None),
            (None, "read", "readrandom", 4, np.nan, {"num": 10, "value_size": 200}, "release", "m2"),
            ("leveldb", "fill", "fillrandom", 1, "cold", shared, "release", "m2"),
            (np.nan, "read", "readrandom", 4, None, None, "release", "m2"),
            ("leveldb", "fill", "fillrandom", 2, "hot", {"value_size": 100, "num": 10}, "release", "m1")]
    return pd.DataFrame(rows, columns=["engine", "workload", "benchmark", "threads",
                                       "cache_state", "params", "build_variant",
                                       "machine_fingerprint"])


DROPS = [((), ()), (("cache_state",), ()), (("threads",), ()), (("machine_fingerprint",), ()),
         ((), ("num",)), (("threads",), ("value_size",))]


@pytest.mark.parametrize("drop,drop_params", DROPS)
@pytest.mark.parametrize("rows", [None, np.array([6, 3, 1, 0]), np.array([2, 4, 5])])
def test_ids_number_points_as_groupby_does(drop, drop_params, rows):
    points = _points()
    groups = PointGroups(points)
    frame = with_identity(points if rows is None else points.iloc[rows], drop_params)
    keys = group_key(frame, drop)
    first_seen = groups.ids(rows, drop, drop_params)
    assert first_seen.tolist() == frame.groupby(keys, sort=False, dropna=False).ngroup().tolist()
    in_order = groups.in_key_order(first_seen, rows, drop, drop_params)
    assert in_order.tolist() == frame.groupby(keys, sort=True, dropna=False).ngroup().tolist()


def test_share_equal_texts_keeps_every_value_and_shares_equal_texts():
    df = pd.DataFrame({"run_id": ["a", "b", "a", None, np.nan],
                       "mixed": [1, "1", 1.0, None, True],  # not only texts: left alone
                       "params": ['{"n": 1}', '{"n": 1}', None, None, None],  # JSON: decoded later
                       "threads": [1, 2, 1, 2, 1]})
    original = df.copy()
    shared = queries.share_equal_texts(df.copy())
    for column in original.columns:
        assert [repr(v) for v in shared[column]] == [repr(v) for v in original[column]]
        assert [type(v) for v in shared[column]] == [type(v) for v in original[column]]
    texts = shared["run_id"].to_numpy()
    assert texts[0] is texts[2] and texts[3] is None
    assert shared["mixed"].to_numpy()[0] is original["mixed"].to_numpy()[0]


def test_blocks_side_by_side_groups_each_dtype_and_stays_one_block_per_dtype_when_appended():
    df = pd.DataFrame({"a": [1, 2], "s": ["x", "y"], "f": [0.5, 1.5], "b": [3, 4],
                       "n": pd.array([1, None], dtype="Int64"), "t": ["u", "v"]})
    df["late"] = [2.5, 3.5]  # a column added after: a block of its own, apart from "f"
    grouped = frames.blocks_side_by_side(df)
    assert list(grouped.columns) == ["n", "f", "late", "a", "b", "s", "t"]
    pd.testing.assert_frame_equal(grouped[list(df.columns)], df)
    assert grouped._mgr.is_consolidated()
    assert pd.concat([grouped, grouped.tail(1)], ignore_index=True)._mgr.is_consolidated()
    assert list(frames.blocks_side_by_side(grouped).columns) == list(grouped.columns)
