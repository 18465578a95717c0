"""A series' noise between runs (pure): the one definition every verdict uses.

Two figures, each over every run but the candidate being judged (a real change in the candidate
must not widen the threshold it is judged by):

    noise = max( robust CV of the series' per-run medians (from 3 runs on),
                 median |B/A − 1| of its A/A pairs (`tidemark ab` with one build on both sides) )
    tail  = an upper quantile q (`tail_quantile`, 0.9 by default) of the run-to-run changes
            c_i = |m_{i+1} / m_i − 1| of its consecutive per-run medians m_i (below)

and a change between two separate runs is called only above max(min_effect, noise_k × noise,
tail) (stats.effective_threshold: the one place of the rule); NaN noise counts as
`unmeasured_noise`, a NaN tail (no change measured yet) as nothing. Between-run figures, not the
spread of single repetitions: a median of N repetitions already averages the latter away, while
a shift of a whole run (another tenant, a thermal state) does not and is what makes a false alarm.

Why a tail. The robust CV describes the typical run and is built to ignore outliers, so it
ignores exactly the occasional whole-run shift that makes a false alarm: on the shared 2-core
machine, 8 runs of one binary each gated against the previous failed 4 of 7 gates, at
thresholds of 2.0–6.1 % while whole runs moved by up to ±19 %. A between-run verdict compares
two runs' medians, so what it must clear is how far one run's median moves from another's when
nothing changed: the changes between consecutive runs are samples of exactly that.

The quantile, distribution-free. With n changes sorted c_(1) ≤ … ≤ c_(n), tail = c_(k) with
k = ⌈q (n + 1)⌉, and the largest when k > n. If the next change is exchangeable with those seen
(the machine behaves as it did), it exceeds c_(k) with probability (n + 1 − k) / (n + 1) ≤ 1 − q
whatever the shifts' distribution (the order-statistic bound of conformal prediction). That is
the small-sample correction: at q = 0.9 the largest change is the tail until 19 changes exist
(under 9 even the largest bounds the chance only by 1 / (n + 1)), then the second largest, and
so on: one whole-run shift stays in the threshold until the history shows it rarer than 1 in 10.

Which changes. Consecutive among the series' runs in the History's order (oldest first), the
excluded runs left out (their neighbours become consecutive), between runs of one build
(`History.builds`, the same binary): a change between builds may be real, and a real change is
not noise. When no two consecutive runs share a build (every run a new commit; imports, which
name none), all consecutive changes are taken: such a history holds no other evidence of how far
whole runs move, and a real change among them can only raise the threshold (at worst a missed
small change, not a false alarm) until the quantile drops it (q = 0.9: from 19 changes on). Not the
A/A pairs: the two sides of a `tidemark ab` job run interleaved round by round, so a whole-run
shift hits both alike and their change understates the change between separate runs; they stay
in `noise`, and the change between the two sides of one is skipped.

Why only between separate runs: the sides of one A/B job are judged on per-round ratios
(analysis.paired, sequential), in which a whole-run shift cancels; they keep
max(min_effect, noise_k × noise).

What it costs. A history whose changes stay under noise_k × noise keeps its threshold. Where run
medians scatter normally (sd σ), consecutive changes have sd √2 σ and the 90 % quantile of their
size is ≈ 2.33 σ against 2 × noise ≈ 2 σ. Simulated (σ = 2 %, 10 to 40 runs of one build; the
calibration test in tests/orchestrator/analysis/test_noise_tail.py), the threshold grows by a
median 20–35 % (most with few runs, where the largest change is the tail), and the share of
next changes between two runs that exceed it falls from 18–23 % to 10 %; with a ±15 % shift in
one run of ten, from 28–33 % to 11–13 %, where the threshold triples.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from .stats import DEFAULT_TAIL_QUANTILE, median, robust_cv

MIN_RUNS_FOR_SPREAD = 3


@dataclass(frozen=True)
class History:
    """Per-run medians of each series and metric, the A/A pairs and each run's build, as read
    from the store.

    `medians[(series_key, metric)]` = ((run_id, median), ...) oldest first;
    `aa_pairs` = ((run_a, run_b), ...) of `tidemark ab` jobs that ran one build on both sides;
    `builds[run_id]` = the build (binary) it measured; a run without one is of no known build;
    `experiments` = the runs of A/B jobs between two builds or configs (a confirmation, a bisect
    step, `tidemark ab --a ... --b ...`): each side measures a change on purpose, so neither
    enters the noise or the tail (a confirmed regression would otherwise raise the threshold
    that the next one must clear).
    """

    medians: Mapping[tuple[str, str], Sequence[tuple[str, float]]] = field(default_factory=dict)
    aa_pairs: Sequence[tuple[str, str]] = ()
    builds: Mapping[str, str] = field(default_factory=dict)
    experiments: frozenset[str] = frozenset()
    # Each series' medians as arrays (_Series), made when first asked for; not data.
    _arrays: dict[tuple[str, str], _Series] = field(default_factory=dict, init=False,
                                                     compare=False, repr=False)

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "_arrays": {}}  # made again where needed, never shipped

    def arrays_of(self, series_key: str, metric: str) -> _Series:
        """The series' medians as arrays (made on the first call)."""
        key = (series_key, metric)
        if key not in self._arrays:
            self._arrays[key] = _Series.of(self, self.medians.get(key, ()))
        return self._arrays[key]


@dataclass(frozen=True, eq=False)
class SeriesMedians(Sequence[tuple[str, float]]):
    """One series' ((run_id, median), ...) held as two arrays, for a History made from columns
    (the site's noise table): its arrays are taken as they are, where a tuple per run was made
    only to be taken apart again (the table took 2.3 s, now 1.1 s, at 10,000 runs × 200
    series). A sequence of (run, median) tuples like any other, equal to one with the same."""

    runs: np.ndarray  # run ids, oldest first
    values: np.ndarray  # their medians

    def __len__(self) -> int:
        return len(self.runs)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return list(zip(self.runs[index].tolist(), self.values[index].tolist()))
        return self.runs[index], self.values[index].item()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)


@dataclass(frozen=True)
class _Series:
    """One series' medians in numpy arrays, so that each verdict's noise (its candidate left out)
    is a few vector operations, not a loop over the history: the site asks it of 10,000-run
    series about a thousand times per build (5.0 ms a call in a loop, 0.5 ms this way). Made
    once per History and series: a History's medians, builds and experiments are not changed
    once asked."""

    runs: tuple[str, ...]
    values: np.ndarray  # float64, the medians in the history's order
    builds: np.ndarray  # int64 code of each run's build; -1: of no known build
    position: dict[str, int]  # run → its index (the last, were a run there twice)
    counted: np.ndarray  # bool: not a run of an experiment

    @classmethod
    def of(cls, history: History, medians: Sequence[tuple[str, float]]) -> _Series:
        # map() and zip() of C functions: a loop in Python per run cost as much as the noise.
        if isinstance(medians, SeriesMedians):
            runs, values = tuple(medians.runs.tolist()), medians.values
        else:
            runs, values = (tuple(column) for column in zip(*medians)) if medians else ((), ())
        builds = list(map(history.builds.get, runs))
        codes = {build: code for code, build in enumerate(dict.fromkeys(builds))}
        codes[None] = -1  # of no known build
        counted = (np.logical_not(list(map(history.experiments.__contains__, runs)))
                   if history.experiments else np.ones(len(runs), dtype=bool))
        return cls(runs, np.array(values, dtype=float),
                   np.array(list(map(codes.__getitem__, builds)), dtype=np.int64),
                   dict(zip(runs, range(len(runs)))), np.asarray(counted, dtype=bool))

    def kept(self, exclude: Sequence[str]) -> np.ndarray:
        """Which runs count: not excluded, not an experiment."""
        keep = self.counted.copy()
        if not self.unique:  # every median of an excluded run goes
            return keep & np.array([run not in exclude for run in self.runs], dtype=bool)
        for run in exclude:
            index = self.position.get(run)
            if index is not None:
                keep[index] = False
        return keep

    @property
    def unique(self) -> bool:
        """One median per run (a history read from the store always is)."""
        return len(self.position) == len(self.runs)


@dataclass(frozen=True)
class Noise:
    """One series' noise and what it was measured from."""

    value: float  # NaN: not measured yet
    runs: int  # run medians that entered the spread
    spread: float  # robust CV of run medians; NaN under MIN_RUNS_FOR_SPREAD runs
    aa_changes: tuple[float, ...]  # B/A − 1 of each A/A pair
    tail: float = math.nan  # quantile of the run-to-run changes; NaN: none, or tail_quantile 0
    changes: int = 0  # run-to-run changes the tail was taken from
    same_build: bool = False  # they were between runs of one build (False: of any builds)


def aa_changes(history: History, series_key: str, metric: str,
               exclude: Sequence[str] = ()) -> tuple[float, ...]:
    """B/A − 1 of this series over the A/A pairs that involve no excluded run."""
    if not history.aa_pairs:  # most histories: no series' medians to look up
        return ()
    series = history.arrays_of(series_key, metric)
    out = []
    for run_a, run_b in history.aa_pairs:
        if run_a in exclude or run_b in exclude:
            continue
        a, b = (series.position.get(run_a), series.position.get(run_b))
        if a is not None and series.values[a] and b is not None:
            out.append(float(series.values[b]) / float(series.values[a]) - 1.0)
    return tuple(out)


def run_changes(history: History, series_key: str, metric: str,
                exclude: Sequence[str] = ()) -> tuple[tuple[float, ...], bool]:
    """|m_{i+1} / m_i − 1| of this series' consecutive runs (the excluded ones left out) of one
    build, and True; when there is none, of all consecutive runs, and False. The two sides of
    an A/A pair, and any change that is not a finite number, are skipped (module docstring)."""
    series = history.arrays_of(series_key, metric)
    steps, same = _changes(series, series.kept(exclude), history.aa_pairs)
    return tuple(steps.tolist()), same


def _changes(series: _Series, keep: np.ndarray,
             aa_pairs: Sequence[tuple[str, str]]) -> tuple[np.ndarray, bool]:
    values, builds = series.values[keep], series.builds[keep]
    before, after = values[:-1], values[1:]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        change = np.abs(after / before - 1.0)
    # A zero median has no change to the next run (a NaN one gives a NaN change, skipped).
    counted = (before != 0) & np.isfinite(change)
    if aa_pairs:
        counted &= ~_aa_sides(series, keep, aa_pairs, len(change))
    same = counted & (builds[1:] >= 0) & (builds[1:] == builds[:-1])
    return (change[same], True) if same.any() else (change[counted], False)


def _aa_sides(series: _Series, keep: np.ndarray, aa_pairs: Sequence[tuple[str, str]],
              changes: int) -> np.ndarray:
    """Which consecutive changes are between the two sides of an A/A pair (either order)."""
    sides = {*aa_pairs, *((b, a) for a, b in aa_pairs)}
    if not series.unique:
        kept = [run for run, counts in zip(series.runs, keep.tolist()) if counts]
        return np.array([pair in sides for pair in zip(kept, kept[1:])], dtype=bool)
    rank = np.cumsum(keep) - 1  # a kept run's index among the kept ones
    between = np.zeros(changes, dtype=bool)
    for first, second in sides:
        i, j = series.position.get(first), series.position.get(second)
        if i is not None and j is not None and keep[i] and keep[j] and rank[j] == rank[i] + 1:
            between[rank[i]] = True
    return between


def tail_of(changes: Sequence[float], quantile: float) -> float:
    """The ⌈q (n + 1)⌉-th smallest of n changes, the largest when there are fewer (the bound of
    the module docstring); NaN without changes or with q = 0 (the tail left out)."""
    if len(changes) == 0 or not quantile > 0:
        return math.nan
    ordered = np.sort(np.asarray(changes, dtype=float))
    # The 1e-9: 0.07 × 100 is 7.000000000000001 in floating point, and rank 7, not 8.
    rank = math.ceil(quantile * (len(ordered) + 1) - 1e-9)
    return float(ordered[min(max(rank, 1), len(ordered)) - 1])


def series_noise(history: History, series_key: str, metric: str,
                 exclude: Sequence[str] = (),
                 tail_quantile: float = DEFAULT_TAIL_QUANTILE) -> Noise:
    """The noise of one series and metric, leaving out the `exclude` runs (the candidate)."""
    series = history.arrays_of(series_key, metric)
    keep = series.kept(exclude)
    medians = series.values[keep]
    spread = robust_cv(medians) if len(medians) >= MIN_RUNS_FOR_SPREAD else math.nan
    changes = aa_changes(history, series_key, metric, exclude)
    parts = [p for p in (spread, median([abs(c) for c in changes]) if changes else math.nan)
             if math.isfinite(p)]
    steps, same_build = _changes(series, keep, history.aa_pairs)
    return Noise(max(parts) if parts else math.nan, len(medians), spread, changes,
                 tail_of(steps, tail_quantile), len(steps), same_build)
