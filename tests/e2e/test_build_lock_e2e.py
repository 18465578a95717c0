"""Two runs needing the same uncached build at once (real processes, LevelDB): one builds, the
other says it waits and then takes the finished build; both runs succeed."""
from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.e2e.fixtures import TIDEMARK

pytestmark = pytest.mark.engine

CACHE = Path.home() / ".cache" / "tidemark"


def test_two_runs_building_one_key_at_once_share_one_build(tmp_path):
    # A flag CMake ignores gives a build key no one has built yet; ccache keeps it cheap.
    token = f"-DTIDEMARK_LOCK_TEST={uuid.uuid4().hex[:8]}"
    procs = []
    for name in ("one", "two"):
        out = tmp_path / name
        argv = [TIDEMARK, "run", "engine=leveldb", "counters=false", "workload=readrandom",
                "workload.params.num=2000", "repetitions=1", f"build.cmake_flags=['{token}']",
                f"db={out / 'tidemark.duckdb'}", f"results_dir={out}", f"data_dir={out / 'data'}"]
        procs.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True))
    outputs = [p.communicate(timeout=1500) for p in procs]
    built = []
    try:
        for proc, (out, err) in zip(procs, outputs):
            assert proc.returncode == 0, out[-2000:] + err[-2000:]
        built = sorted(p for p in (CACHE / "builds").glob("leveldb-*")
                       if p.is_dir() and token in (p / "provenance.json").read_text(errors="replace"))
        assert len(built) == 1
        texts = [out for out, _ in outputs]
        assert sum("built in" in t for t in texts) == 1
        assert sum("cached, no compile" in t for t in texts) == 1
    finally:
        for folder in built:
            shutil.rmtree(folder, ignore_errors=True)
            folder.with_name(folder.name + ".lock").unlink(missing_ok=True)


def test_a_held_build_lock_is_waited_for_and_said(tmp_path):
    import sys
    import time

    from orchestrator.build.filelock import held

    lock = tmp_path / "x.lock"
    code = ("import sys; from pathlib import Path; from orchestrator.build.filelock import held\n"
            f"with held(Path({str(lock)!r}), 'another build of x', print):\n    print('got it')")
    with held(lock, "x", print):
        child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        first = child.stdout.readline()
        assert first.startswith("waiting for another build of x (held by pid ")
        time.sleep(0.2)
        assert child.poll() is None  # still waiting while this process holds the lock
    assert child.communicate(timeout=30)[0].strip() == "got it"


def test_a_lock_taken_before_its_holder_wrote_its_pid_is_said_plainly(tmp_path):
    """Two builders starting together: the waiter may read the lock file in the instant between
    the holder's flock and its pid write (it said 'held by pid another process')."""
    import fcntl
    import sys

    lock = tmp_path / "x.lock"
    code = ("from pathlib import Path; from orchestrator.build.filelock import held\n"
            f"with held(Path({str(lock)!r}), 'another build of x', print):\n    pass")
    with lock.open("a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # locked, no pid in the file yet
        child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        first = child.stdout.readline()
    child.communicate(timeout=30)
    assert first == "waiting for another build of x (held by another process)\n"
