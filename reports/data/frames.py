"""How the site's frames are laid out and handed on (pure): rows as dicts, columns as blocks.
Every read, kept frame and page builder goes through these two."""
from __future__ import annotations

from typing import Any

import pandas as pd


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """`frame.to_dict("records")`: the same values of the same types (Python floats and ints,
    Timestamps, the same objects), 7 times faster on a few rows of the points' 43 columns: one
    object array for the frame instead of a column read and a boxed value per cell."""
    columns = list(frame.columns)
    return [dict(zip(columns, row)) for row in frame.to_numpy(dtype=object).tolist()]


def blocks_side_by_side(df: pd.DataFrame) -> pd.DataFrame:
    """`df` with one block per dtype and each dtype's columns next to each other, by dtype then
    name (an order that depends on nothing but the columns and their types, so rows read
    anew and rows kept from the last build are laid out alike): appending rows keeps it so,
    where pd.concat cuts a block wherever its columns are apart (13 blocks to merge again:
    two copies of a long history's points, 0.3 s of an incremental build, where one copy
    takes 0.09)."""
    dtypes = df.dtypes
    grouped = sorted(df.columns, key=lambda column: (str(dtypes[column]), column))
    if list(df.columns) == grouped:
        return df._consolidate()  # itself, if it is one block per dtype already
    return pd.DataFrame({column: df[column] for column in grouped})  # one copy, consolidated
