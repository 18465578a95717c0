"""Build the engine from pinned source into a cache keyed by recipe + variant + compiler + flags.

Side effects: apt-get source, git, a tarball unpacked, then the recipe's build system
(build/systems.py: cmake, meson, make or commands). The key is a pure function.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..errors import BuildError
from ..plan.runplan import short_hash
from ..plan.schema import BuildConf, EngineConf
from .filelock import held
from .patches import apply_patches, find_patches, patch_identity, patched_tree
from .provenance import load_provenance, sha256_file, write_provenance
from .revision import Revision, export_commit, resolve_revision
from .systems import (ProgressFn, build_flags, compile_tree, private_copy, run_logged,
                      tool_version)

PROVENANCE_FILE = "provenance.json"
ORIG_ONLY_MARKER = "ORIG_ONLY"  # in a Debian source's folder: built from the orig tarball alone


@dataclass(frozen=True)
class Build:
    """A finished engine build and where it came from."""

    build_id: str
    engine: str
    version: str
    variant: str
    source_kind: str
    source_package: str
    source_version: str
    source_dir: str
    compiler: str
    compiler_version: str
    cmake_version: str
    cmake_flags: tuple[str, ...]
    build_seconds: float
    binary_path: str
    binary_sha256: str
    linked_libraries: tuple[str, ...]
    created_at: str
    cached: bool = False  # True when this run reused the build without compiling
    source_note: str = ""  # e.g. "Debian patches not applied" for an orig-tarball-only source
    patches: tuple[tuple[str, str], ...] = ()  # our own patches applied: (name, sha256) in order
    # Container images of this build (runner=docker; container_image.py): binary name → tag,
    # id, base.
    # Added when a run builds or finds them; the store merges them into the build's provenance.
    images: dict[str, Any] = field(default_factory=dict)
    # The commit compiled (git and local sources; revision.Revision.record()): sha, subject,
    # author, date, and `dirty`, a hash of uncommitted changes. Empty for a Debian source.
    revision: dict[str, Any] = field(default_factory=dict)
    # Every binary of the recipe (engine.binaries): name → path; binary_path is the first.
    binaries: dict[str, str] = field(default_factory=dict)
    binary_sha256s: dict[str, str] = field(default_factory=dict)  # name → sha256, checked on reuse
    build_system: str = "cmake"

    def binary(self, name: str) -> str:
        """The path of the recipe's binary `name` (a build stored before recipes listed their
        binaries has its one binary, under any name)."""
        return self.binaries.get(name) or (self.binary_path if not self.binaries else "")


def compiler_identity() -> tuple[str, str]:
    """The C++ compiler CMake will pick (c++ on PATH) and its version line."""
    cxx = shutil.which(os.environ.get("CXX", "c++")) or "c++"
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise BuildError(f"no working C++ compiler ({cxx}: {exc}); run 'make setup'") from exc
    return os.path.realpath(cxx), out.splitlines()[0].strip()


def build_key(engine: EngineConf, variant: BuildConf, compiler_version: str,
              patches: tuple[tuple[str, str], ...] = (), revision: Revision | None = None) -> str:
    """Same recipe + variant + compiler + flags + patches + code ⇒ same key ⇒ the cached build
    is reused (pure). `patches` is (name, sha256) per patch; `revision` the commit (and any
    uncommitted changes) a git or local source resolved to: a git source is keyed by its commit,
    never by the ref's name, which moves. A Debian recipe keeps the key it always had."""
    source = asdict(engine.source)
    if not source["sha256"]:  # a recipe without a tarball keeps the key it always had
        del source["sha256"]
    if revision is not None and engine.source.kind == "git":
        source["ref"] = revision.sha
    recipe: dict[str, Any] = {"engine": engine.name, "version": engine.version,
                              "source": source, "target": " ".join(engine.targets),
                              "flags": build_flags(engine, variant), "compiler": compiler_version}
    if engine.build_system != "cmake" or engine.source_subdir or \
            engine.binaries != {"db_bench": "db_bench"}:
        # A recipe's binaries are checked when it builds, so a changed list builds (and checks)
        # again; the db_bench recipes keep the key they always had.
        recipe["system"] = [engine.build_system, engine.source_subdir, dict(engine.binaries)]
    if patches:
        recipe["patches"] = [list(p) for p in patches]
    if revision is not None:
        recipe["code"] = revision.key()
    return short_hash(recipe)


def build_dir_name(engine: EngineConf, variant: BuildConf, key: str) -> str:
    return f"{engine.name}-{engine.version}-{variant.name}-{key}"


def fetch_debian_source(engine: EngineConf, sources_dir: Path) -> Path:
    """apt-get source PACKAGE=VERSION into its own folder; returns the unpacked tree.

    Where the mirror lacks a suite's Debian files (.dsc, .debian.tar) but has the upstream orig
    tarball, the tree is the orig tarball alone and a marker records that no Debian patch applied.
    """
    src = engine.source
    if not src.package or not src.package_version:
        raise BuildError(f"engine {engine.name!r}: a debian source needs source.package and "
                         f"source.package_version (e.g. rocksdb / 7.8.3-2)")
    home = sources_dir / f"{src.package}_{src.package_version}"
    tree = home / "src"
    if (home / "UNPACKED").exists() or (tree / "CMakeLists.txt").exists():
        return tree
    home.mkdir(parents=True, exist_ok=True)
    log = home / "fetch.log"
    what = f"apt-get source {src.package}={src.package_version}"
    # apt-get exits non-zero when any one file 404s, even though the others were downloaded.
    _try_run(["apt-get", "source", "--download-only", "--only-source",
              f"{src.package}={src.package_version}"], home, log)
    if tree.exists():
        shutil.rmtree(tree)
    (home / ORIG_ONLY_MARKER).unlink(missing_ok=True)
    dsc = next(home.glob(f"{src.package}_*.dsc"), None)
    if dsc is not None and _try_run(["dpkg-source", "--no-check", "-x", dsc.name, "src"], home, log):
        (home / "UNPACKED").write_text(f"{dsc.name}\n")  # a tree without CMakeLists.txt too
        return tree
    upstream = src.package_version.rsplit("-", 1)[0]
    orig = next(home.glob(f"{src.package}_{upstream}.orig.tar.*"), None)
    if orig is None:
        raise BuildError(f"{what} gave neither a usable .dsc nor an orig tarball (is the deb-src "
                         f"entry there? run 'make setup'); see {log}")
    if tree.exists():
        shutil.rmtree(tree)
    tree.mkdir()
    run_logged(["tar", "-xf", orig.name, "-C", "src", "--strip-components=1"], home, log,
         f"unpacking {orig.name}")
    (home / ORIG_ONLY_MARKER).write_text(f"{orig.name} unpacked alone; Debian patches not applied\n")
    (home / "UNPACKED").write_text(f"{orig.name}\n")
    return tree


def source_note(tree: Path) -> str:
    """What differs from the recipe's full Debian source, for the provenance ('' when nothing)."""
    marker = tree.parent / ORIG_ONLY_MARKER
    return marker.read_text().strip() if marker.exists() else ""


def _try_run(argv: list[str], cwd: Path, log: Path) -> bool:
    with log.open("a") as fh:
        fh.write(f"$ {' '.join(argv)}\n")
        fh.flush()
        return subprocess.run(argv, cwd=cwd, stdout=fh, stderr=subprocess.STDOUT).returncode == 0


def fetch_tarball(engine: EngineConf, sources_dir: Path) -> Path:
    """A source tarball checked against its sha256 and unpacked once (its top folder dropped)."""
    src = engine.source
    tarball = Path(src.path).expanduser()
    if not tarball.is_file():
        raise BuildError(f"engine.source.path={src.path!r} is not a file; point it at the "
                         f"source tarball")
    found = sha256_file(tarball)
    if found != src.sha256.lower():
        raise BuildError(f"{tarball} has sha256 {found}, and engine.source.sha256 says "
                         f"{src.sha256}; fetch the right tarball or fix the digest")
    home = sources_dir / f"tarball-{found[:16]}"
    tree = home / "src"
    if (home / "UNPACKED").exists():
        return tree
    if home.exists():
        shutil.rmtree(home)  # an unpacking that was interrupted
    tree.mkdir(parents=True)
    run_logged(["tar", "-xf", str(tarball), "-C", str(tree), "--strip-components=1"], home,
               home / "fetch.log", f"unpacking {tarball.name}")
    (home / "UNPACKED").write_text(f"{tarball.name} {found}\n")
    return tree


def fetch_source(engine: EngineConf, sources_dir: Path) -> Path:
    sources_dir.mkdir(parents=True, exist_ok=True)
    kind = engine.source.kind
    if kind == "debian":
        return fetch_debian_source(engine, sources_dir)
    if kind == "tarball":
        return fetch_tarball(engine, sources_dir)
    if kind == "local":
        tree = Path(engine.source.path).expanduser()
        if not tree.is_dir():
            raise BuildError(f"engine.source.path={engine.source.path!r} is not a folder; "
                             f"point it at the engine's checkout")
        return tree
    raise BuildError(f"engine.source.kind={kind!r}; use debian, git, local or tarball")


def linked_libraries(binary: Path) -> tuple[str, ...]:
    """Shared libraries the dynamic loader resolves for the binary (ldd), as sonames."""
    try:
        out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True).stdout
    except OSError:
        return ()
    return tuple(sorted({line.split()[0] for line in out.splitlines() if line.strip()}))


def check_no_forbidden_libraries(binary: Path, libs: tuple[str, ...], forbidden: list[str]) -> None:
    """A db_bench that loads a system copy of the engine measures the wrong library."""
    bad = [lib for lib in libs if any(lib.startswith(f) for f in forbidden)]
    if bad:
        raise BuildError(f"{binary} loads {', '.join(bad)} instead of the library it was built "
                         f"with; build it static (see conf/engine/)")


def _load_cached(build_dir: Path) -> Build | None:
    return load_provenance(build_dir / PROVENANCE_FILE, Build,
                           ("cmake_flags", "linked_libraries", "patches"))


@dataclass(frozen=True)
class PlannedBuild:
    """What a recipe builds now, before anything compiles: its key and folder, the code."""

    key: str
    build_dir: Path
    revision: Revision | None
    repo: Path | None  # a git source's mirror clone
    patches: tuple[Any, ...]
    compiler: tuple[str, str]  # path, version line


def plan_build(engine: EngineConf, variant: BuildConf, cache_dir: Path,
               say: Callable[[str], None] = print) -> PlannedBuild:
    """The key this recipe builds under now: a git ref fetched and resolved to its commit, a
    local checkout's commit and changes, the compiler, the patches."""
    compiler = compiler_identity()
    patches = find_patches(engine.name, engine.patches)
    sources = cache_dir / "sources"
    with held(sources / ".fetch.lock", "another fetch of engine sources", say):
        revision, repo = resolve_revision(engine, sources)
    key = build_key(engine, variant, compiler[1], patch_identity(patches), revision)
    return PlannedBuild(key, cache_dir / "builds" / build_dir_name(engine, variant, key),
                        revision, repo, tuple(patches), compiler)


def build_engine(engine: EngineConf, variant: BuildConf, cache_dir: Path, jobs: int,
                 on_progress: ProgressFn | None = None,
                 say: Callable[[str], None] = print) -> Build:
    """Return the cached build for this recipe + variant + compiler, building it if needed.

    One build of a key at a time (a lock per build folder, another for fetching sources): a
    second run needing the same build waits and then takes the finished one. The provenance
    file is written last, so a folder without it is an interrupted build, removed and redone
    under the lock. (It is built in place, not renamed from a temporary folder: CMake bakes
    the folder's absolute path into the tree.)"""
    planned = plan_build(engine, variant, cache_dir, say)
    (compiler, compiler_version), patches = planned.compiler, planned.patches
    key, build_dir, revision, repo = planned.key, planned.build_dir, planned.revision, planned.repo
    sources = cache_dir / "sources"
    cached = _load_cached(build_dir)
    if cached is not None:
        return cached
    with held(build_dir.with_name(build_dir.name + ".lock"), f"another build of {build_dir.name}",
              say):
        cached = _load_cached(build_dir)  # built by the process we waited for
        if cached is not None:
            return cached
        if build_dir.exists():
            shutil.rmtree(build_dir)  # a half-finished build: start clean
        build_dir.mkdir(parents=True)
        if repo is not None and revision is not None:
            # The commit's own copy inside the build folder: builds of several commits never
            # share a checkout, and every build sees its source at the same relative path
            # (../src from build/), so ccache (CCACHE_BASEDIR) reuses the objects of every file
            # a commit did not change.
            fetched = tree = export_commit(repo, revision.sha, build_dir / "src")
            apply_patches(tree, patches, build_dir / "build.log")
        else:
            with held(sources / ".fetch.lock", "another fetch of engine sources", say):
                fetched = fetch_source(engine, sources)
                token = revision.key() if revision is not None else None
                tree = patched_tree(fetched, patches, sources, token)
        return _build_into(build_dir, engine, variant, key, (compiler, compiler_version),
                           (fetched, tree, patches, revision), jobs, cache_dir, on_progress)


def _source_version(engine: EngineConf, revision: Revision | None) -> str:
    """What names the code built: a commit, a tarball's digest, a Debian source version."""
    src = engine.source
    if revision is not None and revision.sha:
        return revision.sha
    if src.kind == "tarball":
        return src.sha256.lower()
    return src.package_version or src.ref


def _build_into(build_dir: Path, engine: EngineConf, variant: BuildConf, key: str,
                compiler_id: tuple[str, str], source: tuple[Path, Path, Any, Revision | None],
                jobs: int, cache_dir: Path, on_progress: ProgressFn | None) -> Build:
    compiler, compiler_version = compiler_id
    fetched, tree, patches, revision = source
    if engine.build_system in ("make", "commands") and tree.parent != build_dir:
        tree = private_copy(tree, build_dir / "src")  # they build in place
    started = time.monotonic()
    out = compile_tree(engine, variant, tree, build_dir, jobs, cache_dir / "ccache", on_progress)
    seconds = time.monotonic() - started
    binaries = {}
    for name, relative in engine.binaries.items():
        binary = Path(os.path.normpath(out / relative))  # a path may step out: ../build/x
        if not binary.is_file():
            raise BuildError(f"the build finished but {binary} does not exist; check "
                             f"engine.binaries.{name} (a path under {out})")
        binaries[name] = str(binary)
    main = Path(next(iter(binaries.values())))
    libs = linked_libraries(main)
    check_no_forbidden_libraries(main, libs, engine.forbid_shared)
    src = engine.source
    build = Build(build_id=key, engine=engine.name, version=engine.version, variant=variant.name,
                  source_kind=src.kind, source_package=src.package or src.path,
                  source_version=_source_version(engine, revision), source_dir=str(tree),
                  compiler=compiler, compiler_version=compiler_version,
                  cmake_version=tool_version(engine.build_system),
                  cmake_flags=tuple(build_flags(engine, variant)),
                  build_seconds=round(seconds, 2), binary_path=str(main),
                  binary_sha256=sha256_file(main), linked_libraries=libs,
                  created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  source_note=source_note(fetched), patches=patch_identity(patches),
                  revision=revision.record() if revision is not None else {},
                  binaries=binaries, build_system=engine.build_system,
                  binary_sha256s={name: sha256_file(Path(path)) for name, path in binaries.items()})
    write_provenance(build_dir / PROVENANCE_FILE, build)
    return build
