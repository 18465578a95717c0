"""Prepare and verify page-cache state of a database directory (side effects).

Eviction of dirty pages silently does nothing, so every eviction syncs first. Residency is
measured with mincore(2) through util-linux `fincore`, right before the measured process.
"""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

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


def data_files(db_dir: Path) -> list[Path]:
    return sorted(p for p in db_dir.rglob("*") if p.is_file()) if db_dir.exists() else []


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


def measure_residency(db_dir: Path) -> Residency:
    files = data_files(db_dir)
    if not files:
        return Residency(0, 0, 0)
    out = subprocess.run(["fincore", "--bytes", "--raw", "--noheadings", "--output", "PAGES,SIZE",
                          *map(str, files)], capture_output=True, text=True)
    return parse_fincore_raw(out.stdout)


def evict_page_cache(db_dir: Path, drop_caches: bool) -> list[str]:
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
