"""The cache a site build leaves in its out folder for the next build into it (side effects).

`tidemark site` into the same --out again reuses what it computed last time when, and only
when, every input it was made from is unchanged: each entry is stored under a hash of those
inputs. A finished run's invocations never change, but its label, notes and status can, a
resumed run gains invocations, `tidemark db remove` drops a run, and the code, templates and
theme that render a page change between versions; so a key hashes the inputs themselves (a
run's row, its invocations' and metrics' fingerprints read from the DB, the page's context)
and the generator (`generator_fingerprint`). A stale entry is never looked up again; each
build keeps only the entries it used, so the folder does not grow with the history's churn.

Layout under out/cache/: `<kind>.pkl` holds a kind's index (name → key and small facts), and
`<kind>/` its large values as files, which an entry names in its facts ("files").
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
import shutil
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
# Everything that decides what a page says or how it looks, besides the data.
_GENERATOR_FILES = ("reports", "orchestrator", "site", "mkdocs.yml")
# .c and .so: the change points' C step (orchestrator/analysis/_edivisive.c) decides what pages
# say too, as built (a source changed but not built again must not pass for the new one).
_GENERATOR_SUFFIXES = {".py", ".c", ".so", ".j2", ".html", ".md", ".css", ".js", ".yml",
                       ".yaml", ".json"}
_GENERATOR_PACKAGES = ("mkdocs", "mkdocs-material", "markdown", "pymdown-extensions", "jinja2",
                       "markupsafe", "pandas", "numpy", "duckdb", "plotly", "orjson", "pyyaml")


def digest(*parts: Any) -> str:
    """A hash of Python values. Pickle, not str or JSON: it keeps types apart (Markup from str,
    1 from 1.0, a Timestamp from its text), and two different values never pickle alike."""
    return hashlib.sha256(pickle.dumps(parts, protocol=5)).hexdigest()


@functools.cache
def generator_fingerprint() -> str:
    """A hash of the code, templates and hand-written pages that render the site and of the
    installed versions of what they call: a new Tidemark or MkDocs invalidates every entry."""
    h = hashlib.sha256(sys.version.encode())
    for name in _GENERATOR_PACKAGES:
        try:
            h.update(f"{name}={metadata.version(name)}".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{name} missing".encode())
    for top in _GENERATOR_FILES:
        root = REPO_ROOT / top
        paths = [root] if root.is_file() else sorted(
            p for p in root.rglob("*") if p.suffix in _GENERATOR_SUFFIXES and p.is_file())
        for path in paths:
            h.update(str(path.relative_to(REPO_ROOT)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


class SiteCache:
    """out/cache: per kind, an index of name → (key, facts) and files named by key."""

    def __init__(self, root: Path):
        self.root = root
        self._indexes: dict[str, dict[str, tuple[str, Any]]] = {}
        self._used: dict[str, dict[str, tuple[str, Any]]] = {}

    def _index(self, kind: str) -> dict[str, tuple[str, Any]]:
        if kind not in self._indexes:
            path = self.root / f"{kind}.pkl"
            try:
                stored = unpickled(path)
            except Exception:  # noqa: BLE001 - none yet, or damaged: build as if fresh
                stored = {}
            # The generator's hash is part of every key, so an index from another version of
            # the code is dropped whole rather than entry by entry.
            fresh = isinstance(stored, dict) and stored.get("generator") == generator_fingerprint()
            self._indexes[kind] = stored.get("entries", {}) if fresh else {}
            self._used.setdefault(kind, {})
        return self._indexes[kind]

    def lookup(self, kind: str, name: str, key: str) -> Any | None:
        """The facts stored for `name` under exactly `key` (None: missing or stale)."""
        entry = self._index(kind).get(name)
        if entry is None or entry[0] != key:
            return None
        self._used[kind][name] = entry
        return entry[1]

    def entries(self, kind: str) -> dict[str, tuple[str, Any]]:
        """Every stored (key, facts) of `kind` by name, for callers that match keys themselves."""
        return dict(self._index(kind))

    def store(self, kind: str, name: str, key: str, facts: Any) -> None:
        # The last build's index is not read for this (a thousand run pages' entries).
        self._used.setdefault(kind, {})[name] = (key, facts)

    def keep(self, kind: str, name: str) -> None:
        """Carry `name`'s entry over to the next build unchanged."""
        entry = self._index(kind).get(name)
        if entry is not None:
            self._used[kind][name] = entry

    def stored(self, kind: str) -> dict[str, tuple[str, Any]]:
        """What this build stored or used of `kind` so far: a forked child's work on the cache
        goes back to the parent (`adopt`), whose `save` alone writes the index."""
        return dict(self._used.get(kind, {}))

    def adopt(self, kind: str, entries: dict[str, tuple[str, Any]]) -> None:
        """Take a child's `stored(kind)` as stored here."""
        self._used.setdefault(kind, {}).update(entries)

    def file(self, kind: str, name: str) -> Path:
        """Where a large value of `kind` lives (it may not exist yet)."""
        return self.root / kind / name

    def save(self) -> None:
        """Write each index with only the entries this build used; delete other files."""
        for kind, used in self._used.items():
            folder = self.root / kind
            if folder.is_dir():
                live = {name for _, facts in used.values() for name in _files(facts)}
                for path in folder.iterdir():
                    if path.name not in live:
                        path.unlink()
            self.root.mkdir(parents=True, exist_ok=True)
            temporary = self.root / f"{kind}.pkl.tmp"
            temporary.write_bytes(pickle.dumps({"generator": generator_fingerprint(),
                                                "entries": used}, protocol=5))
            os.replace(temporary, self.root / f"{kind}.pkl")

    def clear(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        self._indexes.clear()
        self._used.clear()


def unpickled(path: Path) -> Any:
    """A pickle read from its file as a stream: its arrays are read straight into their
    buffers (read whole first, the 61 MB of a long history's points cost a copy and 14,000
    more page faults)."""
    with path.open("rb") as stream:
        return pickle.load(stream)


def pickled_into(target: Path, value: Any) -> OSError | None:
    """`value` pickled into `target`, through a temporary file (a build killed meanwhile leaves
    none or a whole one); the error if it could not be (a full disk): the caller goes on, and
    the next build reads again what the file would have kept."""
    temporary = target.with_suffix(".tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(pickle.dumps(value, protocol=5))
        temporary.replace(target)
    except OSError as error:
        with contextlib.suppress(OSError):  # none was made, or its folder is not one
            temporary.unlink(missing_ok=True)
        return error
    return None


def _files(facts: Any) -> tuple[str, ...]:
    """The names of the files under <kind>/ an entry needs (its facts' "files")."""
    return tuple(facts.get("files", ())) if isinstance(facts, dict) else ()


def place(source: Path, target: Path) -> None:
    """`target` becomes `source`'s content: a hard link (no copy of megabytes of HTML) where
    the file system allows it, else a copy."""
    try:  # most targets are new, in a folder that exists: one call (thousands of run pages)
        os.link(source, target)
        return
    except FileExistsError:
        target.unlink()
    except FileNotFoundError:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


class RememberedSteps:
    """The core's change-point detector, answering from the last build for a series whose
    window of history is the same: detection is pure (a fixed seed), so equal values give
    equal steps. Used in a forked child, whose `used` answers the parent `keep`s."""

    KIND = "change-points"

    def __init__(self, cache: SiteCache):
        self._cache = cache
        self._known = {key: facts for key, (_, facts) in cache.entries(self.KIND).items()}
        self.used: dict[str, Any] = {}

    def detect(self, values: list[float]) -> Any:
        from orchestrator.analysis.changepoints import detect_change_points

        key = digest(values)
        if key not in self.used:
            found = self._known.get(key)
            self.used[key] = found if found is not None else detect_change_points(values)
        return self.used[key]

    def keep(self, used: dict[str, Any]) -> None:
        for key, steps in used.items():
            self._cache.store(self.KIND, key, key, steps)


class KeptFiles:
    """Files kept between builds under a key each (a published Parquet or CSV file): a file
    whose key is unchanged is reused, any other is written anew under a name of its own. Used
    in a forked child, whose `used` entries the parent `keep`s."""

    def __init__(self, cache: SiteCache, kind: str):
        self.kind, self._root = kind, cache.root / kind
        self._known = cache.entries(kind)
        self.used: dict[str, tuple[str, Any]] = {}

    def reused(self, name: str, key: str) -> Path | None:
        """The file kept for `name` under exactly `key`, or None."""
        entry = self._known.get(name)
        if entry is None or entry[0] != key:
            return None
        path = self._root / _files(entry[1])[0]
        if not path.is_file():
            return None
        self.used[name] = entry
        return path

    def new(self, name: str, key: str, suffix: str) -> Path:
        """Where to write `name`'s file for `key` (kept for the next build once written)."""
        file = f"{digest(name, key)}{suffix}"
        self.used[name] = (key, {"files": [file]})
        self._root.mkdir(parents=True, exist_ok=True)
        return self._root / file

    @staticmethod
    def keep(cache: SiteCache, kind: str, used: dict[str, tuple[str, Any]]) -> None:
        for name, (key, facts) in used.items():
            cache.store(kind, name, key, facts)
