"""`tidemark site`: results DB → Markdown pages → MkDocs site (wiring only)."""
from __future__ import annotations

import dataclasses
import shutil
import time
from datetime import datetime, timezone
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import jinja2
import pandas as pd
import plotly.offline
from markupsafe import Markup

from orchestrator.errors import UserError
from orchestrator.gate import GateConf
from orchestrator.store.connection import check_database, connect, damage_error, snapshot
from orchestrator.store.reads import aa_pairs, parse_selector

from . import aggregates, charts, queries, render, slots
from .analysis_pages import latest_refresh_page, percentiles_page
from .caveats import with_caveats
from .comparisons import SiteVerdicts, read_verdicts
from .conditions import cache_states_page, scaling_page
from .config_pages import Configs, load_configs, matrix_page, methodology_context
from .format import date, nav_title, slug
from .gate_page import gate_page
from .history_pages import history_page
from .fleet_page import fleet_page
from .machine_pages import machine_href, machine_page, machines_index
from .dashboard import home_page
from .workload_page import workload_page
from .run_site import detailed_runs, write_run_pages, write_run_tables
from .noise_table import noise_table
from .stats_site import start_stats_pages
from .summary_page import PointLookup, summary_page
from .sustained_page import sustained_page
from .tables import Page
from .tools_site import (add_table_csv, csv_when_filled, place_tool_data, start_tool_data,
                         write_tool_pages)
from .variant_pages import sweeps_page, variants_page

REPO_ROOT = Path(__file__).resolve().parents[1]
HANDWRITTEN = REPO_ROOT / "site"
BASE_CONFIG = REPO_ROOT / "mkdocs.yml"
CONF_DIR = REPO_ROOT / "conf"
SITE_SPEED = REPO_ROOT / "benchmarks" / "site_speed.json"


@dataclass(frozen=True)
class Results:
    """Everything the pages need, read once with aggregated queries."""

    runs: pd.DataFrame
    points: pd.DataFrame
    machines: pd.DataFrame
    residency: pd.DataFrame
    windows: pd.DataFrame
    intervals: pd.DataFrame
    aa_pairs: list[tuple[str, str]]  # A/A pairs of `tidemark ab`, for the noise tables
    verdicts: SiteVerdicts  # what the analysis core decided: summary, gate, targets, workloads
    gate: GateConf  # its thresholds decide every verdict on the site, as in `tidemark gate`
    phases: pd.DataFrame  # what each phase cost, for the newest runs (queries.read_phases)
    imported: pd.DataFrame  # every metric of the imported runs (queries.read_imported_values)


def latest_run_per_workload(points: pd.DataFrame) -> dict[str, str]:
    """workload → the newest run that measured it (points are oldest first)."""
    return dict(zip(points["workload"], points["run_id"]))


def read_results(db: Path, gate: GateConf) -> Results:
    con = queries.open_results(db)
    try:
        if gate.baseline:
            parse_selector(gate.baseline)  # a malformed selector is the user's error, not a page
        runs, points = queries.read_runs(con), queries.read_points(con)
        latest = latest_run_per_workload(points)
        phased = sorted(set(latest.values()) | detailed_runs(runs))
        return Results(runs, points, aggregates.read_machines(con),
                       aggregates.read_residency(con), aggregates.read_windows(con),
                       aggregates.read_intervals(con), aa_pairs(con),
                       read_verdicts(con, gate, latest.values()), gate,
                       queries.read_phases(con, phased), queries.read_imported_values(con))
    finally:
        con.close()


def _fresh_docs(out: Path) -> Path:
    """out/docs starts as a copy of the hand-written pages; old generated pages must not linger."""
    docs = out / "docs"
    shutil.rmtree(docs, ignore_errors=True)
    shutil.copytree(HANDWRITTEN, docs)
    assets = docs / "assets"
    assets.mkdir(exist_ok=True)
    # Served from the site itself so the pages work offline (no CDN).
    (assets / "plotly.min.js").write_text(plotly.offline.get_plotlyjs(), encoding="utf-8")
    return docs


def _write_workloads(env: jinja2.Environment, docs: Path, fragments: Path,
                     results: Results, configs: Configs) -> list[dict[str, str]]:
    """One page per workload with its trend chart (a slot: megabytes of JSON on a long
    history); returns the nav entries."""
    nav = []
    points = results.points
    for index, name in enumerate(sorted(points["workload"].unique())):
        page = workload_page(name, points, results.verdicts.latest, runs=results.runs,
                             targets=results.verdicts.targets, phases=results.phases,
                             config=configs.workloads.get(name), imported=results.imported)
        if page["series"]:
            slots.save(fragments, f"workloads/{slug(name)}", "trend",
                       charts.trend_chart(page["series"], f"trend-{index}"))
        path = render.write_page(env, "workload.md.j2", docs / "workloads" / f"{slug(name)}.md",
                                 page=page, chart=bool(page["series"]))
        nav.append({nav_title(name): str(path.relative_to(docs))})
    return nav


def _write_home(env: jinja2.Environment, docs: Path, fragments: Path, results: Results) -> None:
    """The dashboard, its small trends in a slot (charts are HTML that needs no Markdown)."""
    page = home_page(results.runs, results.points, results.verdicts)
    render.write_page(env, "index.md.j2", docs / "index.md", page=page)
    if page["cards"]:
        cards = [{**card, "chart": Markup(charts.spark_chart(card["series"], f"spark-{index}"))}
                 for index, card in enumerate(page["cards"])]
        slots.save(fragments, "index", "sparks",
                   env.get_template("index_sparks.html.j2").render(cards=cards))


def _write_sections(env: jinja2.Environment, docs: Path, name: str, page: Page) -> dict[str, str]:
    path = render.write_page(env, "sections.md.j2", docs / name, page=page)
    return {nav_title(page.title): str(path.relative_to(docs))}


def _write_machines(env: jinja2.Environment, docs: Path, results: Results) -> list[Any]:
    nav: list[Any] = [_write_sections(env, docs, "machines/index.md",
                                      machines_index(results.machines))]
    for _, machine in results.machines.iterrows():
        fingerprint = machine["fingerprint"]
        runs = results.runs[results.runs["machine_fingerprint"] == fingerprint]
        residency = results.residency[results.residency["fingerprint"] == fingerprint]
        nav.append(_write_sections(env, docs, machine_href(fingerprint, ""),
                                   machine_page(machine, runs, residency)))
    return nav


def _compared_runs(verdicts: SiteVerdicts) -> set[str]:
    return {run for c in [verdicts.previous, verdicts.against_baseline] if c
            for run in (c.cand, c.base) if run} | ({verdicts.gate.report.base["run_id"]}
                                                   if verdicts.gate else set())


def _write_analysis(env: jinja2.Environment, docs: Path, results: Results,
                    configs: Configs) -> list[Any]:
    """The summary and analysis pages; returns their nav sections."""
    points = results.points
    lookup = PointLookup(points[points["run_id"].isin(_compared_runs(results.verdicts))])
    summary = [
        _write_sections(env, docs, "summary.md", summary_page(results.runs, results.verdicts,
                                                             lookup)),
        _write_sections(env, docs, "latest.md", latest_refresh_page(
            points, results.runs, {name: [str(n) for n in conf.get("notes") or []]
                                   for name, conf in configs.workloads.items()})),
        _write_sections(env, docs, "history.md",
                        history_page(results.runs, points, configs.instrumented)),
        _write_sections(env, docs, "gate.md", gate_page(results.runs, results.verdicts, lookup)),
    ]
    analysis = [
        _write_sections(env, docs, "percentiles.md", percentiles_page(points)),
        _write_sections(env, docs, "cache-states.md", cache_states_page(points)),
        _write_sections(env, docs, "scaling.md", scaling_page(points)),
        _write_sections(env, docs, "sustained.md", sustained_page(results.windows,
                                                                 results.intervals)),
        _write_sections(env, docs, "sweeps.md", sweeps_page(points)),
        _write_sections(env, docs, "variants.md", variants_page(points)),
    ]
    return [{"Summary": summary}, {"Analysis": analysis}]


def _write_reference(env: jinja2.Environment, docs: Path, results: Results,
                     configs: Configs) -> list[Any]:
    noise = noise_table(results.points, results.aa_pairs, results.gate.thresholds, "")
    render.write_page(env, "methodology.md.j2", docs / "methodology.md",
                      **methodology_context(configs, noise, results.gate))
    measured = set(results.points["workload"].unique()) if len(results.points) else set()
    nav: list[Any] = [{"Methodology": "methodology.md"},
                      _write_sections(env, docs, "matrix.md", matrix_page(configs, measured))]
    if (docs / "power.md").is_file():  # written by hand from the statistics benchmark
        nav.append({"Statistical power": "power.md"})
    return nav


@dataclass
class BuildTimes:
    """Wall-clock seconds per phase of one site build: the CLI prints them, the site-speed
    benchmark keeps them, so a slow build says where its time went."""

    seconds: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        began = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = round(time.perf_counter() - began, 1)

    def summary(self) -> str:
        return ", ".join(f"{name} {seconds:.1f} s" for name, seconds in self.seconds.items())


def _write_pages(out: Path, db: Path, fragments: Path, results: Results,
                 configs: Configs) -> Path:
    """Every Markdown page (and the slots' HTML that is ready before MkDocs) and the generated
    mkdocs.yml; returns the config's path."""
    docs = _fresh_docs(out)
    # The statistics pages are written alongside the pages below, in a forked child.
    stats_nav = start_stats_pages(docs, db, results.points, results.gate, results.verdicts,
                                  results.aa_pairs, {name: dict(conf.get("gap_notes") or {})
                                                     for name, conf in configs.workloads.items()})
    env = render.environment()
    _write_home(env, docs, fragments, results)
    analysis_nav = _write_analysis(env, docs, results, configs)
    workload_nav = _write_workloads(env, docs, fragments, results, configs)
    machine_nav = _write_machines(env, docs, results)
    write_run_pages(env, docs, results.runs, results.points, results.phases, results.imported)
    reference_nav = _write_reference(env, docs, results, configs)
    tools_nav = write_tool_pages(env, docs, results.gate)
    nav: list[Any] = [{"Home": "index.md"}, *analysis_nav]
    if workload_nav:
        nav.append({"Workloads": workload_nav})
    nav += [{"Machines": machine_nav},
            _write_sections(env, docs, "fleet/index.md", fleet_page(results.points, results.runs)),
            {"Runs": "runs/index.md"}, {"Statistics": stats_nav()},
            {"Tools": tools_nav}, {"Reference": reference_nav}]
    return render.write_config(out, BASE_CONFIG, nav, header_facts(results.runs))


def header_facts(runs: pd.DataFrame) -> dict[str, str]:
    """What every page's header says: when the site was generated, and its newest run."""
    return {"generated": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "runs": f"{len(runs):,} run{'s' if len(runs) != 1 else ''}",
            "newest": f"{date(runs.iloc[0]['started_at'])} ({runs.iloc[0]['run_id']})"}


def build_site(db: Path, out: Path, gate: GateConf = GateConf(),
               times: BuildTimes | None = None) -> Path:
    """Render every page from `db` into out/docs, build out/site; return out/site/index.html.
    `gate`: the baseline selector and thresholds the summary and Gate page use."""
    times = times or BuildTimes()
    with times.phase("snapshot"):
        # A consistent copy, taken under a read lock in a moment: a run may go on writing the
        # DB while the site is built from it (its later reads use the copy, never the DB).
        if not db.exists():
            raise UserError(f"no results database at {db}; run 'tidemark run' first or pass --db")
        copy = snapshot(db, out / "snapshot.duckdb")
        check_snapshot(copy, db)
        db = copy
    try:
        return _build_from(db, out, gate, times)
    finally:
        db.unlink(missing_ok=True)
        db.with_name(db.name + ".wal").unlink(missing_ok=True)


def check_snapshot(copy: Path, original: Path) -> None:
    """Every block of the copy read once (1 s for 600,000 invocations): a damaged DB stops the
    site in one line naming the original file, never a page half built from bad blocks."""
    con = connect(copy, read_only=True)
    try:
        check_database(con, copy)
    except UserError as error:
        raise damage_error(original, error) from None
    finally:
        con.close()


def _build_from(db: Path, out: Path, gate: GateConf, times: BuildTimes) -> Path:
    configs = load_configs(CONF_DIR, SITE_SPEED)
    with times.phase("read"):
        results = read_results(db, gate)
        runs, points = with_caveats(results.runs, results.points, configs.instrumented)
        results = dataclasses.replace(results, runs=runs, points=points)
    fragments = out / "fragments"
    shutil.rmtree(fragments, ignore_errors=True)
    with times.phase("pages"):
        # Parquet, CSV and precomputed comparisons: in a child until the site is built.
        tool_data = start_tool_data(db, out, fragments, results.runs, results.points, gate,
                                    results.verdicts.baseline.run_id, results.verdicts.candidate)
        config = _write_pages(out, db, fragments, results, configs)
    with times.phase("mkdocs"):
        # 2 cores: MkDocs on one, the run pages' big tables (needed only after it) on the other.
        with render.mkdocs_building(config):
            with times.phase("run tables, alongside mkdocs"):
                write_run_tables(render.environment(), fragments, db, results.runs, results.points)
    with times.phase("tool data"):
        place_tool_data(tool_data, out, out / "site")
    with times.phase("fill"):
        filled = slots.fill(out / "site", fragments, csv_when_filled(out / "site"), processes=2)
    with times.phase("csv, other pages"):
        add_table_csv(out / "site", filled)
    return out / "site" / "index.html"
