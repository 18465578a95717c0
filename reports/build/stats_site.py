"""Write the statistics pages into the docs dir (wiring only; builders are in stats_pages)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import jinja2
import pandas as pd

from orchestrator.gate import GateConf

from ..data.comparisons import SiteVerdicts
from ..data.site_cache import RememberedSteps, SiteCache
from ..data.stats_data import read_stats
from ..pages.regression_pages import alerts_page, bisects_page, confirmations_page
from ..pages.stats_pages import ab_page, changepoints_page, noise_page, targets_page
from . import forked, render

PAGES = ("noise", "change-points", "ab", "confirmations", "alerts", "bisects", "targets")


def _write(env: jinja2.Environment, docs: Path, name: str, page: Any) -> dict[str, Any]:
    path = render.write_page(env, "sections.md.j2", docs / "statistics" / f"{name}.md", page=page)
    return {page.nav_title: str(path.relative_to(docs))}


def write_stats_pages(env: jinja2.Environment, docs: Path, db: Path, points: pd.DataFrame,
                      gate: GateConf, aa_pairs: list[tuple[str, str]],
                      steps: RememberedSteps) -> dict[str, Any]:
    """statistics/*.md but the targets page (verdicts with the gate config's thresholds);
    returns their nav entries by page."""
    data = read_stats(db, gate)
    pages = {"noise": noise_page(points, aa_pairs, gate.thresholds),
             "change-points": changepoints_page(points, detect=steps.detect),
             "ab": ab_page(data), "confirmations": confirmations_page(data),
             "alerts": alerts_page(data), "bisects": bisects_page(data)}
    return {name: _write(env, docs, name, page) for name, page in pages.items()}


def start_stats_pages(docs: Path, fragments: Path, db: Path, points: pd.DataFrame,
                      gate: GateConf, aa_pairs: list[tuple[str, str]], cache: SiteCache,
                      gap_notes: dict[str, dict[str, str]] | None = None,
                      ) -> Callable[[SiteVerdicts], list[dict[str, Any]]]:
    """Write the statistics pages in a forked child while the caller reads the verdicts and
    writes the other pages (change-point detection is the slowest page on a long history, and
    needs no verdict; this machine has 2 cores). Returns a function that writes the targets
    page from the verdicts, waits for the child and gives the nav entries (or raises its
    error); `gap_notes`: workload → metric → why a target on it is missed. The child's change
    points of series whose window of history is unchanged come from the last build's `cache`;
    what it used is kept for the next. Tables go into slots under `fragments`."""
    steps = RememberedSteps(cache)
    slots_under = (docs, fragments)

    def work() -> tuple[dict[str, Any], dict[str, Any]]:
        nav = write_stats_pages(render.environment(slots_under), docs, db, points, gate,
                                aa_pairs, steps)
        return nav, steps.used

    wait = forked.start(work, "tidemark-stats-pages")

    def finish(site_verdicts: SiteVerdicts) -> list[dict[str, Any]]:
        targets = _write(render.environment(slots_under), docs, "targets",
                         targets_page(site_verdicts, points=points, gap_notes=gap_notes))
        nav, used = wait()
        steps.keep(used)
        nav["targets"] = targets
        return [nav[name] for name in PAGES]

    return finish
