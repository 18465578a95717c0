"""The results database: `writer` is the only module that writes it, `schema` its migrations and
column lists, `reads` what the analysis core needs from it (read-only), `connection`
how the file is opened (locks, damage, snapshots, backups)."""
from typing import Any

from .connection import connect

__all__ = ["ImportBatch", "Store", "connect", "migrate", "open_checked", "schema_version"]
_WRITER = {"ImportBatch", "Store", "migrate", "open_checked", "schema_version"}


def __getattr__(name: str) -> Any:
    """The writer's names, imported when first asked for: a reader (the site, the CLI's
    reports) need not import what a run needs to write (the plan, the builds, the configs'
    schema and OmegaConf: a tenth of a second of `tidemark site`)."""
    if name in _WRITER:
        from . import writer
        return getattr(writer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
