"""`tidemark site`: results DB → Markdown pages → MkDocs site (wiring only)."""
from __future__ import annotations

import gc
import resource
import shutil
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator

import plotly.offline

from orchestrator.errors import UserError
from orchestrator.gate import GateConf
from orchestrator.store.reads import parse_selector

from ..data import read_cache
from ..data.site_cache import SiteCache
from ..pages import charts
from ..pages.config_pages import load_configs
from . import forked, mkdocs_child, render, slots
from .run_assembly import RunPagesWorker, place_run_pages, retire_run_pages
from .run_site import FOLDER as RUNS_FOLDER
from .site_pages import write_pages
from .site_reads import read_points, read_results, read_runs, start_verdicts
from .site_snapshot import check_snapshot, damage_to_user, take_snapshot
from .stats_site import start_stats_pages
from .tools_site import (add_table_csv, comparisons_writer, csv_when_filled, place_tool_data,
                         start_history_export)

REPO_ROOT = Path(__file__).resolve().parents[2]
HANDWRITTEN = REPO_ROOT / "site"
CONF_DIR = REPO_ROOT / "conf"
SITE_SPEED = REPO_ROOT / "benchmarks" / "site_speed.json"
CHART_LAYOUT = "chart-layout"  # the cache's kind for charts.validated_layout()


def _fresh_docs(out: Path) -> Path:
    """out/docs starts as a copy of the hand-written pages; old generated pages must not linger
    (but run pages: `write_run_pages` keeps the unchanged ones and removes the others)."""
    docs = out / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for path in docs.iterdir():
        if path.name == RUNS_FOLDER and path.is_dir():
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    shutil.copytree(HANDWRITTEN, docs, dirs_exist_ok=True)
    assets = docs / "assets"
    assets.mkdir(exist_ok=True)
    # Served from the site itself so the pages work offline (no CDN).
    (assets / "plotly.min.js").write_text(plotly.offline.get_plotlyjs(), encoding="utf-8")
    return docs


@dataclass
class BuildTimes:
    """Wall-clock seconds per phase of one site build: the CLI prints them, the site-speed
    benchmark keeps them, so a slow build says where its time went. `cpu`: CPU seconds of this
    process and of the processes it waited for in the phase (a busy machine stretches the
    wall-clock figures; these much less)."""

    seconds: dict[str, float] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what else the build says about itself

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        began, cpu = time.perf_counter(), _cpu_seconds()
        try:
            yield
        finally:
            self.seconds[name] = round(time.perf_counter() - began, 1)
            self.cpu[name] = round(_cpu_seconds() - cpu, 1)

    def summary(self) -> str:
        return ", ".join([f"{name} {seconds:.1f} s" for name, seconds in self.seconds.items()]
                         + self.notes)


def _cpu_seconds() -> float:
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                         resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def generation_time() -> datetime:
    """When this build happened, as the header and the published data's manifest say."""
    return datetime.now(timezone.utc)


def build_site(db: Path, out: Path, gate: GateConf = GateConf(),
               times: BuildTimes | None = None,
               taken: Callable[[], Path] | None = None,
               mkdocs: subprocess.Popen | None = None) -> Path:
    """Render every page from `db` into out/docs, build out/site; return out/site/index.html.
    `gate`: the baseline selector and thresholds the summary and Gate page use; `taken`:
    waits for a `take_snapshot` already under way and `mkdocs`: the MkDocs child
    (mkdocs_child.start_mkdocs with out/mkdocs.log), when the CLI started them before it
    imported this (the build ends the child)."""
    times = times or BuildTimes()
    with _without_cycle_collection():
        return _build(db, out, gate, times, taken, mkdocs)


@contextmanager
def _without_cycle_collection() -> Iterator[None]:
    """No cyclic garbage collection during a build (nor in its forked children): it makes
    hundreds of thousands of objects that live to its end, which the collector walked again
    and again (482 collections in an incremental build of the synthetic history, 0.18 s of the
    main process), touching, and so copying, the pages the forked children share with it. The
    cycles a build leaves are freed when it ends (1.34 → 1.38 GB at most in a full build)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _build(db: Path, out: Path, gate: GateConf, times: BuildTimes,
           taken: Callable[[], Path] | None, mkdocs: subprocess.Popen | None) -> Path:
    started = [mkdocs] if mkdocs is not None else []  # ended however the build ends
    try:
        with times.phase("snapshot"):
            copy = taken() if taken else take_snapshot(db, out)
        return _build_from_copy(db, copy, out, gate, times, started)
    finally:
        for child in started:  # if the build stopped before MkDocs was told to build
            mkdocs_child.stop_mkdocs(child)


def _build_from_copy(db: Path, copy: Path, out: Path, gate: GateConf, times: BuildTimes,
                     started: list[subprocess.Popen]) -> Path:
    checked: Callable[[], None] | None = None
    try:
        # Checked in a child while this process reads the runs (the check alone took 0.6 s of
        # a 5 s goal with the other core idle); nothing is built into site/ before it is done.
        checked = forked.start(lambda: check_snapshot(copy, db, read_cache.READ_IN_FULL),
                               "tidemark-db-check")
        if not started:  # it imports meanwhile, then waits to be told the config
            started.append(mkdocs_child.start_mkdocs(out / "mkdocs.log"))
        render.keep_compiled(out)
        return _build_from(copy, out, gate, times, checked, started[0])
    except Exception as error:
        try:
            if checked is not None:
                checked()
        except UserError:  # a damaged DB: its one line, not whatever a bad block's read raised
            raise
        except Exception:  # noqa: BLE001 - the check's own failure: the build's error says more
            pass
        said = damage_to_user(error, db)  # a table the check left to the build's own reads
        if said is not error:
            raise said from None
        raise
    finally:
        render.keep_compiled(None)
        copy.unlink(missing_ok=True)
        copy.with_name(copy.name + ".wal").unlink(missing_ok=True)


def _build_from(db: Path, out: Path, gate: GateConf, times: BuildTimes,
                checked: Callable[[], None], mkdocs: subprocess.Popen) -> Path:
    if gate.baseline:
        parse_selector(gate.baseline)  # a malformed selector is the user's error, not a page
    generated = generation_time()
    configs = load_configs(CONF_DIR, SITE_SPEED)
    cache = SiteCache(out / "cache")  # what the last build into `out` left to reuse
    config, site = out / "mkdocs.yml", out / "site"
    with times.phase("runs"):
        first = read_runs(db, cache, configs.instrumented)
        docs = _fresh_docs(out)
    # Validated once before any fork (the children that draw charts inherit it), or taken
    # from the last build: its key is the generator's, which covers the code and plotly.
    layout = cache.lookup(CHART_LAYOUT, CHART_LAYOUT, CHART_LAYOUT)
    if layout is None:
        layout = charts.validated_layout()
    charts.adopt_layout(layout)
    cache.store(CHART_LAYOUT, CHART_LAYOUT, CHART_LAYOUT, layout)
    # 2 cores: the run pages (Markdown, tables, bodies) in a worker, the verdicts, the
    # history's export, the statistics pages and the comparisons in other processes (and some
    # pages: write_pages), the points and the verdicts' pages here.
    worker = RunPagesWorker(db, docs, config, first, cache)
    # It empties the staging folder, where the verdicts' child writes the comparisons.
    exported = start_history_export(db, out, first.runs, first.fingerprints, cache, generated)
    # The verdicts while the points are read here, then the comparisons.
    verdicts, compared = start_verdicts(db, gate, first, cache,
                                        comparisons_writer(db, out, first, gate))
    try:
        with times.phase("points"):
            points, points_kept = read_points(db, cache, first)
        fragments = out / "fragments"
        shutil.rmtree(fragments, ignore_errors=True)
        gap_notes = {name: dict(conf.get("gap_notes") or {})
                     for name, conf in configs.workloads.items()}
        stats_nav = start_stats_pages(docs, fragments, db, points, gate, first.aa_pairs, cache,
                                      gap_notes)
        with times.phase("read"):
            results = read_results(db, gate, first, points, cache, verdicts)
        with times.phase("pages"):
            config, trends_drawn = write_pages(out, docs, fragments, results, configs,
                                               stats_nav, generated)
            worker.wait_for_markdown()
        checked()  # the last build's site stays whole if the DB is damaged
        retire_run_pages(site)
    finally:
        worker.go_on()
    with times.phase("mkdocs"):
        with mkdocs_child.mkdocs_building(config, mkdocs):
            made = worker.bodies()
    with times.phase("run pages"):
        placed = place_run_pages(site, made, cache)
    times.notes.append(f"{made.rebuilt} of {len(made.pages)} run pages rebuilt")
    with times.phase("tool data"):
        place_tool_data(exported, compared, out, site, fragments, results.points, cache)
    with times.phase("fill"):
        trends_drawn()
        filled = slots.fill(site, fragments, csv_when_filled(site), processes=2)
    with times.phase("csv, other pages"):
        add_table_csv(site, filled | placed)
    problem = points_kept()
    if problem:
        times.notes.append(problem)
    cache.save()
    return site / "index.html"
