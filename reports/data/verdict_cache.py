"""The verdicts' sample summaries kept between builds (side effects: out/cache).

Most of a comparison's time is its samples' summary (analysis.stats.summarize_samples: the
medians, the bootstrap CI and the U test), which depends on the two samples alone. Its
judgement, by the series' noise and the thresholds, is not kept: a new run changes the history
every series' noise is measured from, so an older pair's verdict is judged again in every
build, from a summary kept under a hash of the two samples (with the versions of the libraries
that compute it; the code's own version is the generator fingerprint every index carries).

The Compare page's comparisons (build/compare_site.py) are the one writer of this kind: they keep
the summaries they used and those the site's verdicts recorded (`SiteVerdicts.summaries`), so
a pair compared on the Summary in one build is found by the Compare page in the next. A site
build computes both in one child (site_reads.start_verdicts), the comparisons after the
verdicts.
"""
from __future__ import annotations

from importlib import metadata
from typing import Mapping, Sequence

import numpy

from orchestrator.analysis.stats import (BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, SampleSummary,
                                         summarize_samples)

from .site_cache import SiteCache, digest

KIND = "sample-summaries"
_COMPUTED_BY = (metadata.version("scipy"), numpy.__version__, BOOTSTRAP_SEED, BOOTSTRAP_RESAMPLES)


def summary_key(base: Sequence[float], cand: Sequence[float]) -> str:
    """The hash a summary is kept under: both samples as given (types and order) and what
    computes it."""
    return digest(tuple(base), tuple(cand), _COMPUTED_BY)


class KeptSummaries:
    """A Summarizer (analysis.compare.summarizing_with) that answers from `known` summaries
    and computes the others; `used` holds every summary it gave, by key."""

    def __init__(self, known: Mapping[str, SampleSummary] | None = None):
        self._known = dict(known or {})
        self.used: dict[str, SampleSummary] = {}

    def __call__(self, base: Sequence[float], cand: Sequence[float]) -> SampleSummary:
        key = summary_key(base, cand)
        found = self.used.get(key)
        if found is None:
            found = self._known.get(key)
            if found is None:
                found = summarize_samples(base, cand)
            self.used[key] = found
        return found

    @classmethod
    def of_last_build(cls, cache: SiteCache,
                      recorded: Mapping[str, SampleSummary]) -> KeptSummaries:
        """The summaries the last build kept, and those `recorded` in this one."""
        known = {key: facts for key, (_, facts) in cache.entries(KIND).items()
                 if isinstance(facts, SampleSummary)}
        return cls({**known, **recorded})

    def keep(self, cache: SiteCache, recorded: Mapping[str, SampleSummary]) -> None:
        """Store what this build used and `recorded`, for the next build (cache.save writes)."""
        for key, summary in {**recorded, **self.used}.items():
            cache.store(KIND, key, key, summary)
