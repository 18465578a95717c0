"""Run bundles (side effects: files): a run measured on one host, carried to the history.

A bundle is one folder, `<bundle_dir>/<run_id>/`:

- `run.duckdb`: the run's rows, written by the same Store and run loop as a direct run (same
  schema, same code path), so ingesting it gives the rows a direct run would have written;
- `logs/<run_id>/`: the engine's logs;
- `build.json`, `machine.json`: the engine build's provenance and the host's facts, readable
  without Tidemark;
- `manifest.json`, written last (atomically): the format, the schema version, the run ids, where
  the logs were written, and the size and sha256 of every other file.

A folder without a manifest is unfinished: its job is still running, or was killed outright.
Before anything is merged, every file is checked against the manifest and a file the manifest
does not list is refused (a stray `run.duckdb.wal` would change what DuckDB reads); the
manifest's own sha256 is the bundle's identity, which makes ingesting idempotent.

A bundle comes from another host, so nothing it names may reach outside its folder: a manifest
entry with `..` or an absolute path, a symbolic link anywhere in the folder, and a run id that is
not a plain name (run ids become folder names under the history's logs) are refused before any
file is read.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import BundleError

MANIFEST = "manifest.json"
_PARTIAL = f".{MANIFEST}.partial"
DB_FILE = "run.duckdb"
FORMAT = "tidemark-bundle"
FORMAT_VERSION = 1
_CHUNK = 1 << 20
# A real manifest lists a few files per invocation: even a nightly suite's is under 1 MB.
MAX_MANIFEST_BYTES = 64 << 20
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")  # what new_run_id (and ab's -a/-b) make


@dataclass(frozen=True)
class BundleLayout:
    """Where a bundle's files go while its run writes them."""

    root: Path

    @property
    def db(self) -> Path:
        return self.root / DB_FILE

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"


@dataclass(frozen=True)
class Manifest:
    """A sealed bundle's manifest, as read (and checked) from its folder."""

    root: Path
    bundle_id: str  # sha256 of manifest.json
    data: dict[str, Any]

    @property
    def run_ids(self) -> list[str]:
        return list(self.data["run_ids"])

    @property
    def schema_version(self) -> int:
        return int(self.data["schema_version"])

    @property
    def logs_prefix(self) -> str:
        return str(self.data["logs_prefix"])


def new_bundle(bundle_dir: Path, run_id: str) -> BundleLayout:
    """The folder of a new bundle (refused when it exists: a bundle is written once)."""
    root = bundle_dir / run_id
    try:
        root.mkdir(parents=True, exist_ok=False)
    except FileExistsError:
        raise BundleError(f"bundle folder {root} exists already; pass another bundle_dir") from None
    except OSError as exc:
        raise BundleError(f"cannot create bundle folder {root}: {exc.strerror}; pass a writable "
                          f"bundle_dir") from None
    return BundleLayout(root)


def _file_digest(path: Path, copy_to: Path | None = None) -> tuple[str, int]:
    """sha256 and size of a file, copying it on the way when asked (one read for both)."""
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as src, (copy_to.open("wb") if copy_to else open(os.devnull, "wb")) as dst:
        while chunk := src.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
            dst.write(chunk)
    return digest.hexdigest(), size


def _bundle_files(root: Path) -> tuple[list[str], list[str]]:
    """(regular files but the manifest, symbolic links), relative to root; links not followed."""
    files, links = [], []
    for folder, dirs, names in os.walk(root):
        for name in dirs + names:
            path = Path(folder) / name
            relative = path.relative_to(root).as_posix()
            if path.is_symlink():
                links.append(relative)
            elif name in names and relative not in (MANIFEST, _PARTIAL):
                files.append(relative)
    return sorted(files), sorted(links)


def seal_bundle(layout: BundleLayout, run_ids: list[str], build: dict[str, Any],
                facts: dict[str, Any], schema_version: int, tidemark_sha: str,
                sealed_by: str = "run") -> Path:
    """Write the provenance files and, last, the manifest that makes the bundle finished;
    `sealed_by` says who sealed it (the run itself, or ingest for a killed job)."""
    for name, content in (("build.json", build), ("machine.json", facts)):
        (layout.root / name).write_text(json.dumps(content, indent=2, sort_keys=True, default=str))
    files = {}
    for name in _bundle_files(layout.root)[0]:
        sha, size = _file_digest(layout.root / name)
        files[name] = {"sha256": sha, "bytes": size}
    manifest = {"format": FORMAT, "format_version": FORMAT_VERSION,
                "schema_version": schema_version, "run_ids": run_ids,
                "logs_prefix": str(layout.logs_dir), "host": socket.gethostname(),
                "created_at": datetime.now(timezone.utc).isoformat(),
                "tidemark_sha": tidemark_sha, "sealed_by": sealed_by, "files": files}
    partial = layout.root / _PARTIAL  # never listed: a seal cut short (a full disk) leaves it
    partial.write_text(json.dumps(manifest, indent=2, sort_keys=True))
    os.replace(partial, layout.root / MANIFEST)  # a reader sees no manifest or a whole one
    return layout.root


def discard_bundle(layout: BundleLayout) -> None:
    """Remove a bundle whose run never started (nothing was measured into it)."""
    shutil.rmtree(layout.root, ignore_errors=True)


def _refuse(root: Path, what: str) -> BundleError:
    return BundleError(f"bundle {root}: {what}; nothing was written from it")


def read_manifest(root: Path) -> Manifest:
    """The manifest of a sealed bundle, its shape checked (not yet the files it lists)."""
    path = root / MANIFEST
    if not path.is_file():
        raise _refuse(root, f"no {MANIFEST}: the bundle is unfinished (its job is still running "
                            f"or was killed before it ended)")
    if path.is_symlink():
        raise _refuse(root, f"{MANIFEST} is a symbolic link; a bundle holds plain files only")
    if path.stat().st_size > MAX_MANIFEST_BYTES:
        raise _refuse(root, f"{MANIFEST} is {path.stat().st_size >> 20} MB, more than any "
                            f"bundle's ({MAX_MANIFEST_BYTES >> 20} MB): not a bundle manifest")
    raw = path.read_bytes()
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _refuse(root, f"{MANIFEST} is not valid JSON ({exc}): truncated or damaged") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise _refuse(root, f"{MANIFEST} is not a Tidemark bundle manifest")
    missing = [k for k in ("format_version", "schema_version", "run_ids", "logs_prefix", "files")
               if k not in data]
    if missing:
        raise _refuse(root, f"{MANIFEST} lacks {', '.join(missing)}: truncated or damaged")
    if not isinstance(data["files"], dict) or DB_FILE not in data["files"]:
        raise _refuse(root, f"{MANIFEST} lists no {DB_FILE}")
    _check_names(root, data)
    return Manifest(root, hashlib.sha256(raw).hexdigest(), data)


def _check_names(root: Path, data: dict[str, Any]) -> None:
    """Every file the manifest names is inside the bundle; every run id is a plain name."""
    for name in data["files"]:
        path = PurePosixPath(name)
        if path.is_absolute() or ".." in path.parts or path.as_posix() != name:
            raise _refuse(root, f"{MANIFEST} names {name!r}, outside the bundle (or not a plain "
                                f"relative path)")
    run_ids = data["run_ids"]
    if not isinstance(run_ids, list) or not run_ids:
        raise _refuse(root, f"{MANIFEST} names no run ids: truncated or damaged")
    for run_id in run_ids:
        if not isinstance(run_id, str) or not RUN_ID.match(run_id):
            raise _refuse(root, f"run id {run_id!r} is not a plain name (letters, digits, '.', "
                                f"'_', '-'): not a run Tidemark wrote")


def check_versions(manifest: Manifest, latest_schema: int) -> None:
    """Refuse a bundle this Tidemark cannot read: a newer bundle format or database schema."""
    root, data = manifest.root, manifest.data
    if int(data["format_version"]) > FORMAT_VERSION:
        raise _refuse(root, f"{MANIFEST} has bundle format v{data['format_version']}, newer than "
                            f"this Tidemark's v{FORMAT_VERSION}; upgrade Tidemark")
    if manifest.schema_version > latest_schema:
        raise _refuse(root, f"{DB_FILE} has schema v{manifest.schema_version}, newer than this "
                            f"Tidemark's v{latest_schema}; upgrade Tidemark to ingest it")


def verify_files(manifest: Manifest, db_copy: Path) -> None:
    """Check every file against the manifest; the database is copied to `db_copy` while it
    is hashed, so what is merged is exactly what was checked."""
    root = manifest.root
    listed: dict[str, Any] = manifest.data["files"]
    files, links = _bundle_files(root)
    if links:  # it could stand for any file on this host
        raise _refuse(root, f"{links[0]} is a symbolic link; a bundle holds plain files only")
    unlisted = sorted(set(files) - set(listed))
    if unlisted:
        raise _refuse(root, f"file {unlisted[0]} is not in {MANIFEST} (added after the bundle "
                            f"was sealed)")
    for name, expected in sorted(listed.items()):
        path = root / name
        if not path.is_file():
            raise _refuse(root, f"file {name} listed in {MANIFEST} is missing")
        sha, size = _file_digest(path, db_copy if name == DB_FILE else None)
        if size != expected.get("bytes"):
            raise _refuse(root, f"file {name} has {size} bytes, the manifest says "
                                f"{expected.get('bytes')}: truncated or changed")
        if sha != expected.get("sha256"):
            raise _refuse(root, f"file {name} does not match its sha256 in {MANIFEST}: "
                                f"changed after the bundle was sealed")


def find_bundles(paths: list[Path]) -> tuple[list[Path], list[Path]]:
    """(sealed bundles, unfinished bundles) named by or found under `paths`, in path order."""
    sealed: list[Path] = []
    unfinished: list[Path] = []
    for path in paths:
        if not path.is_dir():
            raise BundleError(f"{path} is not a bundle or a folder of bundles; pass the folder "
                              f"a run wrote with bundle_dir=FOLDER")
        roots = {p.parent for p in path.rglob(MANIFEST)} | {p.parent for p in path.rglob(DB_FILE)}
        for root in sorted(roots):
            (sealed if (root / MANIFEST).is_file() else unfinished).append(root)
    return sealed, unfinished
