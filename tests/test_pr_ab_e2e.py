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
