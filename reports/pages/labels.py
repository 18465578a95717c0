"""Series labels (pure): the one place where a series gets the name a reader tells it apart by.

A series is engine + workload + benchmark + params + threads + cache state + build variant +
machine (orchestrator/analysis/identity.py). Alone, a series is described by `describe` (the
parts in PART order, the usual params). In a table or a legend, `Labeler` names only what
differs between its rows (three fillrandom rows that differ only in compression read
"compression=none / lz4 / zstd"), and says once what they all share.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .format import MISSING, num, slug

# The params a reader knows a data set by, in this order; others are named when they differ.
PARAM_ORDER = ("num", "value_size", "compression", "reads", "duration")
# Shown even when every row has the same value: a row without them would read as nothing.
ALWAYS = ("threads", "cache_state")
WITH_WORKLOAD = ("workload",) + ALWAYS  # for rows of several workloads without a column of them
PARTS = ("workload", "engine", "benchmark", "threads", "cache_state", "params", "build_variant",
         "machine")
IMPORT_PREFIX = "import:"  # imported runs' machine fingerprints (orchestrator/history/importer.py)


def param_text(key: str, value: Any) -> str:
    """'num=100,000', 'compression=lz4'."""
    shown = num(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
    return f"{key}={shown}"


def params_text(params: Mapping[str, Any] | None, keys: Iterable[str] = PARAM_ORDER) -> str:
    """The given params of a point that it has, e.g. 'num=100,000 value_size=100'; a dash
    when it has none of them."""
    params = params or {}
    return " ".join(param_text(k, params[k]) for k in keys if k in params) or MISSING


def machine_text(fingerprint: Any) -> str:
    """A machine as a label part: an imported run's machine by its name, a probed one by the
    start of its fingerprint (its page is machines/<those 12 characters>)."""
    text = str(fingerprint or "")
    return text[len(IMPORT_PREFIX):] if text.startswith(IMPORT_PREFIX) else text[:12]


def machine_page_name(fingerprint: str) -> str:
    """machines/<this>.md: the start of a probed fingerprint; an imported machine's name made
    safe for a file name (two imported names never share a page)."""
    return slug(fingerprint) if fingerprint.startswith(IMPORT_PREFIX) else fingerprint[:12]


def _part(point: Mapping[str, Any], part: str) -> str:
    if part == "benchmark":
        return "" if point["benchmark"] == point["workload"] else str(point["benchmark"])
    if part == "threads":
        return f"{point['threads']} thr"
    if part == "machine":
        return machine_text(point.get("machine_fingerprint"))
    if part == "build_variant" and point.get("caveat"):
        return f"{point['build_variant']} ⚠"  # the page says why (caveats.caveat_warnings)
    return str(point.get(part) or "")


CACHE_ORDER = {"cold": 0, "warm": 1, "hot": 2}


def natural_key(point: Mapping[str, Any]) -> tuple:
    """Rows in the order a reader expects: by workload, engine, benchmark, threads, cache
    state (cold, warm, hot), then the usual params by value (100 before 1,000), variant."""
    params = point.get("params") or {}

    def param(key: str) -> tuple:
        value = params.get(key)
        return (0, value, "") if isinstance(value, (int, float)) else (1, 0, str(value))

    return (str(point.get("workload")), str(point.get("engine")), str(point.get("benchmark")),
            int(point.get("threads") or 0), CACHE_ORDER.get(point.get("cache_state"), 9),
            *(param(k) for k in PARAM_ORDER), str(point.get("build_variant")))


def describe(point: Mapping[str, Any], drop: tuple[str, ...] = ()) -> str:
    """A series on its own: engine, benchmark (when not the workload's name), threads, cache
    state, the usual params and build variant, e.g. 'leveldb · 2 thr · warm · num=5,000 · release'."""
    parts = [_part(point, p) for p in ("engine", "benchmark", "threads", "cache_state")
             if p not in drop]
    parts.append(params_text(point.get("params"), [k for k in PARAM_ORDER if k not in drop]))
    if "build_variant" not in drop:
        parts.append(_part(point, "build_variant"))
    return " · ".join(p for p in parts if p)


def _param_keys(rows: list[Mapping[str, Any]]) -> list[str]:
    keys = {k for row in rows for k in (row.get("params") or {})}
    return [k for k in PARAM_ORDER if k in keys] + sorted(keys - set(PARAM_ORDER))


def _most_common(values: list[str]) -> str:
    return max(sorted(set(values)), key=values.count) if values else ""


@dataclass(frozen=True)
class Labeler:
    """Labels for the rows of one table or legend: each names the parts that differ between the
    rows (and ALWAYS), `shared` names the rest once. A param counts as differing when rows that
    have it disagree (an imported series has none of db_bench's params); a machine is named on
    the rows that are not on the machine most rows share."""

    parts: tuple[str, ...]  # label parts shown per row, in PARTS order
    params: tuple[str, ...]  # param keys shown per row
    shared: str
    machine: str = ""  # the machine most rows share (not named on them)

    @classmethod
    def of(cls, points: Iterable[Mapping[str, Any]], drop: tuple[str, ...] = ("workload",),
           always: tuple[str, ...] = ALWAYS) -> "Labeler":
        """`points`: one row per series (a DataFrame's records, or dicts); `drop`: parts the
        table shows in a column of its own."""
        rows = list(points)
        parts, shared = [], []
        for part in PARTS:
            if part in ("params", "machine") or part in drop:
                continue
            values = {_part(row, part) for row in rows}
            if len(values) > 1 or part in always:
                parts.append(part)
            elif values and next(iter(values)):
                shared.append(next(iter(values)))
        params = []
        for key in _param_keys(rows):
            values = [repr(row["params"][key]) for row in rows if key in (row.get("params") or {})]
            if len(set(values)) > 1 or ("params" in always and key in PARAM_ORDER):
                params.append(key)
            elif key in PARAM_ORDER and len(values) == len(rows):
                shared.append(param_text(key, rows[0]["params"][key]))
        machine = _most_common([_part(row, "machine") for row in rows])
        # The build variant reads last, after the params (as in a row's label).
        variant = [_part(rows[0], "build_variant")] if rows and "build_variant" not in parts \
            and "build_variant" not in drop else []
        shared = [text for text in shared if text not in variant] + variant
        return cls(tuple(parts), tuple(params), " · ".join(shared), machine)

    def label(self, point: Mapping[str, Any]) -> str:
        params = point.get("params") or {}
        texts = [_part(point, p) for p in self.parts if p != "build_variant"]
        texts += [param_text(k, params[k]) for k in self.params if k in params]
        texts += [_part(point, p) for p in self.parts if p == "build_variant"]
        machine = _part(point, "machine")
        texts += [f"on {machine}"] if machine != self.machine else []
        return " · ".join(t for t in texts if t) or MISSING
