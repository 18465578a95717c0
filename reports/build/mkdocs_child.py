"""The `mkdocs build` child of a site build (side effects): started before the pages exist, so
that it imports MkDocs while they are written, then told which config to build. A module of its
own, light to import: the CLI starts the child before it imports the site's modules."""
from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from orchestrator.errors import UserError

# `mkdocs build` in a child that first imports MkDocs, Material's search and what a build
# needs (0.3 s), then builds the config its stdin names: started early, it imports while the
# pages are written instead of after them. An empty line (or EOF) ends it without a build.
_MKDOCS_CHILD = """import sys
from reports.build.forked import die_with_parent
die_with_parent(int(sys.argv[1]))  # waiting on its stdin, it must not outlive a killed build
import mkdocs.__main__, mkdocs.commands.build, material.plugins.search.plugin
config = sys.stdin.readline().strip()
if config:
    sys.argv = ["mkdocs", "build", "-q", "-f", config]
    mkdocs.__main__.cli()
"""


def start_mkdocs(log_path: Path) -> subprocess.Popen:
    """The MkDocs child, waiting for `mkdocs_building` to name the config (kill it if the build
    stops before that)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w", encoding="utf-8") as log:  # a file: a full pipe would stall MkDocs
        return subprocess.Popen([sys.executable, "-c", _MKDOCS_CHILD, str(os.getpid())],
                                stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                                text=True)


def stop_mkdocs(proc: subprocess.Popen) -> None:
    """End the MkDocs child if it still waits (or builds)."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()


@contextmanager
def mkdocs_building(config: Path, proc: subprocess.Popen | None = None) -> Iterator[None]:
    """`mkdocs build` runs in a child process (`proc`, from `start_mkdocs` with config's
    mkdocs.log, or one started now) during the with-block, so the caller can render what goes
    into the built pages meanwhile; leaving the block waits for it, and its first error line
    becomes a one-line UserError. An error inside the block stops the build."""
    log_path = config.with_name("mkdocs.log")
    proc = proc or start_mkdocs(log_path)
    try:
        try:
            assert proc.stdin is not None
            proc.stdin.write(f"{config.resolve()}\n")
            proc.stdin.close()
        except BrokenPipeError:
            pass  # it ended before it was told (a broken install): its log says why, below
        yield
    except BaseException:
        stop_mkdocs(proc)
        raise
    if proc.wait() != 0:
        output = log_path.read_text(encoding="utf-8", errors="replace")
        raise UserError(f"mkdocs build failed for {config}: {_first_error(output)}"
                        f"; run 'mkdocs build -f {config}' to see the full output")


def _first_error(output: str) -> str:
    """MkDocs prints 'ERROR   -  reason' lines, then a generic 'Aborted ...' line."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    errors = [ln.split("-", 1)[1].strip() for ln in lines if ln.startswith("ERROR")]
    return (errors or lines or ["no output"])[0][:300]
