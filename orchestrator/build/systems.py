"""Build systems (side effects): cmake, meson, make and explicit commands, one function each,
the same inputs in and the folder the recipe's binaries are found under out.

cmake and meson configure into `<build>/build` and build the recipe's targets with Ninja (its
`[n/m]` lines drive the progress bar); make and commands run in the build's own copy of the
source (`<build>/src`), so an in-source build never writes into the shared fetched tree. Every
compiler call goes through ccache where it exists: CMake's compiler launcher, Meson's own
detection of ccache, and `CC="ccache cc"` for make and commands.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Callable

from ..errors import BuildError
from ..plan.schema import BuildConf, EngineConf

NINJA_PROGRESS = re.compile(r"^\[(\d+)/(\d+)\]")
ProgressFn = Callable[[int, int], None]
# CMake's build types as Meson names them.
MESON_BUILDTYPES = {"Release": "release", "Debug": "debug", "RelWithDebInfo": "debugoptimized",
                    "MinSizeRel": "minsize"}


def cmake_flags(engine: EngineConf, variant: BuildConf) -> list[str]:
    """All -D flags of a CMake build, engine's then variant's (pure)."""
    flags = [f"-DCMAKE_BUILD_TYPE={variant.cmake_build_type}", *engine.cmake_flags,
             *variant.cmake_flags]
    if variant.cxx_flags:
        flags += [f"-DCMAKE_CXX_FLAGS={variant.cxx_flags}", f"-DCMAKE_C_FLAGS={variant.cxx_flags}"]
    return flags


def meson_options(engine: EngineConf, variant: BuildConf) -> list[str]:
    """`meson setup` options: the variant's build type, the recipe's options, flags (pure)."""
    buildtype = MESON_BUILDTYPES.get(variant.cmake_build_type, "release")
    options = [f"--buildtype={buildtype}", *engine.meson_options]
    if variant.cxx_flags:
        options += [f"-Dc_args={variant.cxx_flags}", f"-Dcpp_args={variant.cxx_flags}"]
    return options


def build_flags(engine: EngineConf, variant: BuildConf) -> list[str]:
    """What the recipe and variant hand the build system, for the key and the provenance."""
    if engine.build_system == "meson":
        return meson_options(engine, variant)
    if engine.build_system == "make":
        return [*engine.make_args, *_flag_vars(variant)]
    if engine.build_system == "commands":
        return [*engine.build_commands, *_flag_vars(variant)]
    return cmake_flags(engine, variant)


def _flag_vars(variant: BuildConf) -> list[str]:
    """The variant, as make and build commands get it: BUILD_TYPE (Release, Debug, ...) always,
    so a debug and a release build never share a key; CFLAGS/CXXFLAGS when it sets flags (a
    Makefile that ignores them builds the same code under another key, never the reverse)."""
    flags = [f"BUILD_TYPE={variant.cmake_build_type}"]
    if variant.cxx_flags:
        flags += [f"CFLAGS={variant.cxx_flags}", f"CXXFLAGS={variant.cxx_flags}"]
    return flags


def build_env(ccache_dir: Path) -> dict[str, str]:
    # Paths relative to the cache root make ccache hits survive a different build folder.
    return {**os.environ, "CCACHE_DIR": str(ccache_dir), "CCACHE_BASEDIR": str(ccache_dir.parent)}


def run_logged(argv: list[str], cwd: Path | None, log: Path, what: str,
               env: dict | None = None, on_progress: ProgressFn | None = None) -> None:
    """Run a build step with its output appended to log (Ninja's progress reported); a
    BuildError naming the log on failure."""
    with log.open("a") as fh:
        fh.write(f"$ {' '.join(argv)}\n")
        fh.flush()
        try:
            proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True, env=env, bufsize=1,
                                    errors="replace")
        except OSError as exc:
            raise BuildError(f"{what}: {argv[0]} does not run ({exc.strerror}); install it "
                             f"(make setup) or fix engine.build_system") from None
        assert proc.stdout is not None
        for line in proc.stdout:
            fh.write(line)
            match = NINJA_PROGRESS.match(line)
            if match and on_progress:
                on_progress(int(match.group(1)), int(match.group(2)))
        code = proc.wait()
    if code != 0:
        raise BuildError(f"{what} failed (exit {code}); see {log}")


def compile_tree(engine: EngineConf, variant: BuildConf, tree: Path, build_dir: Path, jobs: int,
                 ccache_dir: Path, on_progress: ProgressFn | None = None) -> Path:
    """Build the recipe's targets from `tree`; returns the folder its binaries are under."""
    log, env = build_dir / "build.log", build_env(ccache_dir)
    root = tree / engine.source_subdir if engine.source_subdir else tree
    if not root.is_dir():
        raise BuildError(f"engine.source_subdir={engine.source_subdir!r} is not a folder of "
                         f"{tree}; point it at the build system's root")
    system = engine.build_system
    if system in ("cmake", "meson"):
        out = build_dir / "build"
        _configure(system, engine, variant, root, out, log, env)
        run_logged(["ninja", "-C", str(out), f"-j{jobs}", *engine.targets], build_dir, log,
                   f"ninja {' '.join(engine.targets) or '(default targets)'}", env, on_progress)
        return out
    if shutil.which("ccache"):
        env = {**env, "CC": "ccache cc", "CXX": "ccache c++"}
    for assignment in _flag_vars(variant):
        key, _, value = assignment.partition("=")
        env[key] = value
    if system == "make":
        run_logged(["make", f"-j{jobs}", *engine.make_args, *engine.targets], root, log,
                   f"make {' '.join(engine.targets)}", env)
        return tree
    env.update({"JOBS": str(jobs), "SOURCE": str(tree), "BUILD": str(build_dir / "build")})
    (build_dir / "build").mkdir(exist_ok=True)
    for line in engine.build_commands:
        run_logged(["/bin/sh", "-ec", line], root, log, f"build command {line!r}", env)
    return tree


def _configure(system: str, engine: EngineConf, variant: BuildConf, root: Path, out: Path,
               log: Path, env: dict[str, str]) -> None:
    if system == "cmake":
        if not (root / "CMakeLists.txt").exists():
            raise BuildError(f"{root} has no CMakeLists.txt; set engine.build_system (meson, "
                             f"make, commands) or engine.source_subdir")
        launcher = ["-DCMAKE_C_COMPILER_LAUNCHER=ccache", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"] \
            if shutil.which("ccache") else []
        run_logged(["cmake", "-G", "Ninja", "-S", str(root), "-B", str(out),
                    *cmake_flags(engine, variant), *launcher], out.parent, log,
                   "cmake configure", env)
        return
    if not (root / "meson.build").exists():
        raise BuildError(f"{root} has no meson.build; set engine.source_subdir (e.g. build/meson)")
    if shutil.which("meson") is None:
        raise BuildError("engine.build_system=meson and meson is not installed; run 'make setup'")
    run_logged(["meson", "setup", str(out), str(root), *meson_options(engine, variant)],
               out.parent, log, "meson setup", env)


def private_copy(tree: Path, dest: Path) -> Path:
    """The source copied into the build folder, for a build system that builds in place."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(tree, dest, symlinks=True)
    return dest


def tool_version(system: str) -> str:
    """The first line of the build system's --version (what built it, for the provenance)."""
    tool = {"cmake": "cmake", "meson": "meson", "make": "make"}.get(system, "sh")
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return "not found"
    return out.splitlines()[0].removeprefix("cmake version ").strip() if out else system
