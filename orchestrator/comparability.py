"""Which invocations may be compared, and what differs when they are not (pure).

Two runs are paired series by series. Identities come from the `series` table (see
plan.series_identity). Every identity key must match, with one documented exception: the cmake
flags of two *different engine versions* come from each version's own recipe (RocksDB 8+ renamed
the CPU options; conf/engine/rocksdb.yaml keeps the compiler's code-generation flags equal), so
between versions they are reported as a note, not a difference. The same version built with other
flags is a real difference.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import UserError

# Keys that decide whether two series measure the same thing; names as in plan.series_identity.
GUARDED_KEYS = ("machine_fingerprint", "build_variant", "compiler_version", "cmake_flags",
                "cache_state", "threads", "params")
MATCH_KEYS = ("engine", "workload", "benchmark")


class NotComparableError(UserError):
    """Baseline and candidate differ in a key that decides comparability."""


@dataclass(frozen=True)
class SeriesSide:
    """One run's side of a series: its key, identity and engine version."""

    series_key: str
    identity: dict[str, Any]
    engine_version: str


@dataclass(frozen=True)
class Pair:
    base: SeriesSide
    cand: SeriesSide
    differences: tuple[tuple[str, Any, Any], ...] = ()  # (key, base value, candidate value)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Pairing:
    pairs: tuple[Pair, ...]
    only_base: tuple[SeriesSide, ...] = ()
    only_cand: tuple[SeriesSide, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)


def identity_differences(base: SeriesSide, cand: SeriesSide) -> tuple[list[tuple[str, Any, Any]],
                                                                      list[str]]:
    """(differences, notes) between two series identities; params are named key by key."""
    diffs: list[tuple[str, Any, Any]] = []
    notes: list[str] = []
    for key in GUARDED_KEYS:
        a, b = base.identity.get(key), cand.identity.get(key)
        if a == b:
            continue
        if key == "cmake_flags" and base.engine_version != cand.engine_version:
            notes.append(f"cmake flags follow each version's recipe ({base.engine_version} vs "
                         f"{cand.engine_version}); code-generation flags are kept equal")
        elif key == "params":
            for name in sorted(set(a or {}) | set(b or {})):
                if (a or {}).get(name) != (b or {}).get(name):
                    diffs.append((f"params.{name}", (a or {}).get(name), (b or {}).get(name)))
        else:
            diffs.append((key, a, b))
    return diffs, notes


def _match(side: SeriesSide) -> tuple:
    return tuple(side.identity.get(k) for k in MATCH_KEYS)


def pair_series(base: list[SeriesSide], cand: list[SeriesSide]) -> Pairing:
    """Pair identical series first, then the rest by engine/workload/benchmark in order."""
    pairs: list[Pair] = []
    rest_cand = list(cand)
    rest_base: list[SeriesSide] = []
    for b in base:
        exact = next((c for c in rest_cand
                      if _match(c) == _match(b) and not identity_differences(b, c)[0]), None)
        if exact is None:
            rest_base.append(b)
            continue
        rest_cand.remove(exact)
        pairs.append(Pair(b, exact, (), tuple(identity_differences(b, exact)[1])))
    only_base: list[SeriesSide] = []
    for b in rest_base:
        loose = next((c for c in rest_cand if _match(c) == _match(b)), None)
        if loose is None:
            only_base.append(b)
            continue
        rest_cand.remove(loose)
        diffs, notes = identity_differences(b, loose)
        pairs.append(Pair(b, loose, tuple(diffs), tuple(notes)))
    return Pairing(tuple(pairs), tuple(only_base), tuple(rest_cand))


def short(value: Any) -> str:
    """A value as a user reads it in one line: whole fingerprints, long flag lists shortened."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 100 else text[:97] + "..."


def describe_differences(pairing: Pairing) -> list[str]:
    """One 'key: base vs candidate' per distinct differing key, across all pairs."""
    seen: dict[str, str] = {}
    for pair in pairing.pairs:
        for key, a, b in pair.differences:
            seen.setdefault(key, f"{key}: {short(a)} vs {short(b)}")
    return list(seen.values())


def check_comparable(pairing: Pairing, allow_different: bool) -> list[str]:
    """The differing keys; raises NotComparableError unless allow_different."""
    if not pairing.pairs:
        raise NotComparableError("baseline and candidate share no workload/benchmark; pick runs "
                                 "of the same workloads")
    differing = describe_differences(pairing)
    if differing and not allow_different:
        raise NotComparableError(f"not comparable: {'; '.join(differing)} (add --allow-different "
                                 f"to compare anyway; each difference is then named)")
    return differing
