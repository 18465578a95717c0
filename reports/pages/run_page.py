"""The page of one run (pure): key facts, notes and caveats, how to reproduce it, where its
numbers came from (build or imported file), the machine in words, its phases; the big results
and invocation tables are run_tables.py's.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from orchestrator.plan.resume import resume_text

from ..data.frames import records
from .caveats import note_lines
from .format import MISSING, Link, anchor, date, is_missing, nav_title, num, value_text
from .labels import Labeler
from .machine_pages import HARDWARE, SOFTWARE, facts_table, state_table
from .shared import point_row, reproduce_commands, run_summary
from .tables import Table

GIB = 2**30
# Words for the keys of a tool's own context (Google Benchmark, hyperfine) of an imported run.
CONTEXT_WORDS = {"num_cpus": "CPUs", "mhz_per_cpu": "MHz per CPU", "host_name": "host",
                 "cpu_scaling_enabled": "CPU frequency scaling", "load_avg": "load average",
                 "library_build_type": "benchmark library build", "num_sharing": "shared by"}


def plain(value: Any) -> str:
    """A stored value in words: lists joined, nested records as 'key value' pairs, yes/no."""
    if is_missing(value) or value == "":
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{CONTEXT_WORDS.get(k, k.replace('_', ' '))} {plain(v)}"
                         for k, v in value.items())
    if isinstance(value, list):
        return "; ".join(plain(v) for v in value) if any(isinstance(v, dict) for v in value) \
            else " ".join(plain(v) for v in value)
    if isinstance(value, float):
        return f"{value:,.6g}"
    return str(value)


def words_table(items: dict[str, Any]) -> Table:
    return Table(("Item", "Value"), [[CONTEXT_WORDS.get(k, k.replace("_", " ")), plain(v)]
                            for k, v in items.items()], (False, False))


def commit_rows(run: pd.Series) -> list[tuple[str, Any]]:
    """The engine commit a git or local source compiled (none for a Debian source)."""
    sha, dirty = run.get("commit_sha"), run.get("commit_dirty")
    if not (isinstance(sha, str) and sha) and not (isinstance(dirty, str) and dirty):
        return []
    rows = [("Engine commit", f"{sha or '(not a git checkout)'}"
             f"{' + uncommitted changes ' + dirty if isinstance(dirty, str) and dirty else ''}")]
    if isinstance(sha, str) and sha:
        rows += [("Commit subject", run.get("commit_subject")),
                 ("Commit author / date", f"{run.get('commit_author')} / {run.get('commit_date')}")]
    return rows


def build_rows(run: pd.Series) -> list[tuple[str, Any]]:
    """Where the engine binary came from and how it was built."""
    flags = run["cmake_flags"] or []
    return [
        ("Engine", f"{run['engine']} {run['engine_version']}"),
        ("Build id / variant", f"{run['build_id']} / {run['build_variant']}"),
        ("Source", f"{run['source_kind']}: {run['source_package']} {run['source_version']}"),
    ] + commit_rows(run) + [
        ("Compiler", f"{run['compiler']} ({run['compiler_version']})"),
        ("CMake", f"{run['cmake_version']}: {' '.join(flags)}"),
        ("Build seconds", num(run["build_seconds"], 1)),
        ("Binary sha256", run["binary_sha256"]),
        ("Cached build", "yes" if run["build_cached"] else "no"),
        ("Tidemark commit", run["tidemark_sha"]),
    ] + [(f"Container image ({kind})", f"{ref['tag']} ({ref['id']}, FROM {ref['base']})")
         for kind, ref in sorted((run.get("build_images") or {}).items())]


def import_rows(run: pd.Series) -> list[tuple[str, Any]]:
    """Where an imported run's numbers came from."""
    meta = run.get("source_meta") or {}
    return [("File", Path(str(meta.get("file") or MISSING)).name),
            ("Path when imported", meta.get("file") or MISSING),
            ("Format", meta.get("format") or MISSING), ("sha256", meta.get("sha256") or MISSING),
            ("Imported at", meta.get("imported_at") or MISSING),
            ("Tidemark commit", run["tidemark_sha"] or MISSING)]


def check_table(state: dict[str, Any]) -> Table | None:
    """`tidemark machine check` as recorded when the run started."""
    check = state.get("check") or {}
    if not check:
        return None
    return Table(("Item", "Status", "Value"), [[name, item.get("status", MISSING),
                                               item.get("value", MISSING)]
                                              for name, item in check.items()], (False,) * 3)


def run_conditions(state: dict[str, Any]) -> dict[str, Any]:
    """What the run set up around its processes, when it set anything: the shield of its
    benchmark CPUs, a planted cost."""
    kept = {}
    if state.get("shield"):
        kept["shield"] = state["shield"]
    if (state.get("planted") or {}).get("spins"):
        kept["planted cost"] = state["planted"]
    return kept


def phase_rows(phases: pd.DataFrame | None, run_id: str) -> Table | None:
    """What each phase of each workload cost in this run (setup, warm-ups, measured)."""
    if phases is None or phases.empty:
        return None
    mine = phases[phases["run_id"] == run_id]
    if mine.empty or mine["phase"].nunique() < 2:
        return None
    rows = [[p["workload"], p["phase"], p["benchmarks"],
             Link(str(int(p["n"])), f"#{anchor(p['first_seq'])}"), num(p["wall_total"], 2),
             num(p["wall_median"], 3)] for p in records(mine)]
    return Table(("Workload", "Phase", "Benchmarks", "Invocations", "Wall s total",
                  "Wall s median"), rows, (False, False, False, True, True, True))


def values_table(values: pd.DataFrame | None) -> Table | None:
    """Every metric of an imported run, median per series: the tool's own figures."""
    if values is None or values.empty:
        return None
    rows = [[v["workload"], v["benchmark"], str(v["threads"]), v["metric"],
             Link(value_text(v["median"]), f"#{anchor(v['first_seq'])}"), v["unit"] or MISSING,
             str(v["n"])] for v in records(values)]
    return Table(("Workload", "Benchmark", "Threads", "Metric", "Median", "Unit", "Values"), rows,
                 (False, False, True, False, True, False, True))


def run_page(run: pd.Series, has_results: bool,
             phases: pd.DataFrame | None = None,
             values: pd.DataFrame | None = None) -> dict[str, Any]:
    """The page's context of one run (its big tables are run_tables.py's; an older run's page
    is drawn from it by run_data.py); `has_results`: it has a results table."""
    imported = run.get("source") == "import"
    state = run["machine_state"] or {}
    facts = run["machine_facts"] or {}
    meta = run.get("source_meta") or {}
    return {
        "run_id": run["run_id"], "title": f"Run {nav_title(run['run_id'])}",
        "summary": run_summary(run, "../"), "has_results": has_results and not imported,
        "imported_values": values_table(values) if imported else None,
        "imported": imported, "caveat": run.get("caveat") or "",
        "reproduce": reproduce_commands(run),
        "config": json.dumps(run["config"], indent=2, sort_keys=True),
        "build_table": Table(("Field", "Value"), [list(r) for r in (
            import_rows(run) if imported else build_rows(run))], (False, False)),
        "context": words_table(meta.get("context") or {}) if imported else None,
        "hardware": facts_table(facts, HARDWARE) if not imported else None,
        "software": facts_table(facts, SOFTWARE) if not imported else None,
        "state": state_table(state) if state.get("before") or state.get("after") else None,
        "check": check_table(state),
        "conditions": words_table(run_conditions(state)) if run_conditions(state) else None,
        "phases": phase_rows(phases, run["run_id"]),
        "verified": bool(run["verified"]) or imported,
        "user_notes": note_lines(run),
        "notes": [str(n) for n in run["notes"] or [] if not imported] +
                 [resume_text(entry) for entry in run.get("resumes") or []],
        "started": date(run["started_at"]),
    }


def result_rows(points: pd.DataFrame) -> list[dict[str, Any]]:
    """The results table of one run page: `points` is already filtered to this run; each
    row's series is named by what differs from the run's other rows."""
    rows = records(points)
    labeler = Labeler.of(rows, always=("threads", "cache_state", "params"))
    return [{**point_row(p, ""), "series": labeler.label(p)} for p in rows]
