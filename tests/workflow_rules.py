"""The CI's safety rules, read from .github/workflows/*.yml with PyYAML (pure: no GitHub).

1. A workflow's top-level `permissions` exist and only read: writes are granted per job.
2. A job that runs a pull request's code (it checks out the PR's head, or checks out anything
   in a workflow triggered by pull_request or pull_request_target) writes nothing (no `write`
   permission, nor the repository's default), uses no secret but GITHUB_TOKEN (which then only
   reads), and on a self-hosted runner waits for an `environment` whose reviewers approve it.
3. A workflow_run job (it runs with the base's permissions after a PR's run) never checks out
   the PR's code, downloads artifacts only outside its checkout (an artifact must not replace
   the scripts it then runs), and runs nothing from a downloaded artifact.

`lint(name, workflow)` returns one line per broken rule, naming the workflow, the job and the
fix; tests/test_workflow_rules.py holds the repository's workflows to it.
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

PR_EVENTS = {"pull_request", "pull_request_target"}
# A ref or repository expression that names the PR's code rather than the base's.
PR_CODE = re.compile(r"pull_request\.head|head_ref|refs/pull/|workflow_run\.head|merge_commit_sha")
DEFAULT_BRANCH = "${{ github.event.repository.default_branch }}"
SECRET = re.compile(r"secrets\.(\w+)")
INTERPRETERS = {"bash", "sh", "python", "python3", "node", "source", ".", "exec"}


def triggers(workflow: dict[str, Any]) -> set[str]:
    """The events a workflow runs on (YAML 1.1 reads the key `on` as True)."""
    on = workflow.get("on", workflow.get(True))
    if isinstance(on, str):
        return {on}
    return set(on or ())


def _steps(job: dict[str, Any], action: str) -> list[dict[str, Any]]:
    return [s for s in job.get("steps") or [] if str(s.get("uses", "")).startswith(action + "@")]


def _with(step: dict[str, Any], key: str) -> str:
    return str((step.get("with") or {}).get(key, "") or "")


def writes(permissions: Any) -> list[str]:
    """What a `permissions` value lets the token write; None is the repository's default."""
    if permissions is None:
        return ["the repository's default permissions (which may write)"]
    if isinstance(permissions, str):
        return [permissions] if permissions == "write-all" else []
    return [f"{scope}: write" for scope, level in permissions.items() if level == "write"]


def runs_pr_code(workflow: dict[str, Any], job: dict[str, Any]) -> bool:
    checkouts = _steps(job, "actions/checkout")
    named = any(PR_CODE.search(_with(s, "ref") + _with(s, "repository")) for s in checkouts)
    return named or bool(checkouts and triggers(workflow) & PR_EVENTS)


def secrets_used(*values: Any) -> set[str]:
    """Secrets named anywhere in values but GITHUB_TOKEN; `secrets: inherit` passes them all."""
    found: set[str] = set()
    for value in values:
        if isinstance(value, dict):
            if value.get("secrets") == "inherit":
                found.add("inherit")
            found |= secrets_used(*value.values())
        elif isinstance(value, list):
            found |= secrets_used(*value)
        elif isinstance(value, str):
            found |= {name for name in SECRET.findall(value) if name != "GITHUB_TOKEN"}
    return found


def _runs_artifact(line: str, folders: list[str]) -> bool:
    """Whether a shell line runs a file from one of the downloaded folders."""
    line = re.sub(r"\$\{\{\s*runner\.temp\s*\}\}", "$RUNNER_TEMP", line)
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        words = line.split()
    words = [w for w in words if not re.fullmatch(r"\w+=.*", w)]  # leading VAR=value
    if words and words[0] in INTERPRETERS:
        words = [w for w in words[1:] if not w.startswith("-")]
    return bool(words) and any(words[0].startswith(folder) for folder in folders)


def _privileged_job(where: str, job: dict[str, Any]) -> list[str]:
    problems = []
    for step in _steps(job, "actions/checkout"):
        ref, repository = _with(step, "ref"), _with(step, "repository")
        if ref not in ("", DEFAULT_BRANCH) or \
                repository.replace(" ", "") not in ("", "${{github.repository}}"):
            problems.append(f"{where} checks out {ref or repository}: a workflow_run job may "
                            f"check out only this repository's default branch "
                            f"(ref: {DEFAULT_BRANCH})")
    folders = []
    for step in _steps(job, "actions/download-artifact"):
        path = _with(step, "path").replace(" ", "")
        if not path.startswith("${{runner.temp}}/"):
            problems.append(f"{where} downloads an artifact into {path or 'its checkout'}, where "
                            f"it can replace the scripts it runs: give path: "
                            f"${{{{ runner.temp }}}}/NAME")
        folders += [path.replace("${{runner.temp}}", "$RUNNER_TEMP"),
                    path.replace("${{runner.temp}}", "${RUNNER_TEMP}")]
    for step in job.get("steps") or []:
        for line in str(step.get("run", "")).splitlines():
            if folders and _runs_artifact(line, folders):
                problems.append(f"{where} runs {line.strip()!r} from a downloaded artifact: "
                                f"run only this repository's scripts, the artifact as their data")
    return problems


def lint(name: str, workflow: dict[str, Any]) -> list[str]:
    """One line per broken rule of the module docstring; [] when the workflow keeps them all."""
    problems = []
    top = workflow.get("permissions")
    if writes(top):
        problems.append(f"{name}: top-level permissions give {', '.join(writes(top))}: set "
                        f"`permissions: contents: read` (or {{}}) and grant writes on the job "
                        f"that needs them")
    for job_id, job in (workflow.get("jobs") or {}).items():
        where = f"{name} job {job_id}"
        if runs_pr_code(workflow, job):
            granted = writes(job.get("permissions", top))
            if granted:
                problems.append(f"{where} runs a pull request's code with {', '.join(granted)}: "
                                f"give it read permissions only")
            used = secrets_used(workflow.get("env"), job)
            if used:
                problems.append(f"{where} runs a pull request's code and uses secrets "
                                f"{', '.join(sorted(used))}: it may use none")
            if "self-hosted" in str(job.get("runs-on")) and not job.get("environment"):
                problems.append(f"{where} runs a pull request's code on a self-hosted runner "
                                f"without an environment whose reviewers approve each run")
        if "workflow_run" in triggers(workflow):
            problems += _privileged_job(where, job)
    return problems


def lint_file(path: Path) -> list[str]:
    import yaml

    return lint(path.name, yaml.safe_load(path.read_text()))
