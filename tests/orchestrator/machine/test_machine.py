"""Machine facts from /proc and /sys trees of two machines, fingerprint stability."""
from pathlib import Path

import pytest

from orchestrator.machine import probe as machine
from orchestrator.machine.facts import (block_device_name, expectation_mismatches, fingerprint,
                                        mount_for, parse_cpuinfo)

HOSTS = Path(__file__).parents[2] / "data" / "hosts"


def test_smt_host_with_cpufreq_governor():
    facts = machine.capture_facts(Path("/data/tidemark"), root=HOSTS / "smt-epyc-16t")
    assert facts["cpu_model"] == "AMD EPYC 4344P 8-Core Processor"
    assert (facts["logical_cpus"], facts["physical_cores"], facts["threads_per_core"],
            facts["sockets"]) == (16, 8, 2, 1)
    assert (facts["l1d_kb"], facts["l1i_kb"], facts["l2_kb"], facts["l3_kb"]) == (32, 32, 1024, 32768)
    assert facts["ram_gib"] == 125.5
    assert (facts["cpufreq_governor"], facts["turbo"], facts["smt"], facts["isolated_cpus"]) == \
        ("performance", "on", "on", "2-7,10-15")
    assert (facts["data_device"], facts["data_fs"], facts["data_rotational"]) == \
        ("/dev/nvme1n1", "xfs", "no (SSD/virtual)")
    assert facts["kernel"] == "6.8.0-49-generic" and facts["os"] == "Ubuntu 24.04.1 LTS"


def test_kvm_guest_without_cpufreq_says_not_exposed():
    facts = machine.capture_facts(Path("/root/.cache/tidemark/data"), root=HOSTS / "kvm-2core")
    assert (facts["logical_cpus"], facts["physical_cores"], facts["threads_per_core"]) == (2, 2, 1)
    assert facts["cpufreq_governor"] == "not exposed" and facts["turbo"] == "not exposed"
    assert facts["smt"] == "notsupported"
    assert facts["data_device"] == "/dev/vda" and facts["data_fs"] == "ext4"


def test_fingerprint_stable_across_two_captures_of_this_machine(tmp_path):
    first = machine.capture_facts(tmp_path)
    state_one = machine.capture_state()
    # Load and free memory change between captures; the fingerprint must not.
    ballast = bytearray(256 << 20)
    second = machine.capture_facts(tmp_path)
    state_two = machine.capture_state()
    del ballast
    assert first["fingerprint"] == second["fingerprint"]
    assert len(first["fingerprint"]) == 64
    assert state_one["memory"] != state_two["memory"]


def test_fingerprint_ignores_momentary_state_but_not_hardware():
    facts = {"cpu_model": "X", "logical_cpus": 2, "ram_gib": 24.0}
    assert fingerprint({**facts, "loadavg": [9, 9, 9], "hostname": "a"}) == \
        fingerprint({**facts, "loadavg": [0, 0, 0], "hostname": "b"})
    assert fingerprint(facts) != fingerprint({**facts, "logical_cpus": 4})


def test_aarch64_cpuinfo_without_model_name_is_unknown_not_a_crash():
    text = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU part\t: 0xd0c\n\nprocessor\t: 1\nBogoMIPS\t: 50.00\n"
    facts = parse_cpuinfo(text)
    assert facts["cpu_model"] == "unknown" and facts["logical_cpus"] == 2


@pytest.mark.parametrize("device, disk", [("/dev/nvme0n1p2", "nvme0n1"), ("/dev/sda1", "sda"),
                                          ("/dev/vda", "vda"), ("/dev/mmcblk0p1", "mmcblk0")])
def test_block_device_name(device, disk):
    assert block_device_name(device) == disk


def test_mount_for_picks_the_longest_prefix():
    mounts = "/dev/a / ext4 rw 0 0\n/dev/b /data xfs rw 0 0\n/dev/c /database ext4 rw 0 0\n"
    assert mount_for(mounts, "/data/x") == ("/dev/b", "/data", "xfs")
    assert mount_for(mounts, "/databasex") == ("/dev/a", "/", "ext4")


def test_expectations_name_each_differing_fact():
    facts = {"cpu_model": "Intel(R) Xeon(R) Processor", "logical_cpus": 2, "ram_gib": 23.5}
    assert expectation_mismatches(facts, "Xeon", 2, 24) == []
    problems = expectation_mismatches(facts, "EPYC 4344P", 16, 125)
    assert [p.split(":")[0] for p in problems] == ["cpu_model", "logical_cpus", "ram_gib"]
    assert "found 'Intel(R) Xeon(R) Processor'" in problems[0]
