"""db_bench latency histograms (pure): the bucket table both engines print, and percentiles.

RocksDB prints `[ lo, hi ]` / `( lo, hi ]` rows plus a `Percentiles:` line; LevelDB prints
`[ lo, hi )` rows and no percentiles, so percentiles are interpolated inside the bucket, as
LevelDB's own Histogram::Percentile does, and clamped to the printed min and max.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import EngineOutputError
from .numbers import text_float, text_int

HEADER = re.compile(r"^Microseconds per (\w[\w ]*):\s*$")
COUNT = re.compile(r"^Count:\s*(\d+)\s+Average:\s*([\d.]+)\s+StdDev:\s*([\d.]+)")
MIN_MAX = re.compile(r"^Min:\s*([\d.]+)\s+Median:\s*([\d.]+)\s+Max:\s*([\d.]+)")
PERCENTILES = re.compile(r"P(\d+(?:\.\d+)?):\s*([\d.]+)")
BUCKET = re.compile(r"^[\[(]\s*([\d.]+),\s*([\d.]+)\s*[\])]\s+(\d+)\s+[\d.]+%\s+[\d.]+%")

# The percentiles every report shows; p50 first.
STANDARD_PERCENTILES = (50.0, 75.0, 95.0, 99.0, 99.9, 99.99)


@dataclass(frozen=True)
class HistogramBlock:
    op: str  # "read", "write", "op", ...
    count: int
    average: float
    stddev: float
    minimum: float
    median: float
    maximum: float
    printed_percentiles: dict[float, float]
    buckets: tuple[tuple[float, float, int], ...]


def percentile_label(p: float) -> str:
    """50 → p50, 99.9 → p99_9: metric names without dots."""
    return "p" + f"{p:g}".replace(".", "_")


def bucket_percentile(buckets: tuple[tuple[float, float, int], ...], p: float,
                      minimum: float, maximum: float) -> float:
    total = sum(c for _, _, c in buckets)
    if total == 0:
        return 0.0
    threshold = total * p / 100.0
    running = 0
    for lo, hi, count in buckets:
        running += count
        if running >= threshold and count > 0:
            position = (threshold - (running - count)) / count
            value = lo + (hi - lo) * position
            return min(max(value, minimum), maximum)
    return maximum


def _parse_block(op: str, lines: list[str], start: int) -> tuple[HistogramBlock, int]:
    """Parse one block whose header is at lines[start-1]; returns it and the next line index."""
    i = start
    count_m = COUNT.match(lines[i].strip()) if i < len(lines) else None
    minmax_m = MIN_MAX.match(lines[i + 1].strip()) if i + 1 < len(lines) else None
    if not count_m or not minmax_m:
        raise EngineOutputError(f"histogram 'Microseconds per {op}' lacks its Count/Min lines "
                                f"(output truncated?)")
    i += 2
    printed: dict[float, float] = {}
    where = f"histogram 'Microseconds per {op}'"
    if i < len(lines) and lines[i].strip().startswith("Percentiles:"):
        printed = {text_float(p, "a percentile rank", where): text_float(v, f"P{p}", where)
                   for p, v in PERCENTILES.findall(lines[i])}
        i += 1
    buckets = []
    while i < len(lines) and (lines[i].startswith("---") or not lines[i].strip()) and not buckets:
        i += 1
    while i < len(lines):
        m = BUCKET.match(lines[i].strip())
        if not m:
            break
        buckets.append((text_float(m.group(1), "a bucket bound", where),
                        text_float(m.group(2), "a bucket bound", where),
                        text_int(m.group(3), "a bucket count", where)))
        i += 1
    count = text_int(count_m.group(1), "Count", where)
    if buckets and sum(c for *_, c in buckets) != count:
        raise EngineOutputError(f"histogram 'Microseconds per {op}': buckets sum to "
                                f"{sum(c for *_, c in buckets)} but Count is {count} (output truncated?)")
    average, stddev = (text_float(count_m.group(k), f, where)
                       for k, f in ((2, "Average"), (3, "StdDev")))
    minimum, median, maximum = (text_float(minmax_m.group(k), f, where)
                                for k, f in ((1, "Min"), (2, "Median"), (3, "Max")))
    block = HistogramBlock(op=op, count=count, average=average, stddev=stddev, minimum=minimum,
                           median=median, maximum=maximum, printed_percentiles=printed,
                           buckets=tuple(buckets))
    return block, i


def parse_histograms(text: str) -> list[HistogramBlock]:
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        header = HEADER.match(lines[i].strip())
        if header:
            block, i = _parse_block(header.group(1).strip().replace(" ", "_"), lines, i + 1)
            blocks.append(block)
        else:
            i += 1
    return blocks


def block_percentiles(block: HistogramBlock) -> dict[float, float]:
    """Standard percentiles: the engine's printed value where it printed one, else interpolated."""
    out = {}
    for p in STANDARD_PERCENTILES:
        if p in block.printed_percentiles:
            out[p] = block.printed_percentiles[p]
        elif block.buckets:
            out[p] = bucket_percentile(block.buckets, p, block.minimum, block.maximum)
    return out
