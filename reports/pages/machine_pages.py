"""Machine pages (pure): one per fingerprint, and the list of machines.

Hardware and software are the stable facts the fingerprint is computed from (plus storage and
CPU policy); memory, load and busy processes are the state captured around each run.
"""
from __future__ import annotations

from typing import Any

import pandas as pd
from markupsafe import Markup

from .format import MISSING, Link, anchor, date, escape_text, is_missing, num
from .labels import machine_page_name, machine_text, params_text
from .shared import profile_of, run_href
from .tables import Page, Section, Table

GIB, MIB = 2**30, 2**20
HARDWARE = (("CPU model", "cpu_model"), ("Architecture", "arch"), ("Logical CPUs", "logical_cpus"),
            ("Physical cores", "physical_cores"), ("Threads per core", "threads_per_core"),
            ("Sockets", "sockets"), ("L1d", "l1d_kb"), ("L1i", "l1i_kb"), ("L2", "l2_kb"),
            ("L3", "l3_kb"), ("RAM", "ram_gib"), ("Data device", "data_device"),
            ("Data filesystem", "data_fs"), ("Data device rotational", "data_rotational"))
SOFTWARE = (("Kernel", "kernel"), ("OS", "os"), ("Compiler", "compiler"), ("CMake", "cmake"),
            ("Python", "python"), ("cpufreq governor", "cpufreq_governor"), ("Turbo", "turbo"),
            ("SMT", "smt"), ("Isolated CPUs", "isolated_cpus"), ("Hostname", "hostname"))
MEMORY = ("total", "used", "free", "buff_cache", "available", "swap_total", "swap_free")


def machine_href(fingerprint: str, base: str) -> str:
    return f"{base}machines/{machine_page_name(fingerprint)}.md"


def fact_text(key: str, value: Any) -> str:
    if is_missing(value) or value == "":
        return MISSING
    if key.endswith("_kb") and isinstance(value, (int, float)):
        return f"{value / 1024:,.1f} MiB" if value >= 1024 else f"{value:,.0f} KiB"
    if key == "ram_gib":
        return f"{value:,.1f} GiB"
    return str(value)


def facts_table(facts: dict[str, Any], fields: tuple[tuple[str, str], ...]) -> Table:
    return Table(("Fact", "Value"), [[label, fact_text(key, facts.get(key))] for label, key in fields],
                 (False, False))


def busy_text(processes: list[dict[str, Any]] | None) -> str:
    return ", ".join(f"{p.get('name')} (pid {p.get('pid')}, {p.get('cpu_pct', 0):.0f}% CPU)"
                     for p in processes or []) or MISSING


def state_table(state: dict[str, Any]) -> Table:
    """Memory in GiB, load averages and busy processes, before and after the run."""
    before, after = state.get("before") or {}, state.get("after") or {}
    rows: list[list[Any]] = []
    for key in MEMORY:
        values = [(side.get("memory") or {}).get(key) for side in (before, after)]
        rows.append([f"memory {key}", *(MISSING if is_missing(v) else f"{v / GIB:.2f} GiB"
                                        for v in values)])
    rows.append(["load average 1/5/15 min",
                 *(" ".join(str(x) for x in side.get("loadavg") or []) or MISSING
                   for side in (before, after))])
    rows.append(["busy processes", busy_text(before.get("busy_processes")),
                 busy_text(after.get("busy_processes"))])
    return Table(("Item", "Before", "After"), rows, (False, False, False))


def residency_rows(residency: pd.DataFrame, facts: dict[str, Any], base: str) -> list[list[Any]]:
    """Median residency per workload × data set × cache state, and the data set against L3
    and RAM."""
    l3 = (facts.get("l3_kb") or 0) * 1024
    ram = (facts.get("ram_gib") or 0) * GIB
    rows = []
    for _, r in residency.iterrows():
        href = f"{run_href(r['last_run_id'], base)}#{anchor(r['last_seq'])}"
        size = r["data_bytes_median"]
        not_met = int(r["n_not_met"])
        data_set = params_text({k: int(r[k]) for k in ("num", "value_size") if not is_missing(r[k])})
        rows.append([r["workload"], data_set, r["cache_state"],
                     Link(num(r["residency_median"], 1), href),
                     Link(str(int(r["n"])), href),
                     Link(f"⚠ {not_met}" if not_met else "0", href),
                     MISSING if is_missing(size) else num(size / MIB, 1),
                     MISSING if is_missing(size) or not l3 else f"{size / l3:.2f}×",
                     MISSING if is_missing(size) or not ram else f"{size / ram * 100:.3f}%"])
    return rows


def residency_note(residency: pd.DataFrame, facts: dict[str, Any]) -> str:
    """Where the largest data set sits between L3 and RAM, and what that means for cold/warm."""
    sizes = residency["data_bytes_median"].dropna()
    if sizes.empty:
        return "No measured invocation read an existing data set on this machine."
    size = float(sizes.max())
    l3, ram = (facts.get("l3_kb") or 0) * 1024, (facts.get("ram_gib") or 0) * GIB
    where = ("fits in L3: warm and hot reads may be served largely from CPU caches, and cold vs "
             "warm compares the device with the page cache" if l3 and size <= l3
             else "is larger than L3 but a small part of RAM: warm and hot runs read it from the "
                  "page cache, cold runs from the device" if ram and size < 0.5 * ram
             else "is close to or above RAM: the page cache cannot hold it, warm is not achievable")
    l3_text = f"{size / l3:.2f}× L3 ({l3 / MIB:,.1f} MiB)" if l3 else "L3 unknown"
    ram_text = f"{size / ram * 100:.3f}% of RAM ({ram / GIB:,.1f} GiB)" if ram else "RAM unknown"
    return (f"The largest data set measured here is {size / MIB:,.1f} MiB on disk: {l3_text}, "
            f"{ram_text}. It {where}.")


def procedure_rows(residency: pd.DataFrame) -> list[list[Any]]:
    seen: dict[tuple[str, str], None] = {}
    for _, r in residency.iterrows():
        steps = " → ".join(str(s) for s in r["cache_procedure"] or []) or \
            "no eviction; untimed warm-up reads before measuring (see methodology)"
        seen[(r["cache_state"], steps)] = None
    return [[state, steps] for state, steps in sorted(seen)]


def runs_table(runs: pd.DataFrame, base: str) -> Table:
    """Every run on this machine, newest first: the profile it used, where a scheduler placed
    it, how it ended, and the machine's load and memory around it."""
    # Columns zipped, not a Series per row: a machine of a long history has 10,000 runs.
    columns = (runs[c].tolist() for c in ("run_id", "started_at", "config", "status",
                                          "machine_state", "verified"))
    rows = []
    for run_id, started, config, status, state, verified in zip(*columns):
        state = state or {}
        loads = [" ".join(str(x) for x in (state.get(side) or {}).get("loadavg") or []) or MISSING
                 for side in ("before", "after")]
        avail = [((state.get(side) or {}).get("memory") or {}).get("available")
                 for side in ("before", "after")]
        placed = state.get("scheduler") or {}
        node = f"{placed.get('node') or placed.get('nodes')} (job {placed.get('job_id')})" \
            if placed else MISSING
        rows.append([Link(run_id, run_href(run_id, base)), date(started), profile_of(config),
                     node, status, *loads,
                     *(MISSING if is_missing(a) else f"{a / GIB:.2f}" for a in avail),
                     "yes" if verified else "⚠ no"])
    return Table(("Run", "Started", "Profile", "Slurm node", "Status", "Load before",
                  "Load after", "Available GiB before", "Available GiB after", "Verified"), rows,
                 (False, False, False, False, False, True, True, True, True, False))


def _cache_sections(residency: pd.DataFrame, facts: dict[str, Any], base: str) -> list[Section]:
    """The page-cache residency, the cache-drop steps and where the data sets sit, or one line
    saying why there are none (a writer into a fresh database has no data set; an imported run
    records no residency): empty tables would read as lost data."""
    if residency.empty:
        return [Section("Page-cache state", text=Markup(
            "No measured invocation on this machine recorded its data set's page-cache residency "
            "(a writer into a fresh database has no data set yet; an imported run was measured by "
            "another tool), so there is no residency or cache-drop step to show."))]
    return [
        Section("Page-cache state per benchmark type",
                text=Markup("Median residency of the data set in the page cache right before each "
                            "measured process, per workload, data set and cache state, over all "
                            "runs on this machine. ⚠ counts invocations whose residency missed the "
                            "state's bound."),
                tables=[Table(("Workload", "Data set", "Cache", "Residency % (median)", "Measured",
                               "Condition not met", "Data set MiB", "× L3", "% of RAM"),
                              residency_rows(residency, facts, base),
                              (False, False, False) + (True,) * 6)]),
        Section("Cache-drop procedure", tables=[Table(("Cache state", "Steps, as recorded"),
                                                      procedure_rows(residency), (False, False))]),
        Section("Residency note", text=Markup.escape(residency_note(residency, facts))),
    ]


def machine_page(machine: pd.Series, runs: pd.DataFrame, residency: pd.DataFrame) -> Page:
    """`runs` and `residency` are already filtered to this machine; links are from machines/."""
    base = "../"
    facts = machine["facts"] or {}
    # Writers into a fresh database have no data set to be resident.
    residency = residency.dropna(subset=["residency_median"])
    sections = [
        Section("Hardware", tables=[facts_table(facts, HARDWARE)]),
        Section("Software", tables=[facts_table(facts, SOFTWARE)]),
        Section("Memory state at measurement time",
                text=Markup("Captured right before and after the newest run on this machine."),
                tables=[state_table(machine["last_state"] or {})]),
        Section("Runs on this machine",
                text=Markup("Every run measured here, newest first, with the machine profile it "
                            "used and, for a fleet job, the Slurm node and job it ran as."),
                tables=[runs_table(runs, base)]),
        *_cache_sections(residency, facts, base),
    ]
    intro = Markup("Fingerprint <code>{}</code> · {} runs on this machine.").format(
        escape_text(machine["fingerprint"]), int(machine["n_runs"]))
    return Page(f"Machine {machine['hostname']} ({machine['fingerprint'][:12]})", intro, sections,
                wide=True)


def machines_index(machines: pd.DataFrame) -> Page:
    # The list lives in machines/ beside the machine pages.
    rows = [[Link(machine_text(m["fingerprint"]), machine_href(m["fingerprint"], "")[len("machines/"):]),
             m["hostname"],
             m["cpu_model"], num(m["logical_cpus"]), fact_text("ram_gib", m["ram_gib"]),
             num(m["n_runs"]),
             Link(date(m["last_run_at"]), run_href(m["last_run_id"], "../"))
             if not is_missing(m["last_run_id"]) else MISSING]
            for _, m in machines.iterrows()]
    table = Table(("Fingerprint", "Host", "CPU", "Logical CPUs", "RAM", "Runs", "Newest run"),
                  rows, (False, False, False, True, True, True, False))
    intro = Markup("One page per machine fingerprint (a hash of the stable hardware and software "
                   "facts). Numbers from different fingerprints are never put in one series.")
    return Page("Machines", intro, [Section("All machines", tables=[table])])
