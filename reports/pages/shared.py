"""Page builders' shared pieces (pure): hrefs, a point's row, a run's key facts, the runs list.

Links are relative to the page being built: `base` is "" for the home page and "../" for pages
one folder down (workloads/, runs/). The home page is dashboard.py's, a workload's page
workload_page.py's.
"""
from __future__ import annotations

import shlex
from typing import Any

import pandas as pd

from orchestrator.where_keys import WHERE_KEYS

from ..data.frames import records
from .format import MISSING, Link, anchor, date, is_missing, latency, num, slug
from .labels import machine_page_name, machine_text, params_text


def delta_pct(new: Any, old: Any) -> float | None:
    """Change from old to new in percent; None when either is missing or old is zero."""
    if is_missing(new) or is_missing(old) or float(old) == 0.0:
        return None
    return (float(new) - float(old)) / float(old) * 100.0


def cv_pct(std: Any, mean: Any) -> float | None:
    """Coefficient of variation in percent; None for one repetition (no std) or a zero mean."""
    if is_missing(std) or is_missing(mean) or float(mean) == 0.0:
        return None
    return float(std) / float(mean) * 100.0


def spread_text(low: Any, high: Any) -> str:
    """Min–max over repetitions, e.g. '250,000–280,000'."""
    if is_missing(low) or is_missing(high):
        return MISSING
    return f"{num(low)}–{num(high)}"


def profile_of(config: Any) -> str:
    """The machine profile a run used (its config's machine.name)."""
    machine = (config or {}).get("machine") if isinstance(config, dict) else None
    return str((machine or {}).get("name") or "unknown profile")


def run_href(run_id: str, base: str) -> str:
    return f"{base}runs/{slug(run_id)}.md"


def run_html_href(run_id: str, base: str, seq: Any = None) -> str:
    """A run page (and invocation) as built, for HTML that MkDocs does not rewrite (charts)."""
    return f"{base}runs/{slug(run_id)}.html" + ("" if seq is None else f"#{anchor(seq)}")


def workload_href(workload: str, base: str) -> str:
    return f"{base}workloads/{slug(workload)}.md"


def point_row(point: pd.Series, run_page: str) -> dict[str, Any]:
    """One series point of one run; every number links to its first measured invocation."""
    href = f"{run_page}#{anchor(point['first_seq'])}"
    cv = cv_pct(point["ops_std"], point["ops_mean"])
    return {
        "workload": point["workload"], "benchmark": point["benchmark"],
        "version": f"{point['engine']} {point['engine_version']}",
        "threads": Link(str(point["threads"]), href), "cache_state": point["cache_state"],
        "params": params_text(point["params"]),
        "ops": Link(num(point["ops_median"]), href),
        "p50": Link(latency(point["p50_median"]), href),
        "p99": Link(latency(point["p99_median"]), href),
        "mb": Link(num(point["mb_median"], 1), href) if not is_missing(point["mb_median"]) else None,
        "spread": Link(spread_text(point["ops_min"], point["ops_max"]), href),
        "cv": Link(MISSING if cv is None else f"{cv:.1f}%", href),
        "ok_n": Link(f"{point['n_ok']}/{point['n']}", href),
        "interference": Link(interference_cell(point), href),
    }


def interference_cell(point: pd.Series) -> str:
    """Median share of the engine's CPUs other tasks took, and how many invocations were
    flagged above machine.interference_max_pct."""
    text = num(point.get("interference_median"), 1)
    flagged = int(point.get("n_interfered") or 0)
    return text + (f" ⚠ {flagged} flagged" if flagged else "")


def status_text(run: pd.Series) -> str:
    """A run's status as its pages say it: resumed runs say so (`tidemark run --resume`)."""
    resumes = run.get("resumes") or []
    times = f" ×{len(resumes)}" if len(resumes) > 1 else ""
    return run["status"] + (f" (resumed{times})" if resumes else "")


def runner_text(run: pd.Series) -> str:
    """'host', or the container runner with its images and memory limit (runs.machine_state)."""
    runner = run.get("runner") or "host"
    container = (run.get("machine_state") or {}).get("container") or {}
    if runner != "docker" or not container:
        return runner
    images = ", ".join(f"{ref['tag']} ({str(ref['id'])[7:19]}, FROM {ref['base']})"
                       for ref in (container.get("images") or {}).values())
    memory = container.get("memory_bytes")
    limit = f"memory limit {memory / 2**20:,.0f} MiB" if memory else "no memory limit"
    return f"docker: image {images}; {limit}"


def machine_line(run: Any) -> str:
    """'vm (AMD EPYC 4344P, 2 CPUs, 23.5 GiB)'; an imported run's machine is only a name."""
    if str(run.get("machine_fingerprint") or "").startswith("import:"):
        return f"{machine_text(run['machine_fingerprint'])} (named at import, not probed)"
    ram = "" if is_missing(run.get("ram_gib")) else f", {run['ram_gib']:.1f} GiB"
    return f"{run['hostname']} ({run['cpu_model']}, {run['logical_cpus']} CPUs{ram})"


def verified_text(run: Any) -> str:
    if run.get("source") == "import":
        return "not applicable: imported, no machine profile was checked"
    if run["verified"]:
        return "yes: the host matched its machine profile"
    return "⚠ NO, unverified: " + "; ".join(str(n) for n in run["notes"] or [])


def run_summary(run: pd.Series, base: str) -> list[tuple[str, Any]]:
    """Key facts of one run as (label, value) pairs."""
    return [
        ("Run", Link(run["run_id"], run_href(run["run_id"], base))),
        ("Started", date(run["started_at"])),
        ("Engine", f"{run['engine']} {run['engine_version']}"),
        ("Build variant", run["build_variant"]),
        ("Runner", runner_text(run)),
        ("Machine", machine_line(run)),
        ("Status", status_text(run)),
        ("Invocations ok / failed",
         Link(f"{run['n_ok']} / {run['n_failed']} of {run['n_invocations']}",
              run_href(run["run_id"], base) + "#invocations")),
        ("Label", run["label"] or MISSING),
        ("Verified", verified_text(run)),
        ("Machine page", Link(machine_text(run["machine_fingerprint"]),
                              f"{base}machines/{machine_page_name(run['machine_fingerprint'])}.md")),
    ]


def reproduce_commands(run: Any) -> list[str]:
    """The commands that measure a run again (its overrides, without where its files went),
    or that import its file again."""
    if run.get("source") == "import":
        return [shlex.join([".venv/bin/tidemark", "import", *(run["overrides"] or [])])]
    overrides = [o for o in run["overrides"] or []
                 if o.split("=", 1)[0].lstrip("+~") not in WHERE_KEYS]
    sha = str(run.get("tidemark_sha") or "")
    lines = [f"git checkout {sha.removesuffix('-dirty')}  # the Tidemark commit that measured it"
             + (" (it had uncommitted changes)" if sha.endswith("-dirty") else "")] \
        if len(sha.removesuffix("-dirty")) == 40 else []
    return lines + ["make setup", shlex.join([".venv/bin/tidemark", "run", *overrides])]


def workload_links(points: pd.DataFrame, base: str) -> list[Link]:
    names = sorted(points["workload"].unique()) if len(points) else []
    return [Link(name, workload_href(name, base)) for name in names]


def _status_cell(run: Any) -> str:
    if run.get("source") == "import":
        return status_text(run) + " (imported)"
    return status_text(run) + ("" if run["verified"] else " ⚠ unverified")


RUNS_COLUMNS = ("Run", "Started", "Engine", "Variant", "Workloads", "Status", "ok/n", "Host",
                "Runner", "Label and notes")


def runs_index(runs: pd.DataFrame) -> tuple[tuple[str, ...], list[list[Any]]]:
    """Every run, newest first, imported ones included: the runs list's columns and rows. A
    caveat is marked ⚠ on its variant (said in full on the run's page) and people's notes are
    shown beside the run."""
    rows = [[Link(run["run_id"], f"{slug(run['run_id'])}.md"),
             date(run["started_at"]),
             f"{run['engine']} {run['engine_version']}",
             run["build_variant"] + (" ⚠" if run.get("caveat") else ""),
             ", ".join(run["workloads"]),
             _status_cell(run),
             Link(f"{run['n_ok']}/{run['n_invocations']}",
                  f"{slug(run['run_id'])}.md#invocations"),
             run["hostname"], run.get("runner") or "host",
             " · ".join([run["label"]] * bool(run["label"]) +
                        [n["text"] for n in run.get("user_notes") or []])]
            for run in records(runs)]
    return RUNS_COLUMNS, rows
