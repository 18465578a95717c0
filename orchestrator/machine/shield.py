"""Shielded CPUs (side effects), the way `cset shield` does it with cgroup v1 cpusets.

Under the cpuset root, `tidemark-shield-<pid>-<start>/` holds two cpusets: `bench` with the
benchmark CPUs (machine.pin_cpus), which only the engine joins, and `rest` with every other CPU,
into which the tasks to keep off the benchmark CPUs are moved:

- `shield: own`: Tidemark itself and the tasks it started (its descendants: a build, a load
  generator). Safe on a shared machine: nothing Tidemark did not start is touched.
- `shield: system`: every user task of the machine's root cpuset. Only for a dedicated
  benchmark host; never a default, never used by the tests.

IRQ masks are moved off the benchmark CPUs where /proc/irq/N/smp_affinity accepts it
(irq.py). Before anything is moved, a state file (under /run, which, like the cgroups, does
not survive a reboot) records each task's cpuset and affinity and each IRQ's mask; the undo
puts all of it back. It runs at the end of the run, on Ctrl-C and SIGTERM (see `shielded`);
a run killed outright leaves its state file, and the next shield or `tidemark machine reset`
finds the owner dead and undoes it. A flock on the state directory keeps it to one shield per
machine: two shields would fight over the same CPUs and IRQ masks.
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError, UserError
from . import irq, proc_tasks
from .cgroup import make_cpuset, v1_cpuset_root
from .execute import parse_cpu_list, read_cpus_allowed

MODES = ("none", "own", "system")
PREFIX = "tidemark-shield-"
STATE_DIR = Path("/run/tidemark-shield")


@dataclass(frozen=True)
class ShieldCpusets:
    """What a step needs of an applied shield: where the engine goes, what to read back."""

    mode: str
    directory: Path
    bench_cpus: tuple[int, ...]

    @property
    def bench_dir(self) -> Path:
        return self.directory / "bench"

    @property
    def rest_dir(self) -> Path:
        return self.directory / "rest"


@dataclass(frozen=True)
class Shield:
    """An applied shield (cpusets set) or one that could not be (cpusets None, report says why)."""

    report: dict[str, Any]
    cpusets: ShieldCpusets | None = None
    state_file: Path | None = None
    lock_fd: int | None = None
    irq_originals: dict[str, str] = field(default_factory=dict)


def check_shield_conf(mode: str, pin: tuple[int, ...], online: tuple[int, ...]) -> tuple[int, ...]:
    """The CPUs left for everything else; refuses a mode or pinning that cannot shield (pure)."""
    if mode not in MODES:
        raise ConfigError(f"machine.shield={mode!r} is not one of {', '.join(MODES)}; "
                          f"use own (Tidemark's own tasks) or system (a dedicated host)")
    rest = tuple(c for c in online if c not in pin)
    if mode != "none" and not pin:
        raise ConfigError(f"machine.shield={mode} needs benchmark CPUs: set machine.pin_cpus, "
                          f"e.g. machine.pin_cpus=[{online[-1]}]")
    if mode != "none" and not rest:
        raise ConfigError(f"machine.shield={mode} with machine.pin_cpus={list(pin)} leaves no CPU "
                          f"for the other tasks; pin fewer CPUs")
    return rest


def _write_procs(cpuset: Path, pid: int) -> str:
    """Move a task (its whole thread group) into a cpuset; '' or why not."""
    try:
        (cpuset / "cgroup.procs").write_text(str(pid))
        return ""
    except OSError as exc:
        return exc.strerror or type(exc).__name__


def _tasks_to_move(mode: str, root: Path) -> list[dict[str, Any]]:
    """The tasks this mode keeps off the benchmark CPUs, with where each is now."""
    everyone = proc_tasks.all_tasks()
    me = proc_tasks.read_stat(os.getpid())
    assert me is not None
    if mode == "own":
        chosen = [me] + proc_tasks.descendants(me.pid, everyone)
    else:  # system: every user task of the root cpuset
        chosen = [t for t in everyone if proc_tasks.cpuset_of(t.pid) == "/"]
    moves = []
    for task in chosen:
        cpuset = proc_tasks.cpuset_of(task.pid)
        if task.kernel_thread or cpuset is None:
            continue
        moves.append({"pid": task.pid, "starttime": task.starttime, "cpuset": cpuset,
                      "cpus": list(read_cpus_allowed(task.pid))})
    return moves


def _lock(state_dir: Path) -> int | None:
    """The machine's shield lock, or None while another live run holds it."""
    state_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(state_dir / "lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return None
        raise
    return fd


def _unlock(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)  # closing the descriptor releases the flock


def not_applied(mode: str, reason: str) -> Shield:
    return Shield(report={"mode": mode, "applied": False, "reason": reason})


def apply_shield(mode: str, bench: tuple[int, ...], orchestrator_cpus: tuple[int, ...],
                 move_irqs: bool = True, state_dir: Path = STATE_DIR) -> Shield:
    """Shield the benchmark CPUs; a Shield whose report says why not where it cannot be."""
    root = v1_cpuset_root()
    if root is None:
        return not_applied(mode, "no cgroup v1 cpuset hierarchy here (needs /sys/fs/cgroup/cpuset)")
    rest = check_shield_conf(mode, bench, parse_cpu_list((root / "cpuset.cpus").read_text()))
    try:
        fd = _lock(state_dir)
    except OSError as exc:
        return not_applied(mode, f"cannot write {state_dir} ({exc.strerror}); run as root")
    if fd is None:
        return not_applied(mode, f"another Tidemark run holds the shield ({state_dir / 'lock'})")
    leftovers = remove_leftover_shields(state_dir, locked=True)
    me = proc_tasks.read_stat(os.getpid())
    assert me is not None
    cpusets = ShieldCpusets(mode, root / f"{PREFIX}{me.pid}-{me.starttime}", bench)
    bench_mask, rest_mask = irq.cpu_mask(bench), irq.cpu_mask(rest)
    irq_targets = irq.irqs_on(irq.read_masks(), bench_mask) if move_irqs else {}
    state = {"owner_pid": me.pid, "owner_starttime": me.starttime, "mode": mode,
             "directory": str(cpusets.directory), "bench_cpus": list(bench),
             "tasks": _tasks_to_move(mode, root), "irqs": irq_targets}
    state_file = state_dir / f"{cpusets.directory.name}.json"
    state_file.write_text(json.dumps(state))  # before anything moves: the undo of a killed run
    shield = Shield({}, cpusets, state_file, fd)
    try:
        make_cpuset(cpusets.directory, ())
        make_cpuset(cpusets.bench_dir, bench)
        make_cpuset(cpusets.rest_dir, rest)
    except UserError as exc:
        undo_shield(shield)
        return not_applied(mode, str(exc))
    refused = {t["pid"]: why for t in state["tasks"] if (why := _write_procs(cpusets.rest_dir, t["pid"]))}
    if me.pid in refused:
        undo_shield(shield)
        return not_applied(mode, f"cannot move Tidemark into {cpusets.rest_dir} ({refused[me.pid]})")
    wanted = tuple(c for c in orchestrator_cpus if c in rest) or rest
    os.sched_setaffinity(0, wanted)  # the move reset it to the whole rest cpuset
    moves = irq.move_irqs(irq_targets, bench_mask, rest_mask) if irq_targets else \
        irq.IrqMoves({}, (), {})
    report = {"mode": mode, "applied": True, "leftovers_removed": leftovers,
              **shield_readback(cpusets), "tasks_moved": len(state["tasks"]) - len(refused),
              "tasks_not_moved": len(refused), "irqs_moved": list(moves.moved),
              "irqs_not_moved": moves.not_moved}
    return Shield(report, cpusets, state_file, fd, moves.originals)


def shield_readback(cpusets: ShieldCpusets) -> dict[str, Any]:
    """What the kernel applied, read back: the cpuset files, and how many tasks of the rest
    cpuset may still run on a benchmark CPU (0 when the shield holds)."""
    def read(path: Path) -> str:
        try:
            return path.read_text().strip()
        except OSError:
            return ""
    bench = set(cpusets.bench_cpus)
    pids = [int(p) for p in read(cpusets.rest_dir / "cgroup.procs").split()]
    on_bench = sum(1 for pid in pids if bench & set(read_cpus_allowed(pid)))
    return {"cpuset": "/" + cpusets.directory.name,
            "bench_cpus": read(cpusets.bench_dir / "cpuset.cpus"),
            "rest_cpus": read(cpusets.rest_dir / "cpuset.cpus"),
            "rest_tasks": len(pids), "rest_tasks_on_bench_cpus": on_bench,
            "orchestrator_cpus_allowed": list(read_cpus_allowed(os.getpid()))}


def shield_conditions(cpusets: ShieldCpusets, engine_cgroups: tuple[str, ...]) -> dict[str, Any]:
    """One invocation's shield, read back right after its process ran."""
    bench = f"/{cpusets.directory.name}/bench"
    in_bench = any(line.split(":", 2)[-1].startswith(bench) for line in engine_cgroups
                   if ":cpuset:" in line)
    readback = shield_readback(cpusets)
    return {"mode": cpusets.mode, "engine_in_bench_cpuset": in_bench,
            "bench_cpus": readback["bench_cpus"], "rest_cpus": readback["rest_cpus"],
            "rest_tasks_on_bench_cpus": readback["rest_tasks_on_bench_cpus"]}


def _undo_state(state: dict[str, Any], root: Path) -> list[str]:
    """Put the tasks and IRQ masks of a state file back, remove its cpusets; the problems."""
    directory = Path(state["directory"])
    problems = []
    for task in state["tasks"]:
        if not proc_tasks.is_alive(task["pid"], task["starttime"]):
            continue
        back = root / task["cpuset"].lstrip("/")
        if _write_procs(back if back.is_dir() else root, task["pid"]):
            problems.append(f"task {task['pid']} not moved back")
        elif task["cpus"] and not proc_tasks.set_affinity(task["pid"], tuple(task["cpus"])):
            problems.append(f"task {task['pid']}: affinity {task['cpus']} not restored")
    # Anything still inside (a child started under the shield, an engine left by Ctrl-C)
    # goes to the root, or the directories cannot be removed.
    for sub in sorted(directory.glob("**/cgroup.procs"), key=lambda p: -len(p.parts)):
        for pid in sub.read_text().split() if sub.exists() else []:
            _write_procs(root, int(pid))
    for sub in sorted((p for p in directory.glob("**/") if p.is_dir()), key=lambda p: -len(p.parts)):
        try:
            sub.rmdir()
        except OSError as exc:
            problems.append(f"{sub} not removed ({exc.strerror})")
    failed = irq.restore_irqs(state.get("irqs", {}))
    problems += [f"irq {n} mask not restored ({why})" for n, why in failed.items()]
    return problems


def undo_shield(shield: Shield) -> list[str]:
    """Undo an applied shield and release the machine's shield lock; the problems, if any."""
    problems: list[str] = []
    if shield.state_file is not None and shield.state_file.exists():
        state = json.loads(shield.state_file.read_text())
        state["irqs"] = shield.irq_originals  # the masks that were changed, not every target
        root = v1_cpuset_root()
        problems = _undo_state(state, root) if root else []
        shield.state_file.unlink()
    _unlock(shield.lock_fd)
    return problems


def remove_leftover_shields(state_dir: Path = STATE_DIR, locked: bool = False) -> list[str]:
    """Undo shields whose run was killed (owner gone); the cpusets removed. `locked`: the caller
    holds the machine's shield lock; otherwise it is taken (nothing is done while a live run
    holds it)."""
    root = v1_cpuset_root()
    if root is None:
        return []
    fd = None if locked else _lock(state_dir)
    if not locked and fd is None:
        return []
    removed = []
    try:
        states = {Path(s["directory"]).name: s for s in _read_states(state_dir)}
        for directory in sorted(root.glob(PREFIX + "*")):
            pid, _, start = directory.name[len(PREFIX):].partition("-")
            if proc_tasks.is_alive(int(pid), int(start or 0)):
                continue
            state = states.get(directory.name) or {"directory": str(directory), "tasks": [], "irqs": {}}
            _undo_state(state, root)
            (state_dir / f"{directory.name}.json").unlink(missing_ok=True)
            removed.append("/" + directory.name)
        for name, state in states.items():  # killed between its state file and its cpusets
            if not (root / name).exists() and not proc_tasks.is_alive(state["owner_pid"],
                                                                       state["owner_starttime"]):
                irq.restore_irqs(state.get("irqs", {}))
                (state_dir / f"{name}.json").unlink(missing_ok=True)
    finally:
        if not locked:
            _unlock(fd)
    return removed


def _read_states(state_dir: Path) -> list[dict[str, Any]]:
    states = []
    for path in sorted(state_dir.glob(PREFIX + "*.json")) if state_dir.is_dir() else []:
        try:
            states.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    return states
