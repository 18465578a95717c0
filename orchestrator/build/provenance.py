"""A cached build's record (its provenance file) and the check that its binary is still the one
it records, for the engine's builds (engine.py) and the harness's (harness_build.py).

A build folder holds its binary and, written last, its provenance: a folder without one is an
unfinished build. A binary that differs from its record is refused, never measured nor rebuilt
over (README: what Tidemark does with bad input and faults).
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..errors import BuildError


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def load_provenance(prov: Path, record: type, tuple_fields: tuple[str, ...]) -> Any | None:
    """The cached build record in the JSON file prov, or None when there is none: no build yet,
    or one interrupted before its provenance (written last) existed, which the caller redoes.

    A recorded build whose binary is not the one recorded (another sha256, missing, or outside
    the build's folder) is refused, never rebuilt over: a cached baseline changed behind our
    back (by a job that outlived its run, by hand) must not be measured, and replacing it
    silently would hide that it happened."""
    if not prov.exists():
        return None
    data = json.loads(prov.read_text())
    for name in tuple_fields:
        if name in data:  # lists of lists (patches) become tuples of tuples
            data[name] = tuple(tuple(v) if isinstance(v, list) else v for v in data[name])
    cached = record(**{**data, "cached": True})
    check_recorded_binary(Path(cached.binary_path), cached.binary_sha256, prov)
    recorded = getattr(cached, "binary_sha256s", {})  # every binary of a recipe (engine builds)
    for name, path in getattr(cached, "binaries", {}).items():
        if name in recorded:
            check_recorded_binary(Path(path), recorded[name], prov)
    return cached


def check_recorded_binary(binary: Path, expected: str, prov: Path) -> None:
    """BuildError unless `binary` lies in prov's folder and has the sha256 prov records."""
    folder = prov.parent
    # The path as recorded, not its link's target: a recipe's binary may be a link out of its
    # folder (a venv's python), and what is checked is that the record names its own folder.
    if not Path(os.path.abspath(binary)).is_relative_to(os.path.abspath(folder)):
        found = f"a binary outside {folder}"
    elif not binary.is_file():
        found = "no file"
    else:
        found = sha256_file(binary)
    if found != expected:
        raise BuildError(f"cached build {binary} is not the one {prov.name} recorded (sha256 "
                         f"{expected}, found {found}): something changed it after it was built; "
                         f"nothing was measured with it. Find out what changed it, then remove "
                         f"{folder} to build it again")


def write_provenance(prov: Path, record: Any) -> None:
    """The build's record, written last and whole (a temporary file renamed): a folder without
    it is an unfinished build, and a reader never sees half a file."""
    partial = prov.with_name(prov.name + ".partial")
    partial.write_text(json.dumps(asdict(record), indent=2))
    os.replace(partial, prov)
