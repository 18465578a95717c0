"""The site's pages of sections as the build engine knows them: one list (pure).

Each entry names the page's file, the nav section it is listed under, which of the build's
processes writes it, and how it is built from what the build read. Adding a page of sections
(a `tables.Page`, rendered by templates/sections.md.j2) is a module here and one line in
PAGES; reports/build/site_pages.py writes every entry, in list order within its process, and
lists it in the nav in list order within its section. The pages with templates of their own or
one page per workload, machine or run are written there by name (ARCHITECTURE.md lists them).

The processes: the build has 2 cores, so the pages that need no verdicts are written by the
main process while a child reads the verdicts (EARLY), the verdicts' pages after them
(VERDICTS), and two forked children write the others meanwhile (ANALYSIS, MACHINES).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable

from .analysis_pages import latest_refresh_page, percentiles_page
from .conditions import cache_states_page, scaling_page
from .commits_page import commits_page
from .config_pages import Configs, matrix_page
from .fleet_page import fleet_page
from .gate_page import gate_page
from .history_pages import history_page
from .point_groups import PointGroups
from .summary_page import PointLookup, summary_page
from .sustained_page import sustained_page
from .tables import Page
from .variant_pages import sweeps_page, variants_page

EARLY, VERDICTS, ANALYSIS, MACHINES = "early", "verdicts", "analysis", "machines"
# The nav sections the build lists these pages under, in the nav's order ("": an entry of its own).
NAV_SECTIONS = ("Summary", "Analysis", "", "Reference")


class PageInputs:
    """What a listed page is built from: the build's reads (reports/build/site_reads.Results:
    runs, points, verdicts, windows, intervals, ...), the configs, and the points grouped by
    series identity once for every page that groups them."""

    def __init__(self, results: Any, configs: Configs, groups: PointGroups):
        self.results, self.configs, self.groups = results, configs, groups
        self.runs, self.points = results.runs, results.points

    @cached_property
    def lookup(self) -> PointLookup:
        """The points of the runs the summary and gate pages compare."""
        verdicts = self.results.verdicts
        compared = {run for c in [verdicts.previous, verdicts.against_baseline] if c
                    for run in (c.cand, c.base) if run}
        if verdicts.gate:
            compared.add(verdicts.gate.report.base["run_id"])
        return PointLookup(self.points[self.points["run_id"].isin(compared)])

    def commit_instructions(self) -> Any:
        """The Commits page's instruction counts, read only when some run has a commit."""
        has = "commit_sha" in self.runs and self.runs["commit_sha"].notna().any()
        return self.results.commit_instructions if has else None

    def workload_notes(self) -> dict[str, list[str]]:
        return {name: [str(n) for n in conf.get("notes") or []]
                for name, conf in self.configs.workloads.items()}

    def measured_workloads(self) -> set[str]:
        return set(self.points["workload"].unique()) if len(self.points) else set()


@dataclass(frozen=True)
class ListedPage:
    path: str  # the Markdown file under docs/
    nav: str  # the nav section it is listed under; "" for an entry of its own
    process: str  # EARLY, VERDICTS, ANALYSIS or MACHINES
    build: Callable[[PageInputs], Page]


PAGES = (
    ListedPage("summary.md", "Summary", VERDICTS,
               lambda i: summary_page(i.runs, i.results.verdicts, i.lookup)),
    ListedPage("latest.md", "Summary", EARLY,
               lambda i: latest_refresh_page(i.points, i.runs, i.workload_notes())),
    ListedPage("history.md", "Summary", EARLY,
               lambda i: history_page(i.runs, i.points, i.configs.instrumented)),
    ListedPage("commits.md", "Summary", EARLY,
               lambda i: commits_page(i.points, i.runs, i.commit_instructions())),
    ListedPage("gate.md", "Summary", VERDICTS,
               lambda i: gate_page(i.runs, i.results.verdicts, i.lookup)),
    ListedPage("percentiles.md", "Analysis", ANALYSIS, lambda i: percentiles_page(i.points)),
    ListedPage("cache-states.md", "Analysis", ANALYSIS,
               lambda i: cache_states_page(i.points, i.groups)),
    ListedPage("scaling.md", "Analysis", ANALYSIS, lambda i: scaling_page(i.points, i.groups)),
    ListedPage("sustained.md", "Analysis", ANALYSIS,
               lambda i: sustained_page(i.results.windows, i.results.intervals)),
    ListedPage("sweeps.md", "Analysis", ANALYSIS, lambda i: sweeps_page(i.points, i.groups)),
    ListedPage("variants.md", "Analysis", ANALYSIS, lambda i: variants_page(i.points, i.groups)),
    ListedPage("fleet/index.md", "", MACHINES, lambda i: fleet_page(i.points, i.runs, i.groups)),
    ListedPage("matrix.md", "Reference", MACHINES,
               lambda i: matrix_page(i.configs, i.measured_workloads())),
)
