"""`tidemark site`: results DB → Markdown pages → MkDocs site (wiring only)."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd
import plotly.offline

from . import charts, queries, render
from .format import nav_title, slug
from .pages import home_page, runs_index, workload_page
from .run_page import run_page

REPO_ROOT = Path(__file__).resolve().parents[1]
HANDWRITTEN = REPO_ROOT / "site"
BASE_CONFIG = REPO_ROOT / "mkdocs.yml"


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


def _write_runs(env: jinja2.Environment, docs: Path, runs: pd.DataFrame, points: pd.DataFrame,
                invocations: pd.DataFrame) -> None:
    """The runs list and one page per run."""
    render.write_page(env, "runs.md.j2", docs / "runs" / "index.md", page=runs_index(runs))
    points_by_run = dict(tuple(points.groupby("run_id")))
    invocations_by_run = dict(tuple(invocations.groupby("run_id")))
    for _, run in runs.iterrows():
        run_id = run["run_id"]
        page = run_page(run, points_by_run.get(run_id, points.iloc[0:0]),
                        invocations_by_run.get(run_id, invocations.iloc[0:0]))
        render.write_page(env, "run.md.j2", docs / "runs" / f"{slug(run_id)}.md", page=page)


def build_site(db: Path, out: Path) -> Path:
    """Render every page from `db` into out/docs, build out/site; return out/site/index.html."""
    con = queries.open_results(db)
    try:
        runs = queries.read_runs(con)
        points = queries.read_points(con)
        invocations = queries.read_invocations(con)
    finally:
        con.close()
    docs = _fresh_docs(out)
    env = render.environment()
    render.write_page(env, "index.md.j2", docs / "index.md", page=home_page(runs, points))
    workload_nav = _write_workloads(env, docs, points)
    _write_runs(env, docs, runs, points, invocations)
    nav: list[Any] = [{"Home": "index.md"}]
    if workload_nav:
        nav.append({"Workloads": workload_nav})
    nav += [{"Runs": "runs/index.md"}, {"Methodology": "methodology.md"}]
    config = render.write_config(out, BASE_CONFIG, nav)
    render.mkdocs_build(config)
    return out / "site" / "index.html"
