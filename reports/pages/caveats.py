"""Caveats and notes that go with a run's numbers wherever they are shown (pure).

A run gets an automatic caveat when its numbers must not be read like a release run's: an
instrumented build (debug, asan: `instrumented: true` in conf/build/) measures its
instrumentation too, and an imported run was measured by another tool under conditions
Tidemark did not set or verify. Notes are what people wrote: a run's (`tidemark note`,
`note=`), a workload's (`notes` in its config) and a target's gap note (`gap_notes`).
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

import pandas as pd

from .format import date

MARK = "⚠"


def caveat_warnings(points: pd.DataFrame | Iterable[Mapping[str, Any]]) -> list[str]:
    """One warning naming every distinct caveat among the rows a page shows (their labels
    carry ⚠), or none."""
    if isinstance(points, pd.DataFrame):  # a long history's page: its column, not its rows
        texts = points["caveat"].unique() if "caveat" in points else []
    else:
        texts = [row.get("caveat") for row in points]
    seen = list(dict.fromkeys(text for text in texts if isinstance(text, str) and text))
    if not seen:
        return []
    return [f"{MARK} marks numbers that are not a release run's. " +
            " ".join(f"{text[0].upper()}{text[1:]}." for text in seen)]


def note_lines(run: Mapping[str, Any]) -> list[str]:
    """A run's notes as people wrote them, each with its date."""
    return [f"{note['text']} ({date(pd.Timestamp(note['at']))})"
            for note in run.get("user_notes") or []]
