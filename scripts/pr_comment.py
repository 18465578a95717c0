#!/usr/bin/env python3
"""The pull-request verdict, carried from the job that ran the PR's code to ONE comment on it.

    pr_comment.py write --pr N --head-sha SHA --code C --markdown FILE --out DIR
        in .github/workflows/pr.yml, after the gate: DIR/verdict.json and DIR/verdict.md, the
        artifact `tidemark-verdict`, nothing else.
    pr_comment.py post DIR
        in .github/workflows/pr-comment.yml (workflow_run, from the default branch; it never
        checks out or runs the PR's code): the artifact checked, its Markdown made inert, our
        earlier comment (found by MARKER) edited, else one created.
    pr_comment.py check-gate
        in pr.yml before the PR's code runs: the environment ENVIRONMENT exists and requires a
        reviewer (GitHub creates a missing environment unprotected, which would open the gate).

Everything in the artifact was written by a job that ran the PR's code, so none of it is
trusted: it must have this schema and size, claim the PR and head commit GitHub says the run
measured, come from a run a maintainer approved for ENVIRONMENT, and its Markdown is rendered
as text (no HTML, mentions, references, links or images). Reads GITHUB_API_URL (a test points it
at a local server), GITHUB_REPOSITORY, GITHUB_TOKEN and, for `post`, GITHUB_EVENT_PATH (the
workflow_run event). Standard library only. Exit 0 posted or nothing to post, 1 refused or the
API failed: one line saying why, nothing posted.
"""
from __future__ import annotations

import argparse
import html
import json
import os
import re
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from orchestrator.errors import UserError  # noqa: E402  (stdlib only; runs without the venv)

ENVIRONMENT = "benchmark-host"
ARTIFACT = "tidemark-verdict"
MARKER = "<!-- tidemark-verdict -->"
SCHEMA = "tidemark-verdict/1"
BOT = "github-actions[bot]"  # GITHUB_TOKEN's identity: only its comments are ours to edit
FILES = {"verdict.json": 4_096, "verdict.md": 60_000}  # name → size cap in bytes
MAX_BODY = 62_000  # characters; GitHub refuses a comment over 65,536
TYPES = {"schema": str, "pr": int, "head_sha": str, "gate_exit": int}
SHA = re.compile(r"[0-9a-f]{40}")
# Control characters but tab and newline, and the bidirectional overrides that make text read
# otherwise than it is.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]")


class VerdictRefused(UserError):
    """The verdict artifact or the run it came from is not what it must be: nothing posted."""


def check_verdict(data: Any, markdown_bytes: int) -> dict[str, Any]:
    """The verdict if it has exactly the schema's keys and types, else VerdictRefused (pure)."""
    if not isinstance(data, dict) or set(data) != set(TYPES):
        keys = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise VerdictRefused(f"verdict.json has {keys}, not the keys {sorted(TYPES)}")
    for key, kind in TYPES.items():
        if type(data[key]) is not kind:  # bool is an int to isinstance
            raise VerdictRefused(f"verdict.json {key}={data[key]!r} is not of type {kind.__name__}")
    if data["schema"] != SCHEMA or data["pr"] < 1 or data["gate_exit"] not in (0, 1, 2) \
            or not SHA.fullmatch(data["head_sha"]):
        raise VerdictRefused(f"verdict.json is not a {SCHEMA} verdict: {json.dumps(data)[:200]}")
    if markdown_bytes > FILES["verdict.md"]:
        raise VerdictRefused(f"verdict.md is {markdown_bytes} bytes, over {FILES['verdict.md']}")
    return data


def inert_markdown(text: str) -> str:
    """The verdict's Markdown as text GitHub renders without acting on it (pure): no HTML (so
    no hidden text and no fake MARKER), no @mention or #reference that would notify anyone or
    link another issue, links and images reduced to their words, no autolinked address."""
    bad = CONTROL.search(text)
    if bad:
        raise VerdictRefused(f"verdict.md holds the control character U+{ord(bad.group()):04X}")
    text = html.escape(text, quote=False)
    # [words](target) → words; a target may hold one level of parentheses, as URLs do.
    text = re.sub(r"!?\[([^\]\n]*)\]\((?:[^()\n]|\([^()\n]*\))*\)", r"\1", text)
    text = re.sub(r"(?m)^(\s*)\[([^\]\n]+)\]:", r"\1\\[\2]:", text)  # no link definitions
    text = re.sub(r"([@#])(?=[\w-])", "\\1\u200b", text)  # a zero-width space breaks the link
    text = re.sub(r"(?i)\b(gh)-(?=\d)", "\\1\u200b-", text)  # GH-12 links issue 12 too
    return re.sub(r"(?i)\b(https?|ftp)://|\b(www)\.", lambda m: (
        f"{m.group(1)}:\u200b//" if m.group(1) else f"{m.group(2)}\u200b."), text)


def read_artifact(folder: Path) -> tuple[dict[str, Any], str]:
    """The artifact's verdict and Markdown: exactly FILES, regular files within their caps."""
    found = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    if found != sorted(FILES):
        raise VerdictRefused(f"{folder} holds {found}, not exactly {sorted(FILES)}")
    sizes = {}
    for name, cap in FILES.items():
        path = folder / name
        if path.is_symlink() or not path.is_file():
            raise VerdictRefused(f"{path} is not a regular file")
        sizes[name] = path.stat().st_size
        if name == "verdict.json" and sizes[name] > cap:
            raise VerdictRefused(f"{path} is {sizes[name]} bytes, over {cap}")
    try:
        data = json.loads((folder / "verdict.json").read_text(encoding="utf-8"))
        text = (folder / "verdict.md").read_text(encoding="utf-8")
    except (UnicodeDecodeError, ValueError) as exc:
        raise VerdictRefused(f"the artifact does not parse: {str(exc)[:160]}") from None
    return check_verdict(data, sizes["verdict.md"]), text


class GitHub:
    """The few REST calls used, against GITHUB_API_URL, as GITHUB_TOKEN."""

    def __init__(self, api: str, repo: str, token: str):
        self.base, self.repo, self.token = api.rstrip("/"), repo, token

    def call(self, method: str, path: str, body: dict | None = None) -> Any:
        url = f"{self.base}/repos/{self.repo}/{path}"
        request = urllib.request.Request(url, method=method, headers={
            "Authorization": f"Bearer {self.token}", "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "tidemark-pr-comment"},
            data=None if body is None else json.dumps(body).encode())
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            detail = exc.read(300).decode("utf-8", "replace").replace("\n", " ")
            raise UserError(f"GitHub API {method} {url} answered {exc.code}: {detail}") from None
        except urllib.error.URLError as exc:
            raise UserError(f"GitHub API {url} did not answer: {exc.reason}") from None

    def comments(self, pr: int) -> list[dict[str, Any]]:
        out, page = [], 1
        while True:
            batch = self.call("GET", f"issues/{pr}/comments?per_page=100&page={page}")
            out += batch
            if len(batch) < 100:
                return out
            page += 1


def check_run(github: GitHub, run: dict[str, Any], verdict: dict[str, Any]) -> bool:
    """VerdictRefused unless the verdict claims the PR and head the run measured and a
    maintainer approved the run for ENVIRONMENT; False for a PR that moved on since (stale)."""
    if run.get("event") != "pull_request":
        raise VerdictRefused(f"run {run.get('id')} was triggered by {run.get('event')!r}, "
                             f"not pull_request")
    if verdict["head_sha"] != run.get("head_sha"):
        raise VerdictRefused(f"the verdict claims head {verdict['head_sha']}, but run "
                             f"{run.get('id')} measured {run.get('head_sha')}")
    listed = [p.get("number") for p in run.get("pull_requests") or []]  # empty for a fork
    head = github.call("GET", f"pulls/{verdict['pr']}").get("head") or {}
    head_repo = (run.get("head_repository") or {}).get("full_name")
    same_branch = (head.get("repo") or {}).get("full_name") == head_repo and \
        head.get("ref") == run.get("head_branch")
    if (listed and verdict["pr"] not in listed) or not same_branch:
        raise VerdictRefused(f"the verdict claims PR #{verdict['pr']}, but run {run.get('id')} "
                             f"measured {head_repo}:{run.get('head_branch')}, not that PR's head")
    approved = [a for a in github.call("GET", f"actions/runs/{run.get('id')}/approvals")
                if a.get("state") == "approved"
                and ENVIRONMENT in [e.get("name") for e in a.get("environments") or []]]
    if not approved:
        raise VerdictRefused(f"run {run.get('id')} was never approved for environment {ENVIRONMENT}")
    return head.get("sha") == verdict["head_sha"]


def comment_body(verdict: dict[str, Any], markdown: str, run: dict[str, Any]) -> str:
    body = (f"{MARKER}\n{inert_markdown(markdown).rstrip()}\n\n"
            f"_Measured at head `{verdict['head_sha'][:12]}` by workflow run {run.get('id')} "
            f"({run.get('html_url', '')})._\n")
    if len(body) > MAX_BODY:
        raise VerdictRefused(f"the comment would be {len(body)} characters, over {MAX_BODY}")
    return body


def post(folder: Path, github: GitHub, event: dict[str, Any]) -> str:
    """Edit our comment on the PR, or create it; what was done, in one line."""
    run = event.get("workflow_run") or {}
    verdict, markdown = read_artifact(folder)
    body = comment_body(verdict, markdown, run)
    if not check_run(github, run, verdict):
        return (f"skipped: PR #{verdict['pr']} has a newer head than {verdict['head_sha'][:12]}; "
                f"its own run will post")
    ours = [c for c in github.comments(verdict["pr"]) if (c.get("user") or {}).get("login") == BOT
            and (c.get("body") or "").startswith(MARKER)]
    if ours:
        github.call("PATCH", f"issues/comments/{ours[0]['id']}", {"body": body})
        return f"updated comment {ours[0]['id']} on PR #{verdict['pr']}"
    made = github.call("POST", f"issues/{verdict['pr']}/comments", {"body": body})
    return f"created comment {made['id']} on PR #{verdict['pr']}"


def check_gate(github: GitHub) -> str:
    try:
        env = github.call("GET", f"environments/{ENVIRONMENT}")
    except UserError as exc:
        raise VerdictRefused(f"environment {ENVIRONMENT} cannot be read ({exc}); create it "
                             f"with required reviewers (Settings → Environments)") from None
    reviewers = [r for rule in env.get("protection_rules") or []
                 if rule.get("type") == "required_reviewers" for r in rule.get("reviewers") or []]
    if not reviewers:
        raise VerdictRefused(f"environment {ENVIRONMENT} requires no reviewer, so a fork's PR "
                             f"would run unapproved; add required reviewers in its settings")
    return f"environment {ENVIRONMENT}: {len(reviewers)} required reviewer(s)"


def write(args: argparse.Namespace) -> str:
    """The artifact, checked by the same rules `post` applies; a long verdict is cut at a line."""
    text = Path(args.markdown).read_text(encoding="utf-8")
    cap = FILES["verdict.md"] - 200
    if len(text.encode()) > cap:
        text = text.encode()[:cap].decode("utf-8", "ignore").rsplit("\n", 1)[0] + \
            "\n\n_(cut here: the whole verdict is in the job summary)_\n"
    verdict = check_verdict({"schema": SCHEMA, "pr": args.pr, "head_sha": args.head_sha,
                             "gate_exit": args.code}, len(text.encode()))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "verdict.json").write_text(json.dumps(verdict))
    (out / "verdict.md").write_text(text, encoding="utf-8")
    return f"wrote {out}/verdict.json and verdict.md"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="pr_comment.py", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write")
    for flag, kind in (("--pr", int), ("--head-sha", str), ("--code", int),
                       ("--markdown", str), ("--out", str)):
        w.add_argument(flag, type=kind, required=True)
    sub.add_parser("post").add_argument("folder", type=Path)
    sub.add_parser("check-gate")
    args = parser.parse_args(argv)
    try:
        if args.command == "write":
            print(f"pr-comment: {write(args)}")
            return 0
        github = GitHub(_env("GITHUB_API_URL"), _env("GITHUB_REPOSITORY"), _env("GITHUB_TOKEN"))
        if args.command == "check-gate":
            print(f"pr-comment: {check_gate(github)}")
            return 0
        event = json.loads(Path(_env("GITHUB_EVENT_PATH")).read_text())
        print(f"pr-comment: {post(args.folder, github, event)}")
        return 0
    except VerdictRefused as exc:
        print(f"pr-comment: refused, nothing posted: {exc}", file=sys.stderr)
    except UserError as exc:
        print(f"pr-comment: {exc}", file=sys.stderr)
    return 1


def _env(name: str) -> str:
    if not os.environ.get(name):
        raise UserError(f"{name} is not set; the workflow sets it (see this script's docstring)")
    return os.environ[name]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
