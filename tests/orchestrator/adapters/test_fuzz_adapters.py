"""Property-based fuzzing of every output adapter (hypothesis), seeded from the captured real
outputs under tests/data/ (tests/orchestrator/adapters/adapter_fuzz.py holds the seeds, mutations and oracle).

Properties, for every input: the adapter plus validate.py raises nothing outside the project's
error family (its message one storable line), and any report it returns holds no nonsense (the
independent oracle); an accepted importable report is written to a real DuckDB file without
error. The profile is fixed (derandomize=True, bounded examples, no example database), so the
suite is deterministic; `make fuzz` runs the long campaign (benchmarks/fuzz_adapters.py).
"""
from __future__ import annotations

import hashlib
import random

import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapter_fuzz import (FORMATS, MUTATORS, SEEDS, importable, mutate, mutators_for, parse_once,
                          store_import)
from orchestrator.store import Store

settings.register_profile(
    "tidemark-fuzz", derandomize=True, max_examples=250, deadline=None, database=None,
    print_blob=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
FUZZ = settings.get_profile("tidemark-fuzz")
SMALL_SEED_CHARS = 2500  # seeds up to this size are cut at every length in the suite


def assert_sound(seed, text):
    outcome = parse_once(seed, text)
    assert outcome.kind in ("accepted", "parse_error"), (seed.name, outcome.detail, text[:2000])
    return outcome


@pytest.mark.parametrize("fmt", FORMATS)
@FUZZ
@given(data=st.data())
def test_mutated_real_outputs_parse_or_fail_cleanly(fmt, data):
    seed = data.draw(st.sampled_from(SEEDS[fmt]), label="seed")
    names = data.draw(st.lists(st.sampled_from(mutators_for(fmt) + ("json_value",) * 3
                                               if "json_value" in mutators_for(fmt)
                                               else mutators_for(fmt)), min_size=1, max_size=4),
                      label="mutations")
    rnd = data.draw(st.randoms(use_true_random=False), label="rnd")
    assert_sound(seed, mutate(seed, names, rnd))


@pytest.mark.parametrize("fmt", FORMATS)
@FUZZ
@given(data=st.data())
def test_random_unicode_spliced_into_real_outputs(fmt, data):
    seed = data.draw(st.sampled_from(SEEDS[fmt]), label="seed")
    text = seed.original
    at = data.draw(st.integers(0, len(text)), label="at")
    drop = data.draw(st.integers(0, 20), label="drop")
    piece = data.draw(st.text(max_size=30), label="piece")
    assert_sound(seed, text[:at] + piece + text[at + drop:])


@pytest.mark.parametrize("seed", [s for f in FORMATS for s in SEEDS[f]
                                  if len(s.original) <= SMALL_SEED_CHARS], ids=lambda s: s.name)
def test_every_truncation_of_small_real_outputs(seed):
    for length in range(len(seed.original) + 1):
        assert_sound(seed, seed.original[:length])


@pytest.mark.parametrize("fmt", [f for f in FORMATS if any(importable(s) for s in SEEDS[f])])
def test_accepted_mutants_are_stored_by_the_real_importer(fmt, tmp_path):
    """What the adapters accept, DuckDB stores: no integer out of range, no unstorable text."""
    rnd = random.Random(f"store-{fmt}")
    seeds = [s for s in SEEDS[fmt] if importable(s)]
    store, stored = Store(tmp_path / "fuzz.duckdb"), 0
    for attempt in range(300):
        seed = rnd.choice(seeds)
        names = [rnd.choice(("json_value", "replace_number")) if fmt.endswith(("json", "map"))
                 else rnd.choice(tuple(MUTATORS)[:-1])]
        text = mutate(seed, names, rnd)
        outcome = assert_sound(seed, text)
        if outcome.kind == "accepted":
            sha = hashlib.sha256(f"{attempt}{text}".encode(errors="replace")).hexdigest()
            store_import(store, seed, outcome.report, sha)
            stored += 1
        if stored == 8:
            break
    store.close()
    assert stored >= 3, f"too few accepted mutants of {fmt} to exercise the store"
