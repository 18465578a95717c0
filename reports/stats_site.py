"""Write the statistics pages into the docs dir (wiring only; builders are in stats_pages)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import jinja2
import pandas as pd

from orchestrator.gate import GateConf

from . import forked, render
from .comparisons import SiteVerdicts
from .stats_data import read_stats
from .stats_pages import ab_page, changepoints_page, noise_page, targets_page

PAGES = ("noise", "change-points", "ab", "targets")


def write_stats_pages(env: jinja2.Environment, docs: Path, db: Path, points: pd.DataFrame,
                      gate: GateConf, site_verdicts: SiteVerdicts,
                      aa_pairs: list[tuple[str, str]],
                      gap_notes: dict[str, dict[str, str]] | None = None) -> list[dict[str, Any]]:
    """statistics/*.md (verdicts with the gate config's thresholds); returns their nav entries.
    `gap_notes`: workload → metric → why a target on it is missed."""
    data = read_stats(db, gate)
    pages = {"noise": noise_page(points, aa_pairs, gate.thresholds),
             "change-points": changepoints_page(points),
             "ab": ab_page(data), "targets": targets_page(site_verdicts, points=points,
                                                          gap_notes=gap_notes)}
    nav = []
    for name in PAGES:
        path = render.write_page(env, "sections.md.j2", docs / "statistics" / f"{name}.md",
                                 page=pages[name])
        nav.append({pages[name].nav_title: str(path.relative_to(docs))})
    return nav


def start_stats_pages(docs: Path, db: Path, points: pd.DataFrame, gate: GateConf,
                      site_verdicts: SiteVerdicts, aa_pairs: list[tuple[str, str]],
                      gap_notes: dict[str, dict[str, str]] | None = None,
                      ) -> Callable[[], list[dict[str, Any]]]:
    """Write the statistics pages in a forked child while the caller writes the other pages
    (change-point detection is the slowest page on a long history; this machine has 2 cores).
    Returns a function that waits for the child and gives the nav entries (or raises its error)."""
    return forked.start(lambda: write_stats_pages(render.environment(), docs, db, points, gate,
                                                  site_verdicts, aa_pairs, gap_notes),
                        "tidemark-stats-pages")
