"""Probe this machine (side effects): stable facts, momentary state, fingerprint.

Every path is read below `root`, so tests can point it at files captured on other machines.
"""
from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from . import facts as mf

CPU_DIR = "sys/devices/system/cpu"


def _read(path: Path, default: str = "") -> str:
    try:
        return path.read_text()
    except OSError:
        return default


def _first_line(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "not found"
    return out.splitlines()[0].strip() if out.strip() else "not found"


def _cache_sizes(root: Path) -> dict[str, int]:
    sizes = {}
    for index in sorted((root / CPU_DIR / "cpu0" / "cache").glob("index*")):
        label = mf.cache_label(_read(index / "level").strip(), _read(index / "type").strip())
        if label:
            sizes[label] = mf.parse_cache_size_kb(_read(index / "size", "0"))
    return sizes


def _os_name(root: Path) -> str:
    for line in _read(root / "etc/os-release").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip('"')
    return "unknown"


def cpu_policy_facts(root: Path) -> dict[str, Any]:
    """cpufreq governor, turbo, SMT and isolated CPUs, or 'not exposed' where the host hides them."""
    cpu = root / CPU_DIR
    no_turbo = _read(cpu / "intel_pstate/no_turbo").strip()
    boost = _read(cpu / "cpufreq/boost").strip()
    turbo = ("off" if no_turbo == "1" else "on") if no_turbo else \
        ({"1": "on", "0": "off"}.get(boost, "not exposed"))
    return {"cpufreq_governor": _read(cpu / "cpu0/cpufreq/scaling_governor", "not exposed").strip(),
            "turbo": turbo,
            "smt": _read(cpu / "smt/control", "not exposed").strip(),
            "isolated_cpus": _read(cpu / "isolated").strip() or "none"}


def storage_facts(root: Path, data_dir: Path) -> dict[str, Any]:
    """Device, filesystem and rotational flag of the filesystem holding the data directory."""
    mount = mf.mount_for(_read(root / "proc/mounts"), str(data_dir))
    if mount is None:
        return {"data_device": "unknown", "data_fs": "unknown", "data_rotational": "unknown"}
    device, _, fstype = mount
    disk = mf.block_device_name(device)
    rotational = _read(root / "sys/block" / disk / "queue/rotational", "unknown").strip()
    return {"data_device": device, "data_fs": fstype,
            "data_rotational": {"0": "no (SSD/virtual)", "1": "yes"}.get(rotational, rotational)}


def capture_facts(data_dir: Path, root: Path = Path("/")) -> dict[str, Any]:
    """Stable facts of this host: the fingerprint is computed from these."""
    facts: dict[str, Any] = mf.parse_cpuinfo(_read(root / "proc/cpuinfo"))
    facts.update(_cache_sizes(root))
    ram = mf.parse_meminfo(_read(root / "proc/meminfo")).get("MemTotal", 0)
    facts.update({
        "ram_gib": round(ram / 2**30, 1),
        "kernel": _read(root / "proc/sys/kernel/osrelease").strip() or platform.release(),
        "os": _os_name(root),
        "arch": platform.machine(),
        "hostname": socket.gethostname(),
        "python": sys.version.split()[0],
        "compiler": _first_line(["c++", "--version"]),
        "cmake": _first_line(["cmake", "--version"]),
    })
    facts.update(cpu_policy_facts(root))
    facts.update(storage_facts(root, data_dir))
    facts["fingerprint"] = mf.fingerprint(facts)
    return facts


def busy_processes(limit: int = 5) -> list[dict[str, Any]]:
    """The processes using the most CPU right now (another job skews any benchmark)."""
    import psutil

    procs = list(psutil.process_iter(["pid", "name"]))
    for p in procs:
        try:
            p.cpu_percent(None)
        except psutil.Error:
            pass
    psutil.cpu_percent(interval=0.2)
    usage = []
    for p in procs:
        try:
            usage.append({"pid": p.pid, "name": p.info["name"], "cpu_pct": p.cpu_percent(None)})
        except psutil.Error:
            continue
    return sorted(usage, key=lambda u: -u["cpu_pct"])[:limit]


def capture_state(root: Path = Path("/")) -> dict[str, Any]:
    """Momentary state at measurement time: memory, load, busy processes (never fingerprinted)."""
    load1, load5, load15 = os.getloadavg()
    return {"memory": mf.memory_state(mf.parse_meminfo(_read(root / "proc/meminfo"))),
            "loadavg": [round(load1, 2), round(load5, 2), round(load15, 2)],
            "busy_processes": busy_processes()}


# Slurm's job environment: where the scheduler placed this job, as achieved (the profile asked
# for is the run's machine.name; the node and job id are what the fleet checks and shows).
SLURM_VARIABLES = {"job_id": "SLURM_JOB_ID", "node": "SLURMD_NODENAME",
                   "nodes": "SLURM_JOB_NODELIST", "partition": "SLURM_JOB_PARTITION",
                   "cluster": "SLURM_CLUSTER_NAME"}


def scheduler_placement(environ: dict[str, str] | None = None) -> dict[str, Any] | None:
    """The Slurm job this process runs in ({"scheduler": "slurm", node, job id, ...}); None
    outside a scheduler's job."""
    environ = dict(os.environ) if environ is None else environ
    if "SLURM_JOB_ID" not in environ:
        return None
    return {"scheduler": "slurm", **{key: environ.get(name, "") for key, name in
                                     SLURM_VARIABLES.items()}}
