"""The page of one run (pure): config, provenance, machine, and its results table; the
invocation table is run_tables.py's."""
from __future__ import annotations

import json
import shlex
from typing import Any

import pandas as pd

from orchestrator.resume import resume_text

from .format import MISSING, is_missing, nav_title, num
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
    ] + [(f"Container image ({kind})", f"{ref['tag']} ({ref['id']}, FROM {ref['base']})")
         for kind, ref in sorted((run.get("build_images") or {}).items())]


def facts_rows(facts: dict[str, Any] | None) -> list[tuple[str, str]]:
    return [(key, state_value(key, value)) for key, value in sorted((facts or {}).items())]


def run_page(run: pd.Series, has_results: bool, compact: bool) -> dict[str, Any]:
    """The Markdown page's context of one run (its big tables are run_tables.py's);
    `has_results`: it has a results table; `compact`: an older run without invocation detail."""
    overrides = run["overrides"] or []
    return {
        "run_id": run["run_id"], "title": f"Run {nav_title(run['run_id'])}",
        "summary": run_summary(run, "../"), "has_results": has_results,
        "compact": compact,
        "command": "tidemark run " + shlex.join(overrides) if overrides else "tidemark run",
        "config": json.dumps(run["config"], indent=2, sort_keys=True),
        "build": build_rows(run), "machine": facts_rows(run["machine_facts"]),
        "state": state_rows(run["machine_state"]),
        "verified": bool(run["verified"]),
        "notes": [str(n) for n in run["notes"] or []] +
                 [resume_text(entry) for entry in run.get("resumes") or []],
    }


def result_rows(points: pd.DataFrame) -> list[dict[str, Any]]:
    """The results table of one run page: `points` is already filtered to this run."""
    return [point_row(p, "") for p in points.to_dict("records")]
