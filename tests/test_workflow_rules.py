"""The CI is safe for fork pull requests (tests/workflow_rules.py's rules): every workflow of
the repository keeps them; each rule fails on a workflow that breaks it (written to tmp_path,
as a contributor would write it); and the two PR workflows agree with scripts/pr_comment.py on
the names that join them (workflow, artifact, environment)."""
from __future__ import annotations

import sys

import pytest
import yaml

from tests.conftest import REPO
from tests.workflow_rules import lint_file

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
sys.path.insert(0, str(REPO / "scripts"))
import pr_comment  # noqa: E402


@pytest.mark.parametrize("path", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_every_workflow_keeps_the_rules(path):
    assert lint_file(path) == []


# pr.yml as it was: the PR's code measured and the comment posted by one job that could write.
OLD_PR = """
name: pr-benchmark
on:
  pull_request:
permissions:
  contents: read
  pull-requests: write
jobs:
  ab:
    runs-on: [self-hosted, ci-2core]
    steps:
      - uses: actions/checkout@v4
      - run: scripts/pr-ab.sh --out out
      - uses: actions/github-script@v7
        with:
          script: "github.rest.issues.createComment({body: 'x'})"
"""
# pull_request_target hands a fork's code the base's token and secrets unless told otherwise.
TARGET = """
name: bench
on: pull_request_target
env:
  UPLOAD_KEY: ${{ secrets.BENCH_UPLOAD_KEY }}
jobs:
  bench:
    runs-on: ubuntu-latest
    permissions:
      contents: write
    steps:
      - uses: actions/checkout@v4
        with:
          ref: ${{ github.event.pull_request.head.sha }}
      - run: make bench
"""
# A comment workflow that trusts the artifact and the PR.
COMMENT = """
name: comment
on:
  workflow_run:
    workflows: [pr-benchmark]
    types: [completed]
permissions: {}
jobs:
  comment:
    runs-on: ubuntu-latest
    permissions:
      pull-requests: write
    steps:
      - uses: actions/checkout@v4
        with:
          ref: ${{ github.event.workflow_run.head_sha }}
      - uses: actions/download-artifact@v4
        with:
          name: tidemark-verdict
      - run: bash post.sh
"""
NO_PERMISSIONS = """
name: tests
on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: make test
"""
BROKEN = {
    "old pr.yml": (OLD_PR, [
        "old.yml: top-level permissions give pull-requests: write: set `permissions: contents: "
        "read` (or {}) and grant writes on the job that needs them",
        "old.yml job ab runs a pull request's code with pull-requests: write: give it read "
        "permissions only",
        "old.yml job ab runs a pull request's code on a self-hosted runner without an "
        "environment whose reviewers approve each run"]),
    "pull_request_target with a secret": (TARGET, [
        "old.yml: top-level permissions give the repository's default permissions (which may "
        "write): set `permissions: contents: read` (or {}) and grant writes on the job that "
        "needs them",
        "old.yml job bench runs a pull request's code with contents: write: give it read "
        "permissions only",
        "old.yml job bench runs a pull request's code and uses secrets BENCH_UPLOAD_KEY: it may "
        "use none"]),
    "a comment workflow that trusts the PR": (COMMENT, [
        "old.yml job comment runs a pull request's code with pull-requests: write: give it read "
        "permissions only",
        "old.yml job comment checks out ${{ github.event.workflow_run.head_sha }}: a workflow_run"
        " job may check out only this repository's default branch (ref: "
        "${{ github.event.repository.default_branch }})",
        "old.yml job comment downloads an artifact into its checkout, where it can replace the "
        "scripts it runs: give path: ${{ runner.temp }}/NAME",
        "old.yml job comment runs 'bash post.sh' from a downloaded artifact: run only this "
        "repository's scripts, the artifact as their data"]),
    "no permissions on a PR workflow": (NO_PERMISSIONS, [
        "old.yml: top-level permissions give the repository's default permissions (which may "
        "write): set `permissions: contents: read` (or {}) and grant writes on the job that "
        "needs them",
        "old.yml job test runs a pull request's code with the repository's default permissions "
        "(which may write): give it read permissions only"]),
}


@pytest.mark.parametrize("text, expected", BROKEN.values(), ids=BROKEN.keys())
def test_each_rule_fails_on_a_workflow_that_breaks_it(tmp_path, text, expected):
    path = tmp_path / "old.yml"
    path.write_text(text)
    assert lint_file(path) == expected


def test_an_artifact_run_from_the_temp_folder_is_caught_too(tmp_path):
    text = COMMENT.replace("          name: tidemark-verdict\n",
                           "          name: tidemark-verdict\n          path: ${{ runner.temp }}/x\n")
    text = text.replace("      - run: bash post.sh\n", "      - run: python3 scripts/post.py "
                        "$RUNNER_TEMP/x\n      - run: GH=1 python3 ${{ runner.temp }}/x/post.py\n")
    path = tmp_path / "c.yml"
    path.write_text(text.replace("ref: ${{ github.event.workflow_run.head_sha }}",
                                 "ref: ${{ github.event.repository.default_branch }}"))
    assert lint_file(path) == ["c.yml job comment runs 'GH=1 python3 ${{ runner.temp }}/x/post.py' "
                               "from a downloaded artifact: run only this repository's scripts, "
                               "the artifact as their data"]


def _load(name: str) -> dict:
    return yaml.safe_load((REPO / ".github" / "workflows" / name).read_text())


def test_the_pr_workflows_and_the_comment_script_name_the_same_things():
    pr, comment = _load("pr.yml"), _load("pr-comment.yml")
    assert comment[True]["workflow_run"]["workflows"] == [pr["name"]]
    assert pr["jobs"]["ab"]["environment"] == pr_comment.ENVIRONMENT
    uploaded = [s["with"]["name"] for s in pr["jobs"]["ab"]["steps"]
                if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
    [download] = [s for s in comment["jobs"]["comment"]["steps"]
                  if str(s.get("uses", "")).startswith("actions/download-artifact@")]
    assert pr_comment.ARTIFACT in uploaded and download["with"]["name"] == pr_comment.ARTIFACT
    runs = " ".join(str(s.get("run", "")) for s in comment["jobs"]["comment"]["steps"])
    assert "python3 scripts/pr_comment.py post" in runs
    # Only the comment workflow may write to pull requests, and it checks out no PR code.
    assert comment["jobs"]["comment"]["permissions"]["pull-requests"] == "write"
    assert all("pull-requests" not in (j.get("permissions") or {}) for j in pr["jobs"].values())


def test_pushing_to_the_data_branch_is_the_only_write_of_the_scheduled_workflows():
    for name, pushers in (("nightly.yml", {"save"}), ("fleet.yml", {"merge"})):
        workflow = _load(name)
        assert workflow["permissions"] == {"contents": "read"}
        writers = {job_id for job_id, job in workflow["jobs"].items()
                   if (job.get("permissions") or {}).get("contents") == "write"}
        assert writers == pushers, name
        for job_id in pushers:
            runs = " ".join(str(s.get("run", "")) for s in workflow["jobs"][job_id]["steps"])
            assert "scripts/history.sh save" in runs
