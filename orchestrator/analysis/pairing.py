"""Which series of two runs are compared with each other (pure): one pairing for every command
and page.

* Equal series keys pair. What differs in their named keys (engine version, compiler, CMake
  flags, runner, Tidemark version) is named on the pair, never refused.
* Series equal but for the machine pair only when the user allows differences; otherwise the
  comparison is refused, naming both machines.
* With differences allowed (e.g. `tidemark ab` with other params on each side), the rest pair
  loosely by engine, workload and benchmark, each differing key named.
* Without, unpaired series are listed as only in the baseline or only in the candidate; when no
  series pair at all, the refusal names the differences of the closest series.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import NotComparableError
from .identity import (LOOSE_KEYS, MACHINE_KEY, SeriesIdentity, describe, named_differences,
                       series_differences)


@dataclass(frozen=True)
class Pair:
    base: SeriesIdentity
    cand: SeriesIdentity
    differences: tuple[tuple[str, Any, Any], ...] = ()  # differing series keys (allowed)
    named: tuple[tuple[str, Any, Any], ...] = ()  # differing named keys


@dataclass(frozen=True)
class Pairing:
    pairs: tuple[Pair, ...]
    only_base: tuple[SeriesIdentity, ...] = ()
    only_cand: tuple[SeriesIdentity, ...] = ()

    def differences(self) -> list[str]:
        """One 'key: base vs candidate' per distinct differing series key, across all pairs."""
        return list(dict.fromkeys(describe(d) for p in self.pairs for d in p.differences))

    def named(self) -> list[str]:
        """One 'key: base vs candidate' per distinct differing named key, across all pairs."""
        return list(dict.fromkeys(describe(d) for p in self.pairs for d in p.named))


def _loose(side: SeriesIdentity) -> tuple:
    return tuple(side.identity.get(k) for k in LOOSE_KEYS)


def _pop_match(rest: list[SeriesIdentity], side: SeriesIdentity,
               allowed: set[str] | None) -> SeriesIdentity | None:
    """The first of `rest` that matches `side` but for the `allowed` series keys (any, if None)."""
    for other in rest:
        if _loose(other) != _loose(side):
            continue
        keys = {k for k, _, _ in series_differences(side, other)}
        if allowed is None or keys <= allowed:
            rest.remove(other)
            return other
    return None


def pair_series(base: Sequence[SeriesIdentity], cand: Sequence[SeriesIdentity],
                allow_different: bool = False) -> Pairing:
    """Pair exact series first, then (differences allowed) across machines, then loosely."""
    rest_base, rest_cand = list(base), list(cand)
    pairs: list[Pair] = []
    for allowed in (set(), {MACHINE_KEY}, None):
        for b in list(rest_base):
            c = _pop_match(rest_cand, b, allowed)
            if c is None:
                continue
            rest_base.remove(b)
            pairs.append(Pair(b, c, tuple(series_differences(b, c)),
                              tuple(named_differences(b, c))))
        if not allow_different:
            break
    pairing = Pairing(tuple(pairs), tuple(rest_base), tuple(rest_cand))
    if not pairs:
        _refuse(rest_base, rest_cand)
    return pairing


def _refuse(base: list[SeriesIdentity], cand: list[SeriesIdentity]) -> None:
    """No series in common: name what keeps the closest series apart."""
    rest = list(cand)
    closest = next((c for b in base if (c := _pop_match(rest, b, None)) is not None), None)
    if closest is None:
        raise NotComparableError("baseline and candidate share no workload/benchmark; pick runs "
                                 "of the same workloads")
    b = next(s for s in base if _loose(s) == _loose(closest))
    diffs = "; ".join(describe(d) for d in series_differences(b, closest))
    raise NotComparableError(f"not comparable: no series in common ({diffs}); add "
                             f"--allow-different to compare anyway, each difference named")
