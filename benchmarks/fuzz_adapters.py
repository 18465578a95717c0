"""Fuzz campaign over every output adapter (a benchmark of robustness, not a test): `make fuzz`.

Per format: every cut length of every captured real output under tests/data/, then --mutations
random mutations of them (1-3 of: cut, byte flip, line duplication / deletion / swap, a number
replaced by NaN / inf / huge / negative / `1.2.3` / `.`, random unicode, and for JSON a value
anywhere in the tree replaced by a hostile one). Each input goes through the adapter and the
checks of orchestrator/adapters/validate.py without the registry's safety net, and is counted
as one of:

- parse error: an EngineOutputError/ConfigError (one line, storable): what bad input must give;
- crash: any other exception, or an error message that is not one storable line;
- nonsense accepted: a returned report the independent oracle (tests/orchestrator/adapters/adapter_fuzz.py) rejects,
  or, for a sample of accepted importable reports (--store-every), one the real DuckDB store
  refuses through `tidemark import`'s code path;
- accepted: a report that passes all of that.

Crashing and nonsense inputs are written to --save-dir for regression tests.

    .venv/bin/python benchmarks/fuzz_adapters.py [--mutations 100000] [--seed 1] [--jobs 2]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "orchestrator" / "adapters")]
from adapter_fuzz import SEEDS, importable, mutate, parse_once, pick_mutators, store_import  # noqa: E402
from orchestrator.store import Store  # noqa: E402


def _inputs(fmt: str, mutations: int, seed: int):
    """(seed, label, text): every truncation of every seed, then random mutations."""
    for s in SEEDS[fmt]:
        for length in range(len(s.original) + 1):
            yield s, "truncation", s.original[:length]
    rnd = random.Random(f"{seed}-{fmt}")
    for _ in range(mutations):
        s = rnd.choice(SEEDS[fmt])
        names = pick_mutators(fmt, rnd)
        yield s, "+".join(names), mutate(s, names, rnd)


def campaign(fmt: str, mutations: int, seed: int, store_every: int, save_dir: str) -> dict:
    counts = {"inputs": 0, "truncations": 0, "accepted": 0, "parse_errors": 0, "crashes": 0,
              "nonsense": 0, "stored": 0}
    examples: list[dict] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "fuzz.duckdb")
        for s, label, text in _inputs(fmt, mutations, seed):
            counts["inputs"] += 1
            counts["truncations"] += label == "truncation"
            outcome = parse_once(s, text)
            kind = outcome.kind
            if kind == "accepted" and importable(s) and counts["accepted"] % store_every == 0:
                try:
                    sha = hashlib.sha256(f"{counts['inputs']}".encode() + text.encode(errors="replace")).hexdigest()
                    store_import(store, s, outcome.report, sha)
                    counts["stored"] += 1
                except Exception as exc:  # noqa: BLE001 - the store refusing is what we count
                    kind, outcome = "nonsense", type(outcome)("nonsense", f"store: {type(exc).__name__}: {exc}"[:300])
            key = {"accepted": "accepted", "parse_error": "parse_errors", "crash": "crashes",
                   "nonsense": "nonsense"}[kind]
            counts[key] += 1
            if kind in ("crash", "nonsense") and len(examples) < 20:
                examples.append({"seed": s.name, "mutations": label, "detail": outcome.detail})
                path = Path(save_dir) / f"{fmt}-{kind}-{len(examples)}.txt"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, errors="surrogateescape")
        store.close()
    counts["seconds"] = round(time.monotonic() - started, 1)
    return {"format": fmt, **counts, "examples": examples}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutations", type=int, default=100_000, help="random mutations per format")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--store-every", type=int, default=200,
                        help="write every Nth accepted importable report to a real DuckDB")
    parser.add_argument("--formats", default=",".join(SEEDS))
    parser.add_argument("--save-dir", default=str(REPO / "build" / "fuzz"))
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "fuzz_adapters.json"))
    args = parser.parse_args()
    formats = args.formats.split(",")
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(campaign, formats, [args.mutations] * len(formats),
                                [args.seed] * len(formats), [args.store_every] * len(formats),
                                [args.save_dir] * len(formats)))
    print("| format | inputs | truncations | accepted | parse errors | crashes | nonsense accepted "
          "| stored in DuckDB | seconds |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in results:
        print(f"| {r['format']} | {r['inputs']:,} | {r['truncations']:,} | {r['accepted']:,} | "
              f"{r['parse_errors']:,} | {r['crashes']:,} | {r['nonsense']:,} | {r['stored']:,} | "
              f"{r['seconds']} |")
        for example in r["examples"][:5]:
            print(f"    {example}")
    Path(args.out).write_text(json.dumps({"mutations_per_format": args.mutations,
                                          "seed": args.seed, "results": results}, indent=1) + "\n")
    sys.exit(1 if any(r["crashes"] or r["nonsense"] for r in results) else 0)


if __name__ == "__main__":
    main()
