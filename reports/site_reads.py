"""What a site build reads first (side effects: the DB read-only, out/cache): the runs and
what keys each run's page, so that the run pages' worker starts at once, then every run's
points, so that the statistics pages' process starts before the verdicts are read."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from orchestrator.store.reads import aa_pairs

from . import queries, read_cache
from .run_site import detailed_runs, log_files
from .site_cache import SiteCache


@dataclass(frozen=True)
class RunReads:
    runs: pd.DataFrame
    fingerprints: dict[str, str]  # run id → a hash of all the DB holds about it (read_cache)
    logs: dict[str, str]  # detailed run id → a hash of its logs' sizes and times
    aa_pairs: list[tuple[str, str]]  # A/A pairs of `tidemark ab`, for the noise tables


def read_runs(db: Path, cache: SiteCache) -> RunReads:
    """The runs and what keys each run's page: all the run pages' worker needs to start."""
    con = queries.open_results(db)
    try:
        runs = queries.read_runs(con)
        return RunReads(runs, read_cache.run_fingerprints(con, cache),
                        log_files(con, sorted(detailed_runs(runs))), aa_pairs(con))
    finally:
        con.close()


def read_points(db: Path, cache: SiteCache, fingerprints: dict[str, str]) -> pd.DataFrame:
    """Every run's points; those of runs unchanged since the last build from its cache."""
    con = queries.open_results(db)
    try:
        return read_cache.read_points(con, cache, fingerprints)
    finally:
        con.close()
