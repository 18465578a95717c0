"""Parse machine facts from /proc and /sys text (pure), and the fingerprint of stable facts.

The side-effect module `machine` reads the files and hands the text in; tests hand in files
captured on other machines.
"""
from __future__ import annotations

import hashlib
from typing import Any

from ..plan.runplan import canonical_json

# Facts that identify the hardware/software a number was measured on. Momentary state (free
# memory, load) is never part of the fingerprint: it changes between two captures.
FINGERPRINT_KEYS = (
    "cpu_model", "logical_cpus", "physical_cores", "sockets", "threads_per_core",
    "l1d_kb", "l1i_kb", "l2_kb", "l3_kb", "ram_gib", "kernel", "os", "arch",
)


def parse_cpuinfo(text: str) -> dict[str, Any]:
    """CPU model, logical CPUs, physical cores and sockets from /proc/cpuinfo."""
    processors, model, cores = 0, "", set()
    physical_id, core_id = "0", "0"
    for line in text.splitlines() + [""]:
        key, _, value = (part.strip() for part in line.partition(":"))
        if key == "processor":
            processors += 1
        elif key == "model name" and not model:
            model = value
        elif key == "physical id":
            physical_id = value
        elif key == "core id":
            core_id = value
        elif not line.strip() and processors:
            cores.add((physical_id, core_id))
    sockets = len({p for p, _ in cores}) or 1
    physical = len(cores) or processors
    return {"cpu_model": model or "unknown", "logical_cpus": processors,
            "physical_cores": physical, "sockets": sockets,
            "threads_per_core": max(1, processors // physical) if physical else 1}


def parse_meminfo(text: str) -> dict[str, int]:
    """/proc/meminfo as bytes per field (the kernel prints kB)."""
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        parts = value.split()
        if parts and parts[0].isdigit():
            out[key.strip()] = int(parts[0]) * (1024 if parts[1:] == ["kB"] else 1)
    return out


def memory_state(meminfo: dict[str, int]) -> dict[str, int]:
    """free(1)'s columns from /proc/meminfo, in bytes."""
    total, free = meminfo.get("MemTotal", 0), meminfo.get("MemFree", 0)
    buff_cache = meminfo.get("Buffers", 0) + meminfo.get("Cached", 0) + meminfo.get("SReclaimable", 0)
    return {"total": total, "free": free, "buff_cache": buff_cache,
            "used": max(0, total - free - buff_cache),
            "available": meminfo.get("MemAvailable", free),
            "swap_total": meminfo.get("SwapTotal", 0), "swap_free": meminfo.get("SwapFree", 0)}


def parse_cache_size_kb(text: str) -> int:
    """'32K' / '1024K' / '32M' from /sys/devices/system/cpu/cpu0/cache/index*/size."""
    text = text.strip().upper()
    if text.endswith("K"):
        return int(text[:-1])
    if text.endswith("M"):
        return int(text[:-1]) * 1024
    return int(text) // 1024 if text.isdigit() else 0


def cache_label(level: str, kind: str) -> str | None:
    """sysfs (level, type) → our key: (1, Data) → l1d_kb; (3, Unified) → l3_kb."""
    if level == "1":
        return {"Data": "l1d_kb", "Instruction": "l1i_kb"}.get(kind)
    return f"l{level}_kb" if kind == "Unified" else None


def fingerprint(facts: dict[str, Any]) -> str:
    stable = {k: facts.get(k) for k in FINGERPRINT_KEYS}
    return hashlib.sha256(canonical_json(stable).encode()).hexdigest()


def expectation_mismatches(facts: dict[str, Any], cpu_model_pattern: str,
                           logical_cpus: int | None, ram_gib: float | None,
                           ram_tolerance: float = 0.10) -> list[str]:
    """Each expected fact the host does not have, as 'fact: expected X, found Y' (pure).

    RAM is compared with a tolerance because the kernel reports less than the installed size.
    """
    import re

    problems = []
    if cpu_model_pattern and not re.search(cpu_model_pattern, facts.get("cpu_model", "")):
        problems.append(f"cpu_model: expected /{cpu_model_pattern}/, found {facts.get('cpu_model')!r}")
    if logical_cpus is not None and facts.get("logical_cpus") != logical_cpus:
        problems.append(f"logical_cpus: expected {logical_cpus}, found {facts.get('logical_cpus')}")
    found_ram = float(facts.get("ram_gib") or 0)
    if ram_gib is not None and abs(found_ram - ram_gib) > ram_tolerance * ram_gib:
        problems.append(f"ram_gib: expected {ram_gib:g} (±{ram_tolerance:.0%}), found {found_ram:g}")
    return problems


def mount_for(mounts: str, path: str) -> tuple[str, str, str] | None:
    """(device, mount point, fstype) of the longest /proc/mounts entry containing path."""
    best = None
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        device, point, fstype = fields[0], fields[1], fields[2]
        inside = path == point or path.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) > len(best[1])):
            best = (device, point, fstype)
    return best


def block_device_name(device: str) -> str:
    """/dev/nvme0n1p2 → nvme0n1, /dev/sda1 → sda, /dev/vda → vda: the disk in /sys/block."""
    import re

    name = device.rsplit("/", 1)[-1]
    m = re.match(r"^(nvme\d+n\d+|mmcblk\d+)(p\d+)?$", name)
    if m:
        return m.group(1)
    return re.sub(r"\d+$", "", name)
