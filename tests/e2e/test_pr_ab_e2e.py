"""The pull-request gate's own script (scripts/pr-ab.sh, run by .github/workflows/pr.yml) on two
real LevelDB builds: base without and head with the planted point-read cost, judged on
instruction counts (callgrind), so the verdict is deterministic; an A/A passes."""
import os
import subprocess

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.engine
COMMON = ["engine=leveldb", "workload=readrandom", "workload.params.num=2000", "repetitions=1",
          "counters=false", "callgrind=true", "callgrind_ops=1000", "callgrind_repetitions=3"]


@pytest.mark.parametrize("head_spins, code, verdict", [(2000, 1, "regression"), (0, 0, "pass")])
def test_pr_script_posts_the_gate_verdict_and_exits_with_its_code(tmp_path, head_spins, code,
                                                                  verdict):
    summary = tmp_path / "step-summary.md"
    summary.write_text("# earlier step\n")
    proc = subprocess.run(
        ["bash", str(REPO / "scripts" / "pr-ab.sh"), "--out", str(tmp_path / "out"),
         "--metric", "instructions_per_op", "--a", "planted_spins=0", "--b",
         f"planted_spins={head_spins}", "--", *COMMON],
        capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL,
        env={**os.environ, "GITHUB_STEP_SUMMARY": str(summary)})
    assert proc.returncode == code, proc.stdout[-3000:] + proc.stderr[-3000:]
    posted = (tmp_path / "out" / "verdict.md").read_text()
    assert f"tidemark gate: {verdict}" in posted and "(pr-base)" in posted and "(pr-head)" in posted
    assert "instructions_per_op" in posted
    assert summary.read_text() == "# earlier step\n" + posted  # appended to the job summary
    assert (tmp_path / "out" / "site" / "index.html").is_file()


@pytest.mark.parametrize("args", [["--out"], ["--out", "OUT", "--a"], ["--metric"], []])
def test_pr_script_usage_errors_exit_2_never_1(tmp_path, args):
    """Exit 1 means "regression" to the PR workflow: a usage error must not read as one."""
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    proc = subprocess.run(["bash", str(REPO / "scripts" / "pr-ab.sh"), *argv],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and proc.stderr.startswith("usage: "), proc.stderr


def test_pr_script_that_cannot_measure_posts_cannot_tell_and_exits_2(tmp_path):
    """tidemark ab fails (here a bad override; on CI e.g. a base that does not build): the PR
    still gets a verdict saying why nothing could be judged, and the job exits 2."""
    summary = tmp_path / "step-summary.md"
    proc = subprocess.run(
        ["bash", str(REPO / "scripts" / "pr-ab.sh"), "--out", str(tmp_path / "out"), "--",
         "engine=leveldb", "workload=nope"],
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
        env={**os.environ, "GITHUB_STEP_SUMMARY": str(summary)})
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    posted = (tmp_path / "out" / "verdict.md").read_text()
    assert "tidemark gate: cannot tell" in posted and "unknown workload 'nope'" in posted
    assert summary.read_text() == posted
