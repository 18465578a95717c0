"""Every generated Markdown page but the run pages, and the generated mkdocs.yml (wiring only:
page builders decide what a page says, templates how)."""
from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Callable

import jinja2
import pandas as pd
from markupsafe import Markup

from ..data.comparisons import SiteVerdicts
from ..pages import charts
from ..pages.analysis_pages import latest_refresh_page, percentiles_page
from ..pages.conditions import cache_states_page, scaling_page
from ..pages.config_pages import Configs, matrix_page, methodology_context
from ..pages.dashboard import home_page
from ..pages.fleet_page import fleet_page
from ..pages.format import date, nav_title, slug
from ..pages.gate_page import gate_page
from ..pages.history_pages import history_page
from ..pages.machine_pages import machine_href, machine_page, machines_index
from ..pages.noise_table import noise_table
from ..pages.point_groups import PointGroups
from ..pages.shared import runs_index
from ..pages.summary_page import PointLookup, summary_page
from ..pages.sustained_page import sustained_page
from ..pages.tables import Page, Table
from ..pages.variant_pages import sweeps_page, variants_page
from ..pages.workload_page import workload_page
from . import forked, render, slots
from .run_site import FOLDER as RUNS_FOLDER, exclude_from_mkdocs
from .site_reads import Results
from .tools_site import write_tool_pages

BASE_CONFIG = Path(__file__).resolve().parents[2] / "mkdocs.yml"  # what the generated one inherits


def _write_workloads(env: jinja2.Environment, docs: Path, fragments: Path,
                     results: Results, configs: Configs
                     ) -> tuple[list[dict[str, str]], Callable[[], None]]:
    """One page per workload; returns the nav entries and a function that waits for their
    trend charts (`_draw_trends`)."""
    nav, trends = [], []
    points = results.points
    for index, name in enumerate(sorted(points["workload"].unique())):
        page = workload_page(name, points, results.verdicts.latest, runs=results.runs,
                             targets=results.verdicts.targets, phases=results.phases,
                             config=configs.workloads.get(name), imported=results.imported)
        if page["series"]:
            trends.append((f"workloads/{slug(name)}", page["series"], f"trend-{index}"))
        path = render.write_page(env, "workload.md.j2", docs / "workloads" / f"{slug(name)}.md",
                                 page=page, chart=bool(page["series"]))
        nav.append({nav_title(name): str(path.relative_to(docs))})
    return nav, _draw_trends(fragments, trends)


def _draw_trends(fragments: Path, trends: list[tuple[str, list[Any], str]]
                 ) -> Callable[[], None]:
    """The workload pages' trend charts, into their slots, in a forked child: megabytes of JSON
    on a long history (0.6 CPU-s for 1,000 runs × 200 series) that only the slots' filling
    needs, after MkDocs, while this process waits for MkDocs and the other core would idle.
    Niced: the pages' chain comes first. Returns the function that waits for them."""
    def draw() -> None:
        for page, series, div_id in trends:
            slots.save(fragments, page, "trend", charts.trend_chart(series, div_id))

    return forked.start(draw, "tidemark-trend-charts", nice=forked.LATER)


def _write_home(env: jinja2.Environment, docs: Path, fragments: Path, results: Results) -> None:
    """The dashboard, its small trends in a slot (charts are HTML that needs no Markdown)."""
    page = home_page(results.runs, results.points, results.verdicts)
    render.write_page(env, "index.md.j2", docs / "index.md", page=page)
    if page["cards"]:
        cards = [{**card, "chart": Markup(charts.spark_chart(card["series"], f"spark-{index}"))}
                 for index, card in enumerate(page["cards"])]
        slots.save(fragments, "index", "sparks",
                   env.get_template("index_sparks.html.j2").render(cards=cards))


def _write_runs_index(env: jinja2.Environment, docs: Path, runs: pd.DataFrame) -> None:
    """runs/index.md, every run newest first: its table in a slot (Markdown spent a third of
    MkDocs' time on this one page of a long history)."""
    columns, rows = runs_index(runs)
    render.write_page(env, "runs.md.j2", docs / RUNS_FOLDER / "index.md",
                      runs=Table(columns, rows, numeric=tuple(c == "ok/n" for c in columns)))


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


def _write_history_pages(env: jinja2.Environment, docs: Path, results: Results,
                         configs: Configs) -> tuple[dict[str, str], dict[str, str]]:
    """The latest refresh and historical comparisons pages (points and runs: no verdicts);
    their nav entries."""
    points = results.points
    notes = {name: [str(n) for n in conf.get("notes") or []]
             for name, conf in configs.workloads.items()}
    return (_write_sections(env, docs, "latest.md",
                            latest_refresh_page(points, results.runs, notes)),
            _write_sections(env, docs, "history.md",
                            history_page(results.runs, points, configs.instrumented)))


def _write_verdict_pages(env: jinja2.Environment, docs: Path,
                         results: Results) -> tuple[dict[str, str], dict[str, str]]:
    """The summary and gate pages; their nav entries."""
    points = results.points
    lookup = PointLookup(points[points["run_id"].isin(_compared_runs(results.verdicts))])
    return (_write_sections(env, docs, "summary.md",
                            summary_page(results.runs, results.verdicts, lookup)),
            _write_sections(env, docs, "gate.md", gate_page(results.runs, results.verdicts, lookup)))


def _write_analysis(env: jinja2.Environment, docs: Path, results: Results,
                    groups: PointGroups) -> list[Any]:
    """The analysis pages (no verdicts, only points: in a forked child); their nav entries."""
    points = results.points
    return [
        _write_sections(env, docs, "percentiles.md", percentiles_page(points)),
        _write_sections(env, docs, "cache-states.md", cache_states_page(points, groups)),
        _write_sections(env, docs, "scaling.md", scaling_page(points, groups)),
        _write_sections(env, docs, "sustained.md", sustained_page(results.windows,
                                                                 results.intervals)),
        _write_sections(env, docs, "sweeps.md", sweeps_page(points, groups)),
        _write_sections(env, docs, "variants.md", variants_page(points, groups)),
    ]


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


def _write_machines_fleet_reference(env: jinja2.Environment, docs: Path, results: Results,
                                    configs: Configs, groups: PointGroups
                                    ) -> tuple[list[Any], dict[str, str], list[Any]]:
    """The machine pages, the fleet page and the reference pages; their nav entries."""
    fleet_nav = _write_sections(env, docs, "fleet/index.md",
                                fleet_page(results.points, results.runs, groups))
    return (_write_machines(env, docs, results), fleet_nav,
            _write_reference(env, docs, results, configs))


def header_facts(runs: pd.DataFrame, generated: datetime) -> dict[str, str]:
    """What every page's header says: when the site was generated, and its newest run."""
    return {"generated": generated.strftime("%Y-%m-%d %H:%M UTC"),
            "runs": f"{len(runs):,} run{'s' if len(runs) != 1 else ''}",
            "newest": f"{date(runs.iloc[0]['started_at'])} ({runs.iloc[0]['run_id']})"}


def write_pages(out: Path, docs: Path, fragments: Path, results: Results, configs: Configs,
                stats_nav: Callable[[SiteVerdicts], list[Any]], generated: datetime
                ) -> tuple[Path, Callable[[], None]]:
    """Every Markdown page but the run pages (and the slots' HTML that is ready before MkDocs)
    and the generated mkdocs.yml; returns the config's path and a function that waits for the
    slots drawn meanwhile (the trend charts). `stats_nav`: finishes the statistics pages
    (started earlier) and gives their nav entries."""
    # 2 cores: the analysis pages in a forked child, the statistics pages in another.
    slots_under = (docs, fragments)  # tables and charts: HTML in slots, not Markdown
    groups = PointGroups(results.points)  # the identity columns hashed once, for both children
    analysis_nav = forked.start(lambda: _write_analysis(render.environment(slots_under), docs,
                                                        results, groups),
                                "tidemark-analysis-pages")
    # And the machine, fleet and reference pages in a third: this process has the verdicts'
    # pages, and the Markdown is done when the slowest of the three is.
    machines_nav = forked.start(lambda: _write_machines_fleet_reference(
        render.environment(slots_under), docs, results, configs, groups),
        "tidemark-machine-pages")
    env = render.environment(slots_under)
    # First the pages that need no verdicts, while their child reads them; then the workload
    # pages, whose charts' child can start the sooner.
    _write_runs_index(env, docs, results.runs)
    latest_nav, history_nav = _write_history_pages(env, docs, results, configs)
    workload_nav, trends_drawn = _write_workloads(env, docs, fragments, results, configs)
    _write_home(env, docs, fragments, results)
    summary_nav, gate_nav = _write_verdict_pages(env, docs, results)
    tools_nav = write_tool_pages(env, docs, results.gate)
    machine_nav, fleet_nav, reference_nav = machines_nav()
    nav: list[Any] = [{"Home": "index.md"},
                      {"Summary": [summary_nav, latest_nav, history_nav, gate_nav]},
                      {"Analysis": analysis_nav()}]
    if workload_nav:
        nav.append({"Workloads": workload_nav})
    nav += [{"Machines": machine_nav}, fleet_nav, {"Runs": "runs/index.md"},
            {"Statistics": stats_nav(results.verdicts)}, {"Tools": tools_nav},
            {"Reference": reference_nav}]
    return render.write_config(out, BASE_CONFIG, nav, header_facts(results.runs, generated),
                               exclude_from_mkdocs()), trends_drawn
