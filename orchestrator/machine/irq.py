"""IRQ affinity (side effects): move interrupts off the benchmark CPUs and put them back.

/proc/irq/N/smp_affinity is a hex CPU mask in comma-separated 32-bit groups ("ff,ffffffff").
Many interrupts refuse a new mask (per-CPU timers, some virtio queues: EIO); those are
recorded, never fatal. Every path is read below `proc`, so tests can point it at a copy.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


def parse_mask(text: str) -> int:
    """'3' / 'ff,ffffffff' → the CPU bit mask (pure)."""
    return int(text.strip().replace(",", "") or "0", 16)


def format_mask(mask: int, like: str) -> str:
    """The mask in the kernel's format, with as many 32-bit groups as `like` has (pure)."""
    groups = max(1, like.strip().count(",") + 1)
    digits = f"{mask:0{8 * groups}x}"
    parts = [digits[i:i + 8] for i in range(0, len(digits), 8)]
    text = ",".join(parts)
    return text if groups > 1 else f"{mask:x}"


def cpu_mask(cpus: tuple[int, ...] | list[int]) -> int:
    mask = 0
    for cpu in cpus:
        mask |= 1 << cpu
    return mask


def mask_without(mask: int, bench: int, rest: int) -> int:
    """The IRQ's mask without the benchmark CPUs; all other CPUs when nothing would be left."""
    return (mask & ~bench) or rest


@dataclass(frozen=True)
class IrqMoves:
    originals: dict[str, str]  # irq → the mask text it had, for every irq that was changed
    moved: tuple[str, ...]
    not_moved: dict[str, str]  # irq → why it still may fire on a benchmark CPU


def read_masks(proc: Path = PROC) -> dict[str, str]:
    """irq → its smp_affinity text, for every IRQ directory that has one."""
    masks = {}
    for path in sorted((proc / "irq").glob("*/smp_affinity")):
        try:
            masks[path.parent.name] = path.read_text().strip()
        except OSError:
            continue
    return masks


def irqs_on(masks: dict[str, str], bench: int) -> dict[str, str]:
    """The IRQs whose mask includes a benchmark CPU (pure)."""
    return {irq: text for irq, text in masks.items() if parse_mask(text) & bench}


def move_irqs(targets: dict[str, str], bench: int, rest: int, proc: Path = PROC) -> IrqMoves:
    """Write each target IRQ's mask without the benchmark CPUs; read it back."""
    moved, not_moved, originals = [], {}, {}
    for irq, text in targets.items():
        path = proc / "irq" / irq / "smp_affinity"
        try:
            path.write_text(format_mask(mask_without(parse_mask(text), bench, rest), text))
        except OSError as exc:
            not_moved[irq] = exc.strerror or type(exc).__name__
            continue
        originals[irq] = text
        if parse_mask(path.read_text()) & bench:
            not_moved[irq] = "mask read back still includes a benchmark CPU"
        else:
            moved.append(irq)
    return IrqMoves(originals, tuple(moved), not_moved)


def restore_irqs(originals: dict[str, str], proc: Path = PROC) -> dict[str, str]:
    """Put each saved mask back; returns irq → why it could not be restored."""
    failed = {}
    for irq, text in originals.items():
        try:
            (proc / "irq" / irq / "smp_affinity").write_text(text)
        except OSError as exc:
            failed[irq] = exc.strerror or type(exc).__name__
    return failed
