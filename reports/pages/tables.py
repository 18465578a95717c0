"""Generic page structure for the analysis pages (pure): sections of tables and charts.

One template (`sections.md.j2`) renders every page built from these, so each page builder only
decides what goes in which cell. Cells are text or `format.Link`; the template escapes them all.
`text` fields are Markup the builders write; any database string in them goes through
`format.escape_text` first.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd
from markupsafe import Markup

from .format import Link, anchor, is_missing, nav_title, num
from .labels import describe
from .shared import run_href

__all__ = ["describe"]  # the label of a series alone, for the pages built from these tables

# Identity of a point without run-specific fields; builders drop the field they vary.
IDENTITY = ("engine", "workload", "benchmark", "threads", "cache_state", "params_json",
            "build_variant", "machine_fingerprint")


@dataclass(frozen=True)
class Table:
    columns: tuple[str, ...]
    rows: list[list[Any]]
    numeric: tuple[bool, ...] = ()  # right-aligned columns; default: all but the first

    @property
    def right_aligned(self) -> list[bool]:
        return list(self.numeric or tuple(i > 0 for i in range(len(self.columns))))

    @property
    def align(self) -> list[str]:
        """Markdown's delimiter row."""
        return ["--:" if flag else "---" for flag in self.right_aligned]


@dataclass(frozen=True)
class Section:
    title: str
    text: Markup = Markup("")
    tables: list[Table] = field(default_factory=list)
    chart: str = ""  # a plotly HTML fragment from `charts`
    warnings: list[str] = field(default_factory=list)
    anchor: str = ""
    notes: list[str] = field(default_factory=list)  # what people wrote (caveats.py)


@dataclass(frozen=True)
class Page:
    title: str
    intro: Markup
    sections: list[Section]
    empty: str = "No data for this page yet."
    search_exclude: bool = False
    # Wide tables: the page gives up the table-of-contents column so that they fit 1,400 px.
    wide: bool = False

    @property
    def nav_title(self) -> str:
        return nav_title(self.title)


def params_json(params: dict[str, Any] | None, drop: tuple[str, ...] = ()) -> str:
    """Params as canonical text, without the ones a page varies."""
    kept = {k: v for k, v in (params or {}).items() if k not in drop}
    return json.dumps(kept, sort_keys=True, default=str)


def per_params(params: pd.Series, value: Callable[[Any], Any]) -> pd.Series:
    """`params.map(value)`, with `value` called once per distinct params object (queries
    decodes each JSON text once, so 200,000 points share a few hundred dicts)."""
    objects = params.to_numpy()  # iterated as an array: a Series boxes each element again
    codes, uniques = pd.factorize(np.fromiter(map(id, objects), dtype=np.uint64,
                                              count=len(objects)))
    values = np.empty(len(uniques), dtype=object)
    for code, first in enumerate(np.unique(codes, return_index=True)[1]):
        values[code] = value(objects[first])
    typed = pd.Series(values).infer_objects().to_numpy()  # the dtype `map` would give
    return pd.Series(typed[codes], index=params.index)


def with_identity(points: pd.DataFrame, drop_params: tuple[str, ...] = ()) -> pd.DataFrame:
    """points + a params_json column (params minus `drop_params`) for grouping."""
    # A shallow copy: callers add or replace columns, never write into the points' arrays.
    out = points.copy(deep=False)
    out["params_json"] = per_params(out["params"], lambda p: params_json(p, drop_params))
    return out


def group_key(frame: pd.DataFrame, drop: tuple[str, ...]) -> list[str]:
    return [c for c in IDENTITY if c not in drop]


def point_href(point: pd.Series | dict, base: str) -> str:
    """The first measured invocation of a point on its run page."""
    return f"{run_href(point['run_id'], base)}#{anchor(point['first_seq'])}"


def linked(value: Any, point: pd.Series | dict, base: str, digits: int = 0,
           suffix: str = "") -> Link | None:
    """A number that links to the invocation that produced it; None (a dash) when missing."""
    if is_missing(value):
        return None
    return Link(num(value, digits) + suffix, point_href(point, base))


def newest_positions(points: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """Where in `points` the newest run's point of each group is (ties: the later run id),
    oldest first. Sorts only the columns it needs: a long history has 200,000 points of 45."""
    needed = points[list(dict.fromkeys([*keys, "started_at", "run_id"]))]
    ordered = needed.set_axis(np.arange(len(needed)))
    if not _in_run_order(ordered):  # points as read are: no sort of 200,000 rows then
        ordered = ordered.sort_values(["started_at", "run_id"])
    # The last row of each group (as groupby(...).tail(1) gives them, in their order).
    return ordered.index.to_numpy()[~ordered.duplicated(keys, keep="last").to_numpy()]


def _in_run_order(frame: pd.DataFrame) -> bool:
    """Whether the rows are ordered by start, then run id (what sorting them would give)."""
    # .values: datetime64, not one Timestamp object per row.
    started, run_ids = frame["started_at"].values, frame["run_id"].to_numpy()
    try:
        if not (started[1:] >= started[:-1]).all():  # a missing start (NaT) compares False
            return False
        ties = np.flatnonzero(started[1:] == started[:-1])
        return bool((run_ids[ties + 1] >= run_ids[ties]).all())
    except TypeError:  # None among the values: let the sort place it
        return False


def latest_per_group(points: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The newest run's point of each group (ties: the later run id)."""
    return points.iloc[newest_positions(points, keys)]
