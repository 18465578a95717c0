"""A cgroup for the engine process (side effects): cpuset, memory and CPU-bandwidth limits.

cgroup v1 (separate cpuset/memory/cpu hierarchies, as on this kind of machine, no systemd) and
v2 (one unified hierarchy at /sys/fs/cgroup with those controllers) are both supported.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError

ROOT = Path("/sys/fs/cgroup")
CFS_PERIOD_US = 100_000


@dataclass(frozen=True)
class Cgroup:
    version: int
    dirs: tuple[Path, ...]
    procs_files: tuple[Path, ...]  # the child writes its own pid here before exec
    limits: dict = field(default_factory=dict)


def _write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError as exc:
        raise ConfigError(f"cannot write {value.strip()!r} to {path} ({exc.strerror}); run as root "
                          f"or set machine.cgroup=false") from None


def make_cpuset(directory: Path, cpus: tuple[int, ...]) -> str:
    """A v1 cpuset at `directory` on `cpus` (its parent's CPUs when empty) and its parent's
    memory nodes: a new v1 cpuset has neither, and takes no task until both are written.
    Returns the CPUs read back."""
    parent = directory.parent
    directory.mkdir(exist_ok=True)
    _write(directory / "cpuset.cpus", ",".join(map(str, cpus)) if cpus else
           (parent / "cpuset.cpus").read_text().strip())
    _write(directory / "cpuset.mems", (parent / "cpuset.mems").read_text().strip())
    return (directory / "cpuset.cpus").read_text().strip()


def _v1(name: str, cpus: tuple[int, ...], memory_mb: int | None, quota_pct: int | None,
        cpuset_parent: Path | None = None) -> Cgroup:
    dirs, limits = [], {}
    cpuset = (cpuset_parent or ROOT / "cpuset") / name
    limits["cpuset.cpus"] = make_cpuset(cpuset, cpus)
    dirs.append(cpuset)
    if memory_mb:
        memory = ROOT / "memory" / name
        memory.mkdir(exist_ok=True)
        _write(memory / "memory.limit_in_bytes", str(memory_mb << 20))
        limits["memory.limit_in_bytes"] = int((memory / "memory.limit_in_bytes").read_text())
        dirs.append(memory)
    if quota_pct:
        cpu = ROOT / "cpu" / name
        cpu.mkdir(exist_ok=True)
        _write(cpu / "cpu.cfs_period_us", str(CFS_PERIOD_US))
        _write(cpu / "cpu.cfs_quota_us", str(CFS_PERIOD_US * quota_pct // 100))
        limits["cpu.cfs_quota_us"] = int((cpu / "cpu.cfs_quota_us").read_text())
        dirs.append(cpu)
    return Cgroup(1, tuple(dirs), tuple(d / "cgroup.procs" for d in dirs), limits)


def _v2(name: str, cpus: tuple[int, ...], memory_mb: int | None, quota_pct: int | None) -> Cgroup:
    available = (ROOT / "cgroup.controllers").read_text().split()
    wanted = ["cpuset"] + (["memory"] if memory_mb else []) + (["cpu"] if quota_pct else [])
    missing = [c for c in wanted if c not in available]
    if missing:
        raise ConfigError(f"cgroup v2 at {ROOT} lacks the {missing[0]} controller; "
                          f"set machine.cgroup=false")
    _write(ROOT / "cgroup.subtree_control", " ".join(f"+{c}" for c in wanted))
    group = ROOT / name
    group.mkdir(exist_ok=True)
    limits = {}
    if cpus:
        _write(group / "cpuset.cpus", ",".join(map(str, cpus)))
        limits["cpuset.cpus"] = (group / "cpuset.cpus").read_text().strip()
    if memory_mb:
        _write(group / "memory.max", str(memory_mb << 20))
        limits["memory.max"] = (group / "memory.max").read_text().strip()
    if quota_pct:
        _write(group / "cpu.max", f"{CFS_PERIOD_US * quota_pct // 100} {CFS_PERIOD_US}")
        limits["cpu.max"] = (group / "cpu.max").read_text().strip()
    return Cgroup(2, (group,), (group / "cgroup.procs",), limits)


def create_cgroup(name: str, cpus: tuple[int, ...], memory_mb: int | None,
                  quota_pct: int | None, cpuset_parent: Path | None = None) -> Cgroup:
    """The engine's cgroup; `cpuset_parent`: a v1 cpuset to nest its cpuset in (a shield's
    benchmark cpuset), instead of the root."""
    if (ROOT / "cgroup.controllers").exists():
        return _v2(name, cpus, memory_mb, quota_pct)
    if (ROOT / "cpuset" / "cpuset.cpus").exists():
        return _v1(name, cpus, memory_mb, quota_pct, cpuset_parent)
    raise ConfigError(f"no usable cgroup hierarchy under {ROOT} (neither v2 nor v1 cpuset); "
                      f"set machine.cgroup=false")


def remove_cgroup(group: Cgroup) -> None:
    for directory in group.dirs:
        try:
            directory.rmdir()
        except OSError:
            pass  # still has a process (a killed engine not yet reaped): the kernel frees it later


def v1_cpuset_root() -> Path | None:
    """The v1 cpuset hierarchy's root, or None where there is none (v2 only, or no cgroups)."""
    root = ROOT / "cpuset"
    return root if (root / "cpuset.cpus").exists() and (root / "tasks").exists() else None


def read_proc_cgroup(pid: int) -> list[str]:
    try:
        return [ln for ln in Path(f"/proc/{pid}/cgroup").read_text().splitlines() if ln]
    except OSError:
        return []
