"""`tidemark machine check / tune / reset` (side effects), in the spirit of `pyperf system`:
one small Operation per setting that can move a benchmark, each able to say whether it is
available here, show its state ("ok", "not ok", "not available here") with the command that
fixes it, and, where it is a plain kernel setting, write the fix.

Every path is read below `root`, so tests run on captured /proc and /sys trees; `tune` saves the
values it replaces (first tune only) so `reset` puts the machine back as it was found, and
`reset` also removes a shield left by a killed run. Nothing here starts, stops or signals a
process; a running irqbalance is reported, not stopped.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import irq
from .execute import parse_cpu_list
from .interference import BUSY_FIELDS, parse_proc_stat

OK, NOT_OK, NOT_AVAILABLE = "ok", "not ok", "not available here"
CPU = "sys/devices/system/cpu"
TUNE_STATE = "run/tidemark-shield/tune.json"  # below root: the values tune replaced
QUIET_PCT = 5.0  # other load on the benchmark CPUs below this is "ok"


@dataclass(frozen=True)
class Item:
    name: str
    status: str
    value: str
    fix: str = ""  # the command that fixes it, when not ok


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def selected(text: str) -> str:
    """'always [madvise] never' → 'madvise' (pure)."""
    return next((w[1:-1] for w in text.split() if w.startswith("[")), text.strip())


class Operation:
    """One setting: `files` below root it reads; `show` judges; `fixed` = (file, value) writes."""

    name = ""

    def __init__(self, root: Path, bench: tuple[int, ...]):
        self.root, self.bench = root, bench

    def paths(self) -> list[Path]:
        return []

    def available(self) -> bool:
        return any(p.exists() for p in self.paths())

    def show(self) -> Item:
        raise NotImplementedError

    def fixed(self) -> list[tuple[Path, str]]:
        return []  # not a plain kernel setting: the advice is all there is

    def item(self) -> Item:
        return self.show() if self.available() else Item(self.name, NOT_AVAILABLE, "not exposed")


class Governor(Operation):
    name = "CPU governor"

    def paths(self) -> list[Path]:
        return sorted((self.root / CPU).glob("cpu[0-9]*/cpufreq/scaling_governor"))

    def show(self) -> Item:
        values = sorted({_read(p) or "?" for p in self.paths()})
        good = values == ["performance"]
        return Item(self.name, OK if good else NOT_OK, ",".join(values),
                    "" if good else "cpupower frequency-set -g performance")

    def fixed(self) -> list[tuple[Path, str]]:
        return [(p, "performance") for p in self.paths()]


class Turbo(Operation):
    name = "Turbo boost"

    def paths(self) -> list[Path]:
        return [self.root / CPU / "intel_pstate/no_turbo", self.root / CPU / "cpufreq/boost"]

    def show(self) -> Item:
        no_turbo, boost = (_read(p) for p in self.paths())
        on = no_turbo == "0" if no_turbo is not None else boost == "1"
        fix = ("echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo" if no_turbo is not None
               else "echo 0 > /sys/devices/system/cpu/cpufreq/boost")
        return Item(self.name, NOT_OK if on else OK, "on" if on else "off", fix if on else "")

    def fixed(self) -> list[tuple[Path, str]]:
        no_turbo, boost = self.paths()
        return [(no_turbo, "1")] if no_turbo.exists() else [(boost, "0")]


class Smt(Operation):
    name = "SMT"

    def paths(self) -> list[Path]:
        return [self.root / CPU / "smt/control"]

    def show(self) -> Item:
        control = _read(self.paths()[0]) or "?"
        shared = [c for c in self.bench if len(parse_cpu_list(_read(
            self.root / CPU / f"cpu{c}/topology/thread_siblings_list") or str(c))) > 1]
        if control != "on" or not shared:
            return Item(self.name, OK, control)
        return Item(self.name, NOT_OK, f"{control}: CPU {shared[0]} shares its core",
                    "echo off > /sys/devices/system/cpu/smt/control")

    def fixed(self) -> list[tuple[Path, str]]:
        return [(self.paths()[0], "off")]


class Aslr(Operation):
    name = "ASLR"

    def paths(self) -> list[Path]:
        return [self.root / "proc/sys/kernel/randomize_va_space"]

    def show(self) -> Item:
        # As pyperf: full randomization, so repetitions average over layouts, not pin one.
        value = _read(self.paths()[0]) or "?"
        return Item(self.name, OK if value == "2" else NOT_OK, value,
                    "" if value == "2" else "sysctl -w kernel.randomize_va_space=2")

    def fixed(self) -> list[tuple[Path, str]]:
        return [(self.paths()[0], "2")]


class TransparentHugePages(Operation):
    name = "Transparent huge pages"

    def paths(self) -> list[Path]:
        return [self.root / "sys/kernel/mm/transparent_hugepage/enabled"]

    def show(self) -> Item:
        mode = selected(_read(self.paths()[0]) or "?")
        good = mode in ("madvise", "never")  # always: khugepaged compacts behind the engine
        return Item(self.name, OK if good else NOT_OK, mode, "" if good else
                    "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled")

    def fixed(self) -> list[tuple[Path, str]]:
        return [(self.paths()[0], "madvise")]


class Swappiness(Operation):
    name = "Swappiness"

    def paths(self) -> list[Path]:
        return [self.root / "proc/sys/vm/swappiness"]

    def show(self) -> Item:
        value = _read(self.paths()[0]) or "?"
        swaps = (_read(self.root / "proc/swaps") or "").splitlines()[1:]
        if not swaps:
            return Item(self.name, OK, f"{value} (no swap device)")
        good = value.isdigit() and int(value) <= 10
        return Item(self.name, OK if good else NOT_OK, value,
                    "" if good else "sysctl -w vm.swappiness=10")

    def fixed(self) -> list[tuple[Path, str]]:
        return [(self.paths()[0], "10")]


class IrqBalance(Operation):
    name = "IRQ balancing"

    def paths(self) -> list[Path]:
        return [self.root / "proc/irq"]

    def show(self) -> Item:
        running = any((_read(p) or "") == "irqbalance" for p in (self.root / "proc").glob("[0-9]*/comm"))
        on_bench = irq.irqs_on(irq.read_masks(self.root / "proc"), irq.cpu_mask(self.bench)) \
            if self.bench else {}
        value = f"irqbalance {'running' if running else 'not running'}, " \
                f"{len(on_bench)} IRQs may fire on the benchmark CPUs"
        if not running and not on_bench:
            return Item(self.name, OK, value)
        fix = "stop irqbalance; " if running else ""
        return Item(self.name, NOT_OK, value, fix + "set machine.shield=own (IRQs moved per run) "
                    "or tidemark machine tune")

    def fixed(self) -> list[tuple[Path, str]]:
        if not self.bench:
            return []
        online = parse_cpu_list(_read(self.root / CPU / "online") or "0")
        bench, rest = irq.cpu_mask(self.bench), irq.cpu_mask([c for c in online if c not in self.bench])
        masks = irq.irqs_on(irq.read_masks(self.root / "proc"), bench)
        return [(self.root / "proc/irq" / n / "smp_affinity",
                 irq.format_mask(irq.mask_without(irq.parse_mask(m), bench, rest), m))
                for n, m in masks.items()]


class IsolatedCpus(Operation):
    name = "Isolated CPUs"

    def paths(self) -> list[Path]:
        return [self.root / CPU / "isolated"]

    def show(self) -> Item:
        isolated = set(parse_cpu_list(_read(self.paths()[0]) or ""))
        value = ",".join(map(str, sorted(isolated))) or "none"
        if not self.bench:
            return Item(self.name, NOT_AVAILABLE, f"{value} (no machine.pin_cpus to judge)")
        if set(self.bench) <= isolated:
            return Item(self.name, OK, value)
        cpus = ",".join(map(str, self.bench))
        return Item(self.name, NOT_OK, value, f"boot with isolcpus={cpus} nohz_full={cpus}, or "
                    f"set machine.shield=own (system on a dedicated host)")


def busy_pct(before: str, after: str, cpus: tuple[int, ...]) -> float:
    """How busy the CPUs were between two /proc/stat texts, in % (pure)."""
    a, b = parse_proc_stat(before), parse_proc_stat(after)
    cpus = cpus or tuple(sorted(b))
    busy = sum(b[c][f] - a[c][f] for c in cpus for f in BUSY_FIELDS if c in a and c in b)
    total = sum(sum(b[c][:8]) - sum(a[c][:8]) for c in cpus if c in a and c in b)
    return 100.0 * busy / total if total > 0 else 0.0


class OtherLoad(Operation):
    name = "Other load"
    window_s = 0.25

    def paths(self) -> list[Path]:
        return [self.root / "proc/stat"]

    def show(self) -> Item:
        before = _read(self.paths()[0]) or ""
        time.sleep(self.window_s)
        pct = busy_pct(before, _read(self.paths()[0]) or "", self.bench)
        where = "benchmark CPUs" if self.bench else "all CPUs"
        good = pct < QUIET_PCT
        return Item(self.name, OK if good else NOT_OK, f"{pct:.0f}% busy on the {where}",
                    "" if good else "stop other jobs, or set machine.shield=own for Tidemark's "
                    "own (system on a dedicated host)")


OPERATIONS = (Governor, Turbo, Smt, Aslr, TransparentHugePages, Swappiness, IrqBalance,
              IsolatedCpus, OtherLoad)


def check(bench: tuple[int, ...], root: Path = Path("/")) -> list[Item]:
    return [op(root, bench).item() for op in OPERATIONS]


def check_state(bench: tuple[int, ...], root: Path = Path("/")) -> dict[str, Any]:
    """The check as recorded with each run (runs.machine_state.check)."""
    return {i.name: {"status": i.status, "value": i.value} for i in check(bench, root)}


def tune(bench: tuple[int, ...], root: Path = Path("/")) -> list[str]:
    """Write the fix of every available item that is not ok; what was done (or refused)."""
    state_file = root / TUNE_STATE
    saved: dict[str, str] = json.loads(state_file.read_text()) if state_file.exists() else {}
    done = []
    for op in (o(root, bench) for o in OPERATIONS):
        if not op.available() or op.show().status != NOT_OK:
            continue
        for path, value in op.fixed():
            old = _read(path)
            try:
                path.write_text(value)
            except OSError as exc:
                done.append(f"{op.name}: {path} refused {value!r} ({exc.strerror})")
                continue
            saved.setdefault(str(path.relative_to(root)), selected(old or ""))
            done.append(f"{op.name}: {path} {old!r} → {value!r}")
    if saved:
        state_file.parent.mkdir(parents=True, exist_ok=True)
        state_file.write_text(json.dumps(saved, indent=1))
    return done


def reset(root: Path = Path("/")) -> list[str]:
    """Put back every value tune replaced; what was restored (or could not be)."""
    state_file = root / TUNE_STATE
    if not state_file.exists():
        return []
    done = []
    for rel, value in json.loads(state_file.read_text()).items():
        try:
            (root / rel).write_text(value)
            done.append(f"{rel} → {value!r}")
        except OSError as exc:
            done.append(f"{rel}: not restored ({exc.strerror})")
    state_file.unlink()
    return done
