"""Does the nightly gate catch a 5 % regression, and what do its re-measurements cost? (a
benchmark, not a test; issue 33, after benchmarks/confirm_study.py caught 0 of 10)

The setting the first study pointed to, the power study's (benchmarks/power.py): RocksDB 7.8.3
readrandom alone (200,000 keys, 100,000 reads, 6 repetitions) on machine=ci-2core-shielded (the
engine on CPU 1, Tidemark on CPU 0), gated at the default `min_effect` (2 %) with the default
tail, four ways per pair (a paired job of at most 60 rounds: `--confirm-rounds 60`, as
scripts/nightly.sh; LevelDB's readrandom of 100,000 keys was tried first and dropped: its
invocations scattered from 290,000 to 610,000 ops/s within one job):

- ``before_tail``: between runs, noise only (`tail_quantile: 0`), no re-measurement;
- ``with_tail``: between runs, today's default threshold, no re-measurement;
- ``flagged``: with the tail, `--confirm --confirm-scope flagged` (re-measures a flagged
  regression only; run only when ``with_tail`` flagged one);
- ``unresolved``: with the tail, `--confirm` (the default scope: also every series whose
  between-run threshold is above `min_effect`).

Runs:

- **Same binary** (`--pairs N`): N + 1 runs in a row into one DB, every other one with
  `planted_ns=0` (nothing planted: the very same binary and work, but a config that differs, so
  the drift rule, which skips re-measuring one build and one config, does not apply and every
  pair is really re-measured); each run from the second on gated against the previous one.
  Every exit 1 is a false alarm.
- **Planted 5 %** (`--planted K`): K trials, each on a copy of that history: a baseline run, then
  a candidate whose every DB::Get spins `planted_ns` = 5 % of the median per-read time of the
  same-binary runs (orchestrator/build/planted.py). Caught = exit 1.

A re-measurement's cost is the wall time of its `tidemark gate --confirm` (one paired job, up to
60 rounds of both sides): machine-minutes on the 2-core box. Every pair is appended to
benchmarks/catch_study.json as it ends; `--resume` continues an interrupted study.

    .venv/bin/python benchmarks/catch_study.py [--pairs 20] [--planted 10] [--resume]
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.confirm_study import PLANTED_SHARE, per_read_ns, tidemark  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "catch_study.json"
RUN = ["engine=rocksdb", "workload=readrandom", "workload.params.num=200000",
       "workload.params.reads=100000", "repetitions=6", "machine=ci-2core-shielded",
       "counters=false"]
ROUNDS = ("--confirm-rounds", "60")
# way → (gate config text added to the default, gate arguments)
WAYS = {"before_tail": ("tail_quantile: 0\n", ()),
        "with_tail": ("", ()),
        "flagged": ("", ("--confirm", "--confirm-scope", "flagged", *ROUNDS)),
        "unresolved": ("", ("--confirm", *ROUNDS))}


def run(work: Path, db: Path, *extra: str) -> str:
    proc = tidemark("run", *RUN, *extra, f"db={db}", f"results_dir={work}",
                    f"data_dir={work / 'data'}")
    if proc.returncode != 0:
        raise SystemExit(f"run failed: {proc.stderr[-800:]}")
    return proc.stdout.split("run ")[-1].split(":")[0]


def gate_configs(work: Path) -> dict[str, Path]:
    default = (REPO / "conf" / "gate" / "default.yaml").read_text()
    paths = {}
    for way, (extra, _) in WAYS.items():
        path = work / f"gate-{way}.yaml"
        path.write_text(default.replace("tail_quantile: 0.9\n", "") + extra if extra else default)
        paths[way] = path
    return paths


def gate(db: Path, base: str, cand: str, config: Path, args: tuple[str, ...]) -> dict:
    started = time.monotonic()
    proc = tidemark("gate", "--db", str(db), "--baseline", base, "--candidate", cand,
                    "--config", str(config), *args)
    lines = proc.stdout.splitlines()
    return {"exit": proc.returncode, "seconds": round(time.monotonic() - started, 1),
            "remeasured": any(line.startswith("confirming ") for line in lines),
            "confirmations": [line.split("confirm: ", 1)[1] for line in lines
                              if line.startswith("confirm: ")],
            "reasons": [line.strip() for line in proc.stdout.split("gate:", 1)[-1].splitlines()
                        if line.strip()][:8]}


def judge_pair(db: Path, base: str, cand: str, configs: dict[str, Path]) -> dict:
    out = {}
    for way, (_, args) in WAYS.items():
        if way == "flagged" and out["with_tail"]["exit"] != 1:  # nothing flagged: nothing to do
            out[way] = {**out["with_tail"], "seconds": 0.0, "remeasured": False}
            continue
        out[way] = gate(db, base, cand, configs[way], args)
    return out


def summary(doc: dict) -> dict:
    out = {}
    for phase in ("same_binary", "planted"):
        pairs = doc[phase]
        out[f"{phase}.pairs"] = len(pairs)
        for way in WAYS:
            exits = [p[way]["exit"] for p in pairs]
            out[f"{phase}.{way}.exit1"] = sum(e == 1 for e in exits)
            out[f"{phase}.{way}.exit2"] = sum(e == 2 for e in exits)
            spent = [p[way]["seconds"] for p in pairs if p[way]["remeasured"]]
            if spent:
                out[f"{phase}.{way}.remeasured"] = len(spent)
                out[f"{phase}.{way}.minutes_median"] = round(statistics.median(spent) / 60, 2)
                out[f"{phase}.{way}.minutes_max"] = round(max(spent) / 60, 2)
    return out


def save(doc: dict) -> None:
    OUT.write_text(json.dumps({**doc, "summary": summary(doc)}, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--planted", type=int, default=10)
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    doc = json.loads(OUT.read_text()) if args.resume and OUT.is_file() else None
    work = Path(doc["work"]) if doc else Path(tempfile.mkdtemp(prefix="tidemark-catch-study-"))
    db = work / "history.duckdb"
    configs = gate_configs(work)
    if doc is None:
        doc = {"date": time.strftime("%Y-%m-%d", time.gmtime()), "run": RUN, "work": str(work),
               "planted_share": PLANTED_SHARE, "same_binary": [], "planted": [], "runs": []}
        doc["runs"].append(run(work, db, "label=study"))
    while len(doc["same_binary"]) < args.pairs:
        index = len(doc["runs"])
        doc["runs"].append(run(work, db, "label=study", *(["planted_ns=0"] if index % 2 else [])))
        base, cand = doc["runs"][-2:]
        doc["same_binary"].append({"base": base, "cand": cand,
                                   **judge_pair(db, base, cand, configs)})
        save(doc)
        print(f"same binary {len(doc['same_binary'])}/{args.pairs}: "
              f"{ {w: doc['same_binary'][-1][w]['exit'] for w in WAYS} }", flush=True)
    doc.setdefault("planted_ns", round(PLANTED_SHARE * per_read_ns(db), 1))
    while len(doc["planted"]) < args.planted:
        copy = work / f"trial-{len(doc['planted'])}.duckdb"
        shutil.copy(db, copy)
        base = run(work, copy, "label=baseline")
        cand = run(work, copy, "label=planted", f"planted_ns={doc['planted_ns']}")
        doc["planted"].append({"base": base, "cand": cand,
                               **judge_pair(copy, base, cand, configs)})
        copy.unlink()
        save(doc)
        print(f"planted {len(doc['planted'])}/{args.planted}: "
              f"{ {w: doc['planted'][-1][w]['exit'] for w in WAYS} }", flush=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
