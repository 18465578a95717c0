"""Probe this machine (side effects): stable facts, momentary state, fingerprint."""
from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from . import machine_facts as mf

SYS_CPU = Path("/sys/devices/system/cpu")


def _read(path: Path | str, default: str = "") -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return default


def _first_line(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "not found"
    return out.splitlines()[0].strip() if out.strip() else "not found"


def _cache_sizes() -> dict[str, int]:
    sizes = {}
    for index in sorted((SYS_CPU / "cpu0" / "cache").glob("index*")):
        label = mf.cache_label(_read(index / "level").strip(), _read(index / "type").strip())
        if label:
            sizes[label] = mf.parse_cache_size_kb(_read(index / "size", "0"))
    return sizes


def _os_name() -> str:
    for line in _read("/etc/os-release").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip('"')
    return platform.system()


def capture_facts() -> dict[str, Any]:
    """Stable facts of this host: the fingerprint is computed from these."""
    facts: dict[str, Any] = mf.parse_cpuinfo(_read("/proc/cpuinfo"))
    facts.update(_cache_sizes())
    ram = mf.parse_meminfo(_read("/proc/meminfo")).get("MemTotal", 0)
    facts.update({
        "ram_gib": round(ram / 2**30, 1),
        "kernel": platform.release(),
        "os": _os_name(),
        "arch": platform.machine(),
        "hostname": socket.gethostname(),
        "python": sys.version.split()[0],
        "compiler": _first_line(["c++", "--version"]),
        "cmake": _first_line(["cmake", "--version"]),
        "cpufreq_governor": _read(SYS_CPU / "cpu0/cpufreq/scaling_governor", "not exposed").strip(),
        "smt": _read(SYS_CPU / "smt/control", "not exposed").strip(),
        "isolated_cpus": _read(SYS_CPU / "isolated").strip() or "none",
    })
    facts["fingerprint"] = mf.fingerprint(facts)
    return facts


def capture_state() -> dict[str, Any]:
    """Momentary state at measurement time: memory and load (never part of the fingerprint)."""
    load1, load5, load15 = os.getloadavg()
    return {"memory": mf.memory_state(mf.parse_meminfo(_read("/proc/meminfo"))),
            "loadavg": [round(load1, 2), round(load5, 2), round(load15, 2)]}
