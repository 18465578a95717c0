"""Big HTML tables assembled column by column (pure): each column is the text of its distinct
values and each row's index into them, so a value is formatted and escaped once however many
rows show it, and neighbouring columns that repeat together (an invocation's seq, workload,
phase...) are joined into one text per distinct combination before the rows are. A long
history's run pages have 600,000 rows; formatting them cell by cell, row by row, was most of
the run pages' build time.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd


def _objects(texts: Sequence[str]) -> np.ndarray:
    out = np.empty(len(texts), dtype=object)  # np.array(texts) would make fixed-width strings
    out[:] = texts
    return out


@dataclass(frozen=True)
class Texts:
    """One text per row: `texts[codes[row]]`."""

    codes: np.ndarray
    texts: np.ndarray  # object array of str

    @classmethod
    def of_values(cls, values: np.ndarray, texts: Callable[[list[Any]], Sequence[str]]) -> Texts:
        """`texts` of the distinct values of a numeric or text column (`texts` gets them as
        Python objects, each once). Floats are told apart by their bits, not by ==, so 0.0
        and -0.0 keep their own texts; a text column with missing values is taken row by row
        (None and NaN are distinct values to Python, one to pandas)."""
        floats = values.dtype.kind == "f"
        codes, distinct = pd.factorize(values.view(np.int64) if floats else values)
        if (codes < 0).any():
            return cls.per_row(texts(values.tolist()))
        return cls(codes, _objects(texts((distinct.view(np.float64) if floats else distinct)
                                         .tolist())))

    @classmethod
    def per_row(cls, texts: Sequence[str]) -> Texts:
        return cls(np.arange(len(texts)), _objects(texts))

    def rows(self) -> np.ndarray:
        return self.texts[self.codes]


def _fused(first: Texts | str, second: Texts | str, limit: int) -> Texts | str | None:
    """Two neighbouring pieces of a row as one, if that leaves at most `limit` distinct texts."""
    if isinstance(first, str) and isinstance(second, str):
        return first + second
    if isinstance(first, str) or isinstance(second, str):
        column = second if isinstance(first, str) else first
        if len(column.texts) > limit:
            return None
        if isinstance(first, str):
            return Texts(column.codes, _objects([first + text for text in column.texts]))
        return Texts(column.codes, _objects([text + second for text in column.texts]))
    if len(first.texts) > limit or len(second.texts) > limit:
        return None
    pairs = first.codes.astype(np.int64) * len(second.texts) + second.codes
    codes, distinct = pd.factorize(pairs)
    if len(distinct) > limit:
        return None
    ones, twos = np.divmod(distinct, len(second.texts))
    return Texts(codes, _objects([a + b for a, b in zip(first.texts[ones].tolist(),
                                                        second.texts[twos].tolist())]))


def fuse(pieces: list[Texts | str], n_rows: int) -> list[Texts | str]:
    """`pieces` (literal text, or a column) with neighbours joined where they repeat together:
    fewer, longer items for each row's join."""
    limit = max(1, n_rows // 8)
    out: list[Texts | str] = []
    for piece in pieces:
        joined = _fused(out[-1], piece, limit) if out else None
        if joined is None:
            out.append(piece)
        else:
            out[-1] = joined
    return out


def rows_by_group(groups: pd.Series, pieces: list[Texts | str],
                  around: tuple[str, str] = ("", "")) -> dict[Any, str]:
    """group → `around`'s first text, its rows in their order (each row being `pieces`
    joined), `around`'s second text; groups in the order they first appear."""
    codes, names = pd.factorize(groups.to_numpy(dtype=object))
    order = np.argsort(codes, kind="stable")
    ends = np.cumsum(np.bincount(codes, minlength=len(names)))
    fused = fuse(pieces, len(groups))
    columns = [piece if isinstance(piece, str) else piece.rows()[order] for piece in fused]
    out = {}
    for name, start, end in zip(names, [0, *ends[:-1].tolist()], ends.tolist()):
        grid = np.empty((end - start, len(columns)), dtype=object)
        for position, column in enumerate(columns):
            grid[:, position] = column if isinstance(column, str) else column[start:end]
        out[name] = "".join([around[0], *grid.ravel().tolist(), around[1]])
    return out
