"""Templates → Markdown files, the generated mkdocs.yml, and `mkdocs build` (side effects)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import jinja2
import yaml

from orchestrator.errors import UserError

from .format import cell, html_cell

TEMPLATES = Path(__file__).resolve().parent / "templates"


def environment() -> jinja2.Environment:
    """Autoescape on everything: .md.j2 is not an extension Jinja2 would escape by default."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["cell"] = cell
    env.filters["html_cell"] = html_cell
    return env


def write_page(env: jinja2.Environment, template: str, path: Path, **context: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(env.get_template(template).render(**context), encoding="utf-8")
    return path


def write_config(out: Path, base_config: Path, nav: list[Any]) -> Path:
    """out/mkdocs.yml: inherits the repo's config; only paths, plotly.js and nav are generated."""
    config = {"INHERIT": str(base_config.resolve()), "docs_dir": "docs", "site_dir": "site",
              "extra_javascript": ["assets/plotly.min.js"], "nav": nav,
              # One page per run is too many for the nav; the runs list links them all.
              "not_in_nav": "/runs/*.md"}
    path = out / "mkdocs.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def mkdocs_build(config: Path) -> None:
    """Run MkDocs in a child process; its first error line becomes a one-line UserError."""
    argv = [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config)]
    proc = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise UserError(f"mkdocs build failed for {config}: {_first_error(proc.stderr + proc.stdout)}"
                        f"; run 'mkdocs build -f {config}' to see the full output")


def _first_error(output: str) -> str:
    """MkDocs prints 'ERROR   -  reason' lines, then a generic 'Aborted ...' line."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    errors = [ln.split("-", 1)[1].strip() for ln in lines if ln.startswith("ERROR")]
    return (errors or lines or ["no output"])[0][:300]
