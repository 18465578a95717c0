"""The container runner's pure parts: the runner config group, refusals, image files and tags,
the container's command and options, the exec helper's report (captured from a real OOM kill),
failure reasons, and how the site words a container (no daemon, no engine)."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from orchestrator.build.container_image import EXEC_PATH, VALGRIND_ENV, image_tag, parse_ldd
from orchestrator.machine.docker_client import ContainerSpec, ImageRef, _reason, check_runner_conf
from orchestrator.errors import BuildError, ConfigError
from orchestrator.plan.runplan import PHASE_CALLGRIND, PHASE_MEASURED, RunPlan, Step
from orchestrator.record import STATUS_FAILED, STATUS_TIMEOUT, ProcessResult
from orchestrator.runners.container import (container_command, container_facts,
                                            container_options, engine_samples, read_exec_report)
from orchestrator.runners.context import RunContext
from orchestrator.machine.interference import interference
from orchestrator.runners.records import process_failure
from reports.pages.shared import runner_text
from reports.pages.run_tables import container_text
from tests.conftest import DATA
from tests.orchestrator.runners.test_run_loop import BUILD

IMAGE = ImageRef("engine", "tidemark/leveldb:f61a85593d6c-0123abcd", "sha256:" + "ab" * 32,
                 "scratch", 9_000_000, 0.9)
SPEC = ContainerSpec({"db_bench": IMAGE}, 256 << 20, 20.0, {"version": "20.10.24"})


def test_every_runner_option_composes(compose_conf):
    assert compose_conf([]).runner.name == "host"
    docker = compose_conf(["runner=docker", "runner.memory_mb=512"]).runner
    assert (docker.name, docker.base, docker.memory_mb) == ("docker", "scratch", 512)


@pytest.mark.parametrize("args, fragment", [
    (("podman", "scratch", 4096, "none"), "runner=host or runner=docker"),
    (("docker", "alpine", 4096, "none"), "runner.base='alpine'"),
    (("docker", "scratch", 2, "none"), "at least 6 MB"),
    (("docker", "scratch", 4096, "own"), "machine.shield=none"),
    # The run's cgroup is the host runner's: a container never joins it, so its limits would
    # silently not apply.
    (("docker", "scratch", 4096, "none", {"cgroup_memory_mb": 64}),
     "machine.cgroup_memory_mb=64"),
    (("docker", "scratch", 4096, "none", {"cgroup_cpu_quota_pct": 50}),
     "machine.cgroup_cpu_quota_pct=50"),
    (("docker", "scratch", 4096, "none", None, -1.0), "runner.grace_s=-1"),  # failed every step
])
def test_runner_settings_that_cannot_run_are_refused_in_one_line(args, fragment):
    with pytest.raises(ConfigError) as err:
        check_runner_conf(*args)
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_host_runner_ignores_container_settings():
    check_runner_conf("host", "anything", None, "system")


def test_ldd_output_gives_the_libraries_and_loader_not_the_vdso():
    paths = parse_ldd((DATA / "docker" / "ldd_leveldb_db_bench.txt").read_text())
    assert "/lib64/ld-linux-x86-64.so.2" in paths and "/lib/x86_64-linux-gnu/libsnappy.so.1" in paths
    assert not any("vdso" in p for p in paths) and len(paths) == 6


def test_a_library_ldd_cannot_find_is_a_build_error():
    with pytest.raises(BuildError, match="libfoo.so.1 not found"):
        parse_ldd("\tlibfoo.so.1 => not found\n")


def test_image_tags_come_from_the_build_key():
    assert image_tag("leveldb", "db_bench", "f61a85593d6c", "0123abcd9999") == \
        "tidemark/leveldb-db-bench:f61a85593d6c-0123abcd"
    assert image_tag("rocksdb", "rocksdb_harness", "c41832abb28d-1234", "ffff0000") == \
        "tidemark/rocksdb-rocksdb-harness:c41832abb28d-1234-ffff0000"


def _ctx(tmp_path: Path, pin: tuple[int, ...] = (1,)) -> RunContext:
    plan = RunPlan("leveldb", "1.23", "release", "warm", "", 30.0, ())
    return RunContext("r1", plan, BUILD, "fp", pin, {"TIDEMARK_PLANTED_SPINS": "0"}, False,
                      Path("results/logs/r1"), tmp_path / "data" / "r1", container=SPEC)


def _step(phase: str = PHASE_MEASURED) -> Step:
    return Step(3, 1, "readrandom", "readrandom", phase, 1, 1, (("num", 10),), "db", False)


def test_the_container_runs_the_engine_argv_under_the_exec_helper(tmp_path):
    stem = Path("results/logs/r1/0003-measured-readrandom")
    command = container_command(_ctx(tmp_path), _step(), ["/b/db_bench", "--num=10"], stem)
    assert command[0] == EXEC_PATH and command[1].endswith(".exec.json")
    assert command[4:] == ["30", "--", "/b/db_bench", "--num=10"]


def test_a_callgrind_step_runs_valgrind_in_the_container_with_debians_wrapper_env(tmp_path):
    ctx, step = _ctx(tmp_path), _step(PHASE_CALLGRIND)
    command = container_command(ctx, step, ["/b/db_bench"], Path("logs/x"))
    assert command[6:8] == ["valgrind", "--tool=callgrind"]
    env = container_options(ctx, step, SPEC, tmp_path)["environment"]
    assert env == {"TIDEMARK_PLANTED_SPINS": "0", **VALGRIND_ENV}


def test_options_pin_limit_and_mount_the_run_folders_at_their_host_paths(tmp_path):
    options = container_options(_ctx(tmp_path), _step(), SPEC, tmp_path)
    assert options["cpuset_cpus"] == "1" and options["network_mode"] == "none"
    assert options["mem_limit"] == options["memswap_limit"] == 256 << 20  # no swap beyond it
    logs = str(tmp_path / "results" / "logs" / "r1")  # relative to the working directory
    (mount,) = [m for m in options["mounts"] if m["Target"] == logs]
    assert mount["Source"] == logs and mount["Type"] == "bind" and not mount["ReadOnly"]
    assert options["working_dir"] == str(tmp_path) and options["labels"]["tidemark"] == "r1"
    unpinned = container_options(_ctx(tmp_path, pin=()), _step(), SPEC, tmp_path)
    assert "cpuset_cpus" not in unpinned


def test_the_helpers_report_of_an_oom_kill_reads_as_a_failed_record():
    report = read_exec_report(DATA / "docker" / "exec_report_oom.json")
    facts = container_facts(SPEC, IMAGE, {"cpuset_cpus": "1"}, report,
                            {"OOMKilled": True, "ExitCode": 137}, 1.4)
    assert facts["memory_limit_bytes"] == 32 << 20 and facts["oom_killed"] is True
    assert facts["image_id"] == IMAGE.image_id and facts["cgroup"].startswith("4:memory:/docker/")
    result = ProcessResult(("db_bench",), report["exit_code"], False, report["wall_s"], 0, 0, 0,
                           "", "long op: 105899.0 micros\n", None, None, oom_killed=True,
                           container=facts)
    status, error = process_failure(result, 30.0)
    assert status == STATUS_FAILED
    assert error.startswith("killed by the container's memory limit of 32 MiB (OOM); raise "
                            "runner.memory_mb") and error.endswith("long op: 105899.0 micros")


def test_a_timeout_in_the_container_reads_as_the_hosts():
    result = ProcessResult(("db_bench",), None, True, 1.0, 0, 0, 0, "", "", None, None,
                           container={"oom_killed": False})
    assert process_failure(result, 1.0)[0] == STATUS_TIMEOUT


def test_interference_is_measured_around_the_engine_from_the_helpers_samples():
    report = read_exec_report(DATA / "docker" / "exec_report_oom.json")
    before, after = engine_samples(report)
    assert after.monotonic == report["wall_s"] and set(before.ticks) == {0, 1}
    got = interference(before, after, (1,), report["user_s"] + report["sys_s"], report["nivcsw"])
    assert got["cpus"] == [1] and got["interval_s"] == pytest.approx(report["wall_s"], abs=1e-3)
    assert engine_samples({}) is None  # killed before it wrote: the container's window is used


def test_a_missing_or_torn_report_is_empty(tmp_path):
    assert read_exec_report(tmp_path / "none.json") == {}
    (tmp_path / "torn.json").write_text('{"exit_code": ')
    assert read_exec_report(tmp_path / "torn.json") == {}


def test_a_connection_error_is_worded_by_its_innermost_cause():
    inner = ConnectionRefusedError(111, "Connection refused")
    outer = RuntimeError("Error while fetching server API version", ("Connection aborted.", inner))
    assert _reason(outer) == "Connection refused"
    assert _reason(ValueError("plain text\nsecond line")) == "plain text"


def test_run_pages_name_the_runner_and_its_image():
    state = {"container": {"memory_bytes": 256 << 20, "images": {"db_bench": IMAGE.record()}}}
    run = pd.Series({"runner": "docker", "machine_state": state})
    assert runner_text(run) == ("docker: image tidemark/leveldb:f61a85593d6c-0123abcd "
                                "(abababababab, FROM scratch); memory limit 256 MiB")
    assert runner_text(pd.Series({"runner": "host", "machine_state": {}})) == "host"


def test_an_invocation_says_what_its_container_read_back():
    report = json.loads((DATA / "docker" / "exec_report_oom.json").read_text())
    facts = container_facts(SPEC, IMAGE, {}, report, {"OOMKilled": True}, 1.0)
    text = container_text(facts)
    assert "CPUs 0-1 and memory limit 32 MiB read back inside, ⚠ OOM-killed" in text
    assert "page cache: host" in text
    unlimited = {**facts, "memory_limit_bytes": 9223372036854771712, "oom_killed": False}
    assert "memory limit none read back inside; page cache" in container_text(unlimited)
