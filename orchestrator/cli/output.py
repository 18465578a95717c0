"""What the command prints: one console for every subcommand, and the one printer of a
UserError (once, as one line, then the exit with its code), called by main.py and, inside a
Hydra job, by run.py."""
from __future__ import annotations

import sys

from rich.console import Console

from ..errors import UserError

# Logs and CI output are not terminals: give tables room instead of rich's 80-column default.
console = Console(highlight=False, width=None if sys.stdout.isatty() else 140)


def print_error_and_exit(exc: UserError) -> None:
    console.file.flush()
    print(f"tidemark: error: {exc}", file=sys.stderr)
    raise SystemExit(exc.exit_code)
