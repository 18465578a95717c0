"""A hook MkDocs loads when `tidemark site` builds (render.write_config names this file).

MkDocs compiles the theme's Jinja2 templates (Material's base.html and its partials) from
source on every build: about 0.3 CPU-s of an incremental build's 5 s goal. Jinja2's own
bytecode cache keeps them compiled in out/cache/jinja-<Jinja2's version>; it checks each
template's source checksum and Python's version (not Jinja2's release: hence the folder's
name), so a changed template is compiled again."""
from __future__ import annotations

from importlib import metadata
from pathlib import Path
from typing import Any

import jinja2


def compiled_templates(out: Path) -> jinja2.FileSystemBytecodeCache:
    """Where a build into `out` keeps Jinja2 templates compiled (the theme's and our pages')."""
    folder = out / "cache" / f"jinja-{metadata.version('jinja2')}"
    folder.mkdir(parents=True, exist_ok=True)
    return jinja2.FileSystemBytecodeCache(str(folder))


def on_env(env: jinja2.Environment, config: Any, files: Any) -> jinja2.Environment:
    env.bytecode_cache = compiled_templates(Path(config.config_file_path).parent)
    return env
