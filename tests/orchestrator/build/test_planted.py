"""The planted point-read cost: calibration parsed, ns → spins, refusals, recorded env (pure)."""
import pytest

from orchestrator.build.engine import Build
from orchestrator.errors import ConfigError, EngineOutputError
from orchestrator.build.planted import (SPINS_ENV, Calibration, parse_calibration, planted_setting,
                                  spins_for_ns)

PLANTED = (("planted-get-spin.patch", "f" * 64),)


def _build(patches=PLANTED) -> Build:
    return Build("k", "leveldb", "1.23", "release", "debian", "leveldb", "1.23-4", "/src", "c++",
                 "12", "3.25", (), 1.0, "/bin/db_bench", "0" * 64, (), "now", patches=patches)


def test_calibration_line_parses_and_ns_become_spins():
    out = "tidemark_planted_spins_per_us best=1394.3534 median=1359.7718 spins=20000000 rounds=7\n"
    assert parse_calibration(out) == Calibration(1359.7718, 1359.7718, 1394.3534, 20000000, 7)
    # With the process's CPU time the rate is per CPU µs: 140M spins in 0.1 s of CPU.
    assert parse_calibration(out, 0.1).spins_per_us == pytest.approx(1400.0)
    assert spins_for_ns(2000, 1359.7718) == 2720  # 2719.54 rounded
    assert spins_for_ns(0, 1359.7718) == 0
    with pytest.raises(EngineOutputError, match="planted patch"):
        parse_calibration("db_bench: unknown flag\n")


def test_spins_are_exact_and_ns_are_calibrated_once_per_call():
    calls = []

    def fake_calibrate(binary):
        calls.append(binary)
        return Calibration(1000.0, 900.0, 1100.0, 20000000, 7, 0.14)

    exact = planted_setting(0, 500, _build(), fake_calibrate)
    assert (exact.spins, exact.env(), calls) == (500, {SPINS_ENV: "500"}, [])
    timed = planted_setting(2500, 0, _build(), fake_calibrate)
    assert timed.spins == 2500 and calls == ["/bin/db_bench"]
    assert timed.record()["spins_per_us"] == 1000.0 and timed.record()["ns"] == 2500
    off = planted_setting(0, 0, _build(), fake_calibrate)
    assert off.env() == {SPINS_ENV: "0"} and off.record()["spins"] == 0  # same env key both sides


def test_planting_is_refused_without_the_patch_or_with_both_units():
    with pytest.raises(ConfigError, match="no planted patch"):
        planted_setting(0, 100, _build(patches=()))
    with pytest.raises(ConfigError, match="give one"):
        planted_setting(100, 100, _build())
    with pytest.raises(ConfigError, match="0 \\(off\\) or more"):
        planted_setting(-1, 0, _build())
    unpatched = planted_setting(0, 0, _build(patches=()))
    assert unpatched.env() == {} and unpatched.record() == {}
