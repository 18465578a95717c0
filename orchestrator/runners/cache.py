"""Cache states (side effects): the page cache is prepared (cold eviction, hot block-cache
sizing) and verified (residency within the state's bounds) here, for every step runner.

Eviction of dirty pages silently does nothing, so every eviction syncs first. Residency is
measured with mincore(2) through util-linux `fincore`, right before the measured process.
"""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence, Union

from ..plan.runplan import Step
from .context import RunContext

DROP_CACHES = Path("/proc/sys/vm/drop_caches")


PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class Residency:
    resident_pages: int
    total_pages: int  # each file's size rounded up to whole pages
    total_bytes: int

    @property
    def percent(self) -> float:
        return 100.0 * self.resident_pages / self.total_pages if self.total_pages else 0.0


Where = Union[Path, Sequence[Path]]  # a database folder, or a workload's declared data


def data_files(where: Where) -> list[Path]:
    """The files of a folder, or of each file and folder of a list (a workload's `data`)."""
    files: set[Path] = set()
    for path in [where] if isinstance(where, Path) else where:
        if path.is_file():
            files.add(path)
        elif path.is_dir():
            files.update(p for p in path.rglob("*") if p.is_file())
    return sorted(files)


def parse_fincore_raw(text: str, page_size: int = PAGE_SIZE) -> Residency:
    """`fincore --bytes --raw --noheadings --output PAGES,SIZE` lines → summed residency (pure)."""
    resident = pages = size = 0
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[0].isdigit() and fields[1].isdigit():
            resident += int(fields[0])
            pages += -(-int(fields[1]) // page_size)
            size += int(fields[1])
    return Residency(resident, pages, size)


def missing_data(paths: Sequence[Path]) -> str:
    """Why a workload's declared data cannot be prepared ('' when every path exists): a typo
    would otherwise read as a verified 0 % residency."""
    missing = [p for p in paths if not p.exists()]
    return (f"declared data {missing[0]} does not exist (workload.data); fix the path, or the "
            f"setup line that should write it") if missing else ""


def measure_residency(db_dir: Where) -> Residency:
    files = data_files(db_dir)
    if not files:
        return Residency(0, 0, 0)
    out = subprocess.run(["fincore", "--bytes", "--raw", "--noheadings", "--output", "PAGES,SIZE",
                          *map(str, files)], capture_output=True, text=True)
    return parse_fincore_raw(out.stdout)


def evict_page_cache(db_dir: Where, drop_caches: bool) -> list[str]:
    """Sync, fadvise(DONTNEED) every file, optionally drop all caches; returns what was done."""
    os.sync()  # dirty pages cannot be evicted: write them back first
    done = ["sync"]
    for path in data_files(db_dir):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    done.append("posix_fadvise(DONTNEED) per file")
    if drop_caches:
        try:
            DROP_CACHES.write_text("3\n")
            done.append("drop_caches=3")
        except OSError as exc:
            done.append(f"drop_caches refused ({exc.strerror})")
    return done


def hot_block_cache_bytes(data_bytes: int, configured: int) -> int:
    """A block cache that holds the whole data set: blocks are cached uncompressed (≈2× on disk)."""
    return max(configured, 3 * data_bytes + (8 << 20))


def residency_violation(pct: float, min_pct: float | None, max_pct: float | None) -> str:
    """Why a measured residency breaks the cache state's bounds, or '' when it holds (pure)."""
    if max_pct is not None and pct > max_pct:
        return f"page-cache residency {pct:.1f}% > {max_pct:g}% allowed for this cache state"
    if min_pct is not None and pct < min_pct:
        return f"page-cache residency {pct:.1f}% < {min_pct:g}% required for this cache state"
    return ""


def read_back(db_dir: Where, min_pct: float | None) -> tuple[Residency, str]:
    """Residency right before the process; below `min_pct` (None: no bound), the data files read
    once more and measured again. Returns the residency achieved and what was done ('' when
    nothing was).

    The warm-ups left the files resident, but the kernel (e.g. DAMON's proactive reclaim) or
    another tenant may evict pages before the measured step; reading them back is what the
    warm-ups did, and the record keeps both figures. The state's bound is still checked on
    what this achieved (`verify_cache`), so nothing passes that was not measured."""
    residency = measure_residency(db_dir)
    if min_pct is None or residency.percent >= min_pct or not residency.total_pages:
        return residency, ""
    before = residency.percent
    for path in data_files(db_dir):
        with path.open("rb") as handle:
            while handle.read(1 << 20):
                pass
    residency = measure_residency(db_dir)
    return residency, (f"read back: residency {before:.1f}% → {residency.percent:.1f}% "
                       f"(evicted since the warm-ups)")


def prepare_cache(ctx: RunContext, step: Step, db_dir: Where) -> dict[str, Any]:
    """Cold eviction before measured steps; residency measured right before the process (and
    read back when a state that needs it resident lost pages: `read_back`).

    Returns the conditions to record: the procedure, residency %, data bytes and (hot) the
    block cache size that holds the data set.
    """
    conditions: dict[str, Any] = {}
    cache = ctx.plan.caches[step.cache_state]
    if cache.evict_page_cache and step.is_measured and not step.fresh_db:
        drop = cache.drop_caches and ctx.allow_drop_caches
        conditions["cache_procedure"] = evict_page_cache(db_dir, drop)
    if not step.fresh_db:
        residency, read = read_back(db_dir, cache.min_residency_pct if step.is_measured else None)
        if read:  # of this invocation, not the state's procedure (the machine pages show that)
            conditions["residency_read_back"] = read
        conditions["residency_pct"] = round(residency.percent, 2)
        conditions["data_bytes"] = residency.total_bytes
        if step.prelude:
            conditions["block_cache_bytes"] = hot_block_cache_bytes(
                residency.total_bytes, step.params_dict["cache_size"])
    return conditions


TABLE_SUFFIXES = (".sst", ".ldb")  # RocksDB's and LevelDB's table files: the compressed data


def written_data(step: Step, db_dir: Path) -> dict[str, Any]:
    """What a measured writer into a fresh database left on disk: all its files, and its table
    files (compressed; what is still in the memtable sits uncompressed in the log), recorded so
    that compression variants can be read with the size they achieved."""
    if not (step.fresh_db and step.is_measured):
        return {}
    files = data_files(db_dir)
    return {"data_bytes_written": sum(path.stat().st_size for path in files),
            "table_bytes_written": sum(path.stat().st_size for path in files
                                       if path.suffix in TABLE_SUFFIXES)}


def verify_cache(ctx: RunContext, step: Step, conditions: dict[str, Any]) -> str:
    """Why a measured step did not run under its declared cache state, or ''."""
    if not step.is_measured or "residency_pct" not in conditions:
        return ""
    cache = ctx.plan.caches[step.cache_state]
    return residency_violation(conditions["residency_pct"], cache.min_residency_pct,
                               cache.max_residency_pct)
