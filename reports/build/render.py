"""Templates → Markdown files, the generated mkdocs.yml, and `mkdocs build` (side effects)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jinja2
import yaml

from ..pages.format import cell, html_cell
from ..pages.run_data import UNVERIFIED_TEXT
from .html_tables import PageSlots
from .mkdocs_hooks import compiled_templates
from .slots import placeholder

TEMPLATES = Path(__file__).resolve().parents[1] / "pages" / "templates"


_compiled: list[jinja2.BytecodeCache] = []  # keep_compiled's, for every environment after it


def keep_compiled(out: Path | None) -> None:
    """Keep the page templates compiled between builds into `out` (out/cache, with MkDocs'
    theme): compiling them was 0.3 CPU-s of each build, in the main process alone. None: not
    any more (the build has ended; its folder may go)."""
    _compiled[:] = [compiled_templates(out)] if out else []


def environment(slots_under: tuple[Path, Path] | None = None) -> jinja2.Environment:
    """Autoescape on everything: .md.j2 is not an extension Jinja2 would escape by default.
    `slots_under` (docs, fragments): pages written with `write_page` put their tables and
    charts in slots (html_tables.PageSlots) instead of Markdown."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True,
                             bytecode_cache=_compiled[0] if _compiled else None)
    env.filters["cell"] = cell
    env.filters["html_cell"] = html_cell
    env.globals["slot"] = placeholder
    env.globals["unverified_run_text"] = UNVERIFIED_TEXT  # an older run's page says it too
    env.globals["slots"] = None  # a page's PageSlots, when written with slots
    env.globals[_SLOTS_UNDER] = slots_under
    return env


_SLOTS_UNDER = "_slots_under"


def write_page(env: jinja2.Environment, template: str, path: Path, **context: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if env.globals[_SLOTS_UNDER]:
        docs, fragments = env.globals[_SLOTS_UNDER]
        page = path.relative_to(docs).with_suffix("").as_posix()
        context = {"slots": PageSlots(fragments, page), **context}
    path.write_text(env.get_template(template).render(**context), encoding="utf-8")
    return path


THEME = Path(__file__).resolve().parents[1] / "pages" / "theme"  # Material overrides (the header's line)
JINJA_CACHE_HOOK = Path(__file__).resolve().parent / "mkdocs_hooks.py"  # templates kept compiled
HEADER_SCRIPT = "assets/generated.js"  # the header's facts, written at each build


def write_config(out: Path, base_config: Path, nav: list[Any],
                 header: dict[str, str] | None = None, exclude_docs: str = "") -> Path:
    """out/mkdocs.yml: inherits the repo's config; only paths, scripts, nav and whether pages
    have the header line (theme/main.html) are generated; `header`'s facts (generated, runs,
    newest) go to docs/assets/generated.js. `exclude_docs`: pages MkDocs sees (their links
    resolve) but does not build."""
    scripts = ["assets/plotly.min.js", "assets/tidemark.js"]
    if header:
        _write_header_script(out / "docs" / HEADER_SCRIPT, header)
        scripts.insert(0, HEADER_SCRIPT)
    config = {"INHERIT": str(base_config.resolve()), "docs_dir": "docs", "site_dir": "site",
              "extra_javascript": scripts, "nav": nav,
              # One page per run is too many for the nav; the runs list links them all.
              "not_in_nav": "/runs/*.md", "theme": {"custom_dir": str(THEME)},
              "extra": {"tidemark_header": bool(header)}, "hooks": [str(JINJA_CACHE_HOOK)]}
    if exclude_docs:
        config["exclude_docs"] = exclude_docs
    path = out / "mkdocs.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def _write_header_script(path: Path, header: dict[str, str]) -> None:
    """The header line's text, set by a script every page loads: in the pages themselves, a
    new build's date and newest run would change the bytes of every page (a thousand run
    pages rewritten for one run added), though nothing on them changed."""
    line = (f"Generated {header['generated']} from {header['runs']} · newest run "
            f"{header['newest']}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "/* Written by `tidemark site`: the header line of every page (theme/main.html). */\n"
        "document.querySelectorAll(\".tm-generated\").forEach(function (span) {\n"
        f"  span.textContent = {json.dumps(line, ensure_ascii=False)};\n"
        "});\n", encoding="utf-8")
