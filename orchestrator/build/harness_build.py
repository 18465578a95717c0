"""Build the Google Benchmark harness (engine/harness/) against an engine build (side effects).

The harness links the engine build's own static librocksdb.a and the libraries db_bench was
linked with (read from the engine's build.ninja), and is compiled with the engine variant's
CMAKE_BUILD_TYPE and flags, so NDEBUG (and sanitizers) match the library's objects: RocksDB
objects built with different NDEBUG settings must never be linked together. It is cached under
`<cache_dir>/harness/`, keyed by the engine build and the harness sources.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import BuildError
from ..plan.schema import BuildConf
from .engine import Build
from .provenance import load_provenance, sha256_file, write_provenance
from .systems import run_logged

HARNESS_SOURCE = Path(__file__).resolve().parents[2] / "engine" / "harness"
HARNESS_BINARY = "rocksdb_harness"
PROVENANCE_FILE = "harness.json"
_BUILD_TYPE = re.compile(r"^CMAKE_BUILD_TYPE:\w+=(.*)$", re.M)


@dataclass(frozen=True)
class HarnessBuild:
    binary_path: str
    binary_sha256: str
    engine_build_id: str
    sources_sha256: str
    cmake_build_type: str
    cxx_flags: str
    link_libraries: tuple[str, ...]
    cached: bool = False


def link_libraries_from_ninja(text: str, target: str = "db_bench") -> list[str]:
    """The libraries a target was linked with, minus librocksdb.a itself (pure)."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.startswith(f"build {target}:"):
            for follow in lines[index + 1:]:
                if not follow.startswith(" "):
                    break
                name, _, value = follow.strip().partition(" = ")
                if name == "LINK_LIBRARIES":
                    return [lib for lib in value.split() if not lib.endswith("librocksdb.a")]
    raise BuildError(f"no LINK_LIBRARIES for target {target!r} in the engine's build.ninja; "
                     f"the harness needs a RocksDB build of target db_bench")


def sources_sha256(source: Path = HARNESS_SOURCE) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in source.iterdir() if p.is_file()):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def engine_cmake_dir(build: Build) -> Path:
    """The engine's CMake build folder: the nearest parent of its binary with a CMakeCache.txt."""
    for folder in Path(build.binary_path).parents:
        if (folder / "CMakeCache.txt").exists():
            return folder
    raise BuildError(f"no CMakeCache.txt above {build.binary_path}; rebuild the engine")


def _check_same_build_type(cmake_dir: Path, variant: BuildConf) -> None:
    match = _BUILD_TYPE.search((cmake_dir / "CMakeCache.txt").read_text(errors="replace"))
    engine_type = match.group(1).strip() if match else ""
    if engine_type != variant.cmake_build_type:
        raise BuildError(f"engine build {cmake_dir} is CMAKE_BUILD_TYPE={engine_type!r} but the "
                         f"variant says {variant.cmake_build_type!r}; mixing NDEBUG settings "
                         f"breaks RocksDB (seen: deadlock); rebuild the engine")


def _load_cached(out: Path) -> HarnessBuild | None:
    return load_provenance(out / PROVENANCE_FILE, HarnessBuild, ("link_libraries",))


def build_harness(build: Build, variant: BuildConf, cache_dir: Path) -> HarnessBuild:
    """The cached harness for this engine build and these sources, building it if needed."""
    # Which engines have it is their recipes' `harness:` (run/jobsetup.py asks only for those).
    cmake_dir = engine_cmake_dir(build)
    library = cmake_dir / "librocksdb.a"
    if not library.exists():
        raise BuildError(f"{library} does not exist; the engine target must build the static "
                         f"library (db_bench does)")
    _check_same_build_type(cmake_dir, variant)
    sources = sources_sha256()
    out = cache_dir / "harness" / f"{build.build_id}-{sources[:12]}"
    cached = _load_cached(out)
    if cached is not None:
        return cached
    libs = link_libraries_from_ninja((cmake_dir / "build.ninja").read_text(errors="replace"))
    out.mkdir(parents=True, exist_ok=True)
    log = out / "build.log"
    flags = [f"-DCMAKE_BUILD_TYPE={variant.cmake_build_type}",
             f"-DROCKSDB_SOURCE_DIR={build.source_dir}", f"-DROCKSDB_LIBRARY={library}",
             f"-DROCKSDB_LINK_LIBS={';'.join(libs)}"]
    if variant.cxx_flags:
        flags.append(f"-DCMAKE_CXX_FLAGS={variant.cxx_flags}")
    run_logged(["cmake", "-G", "Ninja", "-S", str(HARNESS_SOURCE), "-B", str(out / "build"), *flags], None,
         log, "cmake configure of engine/harness")
    run_logged(["ninja", "-C", str(out / "build"), HARNESS_BINARY], None, log, "ninja rocksdb_harness")
    binary = out / "build" / HARNESS_BINARY
    harness = HarnessBuild(binary_path=str(binary), binary_sha256=sha256_file(binary),
                           engine_build_id=build.build_id, sources_sha256=sources,
                           cmake_build_type=variant.cmake_build_type, cxx_flags=variant.cxx_flags,
                           link_libraries=tuple(libs))
    write_provenance(out / PROVENANCE_FILE, harness)
    return harness
