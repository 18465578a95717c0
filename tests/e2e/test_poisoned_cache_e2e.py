"""A cached LevelDB build whose binary changed after it was built (as a job that outlived its
run could change it) is refused by `tidemark run` in one line, exit 3, before anything is
measured or stored; the untouched copy of the same build runs."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from orchestrator.build.engine import PROVENANCE_FILE, build_engine, plan_build
from orchestrator.build.provenance import sha256_file
from tests.e2e.fixtures import query, tidemark

pytestmark = pytest.mark.engine
REAL_CACHE = Path.home() / ".cache" / "tidemark"
RUN = ["run", "engine=leveldb", "workload=readrandom", "workload.params.num=2000",
       "repetitions=1", "counters=false"]


@pytest.fixture
def cache_copy(compose_conf, tmp_path) -> Path:
    """The real cached build of `engine=leveldb` (built once if missing) copied into a cache of
    its own under tmp_path: its binary and its provenance, pointed at the copy."""
    conf = compose_conf(["engine=leveldb"])
    build = build_engine(conf.engine, conf.build, REAL_CACHE, conf.build_jobs, say=lambda _: None)
    cache = tmp_path / "cache"
    folder = plan_build(conf.engine, conf.build, cache, say=lambda _: None).build_dir
    real = Path(build.binary_path).parents[1]
    binary = folder / Path(build.binary_path).relative_to(real)
    record = json.loads(real.joinpath(PROVENANCE_FILE).read_text())
    # Every binary the record names (each is checked on reuse), copied and pointed at.
    binaries = {name: folder / Path(path).relative_to(real)
                for name, path in (record.get("binaries") or {}).items()}
    for name, path in {"binary_path": binary, **binaries}.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(real / path.relative_to(folder), path)
    (folder / PROVENANCE_FILE).write_text(json.dumps({
        **record, "binary_path": str(binary),
        "binaries": {name: str(path) for name, path in binaries.items()}}))
    assert sha256_file(binary) == build.binary_sha256
    return binary


def test_an_altered_cached_binary_is_refused_before_it_is_measured(cache_copy, tmp_path):
    cache = tmp_path / "cache"
    expected = sha256_file(cache_copy)
    with open(cache_copy, "r+b") as fh:  # one byte of the code changed in place
        fh.seek(cache_copy.stat().st_size // 2)
        byte = fh.read(1)
        fh.seek(-1, 1)
        fh.write(bytes([byte[0] ^ 0xFF]))
    proc = tidemark(tmp_path, *RUN, f"cache_dir={cache}", check=False, timeout=300)
    assert proc.returncode == 3, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if "sha256" in line]
    assert len(lines) == 1, proc.stdout + proc.stderr
    assert f"sha256 {expected}, found {sha256_file(cache_copy)}" in lines[0]
    assert f"remove {cache_copy.parents[1]} to build it again" in lines[0]
    assert "built in" not in proc.stdout  # not rebuilt over
    db = tmp_path / "tidemark.duckdb"
    assert not db.exists() or query(tmp_path, "SELECT count(*) FROM invocations") == [(0,)]


def test_the_same_cached_copy_untouched_is_used_as_it_is(cache_copy, tmp_path):
    proc = tidemark(tmp_path, *RUN, f"cache_dir={tmp_path / 'cache'}", timeout=300)
    assert "cached, no compile" in proc.stdout
    assert query(tmp_path, "SELECT DISTINCT binary_sha256 FROM builds") == [
        (sha256_file(cache_copy),)]
