"""Tables assembled column by column (reports/pages/row_texts.py) equal the row-by-row texts."""
from __future__ import annotations

import numpy as np
import pandas as pd

from reports.pages.row_texts import Texts, fuse, rows_by_group
from reports.pages.run_tables import number_column, text_column


def test_distinct_values_keep_their_own_texts():
    floats = np.array([0.0, -0.0, float("nan"), 1234.5, 0.0, float("nan")])
    assert Texts.of_values(floats, number_column).rows().tolist() == \
        ["0", "-0", "–", "1,234", "0", "–"]  # 0.0 and -0.0 are equal, but print apart
    words = np.array(["a<b", None, "a<b", float("nan")], dtype=object)
    assert Texts.of_values(words, text_column).rows().tolist() == ["a&lt;b", "None", "a&lt;b", "nan"]
    ints = np.array([3, 1, 3], dtype=np.int32)
    assert Texts.of_values(ints, lambda d: [f"#{v}" for v in d]).rows().tolist() == ["#3", "#1", "#3"]


def test_rows_are_the_pieces_joined_in_each_groups_order():
    seq = Texts.of_values(np.array([1, 2, 1, 3]), lambda d: [str(v) for v in d])
    unique = Texts.per_row(["w", "x", "y", "z"])
    pieces = ["<tr>", seq, "|", seq, "|", unique, "</tr>"]
    groups = pd.Series(["r2", "r1", "r2", "r1"])  # not contiguous: order within a group kept
    assert rows_by_group(groups, pieces, ("<t>", "</t>")) == {
        "r2": "<t><tr>1|1|w</tr><tr>1|1|y</tr></t>", "r1": "<t><tr>2|2|x</tr><tr>3|3|z</tr></t>"}
    fused = fuse(pieces, 64)
    assert len(fused) < len(pieces) and "".join(
        p if isinstance(p, str) else p.rows()[0] for p in fused) == "<tr>1|1|w</tr>"


def test_latency_column_formats_as_format_latency():
    from reports.pages.format import latency
    from reports.pages.run_tables import latency_column

    values = [99.994, 99.996, 100.0, -100.0, -99.5, 0.0, -0.0, -0.001, 1e20, float("inf"),
              float("-inf"), float("nan")]
    assert latency_column(values) == [latency(v) for v in values]
