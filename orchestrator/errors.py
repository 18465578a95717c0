"""The one error family users see. Raised anywhere, printed once by the CLI as a single line."""
from __future__ import annotations

import errno
import re
from pathlib import Path


class UserError(Exception):
    """A problem the user can fix; the message names the bad value and the fix."""

    exit_code = 2


class ConfigError(UserError):
    """A config value, override or group option is wrong."""


class BuildError(UserError):
    """The engine could not be fetched or built."""

    exit_code = 3


class RunnerError(UserError):
    """runner=docker cannot be used here: no daemon answers, or an image does not build."""


class StoreError(UserError):
    """The results database is locked, damaged or from a newer Tidemark."""


class DiskFull(StoreError):
    """A disk Tidemark writes to (the results database, logs, a bundle) is full: the command
    stops there, and what was committed before stays. `where` names the folder; the command
    that stopped may say its own fix (a run: free space, then resume it)."""

    FIX = "free space there, or write the results to another disk (results_dir= and db=, or --db)"

    def __init__(self, where: str, fix: str = FIX):
        super().__init__(f"{where}; {fix}")
        self.where = where

    @classmethod
    def raise_if(cls, exc: BaseException, fallback: Path, fix: str = FIX) -> None:
        """Raise the DiskFull of `exc` (see `of`) with `fix`, when it says the disk is full;
        the caller re-raises `exc` otherwise."""
        full = cls.of(exc, fallback)
        if full is not None:
            raise cls(full.where, fix) from None

    @classmethod
    def of(cls, exc: BaseException, fallback: Path) -> "DiskFull | None":
        """The error for `exc` when it says the disk is full (an OSError with ENOSPC, or
        DuckDB's message naming the file it could not write), else None; `fallback` is the
        file written when the exception names none."""
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            written = Path(exc.filename) if exc.filename else fallback
        elif "No space left on device" in str(exc):
            named = re.search(r'file "([^"]+)"', str(exc))
            written = Path(named.group(1)) if named else fallback
        else:
            return None
        return cls(f"no space left on the disk of {written.parent} (writing {written.name})")


class EngineOutputError(UserError):
    """Engine output did not parse; the invocation becomes a failed record, never a crash."""


class BundleError(UserError):
    """A run bundle is damaged, tampered with, unfinished or from a newer Tidemark: refused whole."""


class IngestPartial(BundleError):
    """Some bundles were merged and others refused: exit 4, as a partial run."""

    exit_code = 4


class FleetError(UserError):
    """A fleet sweep could not be submitted, or a job of it ended without a bundle."""


class SelectorError(UserError):
    """A run selector is malformed or matches no run."""


class NotComparableError(UserError):
    """Baseline and candidate share no series, or differ where the user did not allow it."""


class Interrupted(UserError):
    """Ctrl-C, SIGTERM or SIGHUP: the run is marked interrupted, nothing measured is lost."""

    exit_code = 130


class RunIncomplete(UserError):
    """Some invocations failed (exit 4, run `partial`) or all of them did (exit 5, `failed`)."""

    def __init__(self, message: str, all_failed: bool):
        super().__init__(message)
        self.exit_code = 5 if all_failed else 4
