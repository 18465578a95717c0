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
from ..pages.catalog import ANALYSIS, EARLY, MACHINES, PAGES, VERDICTS, PageInputs
from ..pages.config_pages import Configs, methodology_context
from ..pages.dashboard import home_page
from ..pages.format import date, nav_title, slug
from ..pages.machine_pages import machine_href, machine_page, machines_index
from ..pages.noise_table import noise_table
from ..pages.point_groups import PointGroups
from ..pages.shared import runs_index
from ..pages.tables import Page, Table
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
            trends.append((f"workloads/{slug(name)}", page["series"], f"trend-{index}",
                           page["series_axis"]))
        path = render.write_page(env, "workload.md.j2", docs / "workloads" / f"{slug(name)}.md",
                                 page=page, chart=bool(page["series"]))
        nav.append({nav_title(name): str(path.relative_to(docs))})
    return nav, _draw_trends(fragments, trends)


def _draw_trends(fragments: Path, trends: list[tuple[str, list[Any], str, str]]
                 ) -> Callable[[], None]:
    """The workload pages' trend charts, into their slots, in a forked child: megabytes of JSON
    on a long history (0.6 CPU-s for 1,000 runs × 200 series) that only the slots' filling
    needs, after MkDocs, while this process waits for MkDocs and the other core would idle.
    Niced: the pages' chain comes first. Returns the function that waits for them."""
    def draw() -> None:
        for page, series, div_id, axis in trends:
            slots.save(fragments, page, "trend", charts.trend_chart(series, div_id, axis))

    return forked.start(draw, "tidemark-trend-charts", nice=forked.LATER)


def _write_home(env: jinja2.Environment, docs: Path, fragments: Path, results: Results) -> None:
    """The dashboard, its small trends in a slot (charts are HTML that needs no Markdown)."""
    page = home_page(results.runs, results.points, results.verdicts)
    render.write_page(env, "index.md.j2", docs / "index.md", page=page)
    if page["cards"]:
        runs = charts.ChartRuns("sparks")  # one table of runs for every small trend
        cards = [{**card, "chart": Markup(charts.spark_chart(card["series"], f"spark-{index}",
                                                             runs))}
                 for index, card in enumerate(page["cards"])]
        slots.save(fragments, "index", "sparks",
                   env.get_template("index_sparks.html.j2").render(cards=cards) + runs.script())


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


def _write_listed(env: jinja2.Environment, docs: Path, inputs: PageInputs,
                  process: str) -> dict[str, dict[str, str]]:
    """Every page of pages/catalog.PAGES that `process` writes, in list order; their nav
    entries by path."""
    return {page.path: _write_sections(env, docs, page.path, page.build(inputs))
            for page in PAGES if page.process == process}


def _listed_nav(written: dict[str, dict[str, str]], section: str) -> list[dict[str, str]]:
    """The nav entries of a section's listed pages, in list order."""
    return [written[page.path] for page in PAGES if page.nav == section]


def _write_methodology(env: jinja2.Environment, docs: Path, results: Results,
                       configs: Configs) -> None:
    noise = noise_table(results.points, results.aa_pairs, results.gate.thresholds, "")
    render.write_page(env, "methodology.md.j2", docs / "methodology.md",
                      **methodology_context(configs, noise, results.gate))


def _write_machines_and_listed(env: jinja2.Environment, docs: Path, inputs: PageInputs
                               ) -> tuple[list[Any], dict[str, dict[str, str]]]:
    """The machine pages, the methodology and the listed MACHINES pages (the fleet and matrix
    pages); their nav entries."""
    listed = _write_listed(env, docs, inputs, MACHINES)
    _write_methodology(env, docs, inputs.results, inputs.configs)
    return _write_machines(env, docs, inputs.results), listed


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
    # The identity columns hashed once, for both children.
    inputs = PageInputs(results, configs, PointGroups(results.points))
    analysis_nav = forked.start(lambda: _write_listed(render.environment(slots_under), docs,
                                                      inputs, ANALYSIS),
                                "tidemark-analysis-pages")
    # And the machine, fleet and reference pages in a third: this process has the verdicts'
    # pages, and the Markdown is done when the slowest of the three is.
    machines_nav = forked.start(lambda: _write_machines_and_listed(
        render.environment(slots_under), docs, inputs), "tidemark-machine-pages")
    env = render.environment(slots_under)
    # First the pages that need no verdicts, while their child reads them; then the workload
    # pages, whose charts' child can start the sooner.
    _write_runs_index(env, docs, results.runs)
    written = _write_listed(env, docs, inputs, EARLY)
    workload_nav, trends_drawn = _write_workloads(env, docs, fragments, results, configs)
    _write_home(env, docs, fragments, results)
    written |= _write_listed(env, docs, inputs, VERDICTS)
    tools_nav = write_tool_pages(env, docs, results.gate)
    machine_nav, machines_listed = machines_nav()
    written |= analysis_nav() | machines_listed
    nav: list[Any] = [{"Home": "index.md"},
                      {"Summary": _listed_nav(written, "Summary")},
                      {"Analysis": _listed_nav(written, "Analysis")}]
    if workload_nav:
        nav.append({"Workloads": workload_nav})
    reference_nav = [{"Methodology": "methodology.md"}, *_listed_nav(written, "Reference")]
    if (docs / "power.md").is_file():  # written by hand from the statistics benchmark
        reference_nav.append({"Statistical power": "power.md"})
    nav += [{"Machines": machine_nav}, *_listed_nav(written, ""), {"Runs": "runs/index.md"},
            {"Statistics": stats_nav(results.verdicts)}, {"Tools": tools_nav},
            {"Reference": reference_nav}]
    return render.write_config(out, BASE_CONFIG, nav, header_facts(results.runs, generated),
                               exclude_from_mkdocs()), trends_drawn
