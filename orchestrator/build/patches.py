"""Our own engine patches (engine/patches/<engine>/*.patch): found, hashed, applied to a copy.

A recipe's `patches` names files under `engine/patches/<engine name>/`. Their names and sha256
digests are part of the build key and the build's provenance, so a changed patch is a new
build. The fetched source tree is shared by every build of that source, so patches are applied
to a copy of it (`patched-<hash>` in the sources folder, reused when complete), never in place.
A patch that is missing or does not apply is one BuildError naming the patch.
"""
from __future__ import annotations

import hashlib
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..errors import BuildError
from ..plan.runplan import short_hash

PATCHES_DIR = Path(__file__).resolve().parents[2] / "engine" / "patches"
APPLIED_MARKER = ".tidemark-patches-applied"  # written last: a copy without it is half done
# A patch whose file name starts with this adds the planted point-read cost (orchestrator/build/planted.py).
PLANTED_PREFIX = "planted"


@dataclass(frozen=True)
class EnginePatch:
    name: str  # as the recipe names it, relative to engine/patches/<engine>/
    path: Path
    sha256: str


def find_patches(engine: str, names: Sequence[str], root: Path = PATCHES_DIR) -> tuple[EnginePatch, ...]:
    """The recipe's patches with their digests; BuildError naming the first one missing."""
    found = []
    for name in names:
        path = root / engine / name
        if not path.is_file():
            raise BuildError(f"engine patch {name!r} not found at {path}; fix engine.patches in "
                             f"conf/engine/{engine}.yaml or add the file")
        found.append(EnginePatch(name, path, hashlib.sha256(path.read_bytes()).hexdigest()))
    return tuple(found)


def patch_identity(patches: Sequence[EnginePatch]) -> tuple[tuple[str, str], ...]:
    """(name, sha256) per patch, in the order applied: what the build key and provenance hold."""
    return tuple((p.name, p.sha256) for p in patches)


def has_planted_patch(identity: Sequence[Sequence[str]]) -> bool:
    """True when a build's patches (its provenance) include the planted point-read cost."""
    return any(Path(name).name.startswith(PLANTED_PREFIX) for name, *_ in identity)


def _apply(tree: Path, patch: EnginePatch, log: Path) -> None:
    argv = ["patch", "-p1", "--forward", "--batch", "-i", str(patch.path)]
    with log.open("a") as fh:
        fh.write(f"$ {' '.join(argv)}\n")
        proc = subprocess.run(argv, cwd=tree, capture_output=True, text=True)
        fh.write(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        first = next((line for line in (proc.stdout + proc.stderr).splitlines()
                      if "FAILED" in line or "Reversed" in line or "can't find" in line), "")
        raise BuildError(f"engine patch {patch.name!r} does not apply to {tree} "
                         f"({first.strip() or f'patch exit {proc.returncode}'}); see {log}")


def apply_patches(tree: Path, patches: Sequence[EnginePatch], log: Path) -> None:
    """Every patch applied in order to a tree the build owns (a commit's own copy)."""
    for patch in patches:
        _apply(tree, patch, log)


def patched_tree(tree: Path, patches: Sequence[EnginePatch], sources_dir: Path,
                 code: Any = None) -> Path:
    """`tree` itself when there are no patches, else a copy of it in `sources_dir` with every
    patch applied (a local checkout is never written to). `code` names what the tree holds (a
    local checkout's revision): a copy is reused only for the same code, never for a checkout
    that changed since."""
    if not patches:
        return tree
    identity: list[Any] = [str(tree), patch_identity(patches)]
    if code is not None:
        identity.append(code)
    copy = sources_dir / f"patched-{short_hash(identity)}"
    if (copy / APPLIED_MARKER).exists():
        return copy
    if copy.exists():
        shutil.rmtree(copy)  # a copy left half patched: start clean
    shutil.copytree(tree, copy, symlinks=True)
    log = copy.parent / f"{copy.name}.log"
    log.write_text("")
    apply_patches(copy, patches, log)
    (copy / APPLIED_MARKER).write_text("".join(f"{n} {s}\n" for n, s in patch_identity(patches)))
    return copy
