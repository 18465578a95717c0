"""The results database: `writer` is the only module that writes it, `schema` its migrations and
column lists, `reads` what the analysis core needs from it (read-only), `connection`
how the file is opened (locks, damage, snapshots, backups)."""
from .connection import connect
from .writer import ImportBatch, Store, migrate, open_checked, schema_version

__all__ = ["ImportBatch", "Store", "connect", "migrate", "open_checked", "schema_version"]
