"""Does confirmation stop the nightly gate's false alarms, and what does it cost? (a benchmark,
not a test; issue 33)

LevelDB 1.23's smoke suite (5 workloads, 100k keys, 6 repetitions; machine=ci-2core: the engine
on CPU 1), one build throughout, as `nightly.yml` would run it:

- **Same binary** (`--pairs N`): N + 1 runs in a row into one DB; after each run from the second
  on, the gate against the previous run, four ways: the between-run rule before the tail
  (`tail_quantile: 0`), the rule with the tail (the default), and each of them with `--confirm`
  (run only when that rule flagged a regression: nothing else is re-measured).
  Every pair is the same binary, so every exit 1 is a false alarm.
- **Planted 5 %** (`--planted K`): K trials, each on a copy of the same-binary history (so every
  trial is judged with the same history, and no trial's planted run enters another's): a
  baseline run, then a candidate run with `planted_ns` = 5 % of the per-read time of readrandom
  (the median of the same-binary runs): every DB::Get spins that much longer
  (orchestrator/build/planted.py). Caught = exit 1.

A confirmation's cost is the wall time of `tidemark gate --confirm` (its paired job: both sides
of each flagged workload, up to 30 rounds); the machine-minutes are that, on the 2-core box.
Every pair is appended to the JSON as it ends.

    .venv/bin/python benchmarks/confirm_study.py [--pairs 20] [--planted 10]
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import duckdb

REPO = Path(__file__).resolve().parents[1]
TIDEMARK = str(Path(sys.executable).parent / "tidemark")
OUT = REPO / "benchmarks" / "confirm_study.json"
RUN = ["engine=leveldb", "suite=smoke", "machine=ci-2core", "counters=false"]
PLANTED_SHARE = 0.05
RULES = {"before_tail": "tail_quantile: 0\n", "with_tail": ""}


def tidemark(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([TIDEMARK, *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)


def run(work: Path, db: Path, *extra: str, spec: list[str] = RUN) -> str:
    """One `tidemark run` of `spec` (this study's, or catch_study's) into db; its run id."""
    proc = tidemark("run", *spec, *extra, f"db={db}", f"results_dir={work}",
                    f"data_dir={work / 'data'}")
    if proc.returncode != 0:
        raise SystemExit(f"run failed: {proc.stderr[-800:]}")
    return proc.stdout.split("run ")[-1].split(":")[0]


def gate_configs(work: Path, rules: dict[str, str] = RULES) -> dict[str, Path]:
    """A gate config per rule: the default one, its tail replaced by the rule's text if any."""
    default = (REPO / "conf" / "gate" / "default.yaml").read_text()
    paths = {}
    for name, extra in rules.items():
        path = work / f"gate-{name}.yaml"
        path.write_text(default.replace("tail_quantile: 0.9\n", "") + extra if extra else default)
        paths[name] = path
    return paths


def gate(db: Path, base: str, cand: str, config: Path, confirm: bool) -> dict:
    started = time.monotonic()
    proc = tidemark("gate", "--db", str(db), "--baseline", base, "--candidate", cand,
                    "--config", str(config), *(["--confirm"] if confirm else []))
    seconds = time.monotonic() - started
    flagged = [line.split("confirm: ", 1)[1] for line in proc.stdout.splitlines()
               if line.startswith("confirm: ") and "flagged" in line]
    reasons = [line.strip() for line in proc.stdout.split("gate:", 1)[-1].splitlines()[1:]
               if line.strip()]
    return {"exit": proc.returncode, "seconds": round(seconds, 1), "confirmations": flagged,
            "reasons": reasons[:8], "stdout": proc.stdout}


def judge_pair(db: Path, base: str, cand: str, configs: dict[str, Path]) -> dict:
    """The four ways a pair is gated (a rule's --confirm only when the rule flagged)."""
    out = {}
    for name, config in configs.items():
        plain = gate(db, base, cand, config, False)
        out[name] = plain
        flagged = plain["exit"] == 1  # a flagged regression: what --confirm re-measures
        out[f"{name}_confirmed"] = gate(db, base, cand, config, True) if flagged else \
            {**plain, "seconds": 0.0, "confirmations": [], "not_flagged": True}
    return out


def planted_trial(work: Path, db: Path, index: int, planted_ns: float,
                  run_in: Callable[..., str], judge: Callable[[Path, str, str], dict]) -> dict:
    """One planted trial on a copy of the same-binary history (every trial judged with the same
    history; no trial's planted run enters another's): a baseline run, then a candidate whose
    every read spins `planted_ns` longer, judged by `judge`."""
    copy = work / f"trial-{index}.duckdb"
    shutil.copy(db, copy)
    base = run_in(work, copy, "label=baseline")
    cand = run_in(work, copy, "label=planted", f"planted_ns={planted_ns}")
    trial = {"base": base, "cand": cand, **judge(copy, base, cand)}
    copy.unlink()
    return trial


def save(doc: dict) -> None:
    def lean(value):  # the gate's whole output stays out of the JSON
        if isinstance(value, dict):
            return {k: lean(v) for k, v in value.items() if k != "stdout"}
        return [lean(v) for v in value] if isinstance(value, list) else value
    OUT.write_text(json.dumps(lean(doc), indent=1) + "\n")


def per_read_ns(db: Path) -> float:
    con = duckdb.connect(str(db), read_only=True)
    try:
        (ops,) = con.execute(
            "SELECT median(m.value) FROM metrics m JOIN invocations i USING (invocation_id) "
            "WHERE i.workload = 'readrandom' AND m.name = 'ops_per_sec' AND i.phase = 'measured' "
            "AND i.status = 'ok'").fetchone()
    finally:
        con.close()
    return 1e9 / ops


def summary(doc: dict) -> dict:
    out = {}
    for phase in ("same_binary", "planted"):
        pairs = doc[phase]
        for way in ("before_tail", "with_tail", "before_tail_confirmed", "with_tail_confirmed"):
            exits = [p[way]["exit"] for p in pairs]
            out[f"{phase}.{way}.exit1"] = sum(e == 1 for e in exits)
            out[f"{phase}.{way}.exit2"] = sum(e == 2 for e in exits)
            spent = [p[way]["seconds"] for p in pairs if way.endswith("confirmed")
                     and not p[way].get("not_flagged")]
            if spent:
                out[f"{phase}.{way}.confirm_minutes_median"] = round(statistics.median(spent) / 60, 2)
                out[f"{phase}.{way}.confirm_minutes_max"] = round(max(spent) / 60, 2)
        out[f"{phase}.pairs"] = len(pairs)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--planted", type=int, default=10)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tidemark-confirm-study-"))
    db = work / "history.duckdb"
    configs = gate_configs(work)
    doc = {"date": time.strftime("%Y-%m-%d", time.gmtime()), "run": RUN,
           "planted_share": PLANTED_SHARE, "same_binary": [], "planted": []}
    runs = [run(work, db, "label=study")]
    for index in range(args.pairs):
        runs.append(run(work, db, "label=study"))
        doc["same_binary"].append({"base": runs[-2], "cand": runs[-1],
                                   **judge_pair(db, runs[-2], runs[-1], configs)})
        save({**doc, "summary": summary(doc)})
        print(f"same binary {index + 1}/{args.pairs}: "
              f"{ {k: v['exit'] for k, v in doc['same_binary'][-1].items() if isinstance(v, dict)} }",
              flush=True)
    doc["planted_ns"] = round(PLANTED_SHARE * per_read_ns(db), 1)
    for index in range(args.planted):
        doc["planted"].append(planted_trial(
            work, db, index, doc["planted_ns"], run,
            lambda trial_db, base, cand: judge_pair(trial_db, base, cand, configs)))
        save({**doc, "summary": summary(doc)})
        print(f"planted {index + 1}/{args.planted}: "
              f"{ {k: v['exit'] for k, v in doc['planted'][-1].items() if isinstance(v, dict)} }",
              flush=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
