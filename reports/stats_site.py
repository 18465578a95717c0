"""Write the statistics pages into the docs dir (wiring only; builders are in stats_pages)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
import pandas as pd

from . import render
from .stats_data import read_stats
from .stats_pages import ab_page, changepoints_page, noise_page, targets_page

PAGES = ("noise", "change-points", "ab", "targets")


def write_stats_pages(env: jinja2.Environment, docs: Path, db: Path,
                      points: pd.DataFrame) -> list[dict[str, Any]]:
    """statistics/*.md; returns their nav entries."""
    data = read_stats(db, points)
    pages = {"noise": noise_page(points, data.aa_changes),
             "change-points": changepoints_page(points),
             "ab": ab_page(data), "targets": targets_page(points, data)}
    nav = []
    for name in PAGES:
        path = render.write_page(env, "sections.md.j2", docs / "statistics" / f"{name}.md",
                                 page=pages[name])
        nav.append({pages[name].nav_title: str(path.relative_to(docs))})
    return nav
