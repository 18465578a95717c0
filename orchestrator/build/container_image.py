"""Images for the container runner (side effects: ldd, cc, docker build through docker-py).

One image per binary (the engine build's db_bench, the Google Benchmark harness), tagged from
its build key and the recipe's content (`tidemark/<engine>:<build key>-<recipe hash>`), built
FROM scratch with what the binary needs to run (docker/engine.Dockerfile says what), never
pulled. When the tag exists nothing is built. Building takes about a second: the files are
staged in a temporary folder and sent as the build context.
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from ..errors import BuildError
from ..machine.docker_client import LABEL, ImageRef
from ..plan.runplan import short_hash
from .filelock import held
from .provenance import sha256_file

RECIPES = Path(__file__).resolve().parents[2] / "docker"
DOCKERFILE = RECIPES / "engine.Dockerfile"
EXEC_SOURCE = RECIPES / "tidemark-exec.c"
EXEC_PATH = "/usr/local/bin/tidemark-exec"
# Debian's /usr/bin/valgrind is a shell script that sets these and execs valgrind.bin; the image
# has no shell, so valgrind.bin is installed as /usr/bin/valgrind and a callgrind step gets them.
VALGRIND_BIN = Path("/usr/bin/valgrind.bin")
VALGRIND_ENV = {"GLIBCXX_FORCE_NEW": "1", "GLIBCPP_FORCE_NEW": "1",
                "LD_LIBRARY_PATH": "/usr/lib/debug"}
VALGRIND_TOOL = (Path("/usr/libexec/valgrind/callgrind-amd64-linux"),
                 Path("/usr/libexec/valgrind/vgpreload_core-amd64-linux.so"),
                 Path("/usr/libexec/valgrind/default.supp"))


def parse_ldd(text: str) -> list[str]:
    """The paths of the libraries and loader in `ldd` output (pure); the vDSO has none."""
    paths = []
    for line in text.splitlines():
        line = line.strip()
        if "=> not found" in line:
            raise BuildError(f"ldd: {line.split()[0]} not found; the binary cannot run in an image")
        target = line.split("=>", 1)[1] if "=>" in line else line
        path = target.strip().split(" (", 1)[0].strip()
        if path.startswith("/"):
            paths.append(path)
    return paths


def image_tag(engine: str, binary: str, key: str, content: str) -> str:
    """`tidemark/<engine>-<binary>:<build key>-<recipe hash>` (pure): one image per binary of
    a recipe (db_bench, the harness, snappy_benchmark, zstd)."""
    repo = f"tidemark/{engine}-{binary.lower().replace('_', '-')}"
    return f"{repo}:{key}-{content[:8]}"


def _ldd(binary: Path) -> list[str]:
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True)
    if out.returncode != 0 and "not a dynamic executable" not in out.stdout + out.stderr:
        raise BuildError(f"ldd {binary} failed: {out.stderr.strip()[:200]}")
    return parse_ldd(out.stdout)


def image_files(binary: Path) -> dict[str, Path]:
    """Image path → host file: the binary, its libraries and loader, valgrind's callgrind."""
    files = {str(binary): binary}
    files.update({path: Path(path) for path in _ldd(binary)})
    if VALGRIND_BIN.exists():
        files["/usr/bin/valgrind"] = VALGRIND_BIN
        files.update({str(tool): tool for tool in VALGRIND_TOOL})
        for dynamic in (VALGRIND_BIN, VALGRIND_TOOL[1]):  # the launcher and the preload
            files.update({path: Path(path) for path in _ldd(dynamic)})
    return files


def _stage(context: Path, files: dict[str, Path]) -> None:
    """The build context: rootfs/ with every file at its image path, the helper, the recipe."""
    rootfs = context / "rootfs"
    for image_path, host_path in files.items():
        target = rootfs / image_path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(host_path, target)  # follows symlinks: the image gets the real file
    (rootfs / "tmp").mkdir(exist_ok=True)
    helper = rootfs / EXEC_PATH.lstrip("/")
    helper.parent.mkdir(parents=True, exist_ok=True)
    # Static, so PID 1 needs nothing from the image and runs before any library is in question.
    out = subprocess.run(["cc", "-O2", "-static", "-o", str(helper), str(EXEC_SOURCE)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise BuildError(f"cc {EXEC_SOURCE.name} failed: {out.stderr.strip()[:300]}; run 'make setup'")
    shutil.copy(DOCKERFILE, context / "Dockerfile")


def recipe_content(binary: Path, base: str) -> str:
    """What besides the build key decides the image: the binary's bytes, the recipe, the base."""
    return short_hash({"binary": sha256_file(binary), "base": base,
                       "dockerfile": DOCKERFILE.read_text(), "exec": EXEC_SOURCE.read_text(),
                       "valgrind": VALGRIND_BIN.exists()})


def _existing(client: Any, tag: str) -> Any | None:
    from docker.errors import ImageNotFound

    try:
        return client.images.get(tag)
    except ImageNotFound:
        return None


def ensure_image(client: Any, engine: str, name: str, key: str, binary: Path, base: str,
                 cache_dir: Path, say: Callable[[str], None]) -> ImageRef:
    """The image of `binary` (tag from the build key), built unless the tag exists."""
    from docker.errors import APIError, BuildError as DockerBuildError

    tag = image_tag(engine, name, key, recipe_content(binary, base))
    lock = cache_dir / "images" / (tag.replace("/", "_").replace(":", "_") + ".lock")
    with held(lock, f"another build of image {tag}", say):  # the second builder reuses it
        image = _existing(client, tag)
        built_s = None
        if image is None:
            started = time.monotonic()
            with tempfile.TemporaryDirectory(prefix="tidemark-image-") as tmp:
                _stage(Path(tmp), image_files(binary))
                try:
                    image, _ = client.images.build(path=tmp, tag=tag, pull=False, rm=True,
                                                   forcerm=True, labels={LABEL: key})
                except (APIError, DockerBuildError) as exc:
                    raise BuildError(f"docker build of {tag} failed: "
                                     f"{str(exc).splitlines()[0][:300]}") from None
            built_s = round(time.monotonic() - started, 2)
    return ImageRef(name, tag, image.id, base, int(image.attrs.get("Size") or 0), built_s)
