"""What makes two measurements one series, and what may differ but must be named (pure).

Two levels, one place:

* **Series keys** (`SERIES_KEYS`) must match for two measurements to be the same series: the
  engine, workload, benchmark, params, threads, cache state, build variant and machine. They are
  hashed into the series key. Only the machine may differ when the user asks
  (`--allow-different`), and then it is still named.
* **Named keys** (`NAMED_KEYS`) may differ between two runs of one series but are named on every
  comparison that crosses them: the engine version, the commit it was built from (short sha and
  subject; orchestrator/build/revision.py), compiler version, CMake flags, runner and
  Tidemark version, and a planted point-read cost (orchestrator/build/planted.py). An engine upgrade is the comparison users care about most, so a new version
  with its own recipe's flags stays in the same series.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Mapping

SERIES_KEYS = ("engine", "workload", "benchmark", "params", "threads", "cache_state",
               "build_variant", "machine_fingerprint")
NAMED_KEYS = ("engine_version", "commit", "compiler_version", "cmake_flags", "runner",
              "tidemark_sha", "planted")
# The keys that pair two series loosely when the user allows differences (e.g. `tidemark ab`
# with other params on each side): never across engines, workloads or benchmarks.
LOOSE_KEYS = ("engine", "workload", "benchmark")
MACHINE_KEY = "machine_fingerprint"


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: equal values give equal text (and hashes)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def series_key(identity: Mapping[str, Any]) -> str:
    """The 16-hex-digit key of a series: a hash of its SERIES_KEYS only."""
    values = {k: identity[k] for k in SERIES_KEYS}
    return hashlib.sha256(canonical_json(values).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class SeriesIdentity:
    """One run's side of one series: the series key and identity, and the run's named facts."""

    series_key: str
    identity: Mapping[str, Any]  # SERIES_KEYS → value
    named: Mapping[str, Any]  # NAMED_KEYS → value (the run's and its build's)

    def get(self, key: str) -> Any:
        return self.identity.get(key) if key in SERIES_KEYS else self.named.get(key)


def short(value: Any) -> str:
    """A value as a user reads it in one line: long flag lists shortened."""
    if isinstance(value, (list, tuple)):
        value = " ".join(str(v) for v in value) or "(none)"
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 100 else text[:97] + "..."


def series_differences(base: SeriesIdentity, cand: SeriesIdentity) -> list[tuple[str, Any, Any]]:
    """(key, base value, candidate value) for each differing series key; params key by key."""
    diffs: list[tuple[str, Any, Any]] = []
    for key in SERIES_KEYS:
        a, b = base.identity.get(key), cand.identity.get(key)
        if a == b:
            continue
        if key == "params":
            a, b = a or {}, b or {}
            diffs += [(f"params.{name}", a.get(name), b.get(name))
                      for name in sorted(set(a) | set(b)) if a.get(name) != b.get(name)]
        else:
            diffs.append((key, a, b))
    return diffs


def named_differences(base: SeriesIdentity, cand: SeriesIdentity) -> list[tuple[str, Any, Any]]:
    """(key, base value, candidate value) for each differing named key."""
    return [(key, base.named.get(key), cand.named.get(key)) for key in NAMED_KEYS
            if base.named.get(key) != cand.named.get(key)]


def planted_text(planted_ns: Any, planted_spins: Any) -> str:
    """A run's planted cost as comparisons name it: 'off', 'planted_ns=…' or 'planted_spins=…'."""
    if planted_spins and float(planted_spins):
        return f"planted_spins={int(float(planted_spins))}"
    if planted_ns and float(planted_ns):
        return f"planted_ns={float(planted_ns):g}"
    return "off"


def describe(diff: tuple[str, Any, Any]) -> str:
    key, a, b = diff
    return f"{key}: {short(a)} vs {short(b)}"
