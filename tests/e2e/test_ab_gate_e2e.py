"""`tidemark ab`, `compare` and `gate` on real LevelDB runs (tiny data sets)."""
import subprocess
import json
from pathlib import Path

import pytest

from tests.e2e.fixtures import OTHER_MACHINE, add_other_machine, query, tidemark

pytestmark = pytest.mark.engine

LEVELDB = ["engine=leveldb", "workload=readrandom", "workload.params.num=20000", "counters=false"]
# An A/A comparison at alpha = 0.05 flags by design in about one run of twenty, and this shared
# 2-core machine moves whole runs by several percent; a 10% minimum effect makes these tests
# check the machinery. The measured false-alarm rate at the default 1% is in site/power.md.
QUIET = ["--min-effect", "0.10"]


def run(tmp: Path, *overrides: str) -> str:
    proc = tidemark(tmp, "run", *LEVELDB, *overrides)
    return proc.stdout.split("run ")[-1].split(":")[0]


def gate(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    return tidemark(tmp, "gate", "--db", str(tmp / "tidemark.duckdb"), *args, check=False)


def test_ab_aa_on_leveldb_is_interleaved_and_decided(tmp_path):
    """The machinery, not a verdict: an A/A at alpha = 0.05 on this shared machine may call a
    change (by design about one run in twenty), so only what does not depend on timing is
    asserted."""
    proc = tidemark(tmp_path, "ab", "--seed", "11", "--format", "json", "--", *LEVELDB,
                    "repetitions=6", f"db={tmp_path / 'tidemark.duckdb'}", f"results_dir={tmp_path}",
                    f"data_dir={tmp_path / 'data'}")
    report = json.loads(proc.stdout[proc.stdout.index("{"):])
    (row,) = report["rows"]
    assert row["comparison"]["verdict"] in ("no significant change", "faster", "slower")
    assert row["comparison"]["base_n"] == row["comparison"]["cand_n"] == 6
    assert row["comparison"]["ci_low"] <= row["comparison"]["ratio"] <= row["comparison"]["ci_high"]
    (ab_id, seed, same, schedule), = query(tmp_path, "SELECT ab_id, seed, same_build, schedule FROM ab_pairs")
    assert seed == 11 and same
    assert [r["rep"] for r in json.loads(schedule)] == [1, 2, 3, 4, 5, 6]
    runs = query(tmp_path, "SELECT run_id FROM runs ORDER BY run_id")
    assert [r[0] for r in runs] == [ab_id[3:] + "-a", ab_id[3:] + "-b"]


def ab(tmp: Path, *args: str) -> None:
    tidemark(tmp, "ab", "--seed", "5", *args[:-1], "--", *LEVELDB, args[-1],
             f"db={tmp / 'tidemark.duckdb'}", f"results_dir={tmp}", f"data_dir={tmp / 'data'}")


def test_gate_exit_codes_on_real_runs(tmp_path):
    # Interleaved sides: a whole-run shift of this shared machine (up to ±50% between separate
    # runs here) hits both sides alike, so the gate sees the planted change and not the machine.
    # One DB per case: an A/A pair in the same DB would rightly raise the series' noise threshold.
    aa, reg = tmp_path / "aa", tmp_path / "reg"
    ab(aa, "repetitions=6")
    # An A/A may rightly call a change now and then: the exit code and the summary must agree.
    aa_gate = gate(aa, "--baseline", "latest~1", "--candidate", "latest", *QUIET,
                   "--summary", str(tmp_path / "summary.md"))
    word = {0: "pass", 1: "regression", 2: "cannot tell"}[aa_gate.returncode]
    assert f"tidemark gate: {word}" in (tmp_path / "summary.md").read_text()
    aa_base = query(aa, "SELECT run_a FROM ab_pairs")[0][0]
    # A real regression: 40× larger values cost more per read (several times slower; a smaller
    # planted change would drown in this machine's noise at 8 repetitions, see site/power.md).
    ab(reg, "--b", "workload.params.value_size=4000", "repetitions=10")
    refused = gate(reg, "--baseline", "latest~1", "--candidate", "latest")
    assert refused.returncode == 2
    assert "params.value_size: 100 vs 4000" in refused.stderr
    slow = gate(reg, "--baseline", "latest~1", "--candidate", "latest",
                "--allow-different", "--summary", str(tmp_path / "slow.md"))
    assert slow.returncode == 1, slow.stdout + slow.stderr
    assert "REGRESSION" in slow.stdout and "readrandom ops_per_sec: -" in slow.stdout
    summary = (tmp_path / "slow.md").read_text()
    assert "regression" in summary and "params.value_size: 100 vs 4000" in summary
    # Two repetitions can never reach p < 0.05 against six (smallest exact p = 2/28).
    run(aa, "repetitions=2", "label=short")
    short = gate(aa, "--baseline", aa_base, "--candidate", "label=short")
    assert short.returncode == 2 and "not enough repetitions" in short.stdout
    # The configured baseline (the gate config's `baseline` selector) stands in for --baseline.
    conf = tmp_path / "gate.yaml"
    conf.write_text(f"baseline: run_id={aa_base}\n")
    configured = gate(aa, "--config", str(conf), "--candidate", "label=short")
    assert configured.returncode == 2 and "not enough repetitions" in configured.stdout
    conf.write_text("baseline: ''\n")  # none configured: the previous comparable run, said so
    unset = gate(aa, "--config", str(conf), "--candidate", "label=short")
    assert unset.returncode == 2 and "not enough repetitions" in unset.stdout
    assert "baseline: no baseline is configured" in unset.stdout
    conf.write_text("baseline: colour=blue\n")
    typo = gate(aa, "--config", str(conf))
    assert typo.returncode == 2 and "unknown selector key 'colour'" in typo.stderr
    assert len(typo.stderr.strip().splitlines()) == 1, typo.stderr
    itself = gate(aa, "--baseline", "latest", "--candidate", "latest")
    assert itself.returncode == 2 and "are the same run" in itself.stderr
    # A mistyped metric names itself and what was measured, never "no workload in common".
    nope = gate(aa, "--baseline", "latest~1", "--candidate", "latest", "--metric", "ops_per_secs")
    assert nope.returncode == 2 and "metric 'ops_per_secs' was not measured" in nope.stderr
    assert "ops_per_sec," in nope.stderr and len(nope.stderr.strip().splitlines()) == 1


def test_compare_refuses_different_machine_fingerprints(tmp_path):
    base_id = run(tmp_path, "repetitions=4")
    db = tmp_path / "tidemark.duckdb"
    (fingerprint,), = query(tmp_path, "SELECT machine_fingerprint FROM runs")
    other = OTHER_MACHINE
    add_other_machine(tmp_path, base_id)
    refused = tidemark(tmp_path, "compare", base_id, "other-machine", "--db", str(db), check=False)
    assert refused.returncode == 2
    assert f"machine_fingerprint: {fingerprint} vs {other}" in refused.stderr
    allowed = tidemark(tmp_path, "compare", base_id, "other-machine", "--db", str(db),
                       "--allow-different", "--format", "markdown")
    assert f"different (allowed): machine_fingerprint: {fingerprint} vs {other}" in allowed.stdout
