"""Points numbered by series identity (pure), for the pages that group every point.

The cache-state, scaling and sweep pages each group the points by the identity columns
(tables.IDENTITY) but one: on a long history, 200,000 points hashed on eight columns, about
80 ms a grouping. `PointGroups` factorizes each column once (and the params once per distinct
params object), so that a grouping is a few integer passes. Its numbers equal
`frame.groupby(keys, sort=False, dropna=False).ngroup()` of `tables.with_identity(frame,
drop_params)`: groups as first seen, a missing value a group of its own (`in_key_order`
renumbers them as groupby(sort=True) does).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .tables import IDENTITY, params_json

_PACKED_LIMIT = 2**40  # numbers packed from several columns' codes stay far below 2**63


class PointGroups:
    """The identity columns of `points`, factorized once; rows are positions in `points`."""

    def __init__(self, points: pd.DataFrame):
        self.points = points
        self._codes = {column: pd.factorize(points[column].to_numpy(), use_na_sentinel=False)[0]
                       for column in IDENTITY if column != "params_json"}
        # queries decodes each params JSON text once: 200,000 points share a few hundred dicts.
        objects = points["params"].to_numpy()
        ids = np.fromiter(map(id, objects), dtype=np.uint64, count=len(objects))
        self._object_codes = pd.factorize(ids)[0]
        firsts = np.unique(self._object_codes, return_index=True)[1]
        self._objects = [objects[first] for first in firsts]
        self._params_codes: dict[tuple[str, ...], np.ndarray] = {}

    def _params(self, drop_params: tuple[str, ...]) -> np.ndarray:
        """Each point's params_json (params minus `drop_params`), as a code: equal texts, one code."""
        if drop_params not in self._params_codes:
            texts = [params_json(p, drop_params) for p in self._objects]
            per_object = pd.factorize(np.array(texts, dtype=object))[0]
            self._params_codes[drop_params] = per_object[self._object_codes]
        return self._params_codes[drop_params]

    def ids(self, rows: np.ndarray | None = None, drop: tuple[str, ...] = (),
            drop_params: tuple[str, ...] = ()) -> np.ndarray:
        """The group of each point of `rows` (default: all) by the identity columns but `drop`,
        params minus `drop_params`: 0, 1, ... as the groups are first seen among `rows`."""
        packed: np.ndarray | None = None
        size = 1
        for column in IDENTITY:
            if column in drop:
                continue
            codes = self._params(drop_params) if column == "params_json" else self._codes[column]
            codes = codes if rows is None else codes[rows]
            width = int(codes.max()) + 1 if len(codes) else 1
            if packed is None:
                packed, size = codes.astype(np.int64), width
                continue
            if size * width >= _PACKED_LIMIT:  # renumber densely before packing further
                packed, uniques = pd.factorize(packed)
                size = max(len(uniques), 1)
            packed, size = packed * width + codes, size * width
        if packed is None:  # no column to group by: one group
            return np.zeros(len(self.points) if rows is None else len(rows), dtype=np.int64)
        return pd.factorize(packed)[0].astype(np.int64)

    def in_key_order(self, ids: np.ndarray, rows: np.ndarray | None = None,
                     drop: tuple[str, ...] = (), drop_params: tuple[str, ...] = ()) -> np.ndarray:
        """`ids` (of `rows`, by the same columns) renumbered in the order of their groups' key
        values, column by column, a missing value last: as groupby(sort=True) numbers them."""
        firsts = np.unique(ids, return_index=True)[1]  # one row of each group, by number
        chosen = firsts if rows is None else rows[firsts]
        # A key is the same on every row of its group: its groups' values sort as its rows' do.
        sort_codes = []
        for column in IDENTITY:
            if column in drop:
                continue
            values = np.array([params_json(self._objects[code], drop_params) for code in
                               self._object_codes[chosen]], dtype=object) \
                if column == "params_json" else self.points[column].to_numpy()[chosen]
            sort_codes.append(pd.factorize(values, sort=True, use_na_sentinel=False)[0])
        order = np.lexsort(sort_codes[::-1]) if sort_codes else np.arange(len(firsts))
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        return rank[ids]
