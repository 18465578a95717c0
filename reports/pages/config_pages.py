"""Pages generated from the configs: methodology and the benchmark matrix.

`load_configs` reads conf/ with plain YAML (not Hydra: the site needs the files' own words, not
a composed run); the builders below it are pure.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup

from orchestrator.gate import GateConf
from orchestrator.plan.kinds import KIND_DB_BENCH

from .format import MISSING, Link, slug
from .shared import workload_href
from .tables import Page, Section, Table


@dataclass(frozen=True)
class Configs:
    workloads: dict[str, dict[str, Any]]
    caches: dict[str, dict[str, Any]]
    builds: dict[str, dict[str, Any]]
    suites: dict[str, dict[str, Any]]
    site_speed: dict[str, Any] | None  # benchmarks/site_speed.json, when it was measured

    @property
    def instrumented(self) -> set[str]:
        return {name for name, conf in self.builds.items() if conf.get("instrumented")}


def _load_group(folder: Path) -> dict[str, dict[str, Any]]:
    import yaml

    out = {}
    for path in sorted(folder.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for entry in data.get("defaults") or []:  # a shared base (base/rocksdb_harness@_here_)
            if isinstance(entry, str) and entry.endswith("@_here_"):
                base = folder / f"{entry.removesuffix('@_here_')}.yaml"
                if base.is_file():
                    data = {**(yaml.safe_load(base.read_text(encoding="utf-8")) or {}), **data}
        out[str(data.get("name", path.stem))] = data
    return out


def load_configs(conf_dir: Path, site_speed_file: Path) -> Configs:
    speed = {"note": "", "phases": {}, "incremental": None, "scale": {},
             **json.loads(site_speed_file.read_text())} \
        if site_speed_file.is_file() else None
    return Configs(_load_group(conf_dir / "workload"), _load_group(conf_dir / "cache"),
                   _load_group(conf_dir / "build"), _load_group(conf_dir / "suite"), speed)


def suite_members(suites: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """workload name → suites whose items run it (from each suite's items)."""
    members: dict[str, list[str]] = {}
    for name, suite in sorted(suites.items()):
        loaded = {}
        for entry in suite.get("defaults") or []:
            if isinstance(entry, dict):
                for key, value in entry.items():
                    if str(key).startswith("/workload@workloads."):
                        loaded[str(key).split(".", 1)[1]] = value
        for item in suite.get("items") or []:
            workload = loaded.get(item.get("workload"), item.get("workload"))
            if name not in members.setdefault(workload, []):
                members[workload].append(name)
    return members


def _kind(wl: dict) -> str:
    return wl.get("kind") or KIND_DB_BENCH  # the schema's default


def _measured(wl: dict) -> str:
    """What a workload measures: db_bench's benchmark, a Google Benchmark filter, a command."""
    kind = _kind(wl)
    if kind == "command":
        return f"command: {' '.join(str(w) for w in wl.get('command') or [])}"
    if kind == "gbench":
        return f"{wl.get('binary') or 'Google Benchmark'} --benchmark_filter={wl.get('benchmark')}"
    return wl.get("benchmark") or MISSING


def _setup(wl: dict) -> str:
    setup = [str(s) for s in wl.get("setup") or []]
    if _kind(wl) == KIND_DB_BENCH:
        return " → ".join(setup) or "none"
    return f"{len(setup)} command{'s' if len(setup) != 1 else ''}" if setup else "none"


def _engines(wl: dict) -> str:
    if wl.get("engines"):
        return ", ".join(wl["engines"])
    return "any with db_bench" if _kind(wl) == KIND_DB_BENCH else "any"


def matrix_page(configs: Configs, measured: set[str]) -> Page:
    members = suite_members(configs.suites)
    rows = []
    for name, wl in sorted(configs.workloads.items()):
        label: Any = Link(name, workload_href(name, "")) if name in measured else name
        rows.append([label, _measured(wl), _setup(wl), _engines(wl),
                     wl.get("description", ""), wl.get("answers", ""),
                     ", ".join(members.get(name, [])) or MISSING])
    table = Table(("Workload", "Measured benchmark", "Untimed setup", "Engines", "What it exercises",
                   "Question it answers", "Suites"), rows, (False,) * 7)
    intro = Markup("Every workload in `conf/workload/`, from its `description` and `answers` fields. "
                   "A linked name has results on this site.")
    return Page("Benchmark matrix", intro, [Section("Workloads", tables=[table])], wide=True)


def cache_rows(caches: dict[str, dict[str, Any]]) -> list[list[Any]]:
    def yes(value: Any) -> str:
        return "yes" if value else "no"
    return [[name, c.get("description", ""), yes(c.get("evict_page_cache")), yes(c.get("drop_caches")),
             str(c.get("warm_passes", 0)), yes(c.get("block_cache_fits_data")),
             MISSING if c.get("min_residency_pct") is None else f"≥ {c['min_residency_pct']} %",
             MISSING if c.get("max_residency_pct") is None else f"≤ {c['max_residency_pct']} %"]
            for name, c in sorted(caches.items())]


def methodology_context(configs: Configs, noise: Table, gate: GateConf) -> dict[str, Any]:
    """Tables for methodology.md.j2: workloads, cache states, builds, noise, site speed, and the
    gate config's thresholds and baseline."""
    workloads = [[name, wl.get("benchmark", ""), " → ".join(wl.get("setup") or []) or "none",
                  wl.get("description", "")] for name, wl in sorted(configs.workloads.items())]
    builds = [[name, b.get("description", ""), "yes ⚠" if b.get("instrumented") else "no"]
              for name, b in sorted(configs.builds.items())]
    return {"workloads": workloads, "caches": cache_rows(configs.caches), "builds": builds,
            "noise": noise if noise.rows else None, "speed": configs.site_speed, "anchor": slug, "gate": gate}
