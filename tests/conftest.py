"""Shared fixtures: real captured engine outputs, and the real Hydra configs."""
from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).resolve().parents[1]


def read_data(relative: str) -> str:
    return (DATA / relative).read_text()


def mutation(path: tuple, value: object):
    """A change to a parsed JSON document: the value at `path` (keys and list indexes) set, or
    deleted when `value` is `...`; for the adapters' wrong-shape tests."""
    def apply(doc):
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if value is ...:
            del parent[path[-1]]
        else:
            parent[path[-1]] = value
        return doc
    return apply


@pytest.fixture(scope="session")
def compose_conf():
    """compose_conf([...overrides]) → the validated TidemarkConf dataclass, as `tidemark run` sees it."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    from orchestrator.cli.compose import register_schemas

    register_schemas()
    GlobalHydra.instance().clear()

    def _compose(overrides: list[str] | None = None):
        with initialize_config_dir(config_dir=str(REPO / "conf"), version_base=None):
            return OmegaConf.to_object(compose("tidemark", overrides=overrides or []))

    return _compose
