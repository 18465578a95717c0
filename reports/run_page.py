"""The page of one run (pure): config, provenance, machine, and every invocation it made."""
from __future__ import annotations

import json
import shlex
from typing import Any

import pandas as pd
from markupsafe import Markup, escape

from .format import MISSING, anchor, cpu_ranges, is_missing, latency, nav_title, num
from .pages import point_row, run_summary

GIB = 2**30


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts → {'memory.available': ...}; lists stay values."""
    if not isinstance(value, dict):
        return {prefix: value}
    flat: dict[str, Any] = {}
    for key, item in value.items():
        flat.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
    return flat


def state_value(key: str, value: Any) -> str:
    """Memory in GiB (the probe stores bytes), lists space-separated, the rest as is."""
    if is_missing(value):
        return MISSING
    if key.startswith("memory.") and isinstance(value, (int, float)):
        return f"{value / GIB:.2f} GiB"
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value)


def state_rows(machine_state: dict[str, Any] | None) -> list[tuple[str, str, str]]:
    """(key, before, after) for the machine state captured around the run."""
    before = flatten((machine_state or {}).get("before") or {})
    after = flatten((machine_state or {}).get("after") or {})
    keys = sorted(set(before) | set(after))
    return [(k, state_value(k, before.get(k)), state_value(k, after.get(k))) for k in keys]


def build_rows(run: pd.Series) -> list[tuple[str, Any]]:
    """Where the engine binary came from and how it was built."""
    flags = run["cmake_flags"] or []
    return [
        ("Engine", f"{run['engine']} {run['engine_version']}"),
        ("Build id / variant", f"{run['build_id']} / {run['build_variant']}"),
        ("Source", f"{run['source_kind']}: {run['source_package']} {run['source_version']}"),
        ("Compiler", f"{run['compiler']} ({run['compiler_version']})"),
        ("CMake", f"{run['cmake_version']}: {' '.join(flags)}"),
        ("Build seconds", num(run["build_seconds"], 1)),
        ("Binary sha256", run["binary_sha256"]),
        ("Cached build", "yes" if run["build_cached"] else "no"),
        ("Tidemark commit", run["tidemark_sha"]),
    ]


def facts_rows(facts: dict[str, Any] | None) -> list[tuple[str, str]]:
    return [(key, state_value(key, value)) for key, value in sorted((facts or {}).items())]


def conditions_text(conditions: dict[str, Any]) -> str:
    """What was achieved before the process ran: cache procedure, residency, block cache."""
    parts = []
    if conditions.get("cache_procedure"):
        parts.append("cache: " + " → ".join(str(s) for s in conditions["cache_procedure"]))
    if "residency_pct" in conditions:
        size = conditions.get("data_bytes")
        of = f" of {size / 2**20:,.1f} MiB" if isinstance(size, (int, float)) else ""
        parts.append(f"resident {conditions['residency_pct']}%{of}")
    if conditions.get("block_cache_bytes"):
        parts.append(f"block cache {conditions['block_cache_bytes'] / 2**20:,.0f} MiB")
    if conditions.get("cgroups"):
        parts.append("cgroups " + " ".join(str(c) for c in conditions["cgroups"]))
    if conditions.get("counters_unavailable"):
        parts.append("counters unavailable: " + ", ".join(conditions["counters_unavailable"]))
    return "; ".join(parts)


def invocation_row(inv: dict[str, Any], log_tail: str = "", detail: bool = True) -> dict[str, Any]:
    """Everything the invocation table shows; numbers are pre-formatted text. Without `detail`
    (older runs of a long history) the row has no command, log or conditions line."""
    conditions = inv["conditions"] or {}
    return {
        "detail": detail, "log_tail": log_tail,
        "conditions": conditions_text(conditions) if detail else "",
        "anchor": anchor(inv["seq"]), "seq": int(inv["seq"]), "workload": inv["workload"],
        "benchmark": inv["benchmark"], "phase": inv["phase"], "rep": int(inv["repetition"]),
        "threads": int(inv["threads"]), "status": inv["status"], "ok": inv["status"] == "ok",
        "error": inv["error"] or "", "ops": num(inv["ops"]), "p50": latency(inv["p50"]),
        "p99": latency(inv["p99"]), "wall": num(inv["wall_s"], 2),
        "rss_mb": num(inv["max_rss_kb"] / 1024, 1) if not is_missing(inv["max_rss_kb"]) else MISSING,
        "cpus": cpu_ranges(conditions.get("cpus_allowed")),
        "residency": num(inv["residency"], 1),
        "command": (shlex.join(inv["command"] or []) or MISSING) if detail else "",
        "log_path": inv["log_path"] or MISSING,
        "notes": "; ".join(inv["notes"] or []),
    }


def run_page(run: pd.Series, points: pd.DataFrame, invocation_rows: list[dict[str, Any]]
             ) -> tuple[dict[str, Any], dict[str, Any]]:
    """All of one run: (the Markdown page's context, the HTML tables' context).

    `points` is already filtered to this run and `invocation_rows` are its `invocation_row`s.
    """
    overrides = run["overrides"] or []
    page = {
        "run_id": run["run_id"], "title": f"Run {nav_title(run['run_id'])}",
        "summary": run_summary(run, "../"), "has_results": len(points) > 0, "compact": False,
        "command": "tidemark run " + shlex.join(overrides) if overrides else "tidemark run",
        "config": json.dumps(run["config"], indent=2, sort_keys=True),
        "build": build_rows(run), "machine": facts_rows(run["machine_facts"]),
        "state": state_rows(run["machine_state"]),
        "verified": bool(run["verified"]),
        "notes": [str(n) for n in run["notes"] or []],
    }
    tables = {"results": [point_row(p, "") for p in points.to_dict("records")],
              "invocations": invocation_rows}
    return page, tables


_COMPACT_ROW = ('<tr id="{0}"><td><a href="#{0}">{1}</a></td><td>{2}</td><td>{3}</td><td>{4}</td>'
                '<td>{5}</td><td>{6}</td><td>{7}</td><td><a href="#{0}">{8}</a></td><td>{9}</td>'
                '<td>{10}</td><td>{11}</td><td>{12}</td><td>{13}</td></tr>\n')


def _escaped(values: Any, fmt: Any = str) -> list[str]:
    """HTML-escaped text per value; equal values (workloads, statuses) are escaped once."""
    done: dict[Any, str] = {}
    out = []
    for value in values:
        if value not in done:
            done[value] = str(escape(fmt(value)))
        out.append(done[value])
    return out


def compact_rows(invocations: pd.DataFrame) -> dict[str, Markup]:
    """run_id → the escaped <tr> rows of `run_compact.html.j2`, formatted column by column
    (older runs of a long history: every invocation keeps its row and permalink, no detail).
    Rendered here rather than in Jinja2: 600,000 rows made autoescaping most of the build."""
    columns = [
        [anchor(s) for s in invocations["seq"]], _escaped(invocations["seq"].tolist()),
        _escaped(invocations["workload"]), _escaped(invocations["benchmark"]),
        _escaped(invocations["phase"]), _escaped(invocations["repetition"].tolist()),
        _escaped(invocations["threads"].tolist()), _escaped(invocations["status"]),
        _escaped(invocations["ops"], num), _escaped(invocations["p50"], latency),
        _escaped(invocations["p99"], latency),
        _escaped(invocations["wall_s"], lambda v: num(v, 2)),
        _escaped(invocations["max_rss_kb"], lambda v: num(v / 1024, 1)),
        _escaped(invocations["residency"], lambda v: num(v, 1)),
    ]
    rows: dict[str, list[str]] = {}
    for run_id, *cells in zip(invocations["run_id"], *columns):
        rows.setdefault(run_id, []).append(_COMPACT_ROW.format(*cells))
    return {run_id: Markup("".join(lines)) for run_id, lines in rows.items()}
