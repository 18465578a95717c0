"""`tidemark site`: results DB → Markdown pages → MkDocs site (wiring only)."""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd
import plotly.offline

from . import aggregates, charts, queries, render
from .analysis_pages import latest_refresh_page, percentiles_page, sustained_page
from .conditions import cache_states_page, scaling_page
from .config_pages import Configs, load_configs, matrix_page, methodology_context
from .format import nav_title, slug
from .gate_page import gate_page
from .history_pages import history_page, summary_pair, summary_page
from .machine_pages import machine_href, machine_page, machines_index
from .pages import home_page, runs_index, workload_page
from .run_page import compact_rows, invocation_row, run_page
from .stats_site import start_stats_pages
from .tables import Page
from .variant_pages import sweeps_page, variants_page

REPO_ROOT = Path(__file__).resolve().parents[1]
HANDWRITTEN = REPO_ROOT / "site"
BASE_CONFIG = REPO_ROOT / "mkdocs.yml"
CONF_DIR = REPO_ROOT / "conf"
SITE_SPEED = REPO_ROOT / "benchmarks" / "site_speed.json"
LOG_TAIL_BYTES = 4096  # the end of each invocation's stdout shown on its run page
# The newest runs' pages show each invocation's command, conditions and log; older ones keep a
# row (and its permalink) per invocation without them, so a long history builds quickly.
DETAILED_RUN_PAGES = 100
SLOT = '<div class="tm-slot" data-slot="{}"></div>'
SLOT_SEPARATOR = "===SLOT==="


@dataclass(frozen=True)
class Results:
    """Everything the pages need, read once with aggregated queries."""

    runs: pd.DataFrame
    points: pd.DataFrame
    invocations: pd.DataFrame
    machines: pd.DataFrame
    residency: pd.DataFrame
    windows: pd.DataFrame
    intervals: pd.DataFrame
    noise: pd.DataFrame | None
    samples: pd.DataFrame  # repetitions of the summarized run and its previous comparable run


def read_results(db: Path) -> Results:
    con = queries.open_results(db)
    try:
        runs, points = queries.read_runs(con), queries.read_points(con)
        new_id, old_id = summary_pair(runs, points)
        compared = [new_id, old_id or new_id]
        return Results(runs, points, queries.read_invocations(con), aggregates.read_machines(con),
                       aggregates.read_residency(con), aggregates.read_windows(con),
                       aggregates.read_intervals(con),
                       aggregates.read_optional_table(con, ("noise", "series_noise")),
                       aggregates.read_samples(con, compared))
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


def _write_workloads(env: jinja2.Environment, docs: Path,
                     points: pd.DataFrame) -> list[dict[str, str]]:
    """One page per workload with its trend chart; returns the nav entries."""
    nav = []
    for index, name in enumerate(sorted(points["workload"].unique())):
        page = workload_page(name, points)
        chart = charts.trend_chart(page["series"], f"trend-{index}") if page["series"] else ""
        path = render.write_page(env, "workload.md.j2", docs / "workloads" / f"{slug(name)}.md",
                                 page=page, chart=chart)
        nav.append({nav_title(name): str(path.relative_to(docs))})
    return nav


def _log_tails(invocations: pd.DataFrame) -> dict[str, str]:
    """invocation_id → the end of its stdout log, for logs still on this disk."""
    tails = {}
    for iid, log_path in zip(invocations["invocation_id"], invocations["log_path"]):
        path = Path(log_path) if log_path else None
        if path is None or not path.is_file():
            continue
        with path.open("rb") as handle:
            handle.seek(max(0, path.stat().st_size - LOG_TAIL_BYTES))
            tails[iid] = handle.read().decode("utf-8", errors="replace")
    return tails


def _write_runs(env: jinja2.Environment, docs: Path, fragments: Path, results: Results) -> None:
    """The runs list and one page per run (every run keeps its permalink); each page's big
    tables go to `fragments` as HTML, put in place after MkDocs by `_fill_run_pages`."""
    runs, points, invocations = results.runs, results.points, results.invocations
    render.write_page(env, "runs.md.j2", docs / "runs" / "index.md", page=runs_index(runs))
    detailed = set(runs["run_id"].head(DETAILED_RUN_PAGES))
    recent = invocations[invocations["run_id"].isin(detailed)]
    tails = _log_tails(recent)
    rows_by_run: dict[str, list[dict[str, Any]]] = {}
    for inv in recent.to_dict("records"):
        rows_by_run.setdefault(inv["run_id"], []).append(
            invocation_row(inv, tails.get(inv["invocation_id"], "")))
    compact = compact_rows(invocations[~invocations["run_id"].isin(detailed)])
    points_by_run = dict(tuple(points[points["run_id"].isin(detailed)].groupby("run_id")))
    templates = {name: env.get_template(name) for name in
                 ("run.md.j2", "run_tables.html.j2", "run_compact.html.j2")}
    fragments.mkdir(parents=True, exist_ok=True)
    for _, run in runs.iterrows():
        run_id = run["run_id"]
        mine = points_by_run.get(run_id, points.iloc[0:0])
        page, tables = run_page(run, mine, rows_by_run.get(run_id, []))
        if run_id in detailed:
            html = templates["run_tables.html.j2"].render(**tables)
        else:
            page["has_results"], page["compact"] = False, True
            html = templates["run_compact.html.j2"].render(rows=compact.get(run_id, ""))
        (docs / "runs" / f"{slug(run_id)}.md").write_text(templates["run.md.j2"].render(page=page),
                                                          encoding="utf-8")
        (fragments / f"{slug(run_id)}.html").write_text(html, encoding="utf-8")


def _fill_run_pages(site: Path, fragments: Path) -> None:
    """Replace the slots MkDocs left in each built run page with its HTML tables."""
    for fragment in fragments.glob("*.html"):
        page = site / "runs" / fragment.name
        results, _, invocations = fragment.read_text(encoding="utf-8").partition(SLOT_SEPARATOR)
        html = page.read_text(encoding="utf-8")
        html = html.replace(SLOT.format("results"), results, 1)
        html = html.replace(SLOT.format("invocations"), invocations, 1)
        page.write_text(html, encoding="utf-8")


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


def _write_analysis(env: jinja2.Environment, docs: Path, results: Results,
                    configs: Configs) -> list[Any]:
    """The summary and analysis pages; returns their nav sections."""
    points = results.points
    summary = [
        _write_sections(env, docs, "summary.md", summary_page(results.runs, points, results.samples)),
        _write_sections(env, docs, "latest.md", latest_refresh_page(points)),
        _write_sections(env, docs, "history.md",
                        history_page(results.runs, points, configs.instrumented)),
        _write_sections(env, docs, "gate.md", gate_page(results.runs, points, results.samples)),
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
    render.write_page(env, "methodology.md.j2", docs / "methodology.md",
                      **methodology_context(configs, results.noise))
    measured = set(results.points["workload"].unique()) if len(results.points) else set()
    nav: list[Any] = [{"Methodology": "methodology.md"},
                      _write_sections(env, docs, "matrix.md", matrix_page(configs, measured))]
    if (docs / "power.md").is_file():  # written by hand from the statistics benchmark
        nav.append({"Statistical power": "power.md"})
    return nav


def build_site(db: Path, out: Path) -> Path:
    """Render every page from `db` into out/docs, build out/site; return out/site/index.html."""
    results = read_results(db)
    configs = load_configs(CONF_DIR, SITE_SPEED)
    docs = _fresh_docs(out)
    stats_nav = start_stats_pages(docs, db, results.points)  # runs alongside the pages below
    env = render.environment()
    render.write_page(env, "index.md.j2", docs / "index.md",
                      page=home_page(results.runs, results.points))
    analysis_nav = _write_analysis(env, docs, results, configs)
    workload_nav = _write_workloads(env, docs, results.points)
    machine_nav = _write_machines(env, docs, results)
    fragments = out / "fragments"
    shutil.rmtree(fragments, ignore_errors=True)
    _write_runs(env, docs, fragments, results)
    reference_nav = _write_reference(env, docs, results, configs)
    nav: list[Any] = [{"Home": "index.md"}, *analysis_nav]
    if workload_nav:
        nav.append({"Workloads": workload_nav})
    nav += [{"Machines": machine_nav}, {"Runs": "runs/index.md"}, {"Statistics": stats_nav()},
            {"Reference": reference_nav}]
    config = render.write_config(out, BASE_CONFIG, nav)
    render.mkdocs_build(config)
    _fill_run_pages(out / "site", fragments)
    return out / "site" / "index.html"
