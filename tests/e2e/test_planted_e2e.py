"""The planted point-read cost on the real LevelDB, seen exactly in instruction counts.

Callgrind counts are deterministic enough to assert verdicts on: with the histogram off in
callgrind steps (runners/commands.py), repetitions of one LevelDB readrandom invocation differed by at
most about 3e-5 relative here (2,000 keys and reads: 1.2e-5 unplanted, 3.3e-5 with 2,000
spins), so an A/A must be "no significant change" and a planted cost must be "slower" by
exactly spins × (instructions per iteration of the planted loop, read from the binary's own
disassembly) per read.
"""
import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.e2e.fixtures import query, tidemark

pytestmark = pytest.mark.engine

SPINS = 2000
READS = 1000
LEVELDB = ["engine=leveldb", "workload=readrandom", "workload.params.num=2000", "repetitions=1",
           "counters=false", "callgrind=true", f"callgrind_ops={READS}", "callgrind_repetitions=3"]


def ab(tmp: Path, *args: str) -> dict:
    proc = tidemark(tmp, "ab", "--seed", "3", "--metric", "instructions_per_op", "--format", "json",
                    *args, "--", *LEVELDB, f"db={tmp / 'tidemark.duckdb'}", f"results_dir={tmp}",
                    f"data_dir={tmp / 'data'}")
    report = json.loads(proc.stdout[proc.stdout.index("\n{") + 1:])
    (row,) = report["rows"]
    return row["comparison"]


def loop_instructions(binary: str) -> tuple[int, int]:
    """(instructions per iteration of the planted loop, extra instructions once per call with
    spins > 0), from the disassembly of TidemarkPlantedSpin: the loop is the backward jump's
    target up to that jump; the alignment padding before the target runs once on entering it."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", binary], capture_output=True,
                         text=True, check=True).stdout
    body = out.split("TidemarkPlantedSpin(unsigned long)>:\n", 1)[1].split("\n\n", 1)[0]
    lines = [line.split("\t") for line in body.splitlines() if line.strip()]
    addresses = [int(line[0].strip().rstrip(":"), 16) for line in lines]
    (jump,) = [i for i, line in enumerate(lines) if re.match(r"j[a-z]+\s+([0-9a-f]+)", line[1])
               and int(line[1].split()[1], 16) < addresses[i]]
    target = addresses.index(int(lines[jump][1].split()[1], 16))
    padding = sum(1 for line in lines[:target] if line[1].startswith("nop"))
    return jump - target + 1, padding


def test_planted_spins_are_exactly_visible_in_instruction_counts_on_leveldb(tmp_path):
    planted = ab(tmp_path / "ab", "--a", "planted_spins=0", "--b", f"planted_spins={SPINS}")
    conditions = [json.loads(c) for (c,) in query(
        tmp_path / "ab", "SELECT conditions FROM invocations WHERE phase = 'callgrind' ORDER BY run_id")]
    assert [c["planted"]["spins"] for c in conditions] == [0, 0, 0, SPINS, SPINS, SPINS]
    binary = conditions[0]["wrapped_command"][3]
    per_iteration, once = loop_instructions(binary)
    assert planted["verdict"] == "slower" and planted["base_n"] == planted["cand_n"] == 3
    difference = planted["cand_median"] - planted["base_median"]
    assert difference == pytest.approx(SPINS * per_iteration + once, rel=1e-3)
    # The gate, fed by the same core, fails the candidate on the instruction count.
    runs = [r for (r,) in query(tmp_path / "ab", "SELECT run_id FROM runs ORDER BY run_id")]
    gate = tidemark(tmp_path / "ab", "gate", "--db", str(tmp_path / "ab" / "tidemark.duckdb"),
                    "--baseline", runs[0], "--candidate", runs[1], "--metric",
                    "instructions_per_op", check=False)
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert "instructions_per_op" in gate.stdout
    # The site's Summary shows the core's instruction-count verdict beside the wall-clock row.
    tidemark(tmp_path / "ab", "site", "--db", str(tmp_path / "ab" / "tidemark.duckdb"), "--out",
             str(tmp_path / "site"))
    summary = (tmp_path / "site" / "site" / "summary.html").read_text()
    # The table row (the verdict sentences above the table name the metric too).
    table_rows = [row.split("</tr>")[0] for row in summary.split("<tr>")[1:]]
    rows = [row for row in table_rows if "instructions/op (callgrind)" in row]
    assert len(rows) == 1 and "regression (slower)" in rows[0]
    assert f"{(planted['ratio'] - 1) * 100:+.1f}%" in rows[0]
    assert any(row.startswith("\n<td>readrandom ·") and "callgrind" not in row
               for row in table_rows)  # the wall-clock row of the same series

    same = ab(tmp_path / "aa", "--a", f"planted_spins={SPINS}", "--b", f"planted_spins={SPINS}")
    assert same["verdict"] == "no significant change"
    spread = max(same["ci_high"] - 1, 1 - same["ci_low"])  # the widest ratio of two repetitions
    assert spread < 1e-3 and same["threshold"] == 0.005


def test_planted_ns_is_calibrated_on_this_host_and_recorded(tmp_path):
    tidemark(tmp_path, "run", "engine=leveldb", "workload=readrandom", "workload.params.num=2000",
             "repetitions=1", "counters=false", "planted_ns=1500")
    (state,), = query(tmp_path, "SELECT machine_state FROM runs")
    planted = json.loads(state)["planted"]
    assert planted["ns"] == 1500 and planted["spins_per_us"] > 0
    assert planted["spins"] == round(1500 * planted["spins_per_us"] / 1000)
    recorded = [json.loads(c)["planted"] for (c,) in query(
        tmp_path, "SELECT conditions FROM invocations WHERE phase = 'measured'")]
    assert recorded == [planted]
