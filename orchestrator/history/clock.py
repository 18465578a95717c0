"""A bundle's node clock against this side's (side effects: reads one file's mtime).

A bundle's times (its runs' start and end, each invocation's, the manifest's `created_at`) are
the node's clock. A node whose clock is hours off would put its runs hours away from where
they belong on every trend and make the wrong run `latest`. The rule:

    skew = created_at − min(mtime of manifest.json, now)

`created_at` is written by the node into the manifest at the moment it writes the file; the
file's mtime is set at that same moment by the kernel of the host that stores the folder (the
file server of a shared folder, or this host), not by the node's process, so the difference is
the node's clock error. `now` (this host's clock at ingest) caps it: a manifest cannot have
been written after it is read, which still catches a node ahead whose disk shares its clock.
A skew within `TOLERANCE_S` is no skew (NTP keeps hosts within milliseconds; file times are
coarse on some filesystems). Beyond it the run is stored with its times corrected (minus the
skew) and the skew itself (`runs.clock_skew_s`: the node's own times are the stored ones plus
it), and ingest says so in one line. A bundle copied without its file times (`cp` without
`-p`; `rsync -a` and `cp -p` keep them) reads as a node behind by the copy's delay: the line
names the rule so such a correction can be recognised.
"""
from __future__ import annotations

from datetime import datetime
from pathlib import Path

TOLERANCE_S = 120.0


def clock_skew(node_time: datetime, file_time: float, now: float,
               tolerance_s: float = TOLERANCE_S) -> float | None:
    """The node's clock minus this side's, in seconds; None within the tolerance (pure)."""
    skew = node_time.timestamp() - min(file_time, now)
    return round(skew, 3) if abs(skew) > tolerance_s else None


def bundle_skew(manifest: Path, created_at: str | None, now: float) -> float | None:
    """The skew of a sealed bundle's node (None: none beyond the tolerance, or unknown)."""
    if not created_at:
        return None
    try:
        node_time = datetime.fromisoformat(created_at)
    except ValueError:
        return None
    if node_time.tzinfo is None:  # written by an older Tidemark without a zone: not comparable
        return None
    return clock_skew(node_time, manifest.stat().st_mtime, now)


def skew_text(skew_s: float) -> str:
    """'5.0 h behind', '3 min ahead': how far and which way the node's clock was."""
    size = abs(skew_s)
    amount = f"{size / 3600:.1f} h" if size >= 3600 else f"{size / 60:.0f} min"
    return f"{amount} {'ahead' if skew_s > 0 else 'behind'}"
