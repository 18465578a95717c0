"""`tidemark machine check / tune / reset` on /proc and /sys trees written into tmp dirs: this KVM
guest as captured (no cpufreq: "not available here" is the right answer), an untuned bare-metal
host, and tune → reset on a copy (the real system's settings are never written by a test)."""
from __future__ import annotations

import subprocess
from pathlib import Path

from orchestrator.machine.system_check import NOT_AVAILABLE, NOT_OK, OK, busy_pct, check, reset, selected, tune
from tests.e2e.fixtures import TIDEMARK
from tests.orchestrator.machine.test_interference import STAT_AFTER, STAT_BEFORE

CPU = "sys/devices/system/cpu"

# This 2-core KVM guest as captured: no cpufreq directory, no intel_pstate, SMT notsupported.
KVM_GUEST = {
    f"{CPU}/online": "0-1", f"{CPU}/isolated": "", f"{CPU}/smt/control": "notsupported",
    "proc/sys/kernel/randomize_va_space": "2",
    "sys/kernel/mm/transparent_hugepage/enabled": "always [madvise] never",
    "proc/sys/vm/swappiness": "60",
    "proc/swaps": "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n",
    "proc/irq/24/smp_affinity": "3", "proc/irq/36/smp_affinity": "1",
    "proc/stat": STAT_BEFORE,
}
# A bare-metal host nobody tuned: powersave, turbo on, SMT on, THP always, swap, irqbalance.
UNTUNED = {
    **{f"{CPU}/cpu{c}/cpufreq/scaling_governor": "powersave" for c in range(4)},
    f"{CPU}/intel_pstate/no_turbo": "0", f"{CPU}/online": "0-3", f"{CPU}/isolated": "2-3",
    f"{CPU}/smt/control": "on",
    f"{CPU}/cpu2/topology/thread_siblings_list": "0,2",
    f"{CPU}/cpu3/topology/thread_siblings_list": "1,3",
    "proc/sys/kernel/randomize_va_space": "0",
    "sys/kernel/mm/transparent_hugepage/enabled": "[always] madvise never",
    "proc/sys/vm/swappiness": "60",
    "proc/swaps": "Filename Type Size Used Priority\n/dev/sda2 partition 8388604 0 -2\n",
    "proc/irq/24/smp_affinity": "f", "proc/irq/25/smp_affinity": "00000000,00000003",
    "proc/1234/comm": "irqbalance", "proc/stat": STAT_BEFORE,
}


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text + "\n")
    return root


def by_name(items):
    return {i.name: i for i in items}


def test_kvm_guest_says_not_available_where_the_host_hides_it(tmp_path):
    items = by_name(check((1,), tree(tmp_path, KVM_GUEST)))
    assert items["CPU governor"].status == NOT_AVAILABLE
    assert items["Turbo boost"].status == NOT_AVAILABLE
    assert (items["SMT"].status, items["SMT"].value) == (OK, "notsupported")
    assert items["ASLR"].status == OK
    assert (items["Transparent huge pages"].status, items["Transparent huge pages"].value) == (OK, "madvise")
    assert items["Swappiness"].status == OK and "no swap device" in items["Swappiness"].value
    irq = items["IRQ balancing"]  # irq 24 (mask 3) may fire on CPU 1, irq 36 (mask 1) not
    assert irq.status == NOT_OK and "1 IRQs" in irq.value and "machine.shield=own" in irq.fix
    assert items["Isolated CPUs"].status == NOT_OK and "isolcpus=1" in items["Isolated CPUs"].fix
    assert items["Other load"].status == OK  # the same /proc/stat twice: nothing ran
    assert all(i.fix == "" for i in items.values() if i.status != NOT_OK)
    assert all(i.fix for i in items.values() if i.status == NOT_OK)


def test_untuned_host_is_not_ok_with_the_command_that_fixes_each(tmp_path):
    items = by_name(check((2, 3), tree(tmp_path, UNTUNED)))
    assert items["CPU governor"].status == NOT_OK and "performance" in items["CPU governor"].fix
    assert (items["Turbo boost"].status, items["Turbo boost"].value) == (NOT_OK, "on")
    assert items["SMT"].status == NOT_OK and "CPU 2 shares its core" in items["SMT"].value
    assert items["ASLR"].fix == "sysctl -w kernel.randomize_va_space=2"
    assert items["Transparent huge pages"].value == "always"
    assert items["Swappiness"].fix == "sysctl -w vm.swappiness=10"
    assert "irqbalance running" in items["IRQ balancing"].value and "stop irqbalance" in items["IRQ balancing"].fix
    assert items["Isolated CPUs"].status == OK  # 2-3 are isolated on the kernel command line


def test_tune_writes_the_fixes_and_reset_puts_back_what_it_found(tmp_path):
    root = tree(tmp_path, UNTUNED)
    done = tune((2, 3), root)
    assert any("Turbo boost" in line for line in done)
    items = by_name(check((2, 3), root))
    for name in ("CPU governor", "Turbo boost", "SMT", "ASLR", "Transparent huge pages", "Swappiness"):
        assert items[name].status == OK, items[name]
    assert (root / "proc/irq/24/smp_affinity").read_text().strip() == "3"  # 2-3 removed from f
    assert (root / "proc/irq/25/smp_affinity").read_text().strip() == "00000000,00000003"  # not on 2-3
    tune((2, 3), root)  # a second tune must not overwrite what the first one found
    restored = reset(root)
    assert restored and not (root / "run/tidemark-shield/tune.json").exists()
    for rel in ("proc/sys/kernel/randomize_va_space", f"{CPU}/intel_pstate/no_turbo",
                f"{CPU}/cpu0/cpufreq/scaling_governor", "proc/irq/24/smp_affinity"):
        assert (root / rel).read_text().strip() == UNTUNED[rel], rel
    assert selected((root / "sys/kernel/mm/transparent_hugepage/enabled").read_text()) == "always"
    assert reset(root) == []


def test_busy_share_of_the_benchmark_cpus():
    # cpu1 between the samples: 85 busy ticks of 103 (user, system, softirq; idle 15; steal 3).
    assert abs(busy_pct(STAT_BEFORE, STAT_AFTER, (1,)) - 100 * 85 / 103) < 1e-9
    assert busy_pct(STAT_BEFORE, STAT_BEFORE, (1,)) == 0.0


def test_machine_check_command_lists_every_item():
    proc = subprocess.run([TIDEMARK, "machine", "check", "machine=ci-2core"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    for name in ("CPU governor", "Turbo boost", "SMT", "ASLR", "Transparent huge pages",
                 "Swappiness", "IRQ balancing", "Isolated CPUs", "Other load"):
        assert name in proc.stdout
    assert "benchmark CPUs [1]" in proc.stdout
