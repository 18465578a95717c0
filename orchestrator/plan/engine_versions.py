"""Engine version recipes (pure): `engine.version` picks one entry of the engine's `versions` map.

The resolved EngineConf carries that version's source package version, cmake flags and patches, so the
build key, the build cache and the provenance all follow the chosen version. An engine without a
`versions` map (a local checkout, a git ref) is used as configured.
"""
from __future__ import annotations

import dataclasses

from ..errors import ConfigError
from .schema import EngineConf


def known_versions(engine: EngineConf) -> list[str]:
    """The versions an engine config knows, oldest first (numeric order, 9.x after 7.x)."""
    def numeric(version: str) -> tuple:
        return tuple(int(p) if p.isdigit() else p for p in version.split("."))
    return sorted(engine.versions, key=numeric)


def resolve_engine_version(engine: EngineConf) -> EngineConf:
    """The engine config for `engine.version`; ConfigError listing the known versions otherwise."""
    if not engine.versions:
        return engine
    entry = engine.versions.get(str(engine.version))
    if entry is None:
        raise ConfigError(f"unknown engine.version={engine.version!r} for {engine.name}; "
                          f"known versions: {', '.join(known_versions(engine))}")
    source = dataclasses.replace(engine.source, package_version=entry.package_version)
    flags = list(entry.cmake_flags) if entry.cmake_flags is not None else list(engine.cmake_flags)
    patches = list(entry.patches) if entry.patches is not None else list(engine.patches)
    return dataclasses.replace(engine, source=source, cmake_flags=flags, patches=patches)
