"""Does the nightly gate catch a 5 % regression, and what do its re-measurements cost? (a
benchmark, not a test; issue 33, after benchmarks/confirm_study.py caught 0 of 10)

The setting the first study pointed to, the power study's (benchmarks/power.py): RocksDB 7.8.3
readrandom alone (200,000 keys, 100,000 reads, 6 repetitions) on machine=ci-2core-shielded (the
engine on CPU 1, Tidemark on CPU 0), with instruction counts beside (callgrind=true: 2
repetitions of 10,000 reads under callgrind per run), gated at the default `min_effect` (2 %)
with the default tail. LevelDB's readrandom of 100,000 keys was tried first and dropped: its
invocations scattered from 290,000 to 610,000 ops/s within one paired job.

Each pair is gated four ways:

- ``before_tail``: ops/s between runs, noise only (`tail_quantile: 0`);
- ``with_tail``: ops/s between runs, today's default threshold;
- ``unresolved``: ops/s with `--confirm --confirm-rounds 60` (the default scope: every flagged
  regression and every series whose between-run threshold is above `min_effect` re-measured
  in one paired job of at most 60 rounds, judged at 2 %), as scripts/nightly.sh;
- ``instructions``: instructions per read (`--metric instructions_per_op --confirm
  --confirm-rounds 20`; a change between runs is flagged by the deterministic rule, at 0.5 %,
  and re-measured paired under callgrind).

and the summary adds ``both``: what a gate of both metrics decides (a confirmed regression of
either, else "cannot tell" if either could not tell), derived from the last two.

Runs:

- **Same binary** (`--pairs N`): N + 1 runs in a row into one DB, each from the second on gated
  against the previous one. Every exit 1 is a false alarm. (One build and one config on both
  sides: `--confirm` re-measures nothing, the drift rule; the paired rule's own false alarms are
  the power study's A/A trials. An earlier attempt alternated `planted_ns=0` to force a
  re-measurement of every pair: on 2026-11-29 both re-measured pairs ended "cannot tell" after
  60 rounds, −5.8 % … +7.9 % and −6.0 % … +2.7 %, two minutes each.)
- **Planted 5 %** (`--planted K`): K trials, each on a copy of that history: a baseline run, then
  a candidate whose every DB::Get spins `planted_ns` = 5 % of the median per-read time of the
  same-binary runs (orchestrator/build/planted.py). Caught = exit 1.

A re-measurement's cost is the wall time of its `tidemark gate --confirm`: machine-minutes on
the 2-core box. Every pair is appended to benchmarks/catch_study.json as it ends; `--resume`
continues an interrupted study.

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

from benchmarks import confirm_study  # noqa: E402
from benchmarks.confirm_study import PLANTED_SHARE, per_read_ns, tidemark  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "catch_study.json"
RUN = ["engine=rocksdb", "workload=readrandom", "workload.params.num=200000",
       "workload.params.reads=100000", "repetitions=6", "machine=ci-2core-shielded",
       "counters=false", "callgrind=true", "callgrind_ops=10000", "callgrind_repetitions=2"]
# way → (gate config text added to the default, gate arguments)
WAYS = {"before_tail": ("tail_quantile: 0\n", ()),
        "with_tail": ("", ()),
        "unresolved": ("", ("--confirm", "--confirm-rounds", "60")),
        "instructions": ("", ("--metric", "instructions_per_op", "--confirm",
                              "--confirm-rounds", "20"))}


def run(work: Path, db: Path, *extra: str) -> str:
    return confirm_study.run(work, db, *extra, spec=RUN)


def gate_configs(work: Path) -> dict[str, Path]:
    return confirm_study.gate_configs(work, {way: extra for way, (extra, _) in WAYS.items()})


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
    out = {way: gate(db, base, cand, configs[way], args) for way, (_, args) in WAYS.items()}
    exits = (out["unresolved"]["exit"], out["instructions"]["exit"])
    out["both"] = {"exit": 1 if 1 in exits else 2 if 2 in exits else 0, "derived": True,
                   "seconds": out["unresolved"]["seconds"] + out["instructions"]["seconds"],
                   "remeasured": out["unresolved"]["remeasured"] or
                   out["instructions"]["remeasured"]}
    return out


def summary(doc: dict) -> dict:
    out = {}
    for phase in ("same_binary", "planted"):
        pairs = doc[phase]
        out[f"{phase}.pairs"] = len(pairs)
        for way in (*WAYS, "both"):
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
        doc["runs"].append(run(work, db, "label=study"))
        base, cand = doc["runs"][-2:]
        doc["same_binary"].append({"base": base, "cand": cand,
                                   **judge_pair(db, base, cand, configs)})
        save(doc)
        print(f"same binary {len(doc['same_binary'])}/{args.pairs}: "
              f"{ {w: p['exit'] for w, p in doc['same_binary'][-1].items() if w in WAYS} }",
              flush=True)
    doc.setdefault("planted_ns", round(PLANTED_SHARE * per_read_ns(db), 1))
    while len(doc["planted"]) < args.planted:
        doc["planted"].append(confirm_study.planted_trial(
            work, db, len(doc["planted"]), doc["planted_ns"], run,
            lambda trial_db, base, cand: judge_pair(trial_db, base, cand, configs)))
        save(doc)
        print(f"planted {len(doc['planted'])}/{args.planted}: "
              f"{ {w: p['exit'] for w, p in doc['planted'][-1].items() if w in WAYS} }",
              flush=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
