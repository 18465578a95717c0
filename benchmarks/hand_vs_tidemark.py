"""Check that Tidemark's numbers match a hand run of the same db_bench command.

Runs `tidemark run workload=readrandom` (data kept), then runs the recorded engine command of
each measured invocation by hand, outside Tidemark, alternating rounds so that machine drift hits
both sides alike. Prints the medians of ops/s and their ratio. A benchmark, not a test.

    .venv/bin/python benchmarks/hand_vs_tidemark.py [--rounds 3] [extra Hydra overrides]
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb

TIDEMARK = str(Path(sys.executable).parent / "tidemark")
OPS = re.compile(r"^readrandom\s*:.*?(\d+) ops/sec", re.MULTILINE)


def tidemark_round(tmp: Path, overrides: list[str]) -> list[tuple[list[str], float]]:
    """One Tidemark run; the engine argv (perf wrapper stripped) and ops/s of each repetition."""
    before = _run_ids(tmp)
    subprocess.run([TIDEMARK, "run", "workload=readrandom", "repetitions=5", "keep_data=true",
                    f"db={tmp / 't.duckdb'}", f"results_dir={tmp}", f"data_dir={tmp / 'data'}",
                    *overrides], check=True, capture_output=True)
    con = duckdb.connect(str(tmp / "t.duckdb"), read_only=True)
    rows = con.execute("""SELECT i.command, m.value FROM invocations i JOIN metrics m
        USING (invocation_id) WHERE i.phase = 'measured' AND m.name = 'ops_per_sec'
        AND i.run_id NOT IN (SELECT unnest(?::VARCHAR[])) ORDER BY i.seq""", [before]).fetchall()
    con.close()
    out = []
    for command, ops in rows:
        argv = json.loads(command)
        if argv[0] == "perf":
            argv = argv[argv.index("--") + 1:]
        out.append((argv, ops))
    return out


def _run_ids(tmp: Path) -> list[str]:
    if not (tmp / "t.duckdb").exists():
        return []
    con = duckdb.connect(str(tmp / "t.duckdb"), read_only=True)
    ids = [r[0] for r in con.execute("SELECT run_id FROM runs").fetchall()]
    con.close()
    return ids


def hand_run(argv: list[str]) -> float:
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return float(OPS.search(out).group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args, overrides = parser.parse_known_args()
    tool, hand = [], []
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        for round_no in range(args.rounds):
            measured = tidemark_round(tmp, overrides)
            tool += [ops for _, ops in measured]
            hand += [hand_run(argv) for argv, _ in measured]
            print(f"round {round_no + 1}: tidemark {statistics.median(tool):,.0f} ops/s, "
                  f"hand {statistics.median(hand):,.0f} ops/s", flush=True)
    print(f"command: {' '.join(measured[0][0])}")
    t, h = statistics.median(tool), statistics.median(hand)
    print(f"median ops/s over {len(tool)} invocations each: tidemark {t:,.0f}, hand {h:,.0f}, "
          f"ratio tidemark/hand {t / h:.3f}")
    print(f"spread: tidemark {min(tool):,.0f}–{max(tool):,.0f}, hand {min(hand):,.0f}–{max(hand):,.0f}")


if __name__ == "__main__":
    main()
